//! The `ingest` operation of the workers (db_stress's `--ingest_external_file_one_in`): a
//! table of 1 to 16 keys this thread owns in one family (puts of their next values, and one
//! in five a deletion), written with the engine's `SstWriter` beside the database, then
//! ingested. The oracle marks the keys pending before the ingest and commits them after it
//! returned (an ingest is atomic and durable when it returns), and the keys are read back.
//!
//! Under power cuts an ingest is a barrier of the trace, and is done only when every write is
//! synced to the WAL: an ingest does not sync the WAL, so one kept by a power cut beside
//! unsynced writes acknowledged before it would be no point of the write order (the power-cut
//! check's rule), though the engine promises nothing for those writes. Under injected faults
//! a failed ingest is retried as a batch of the same final values, as a failed write is; no
//! read fault is injected in the ingest's own reads of the table (only in the reads back).

use super::worker::Worker;
use super::*;
use strata::{IngestOptions, SstWriter};

/// The table file of thread `t`'s ingests.
pub(super) fn ingest_file(a: &StressArgs, t: u64) -> PathBuf {
    let mut p = a.db.clone().into_os_string();
    p.push(format!(".ingest-{t}.sst"));
    PathBuf::from(p)
}

impl Worker<'_> {
    /// Builds and ingests a table of owned keys (see the module's doc).
    pub(super) fn ingest(&mut self) -> Result<(), String> {
        let synced = self.write_options.sync && !self.write_options.disable_wal;
        if self.trace.is_some() && !synced {
            return Ok(());
        }
        let start = self.own_key();
        let family = self.db.family_of(start);
        let n = 1 + self.rng.below(16) as usize;
        let keys: Vec<u64> = (start..self.own.end)
            .filter(|&k| self.db.family_of(k) == family)
            .take(n)
            .collect();
        let finals: Vec<(u64, u32)> = keys
            .iter()
            .map(|&k| {
                (
                    k,
                    if self.rng.one_in(5) {
                        0
                    } else {
                        self.next_id(k)
                    },
                )
            })
            .collect();
        let file = ingest_file(self.a, self.thread);
        let built = self.without_read_faults(|| self.build_table(&file, &finals));
        let faults = self.a.write_fault_one_in + self.a.metadata_write_fault_one_in > 0;
        match built {
            Ok(()) => {}
            Err(_) if faults => return Ok(()),
            Err(e) => return Err(format!("ingest: writing {}: {e}", file.display())),
        }
        for &(k, id) in &finals {
            self.oracle.begin(k, id)?;
        }
        let traced = self
            .trace
            .map(|t| (t, t.begin(self.thread, finals.clone(), true)));
        let mut options = IngestOptions::default();
        options.move_files = self.rng.one_in(2);
        // The ingest reads the table whole: its reads are the write's, not checked reads.
        let mut result = self.without_read_faults(|| self.db.ingest(family, &file, &options));
        if result.is_err() && faults {
            let again = self.idempotent(&finals);
            result = self.retry(again);
        }
        let _ = std::fs::remove_file(&file);
        result.map_err(|e| format!("ingest of keys {keys:?}: {e}"))?;
        if let Some((t, i)) = traced {
            t.ack(self.thread, i);
        }
        for &(k, id) in &finals {
            self.oracle.commit(k, id)?;
            match id {
                0 => self.puts_since_delete.insert(k, 0),
                // An ingested put lands below the memtables: no single deletion after it.
                _ => self.puts_since_delete.insert(k, u32::MAX / 2),
            };
        }
        for &(k, _) in &finals {
            match self.db.get(k, &key(k), None) {
                Ok(got) => self.check(k, got.as_deref(), "get after ingest")?,
                Err(e) => self.read_error(e, &format!("get {k} after ingest"))?,
            }
        }
        Ok(())
    }

    /// Writes the table `file` holding `finals` (0: a deletion), with the families' options
    /// (all alike).
    fn build_table(&self, file: &Path, finals: &[(u64, u32)]) -> strata::Result<()> {
        let options = options(self.a).map_err(|e| strata::Error::InvalidArgument(e.to_string()))?;
        let mut writer = SstWriter::create_cf(file, &options, &options.cf_options())?;
        for &(k, id) in finals {
            match id {
                0 => writer.delete(key(k))?,
                id => writer.put(key(k), value(k, id, self.a))?,
            }
        }
        writer.finish().map(|_| ())
    }
}
