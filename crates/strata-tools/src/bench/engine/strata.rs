//! Strata under the bench loop: every flag maps to an option of [`strata::Options`].
//! `--prefix_size` sets a `fixed:N` prefix extractor; seekrandom's iterators take
//! `--prefix_same_as_start` and `--total_order_seek`.
//! With `--num_column_families` > 1 the keys are spread over the families as db_bench does
//! (see [`super::family_of`]), each family with the same options.

use std::path::Path;

use std::sync::Arc;

use strata::{
    ColumnFamily, Db, DbIterator, FixedPrefix, Options, PrefixExtractor, ReadOptions, WriteBatch,
    WriteOptions,
};

use super::{family_of, Counters, Engine, EngineResult};
use crate::bench::units::mb;
use crate::bench::BenchArgs;

pub struct StrataEngine {
    db: Db,
    /// The families keys are spread over: the default alone unless --num_column_families.
    families: Vec<ColumnFamily>,
    disable_wal: bool,
    /// How seekrandom's iterators seek (prefix flags).
    seek_options: ReadOptions,
}

impl StrataEngine {
    pub fn open(args: &BenchArgs, path: &Path) -> EngineResult<Self> {
        let prefix_extractor: Option<Arc<dyn PrefixExtractor>> = match args.prefix_size {
            0 => None,
            n => Some(Arc::new(FixedPrefix::new(n)?)),
        };
        let options = Options {
            create_if_missing: !args.use_existing_db,
            create_missing_column_families: true,
            prefix_extractor,
            ..args.options.options()?
        };
        let names: Vec<String> = (0..args.num_column_families.max(1))
            .map(BenchArgs::column_family_name)
            .collect();
        let cf_options = options.cf_options();
        let db = Db::open_cf(
            path,
            options,
            names.iter().map(|n| (n.as_str(), cf_options.clone())),
        )
        .map_err(|e| format!("opening {}: {e}", path.display()))?;
        let families = names
            .iter()
            .map(|n| {
                db.cf(n)
                    .ok_or_else(|| format!("no column family {n} after open"))
            })
            .collect::<Result<_, _>>()?;
        Ok(StrataEngine {
            db,
            families,
            disable_wal: args.disable_wal,
            seek_options: ReadOptions {
                prefix_same_as_start: args.prefix_same_as_start(),
                total_order_seek: args.total_order_seek,
                ..ReadOptions::default()
            },
        })
    }

    /// The family of `key`, or `None` for the default one (the plain calls are used then).
    fn family(&self, key: &[u8]) -> Option<&ColumnFamily> {
        match self.families.len() {
            0 | 1 => None,
            n => Some(&self.families[family_of(key, n)]).filter(|cf| cf.id() != 0),
        }
    }

    fn write_options(&self, sync: bool) -> WriteOptions {
        WriteOptions {
            sync,
            disable_wal: self.disable_wal,
        }
    }

