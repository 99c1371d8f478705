//! Strata under the bench loop: every flag maps to an option of [`strata::Options`].

use std::path::Path;

use strata::{Db, Options, ReadOptions, WriteOptions};

use super::{Counters, Engine, EngineResult};
use crate::bench::units::mb;
use crate::bench::BenchArgs;

pub struct StrataEngine {
    db: Db,
    disable_wal: bool,
}

impl StrataEngine {
    pub fn open(args: &BenchArgs, path: &Path) -> EngineResult<Self> {
        let options = Options {
            create_if_missing: !args.use_existing_db,
            ..args.options.options()?
        };
        let db = Db::open(path, options).map_err(|e| format!("opening {}: {e}", path.display()))?;
        Ok(StrataEngine {
            db,
            disable_wal: args.disable_wal,
        })
    }
}

impl Engine for StrataEngine {
    fn version(&self) -> String {
        format!("strata {}", env!("CARGO_PKG_VERSION"))
    }

    fn path(&self) -> &Path {
        self.db.path()
    }

    fn put(&self, key: &[u8], value: &[u8], sync: bool) -> EngineResult<()> {
        let options = WriteOptions {
            sync,
            disable_wal: self.disable_wal,
        };
        Ok(self.db.put_opt(key, value, &options)?)
    }

    fn delete(&self, key: &[u8], sync: bool) -> EngineResult<()> {
        let options = WriteOptions {
            sync,
            disable_wal: self.disable_wal,
        };
        Ok(self.db.delete_opt(key, &options)?)
    }

    fn merge(&self, key: &[u8], operand: &[u8], sync: bool) -> EngineResult<()> {
        let options = WriteOptions {
            sync,
            disable_wal: self.disable_wal,
        };
        Ok(self.db.merge_opt(key, operand, &options)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        Ok(self.db.get(key)?.map(|v| v.len()))
    }

    fn scan(&self, reverse: bool, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> EngineResult<()> {
        let mut it = self.db.iter(ReadOptions::default());
        if reverse {
            it.seek_to_last();
        } else {
            it.seek_to_first();
        }
        while it.valid() && visit(it.key(), it.value()) {
            if reverse {
                it.prev();
            } else {
                it.next();
            }
        }
        Ok(it.status()?)
    }

    fn seek(&self, key: &[u8], nexts: u64) -> EngineResult<(bool, u64)> {
        let mut it = self.db.iter(ReadOptions::default());
        it.seek(key);
        let found = it.valid() && it.key() == key;
        let mut bytes = 0;
        for _ in 0..nexts {
            if !it.valid() {
                break;
            }
            bytes += (it.key().len() + it.value().len()) as u64;
            it.next();
        }
        it.status()?;
        Ok((found, bytes))
    }

    fn flush(&self) -> EngineResult<()> {
        Ok(self.db.flush()?)
    }

    fn compact(&self, level: Option<usize>) -> EngineResult<()> {
        match level {
            Some(level) => self.db.compact_level(level)?,
            None => self.db.compact_all()?,
        }
        Ok(())
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        Ok(self.db.wait_for_compactions()?)
    }

    fn counters(&self) -> Counters {
        let s = self.db.stats();
        Counters {
            bytes_written: Some(s.io.total_written()),
            write_groups: s.write_groups,
            batches: s.batches,
            wal_syncs: s.wal_syncs,
            bloom_checks: s.bloom_checks,
            bloom_negatives: s.bloom_negatives,
            cache_hits: s.block_cache_hits,
            cache_misses: s.block_cache_misses,
            table_bytes_read: Some(s.table_bytes_read),
            stalls: vec![
                ("L0 slowdowns", Some(s.l0_slowdowns), s.l0_slowdown_micros),
                ("L0 stops", Some(s.l0_stops), s.l0_stop_micros),
                (
                    "pending-bytes slowdowns",
                    Some(s.pending_slowdowns),
                    s.pending_slowdown_micros,
                ),
                (
                    "pending-bytes stops",
                    Some(s.pending_stops),
                    s.pending_stop_micros,
                ),
                ("memtable waits", Some(s.write_stalls), s.stall_micros),
            ],
            // Count and bytes of the finished compactions, from one source: the IO counters
            // (IoClass::Compaction) also hold what running compactions wrote so far.
            compactions: Some(s.compactions.iter().map(|c| c.count).sum()),
            compaction_bytes_read: s.compactions.iter().map(|c| c.bytes_read).sum(),
            compaction_bytes_written: s.compactions.iter().map(|c| c.bytes_written).sum(),
            compactions_running: Some(s.compactions_running),
            pending_compaction_bytes: s.pending_compaction_bytes,
            compactions_skipped_for_space: s.compactions_skipped_for_space,
        }
    }

    fn reset_stats(&self) {
        self.db.reset_stats();
    }

    fn stats_text(&self) -> String {
        self.db.property("strata.stats").unwrap_or_default()
    }

    fn level_stats_text(&self) -> String {
        self.db
            .property("strata.compaction-stats")
            .unwrap_or_default()
    }

    fn shape(&self) -> String {
        self.db.tree_shape().to_string()
    }

    fn recovery(&self) -> Option<String> {
        let r = self.db.recovery_report();
        (r.wal_files > 0).then(|| {
            format!(
                "{} entries from {} WAL files ({} read)",
                r.entries,
                r.wal_files,
                mb(r.bytes_read)
            )
        })
    }

    fn close(self: Box<Self>) -> EngineResult<()> {
        Ok(self.db.close()?)
    }
}
