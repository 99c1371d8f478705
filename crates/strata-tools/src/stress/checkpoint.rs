//! The `checkpoint` operation of the workers (db_stress's `--checkpoint_one_in`): a
//! checkpoint of the running database is made into `DB.checkpoint-T` beside it (T the
//! thread), opened read-only and checked, then removed.
//!
//! The check: other threads write their keys while the checkpoint is made, so only the keys
//! of this thread are checked, and this thread writes none of them meanwhile, so each must
//! hold exactly its committed value (the oracle's before the call, which is also the one
//! after it). Each key is read in its family of the checkpoint, and a scan of the thread's
//! block in one family must agree.
//!
//! Under injected write or metadata faults a checkpoint may fail (it flushes, links and
//! copies files): the database is resumed and the operation counts as done. Read faults are
//! not injected in its reads (they are the checked reads of the operations that check them).

use super::worker::Worker;
use super::*;
use strata::{Db, ReadOptions};

/// The directory of thread `t`'s checkpoints.
pub(super) fn checkpoint_dir(a: &StressArgs, t: u64) -> PathBuf {
    let mut p = a.db.clone().into_os_string();
    p.push(format!(".checkpoint-{t}"));
    PathBuf::from(p)
}

/// Removes what an earlier checkpoint left at `dir` (a kill or power cut may leave `DIR` or
/// `DIR.tmp`).
pub(super) fn remove_checkpoint(dir: &Path) -> Result<(), String> {
    let mut tmp = dir.as_os_str().to_owned();
    tmp.push(".tmp");
    for d in [dir.to_path_buf(), PathBuf::from(tmp)] {
        if d.exists() {
            std::fs::remove_dir_all(&d).map_err(|e| format!("removing {}: {e}", d.display()))?;
        }
    }
    Ok(())
}

impl Worker<'_> {
    /// Makes, opens, checks and removes a checkpoint (see the module's doc).
    pub(super) fn checkpoint(&mut self) -> Result<(), String> {
        let dir = checkpoint_dir(self.a, self.thread);
        remove_checkpoint(&dir)?;
        let expected: Vec<u32> = self
            .own
            .clone()
            .map(|k| self.oracle.state(k).committed)
            .collect();
        let made = self.background_job(|db| db.db().checkpoint(&dir));
        if let Err(e) = made {
            return Err(format!("checkpoint into {}: {e}", dir.display()));
        }
        if !dir.exists() {
            // A checkpoint failed by an injected fault (and resumed).
            return remove_checkpoint(&dir);
        }
        let checked = self.check_checkpoint(&dir, &expected);
        remove_checkpoint(&dir)?;
        checked
    }

    /// Checks the keys of this thread in the checkpoint at `dir` against `expected` (their
    /// ids, from the first key of the block on).
    pub(super) fn check_checkpoint(&mut self, dir: &Path, expected: &[u32]) -> Result<(), String> {
        let what = format!("checkpoint {}", dir.display());
        let reads = self.a.read_fault_one_in > 0;
        strata::fs::fault::FaultFs::read_faults_here(false);
        let opened = options(self.a)
            .map_err(|e| e.to_string())
            .and_then(|o| Db::open_read_only(dir, o).map_err(|e| e.to_string()));
        let checked = opened
            .map_err(|e| format!("{what}: open: {e}"))
            .and_then(|db| {
                let checked = self.check_checkpoint_keys(&db, expected, &what);
                db.close().map_err(|e| format!("{what}: close: {e}"))?;
                checked
            });
        strata::fs::fault::FaultFs::read_faults_here(reads);
        checked
    }

    fn check_checkpoint_keys(
        &mut self,
        db: &Db,
        expected: &[u32],
        what: &str,
    ) -> Result<(), String> {
        let n = self.db.family_count();
        let family = |f: u64| {
            let name = match f {
                0 => "default".to_string(),
                f => format!("stress_{f}"),
            };
            db.cf(&name)
                .ok_or_else(|| format!("{what}: no column family {name}"))
        };
        let id_of = |k: u64, got: Option<Vec<u8>>| match got {
            None => Ok(0),
            Some(v) => value_id(k, &v, self.a)
                .ok_or_else(|| format!("{what}: key {k} holds a value that is no value of it")),
        };
        for k in self.own.clone() {
            let cf = family(k % n)?;
            let got = db
                .get_cf_opt(&cf, key(k), &ReadOptions::default())
                .map_err(|e| format!("{what}: get {k}: {e}"))?;
            let id = id_of(k, got)?;
            let want = expected[(k - self.own.start) as usize];
            if id != want {
                return Err(format!(
                    "{what}: key {k} has value id {id}, expected {want}"
                ));
            }
        }
        // A scan of the block in one family agrees.
        let f = self.rng.below(n);
        let cf = family(f)?;
        let mut options = ReadOptions::default();
        options.lower_bound = Some(key(self.own.start));
        options.upper_bound = Some(key(self.own.end));
        options.total_order_seek = true;
        let mut it = db
            .iter_cf(&cf, &options)
            .map_err(|e| format!("{what}: scan: {e}"))?;
        it.seek_to_first();
        let mut live = self
            .own
            .clone()
            .filter(|&k| k % n == f && expected[(k - self.own.start) as usize] != 0);
        while it.valid() {
            let k = key_index(it.key()).ok_or_else(|| format!("{what}: scan: a key not ours"))?;
            let id = id_of(k, Some(it.value().to_vec()))?;
            if live.next() != Some(k) || id != expected[(k - self.own.start) as usize] {
                return Err(format!(
                    "{what}: scan of family {f} found key {k} (id {id}) out of place"
                ));
            }
            it.next();
        }
        it.status().map_err(|e| format!("{what}: scan: {e}"))?;
        if let Some(k) = live.next() {
            return Err(format!("{what}: scan of family {f} missed key {k}"));
        }
        Ok(())
    }
}