    /// A cursor over the family of `key` (or the default family), reading with `options`.
    fn iter_for(
        &self,
        family: Option<&ColumnFamily>,
        options: ReadOptions,
    ) -> EngineResult<DbIterator> {
        Ok(match family {
            Some(cf) => self.db.iter_cf(cf, options)?,
            None => self.db.iter(options),
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
        let options = self.write_options(sync);
        match self.family(key) {
            None => Ok(self.db.put_opt(key, value, &options)?),
            Some(cf) => Ok(self.db.put_cf_opt(cf, key, value, &options)?),
        }
    }

    fn put_batch(&self, entries: &[(Vec<u8>, Vec<u8>)], sync: bool) -> EngineResult<()> {
        let mut batch = WriteBatch::new();
        for (key, value) in entries {
            match self.family(key) {
                None => batch.put(key, value),
                Some(cf) => batch.put_cf(cf, key, value),
            };
        }
        Ok(self.db.write(batch, &self.write_options(sync))?)
    }

    fn delete(&self, key: &[u8], sync: bool) -> EngineResult<()> {
        let options = self.write_options(sync);
        match self.family(key) {
            None => Ok(self.db.delete_opt(key, &options)?),
            Some(cf) => Ok(self.db.delete_cf_opt(cf, key, &options)?),
        }
    }

    fn delete_range(&self, begin: &[u8], end: &[u8], sync: bool) -> EngineResult<()> {
        let mut batch = WriteBatch::new();
        match self.family(begin) {
            None => batch.delete_range(begin, end),
            Some(cf) => batch.delete_range_cf(cf, begin, end),
        };
        Ok(self.db.write(batch, &self.write_options(sync))?)
    }

    fn merge(&self, key: &[u8], operand: &[u8], sync: bool) -> EngineResult<()> {
        let options = self.write_options(sync);
        match self.family(key) {
            None => Ok(self.db.merge_opt(key, operand, &options)?),
            Some(cf) => {
                let mut batch = WriteBatch::new();
                batch.merge_cf(cf, key, operand);
                Ok(self.db.write(batch, &options)?)
            }
        }
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        let value = match self.family(key) {
            None => self.db.get(key)?,
            Some(cf) => self.db.get_cf(cf, key)?,
        };
        Ok(value.map(|v| v.len()))
    }

    fn scan(&self, reverse: bool, visit: &mut dyn FnMut(&[u8], &[u8]) -> bool) -> EngineResult<()> {
        // Family after family (in reverse order for a reverse scan), as one sequence.
        let mut order: Vec<Option<&ColumnFamily>> = match self.families.len() {
            0 | 1 => vec![None],
            _ => std::iter::once(None)
                .chain(self.families[1..].iter().map(Some))
                .collect(),
        };
        if reverse {
            order.reverse();
        }
        for family in order {
            let mut it = self.iter_for(family, ReadOptions::default())?;
            if reverse {
                it.seek_to_last();
            } else {
                it.seek_to_first();
            }
            while it.valid() {
                if !visit(it.key(), it.value()) {
                    return Ok(it.status()?);
                }
                if reverse {
                    it.prev();
                } else {
                    it.next();
                }
            }
            it.status()?;
        }
        Ok(())
    }

    fn seek(&self, key: &[u8], nexts: u64) -> EngineResult<(bool, u64)> {
        let mut it = self.iter_for(self.family(key), self.seek_options.clone())?;
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
            Some(_) if self.families.len() > 1 => {
                return Err(
                    "compact0 and compact1 compact the default family only: with \
                     --num_column_families above 1 use compactall"
                        .into(),
                )
            }
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
        // Compactions of every family (the stats above hold the default family's).
        let compactions: Vec<strata::LevelCompactionStats> = match self.families.len() {
            0 | 1 => s.compactions.clone(),
            _ => self
                .families
                .iter()
                .filter_map(|cf| self.db.stats_cf(cf).ok())
                .flat_map(|s| s.compactions)
                .collect(),
        };
        let pending = match self.families.len() {
            0 | 1 => s.pending_compaction_bytes,
            _ => self
                .families
                .iter()
                .filter_map(|cf| self.db.stats_cf(cf).ok())
                .map(|s| s.pending_compaction_bytes)
                .sum(),
        };
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
            compactions: Some(compactions.iter().map(|c| c.count).sum()),
            compaction_bytes_read: compactions.iter().map(|c| c.bytes_read).sum(),
            compaction_bytes_written: compactions.iter().map(|c| c.bytes_written).sum(),
            compactions_running: Some(s.compactions_running),
            pending_compaction_bytes: pending,
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
        match self.families.len() {
            0 | 1 => self.db.tree_shape().to_string(),
            _ => self
                .families
                .iter()
                .filter_map(|cf| {
                    Some(format!(
                        "{}: {}",
                        cf.name(),
                        self.db.tree_shape_cf(cf).ok()?
                    ))
                })
                .collect::<Vec<_>>()
                .join("; "),
        }
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
