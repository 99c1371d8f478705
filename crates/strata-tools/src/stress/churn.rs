//! The `column_family` operation of the workers (db_stress's column family churn): thread `T`
//! has a family of its own, `churn_T`, that nobody else touches. Each step creates it and
//! writes its [`CHURN_KEYS`] keys in one synced batch, or reads them back and drops it (or,
//! one time in two, leaves it for a later step, so that families live across kills).
//!
//! The oracle records the family's stage ([`FamilyStage`]) before each call and after it
//! returned. After a kill or power cut ([`verify_families`]): a family `Live` (created and
//! written with `sync`) must exist with every key at its generation; one `Absent` (its drop
//! returned) must not exist; one whose create or drop was in flight may exist or not, and
//! if it does its keys are all written or none (the batch is atomic). Those are dropped, so
//! that the stage is `Absent` or `Live` again.
//!
//! Not with `--disable_wal` (the synced write needs the WAL). Under injected faults a failed
//! create, write or drop resumes the database and leaves the stage in flight.

use super::oracle::{FamilyStage, FamilyState, FAMILY_SLOTS};
use super::store::{churn_family_name, Store};
use super::worker::Worker;
use super::*;
use strata::{ColumnFamily, Db, ReadOptions};

/// Keys written in each thread's own family (key indexes `0..CHURN_KEYS`).
pub(super) const CHURN_KEYS: u64 = 20;

/// Checks that family `cf` holds `CHURN_KEYS` keys at `generation` (or, with `none_too`,
/// none at all). Returns whether it holds them.
fn check_family_keys(
    db: &Db,
    cf: &ColumnFamily,
    generation: u32,
    none_too: bool,
    a: &StressArgs,
    what: &str,
) -> Result<bool, String> {
    let mut found = 0u64;
    for k in 0..CHURN_KEYS {
        let got = db
            .get_cf_opt(cf, key(k), &ReadOptions::default())
            .map_err(|e| format!("{what}: get {k}: {e}"))?;
        match got {
            None => {}
            Some(v) if value_id(k, &v, a) == Some(generation) => found += 1,
            Some(v) => {
                return Err(format!(
                    "{what}: key {k} holds {:?}, not its value of generation {generation}",
                    String::from_utf8_lossy(&v)
                ))
            }
        }
    }
    match found {
        CHURN_KEYS => Ok(true),
        0 if none_too => Ok(false),
        _ => Err(format!(
            "{what}: {found} of its {CHURN_KEYS} keys are there (written in one batch, of \
             generation {generation})"
        )),
    }
}

/// Checks every thread's own family against the oracle after a kill or power cut (see the
/// module's doc), drops those whose create or drop was in flight, and records it.
pub(super) fn verify_families(db: &Store, oracle: &Oracle, a: &StressArgs) -> Result<(), String> {
    for t in 0..a.threads.min(FAMILY_SLOTS) {
        let name = churn_family_name(t);
        let state = oracle.family(t);
        let what = format!("column family {name} ({:?})", state.stage);
        let found = db.db().cf(&name);
        match (state.stage, found) {
            (FamilyStage::Absent, Some(_)) => {
                return Err(format!(
                    "{what}: exists, but its drop returned (or it was never created)"
                ))
            }
            (FamilyStage::Live, None) => {
                return Err(format!(
                    "{what}: gone, but it was created and written with sync (generation {})",
                    state.generation
                ))
            }
            (FamilyStage::Live, Some(cf)) => {
                check_family_keys(db.db(), &cf, state.generation, false, a, &what)?;
            }
            (FamilyStage::Absent, None) => {}
            (in_flight, found) => {
                if let Some(cf) = found {
                    let none_too = in_flight == FamilyStage::Creating;
                    check_family_keys(db.db(), &cf, state.generation, none_too, a, &what)?;
                    db.db()
                        .drop_cf(&cf)
                        .map_err(|e| format!("{what}: drop: {e}"))?;
                }
                oracle.set_family(
                    t,
                    FamilyState {
                        stage: FamilyStage::Absent,
                        generation: state.generation,
                    },
                )?;
            }
        }
    }
    Ok(())
}

impl Worker<'_> {
    /// One step of this thread's own family (see the module's doc), with no read fault
    /// injected in its reads (they check the family, they are not the checked reads).
    pub(super) fn column_family(&mut self) -> Result<(), String> {
        let reads = self.a.read_fault_one_in > 0;
        strata::fs::fault::FaultFs::read_faults_here(false);
        let done = self.column_family_step();
        strata::fs::fault::FaultFs::read_faults_here(reads);
        done
    }

    fn column_family_step(&mut self) -> Result<(), String> {
        if self.thread >= FAMILY_SLOTS || self.write_options.disable_wal {
            return Ok(());
        }
        let t = self.thread;
        let name = churn_family_name(t);
        let state = self.oracle.family(t);
        let faults = self.a.write_fault_one_in + self.a.metadata_write_fault_one_in > 0;
        let set = |stage, generation| self.oracle.set_family(t, FamilyState { stage, generation });
        let db = self.db.db();
        let what = format!("column family {name}");
        let failed = |e: strata::Error, step: &str| -> Result<(), String> {
            if faults {
                let _ = db.resume();
                return Ok(());
            }
            Err(format!("{what}: {step}: {e}"))
        };
        match (state.stage, db.cf(&name)) {
            (FamilyStage::Live, None) => Err(format!("{what}: gone while live")),
            (FamilyStage::Live, Some(cf)) => {
                check_family_keys(db, &cf, state.generation, false, self.a, &what)?;
                if self.rng.one_in(2) {
                    return Ok(());
                }
                set(FamilyStage::Dropping, state.generation)?;
                if let Err(e) = db.drop_cf(&cf) {
                    return failed(e, "drop");
                }
                set(FamilyStage::Absent, state.generation)?;
                match db.get_cf_opt(&cf, key(0), &ReadOptions::default()) {
                    Ok(Some(_)) => Err(format!("{what}: a read of the dropped family found a key")),
                    _ => Ok(()),
                }
            }
            (stage, Some(cf)) => {
                // A create or drop left in flight by an injected fault: finish the drop.
                if stage == FamilyStage::Absent {
                    return Err(format!("{what}: exists after its drop returned"));
                }
                set(FamilyStage::Dropping, state.generation)?;
                if let Err(e) = db.drop_cf(&cf) {
                    return failed(e, "drop");
                }
                set(FamilyStage::Absent, state.generation)
            }
            (_, None) => {
                let generation = state.generation.wrapping_add(1).max(1);
                set(FamilyStage::Creating, generation)?;
                let cf_options = options(self.a).map_err(|e| e.to_string())?.cf_options();
                let cf = match db.create_cf(&name, cf_options) {
                    Ok(cf) => cf,
                    Err(e) => return failed(e, "create"),
                };
                let mut batch = WriteBatch::new();
                for k in 0..CHURN_KEYS {
                    batch.put_cf(&cf, key(k), value(k, generation, self.a));
                }
                let mut synced = WriteOptions::default();
                synced.sync = true;
                if let Err(e) = db.write(batch, &synced) {
                    return failed(e, "write");
                }
                set(FamilyStage::Live, generation)?;
                check_family_keys(db, &cf, generation, false, self.a, &what).map(|_| ())
            }
        }
    }
}
