//! The sources of a cursor: one merging iterator over a super version's memtables, its L0
//! tables and a concatenating cursor per deeper level, with every source's range deletions,
//! wrapped in a [`DbIterator`].

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::iter::{self, DbIterator};
use super::prefix;
use crate::db::families::ColumnFamilyData;
use crate::db::DbInner;
use crate::iterator::{ConcatIterator, InternalIterator, MergingIterator};
use crate::options::ReadOptions;
use crate::range_del::RangeDelAggregator;
use crate::version::{FileMeta, LevelFiles, NUM_LEVELS};

impl DbInner {
    /// A cursor over family `cf`, unpositioned.
    pub(in crate::db) fn iter(
        self: &Arc<Self>,
        cf: &ColumnFamilyData,
        options: ReadOptions,
    ) -> DbIterator {
        // Without a snapshot: the super version first, then the sequence number (see
        // `DbInner::get`).
        let sv = cf.super_version();
        let (readahead, reads) = (options.readahead_size, super::block_reads(&options));
        let at = match options.snapshot {
            Some(s) => (s.sequence(), Some(s)),
            None => (self.last_sequence.load(Ordering::Acquire), None),
        };
        // A child per memtable, L0 table and deeper level (and a failing one at most).
        let capacity = 2 + sv.immutables.len() + sv.version.levels[0].len() + NUM_LEVELS;
        let mut children: Vec<Box<dyn InternalIterator>> = Vec::with_capacity(capacity);
        // The tombstones of every source, gathered eagerly: the memtables' and those of every
        // table of the version, deeper levels included (gathered once per version, see
        // `deeper_range_tombstones`, so a level cursor opens only the tables it reaches). A
        // table that fails to open becomes a failing child, which the iterator reports.
        let mut range_del = RangeDelAggregator::for_read(at.0);
        children.push(Box::new(sv.active.iter()));
        for m in std::iter::once(&sv.active).chain(sv.immutables.iter()) {
            if m.has_range_tombstones() {
                range_del.add(m.range_tombstones());
            }
        }
        for m in &sv.immutables {
            children.push(Box::new(m.iter()));
        }
        let order = &sv.version.order;
        // With a prefix extractor and without `total_order_seek`, each table and level cursor
        // may be skipped by a seek whose prefix its filter rules out (`prefix::PrefixSeek`).
        let prefix = prefix::PrefixSeek::new(
            &cf.options.prefix_extractor,
            options.total_order_seek,
            options.prefix_same_as_start,
        );
        let filtered = prefix
            .as_ref()
            .and_then(|p| Some((p.hint()?.clone(), p.name())));
        match self.deeper_range_tombstones(&sv) {
            Ok(lists) => lists.iter().for_each(|l| range_del.add(l.clone())),
            Err(e) => children.push(Box::new(crate::iterator::FailedIterator::new(e))),
        }
        for f in &sv.version.levels[0] {
            match self.tables.get_for(f, order, 0) {
                Ok(t) => {
                    let t = t.into_owned();
                    range_del.add(t.range_tombstones());
                    children.push(match &filtered {
                        Some((hint, name)) => {
                            let it = Box::new(t.iter_for_read(readahead, reads));
                            prefix::prefix_filtered_table(it, hint, name.clone(), t)
                        }
                        None => Box::new(t.iter_for_read(readahead, reads)),
                    });
                }
                Err(e) => children.push(Box::new(crate::iterator::FailedIterator::new(e))),
            }
        }
        // One cursor per deeper level, opening its files as it reaches them. The iterator
        // holds the version (`IterContext::version` below), so that no compaction deletes a file
        // before the cursor has opened it.
        let deeper = sv.version.levels.iter().enumerate().skip(1);
        for (level_number, files) in deeper.filter(|(_, f)| !f.is_empty()) {
            let (inner, table_order) = (self.clone(), order.clone());
            let level: Box<dyn InternalIterator> = Box::new(ConcatIterator::with_order(
                LevelFiles::new(sv.version.clone(), level_number),
                Box::new(move |f: &Arc<FileMeta>| {
                    let table = inner.tables.get_for(f, &table_order, level_number)?;
                    Ok(table.iter_for_read(readahead, reads))
                }),
                order.clone(),
            ));
            children.push(match &filtered {
                Some((hint, name)) => {
                    let (inner, table_order) = (self.clone(), order.clone());
                    let open = move |f: &FileMeta| {
                        let table = inner.tables.get_for(f, &table_order, level_number)?;
                        Ok(table.into_owned())
                    };
                    prefix::prefix_filtered_level(
                        level,
                        hint,
                        name.clone(),
                        files.clone(),
                        order.clone(),
                        open,
                    )
                }
                None => level,
            });
        }
        let context = iter::IterContext {
            merge_operator: cf.options.merge_operator.clone(),
            family: Some(cf.handle.name_arc()),
            version: Some(sv.version.clone()),
            blobs: Some(self.blobs.clone()),
            range_del: Some(range_del),
            ttl_now: cf.options.ttl.map(|_| cf.options.clock.now_secs()),
            prefix,
            l0_charge: (cf.options.read_triggered_compaction && !sv.version.levels[0].is_empty())
                .then(|| (self.clone(), sv.version.levels[0].len())),
            seek_histograms: self.times_operations().then(|| self.histograms.clone()),
            refresh: Some(iter::RefreshSource {
                inner: self.clone(),
                family: cf.handle.clone(),
                prefix_same_as_start: options.prefix_same_as_start,
                total_order_seek: options.total_order_seek,
                readahead_size: options.readahead_size,
                fill_cache: options.fill_cache,
                verify_checksums: options.verify_checksums,
            }),
        };
        DbIterator::new(
            MergingIterator::with_order(children, order.clone()),
            at,
            (options.lower_bound, options.upper_bound),
            context,
        )
    }
}
