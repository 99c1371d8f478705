//! The FIFO picker ([`CompactionStyle::Fifo`](super::CompactionStyle::Fifo)) and the
//! age-based picks of the leveled style (`periodic_compaction_seconds`, `table_ttl_seconds`):
//! pure functions of a version, the options and the tables' ages ([`TableAges`]).
//!
//! FIFO keeps every table in L0, newest first. In order:
//! 1. while the tables hold more than `fifo.max_table_files_size` bytes, the oldest ones are
//!    deleted, as many as it takes to come back under it ([`Reason::FifoMaxSize`]);
//! 2. with `table_ttl_seconds`, the oldest tables created longer ago than that are deleted
//!    ([`Reason::FifoTtl`]); a table whose creation time is unknown (0, or not in the ages)
//!    is never deleted for its age, nor is any table newer than it;
//! 3. with `fifo.allow_compaction`, once the newest `level0_file_num_compaction_trigger`
//!    tables or more (newest first, in a row) are each smaller than a quarter of
//!    `max_table_files_size`, they are merged into one L0 table ([`Reason::FifoIntraL0`]).
//!    Its creation time is the merge's: it ages from then.
//!
//! A deletion task's inputs are deleted with nothing written (`CompactionTask::deletes_inputs`).
//! Deleting only ever takes the oldest tables, so what stays is the newest tables' data,
//! exactly as it was written.
//!
//! Leveled, when no level is due: the oldest table below L0 whose age passed
//! `periodic_compaction_seconds` (or `table_ttl_seconds`) is rewritten into its own level
//! ([`Reason::Periodic`]): compaction filters and TTL expiry then reach data no other
//! compaction would rewrite. L0 is left to its own compactions.

use std::collections::HashMap;
use std::sync::Arc;

use super::task::{Busy, CompactionTask, PickerOptions, Reason};
use crate::version::{FileMeta, Version};

/// The clock's time and the tables' creation times (seconds since the Unix epoch, from their
/// properties), for the picks by age. Tables not in `created` have no known age.
#[derive(Debug, Clone, Default)]
pub struct TableAges {
    /// The clock's time now.
    pub now: u64,
    /// Creation time by file number (0: unknown, as in tables that record none).
    pub created: HashMap<u64, u64>,
}

impl TableAges {
    /// Seconds since `f` was created, if known.
    pub fn age(&self, f: &FileMeta) -> Option<u64> {
        let created = *self.created.get(&f.number)?;
        (created > 0).then(|| self.now.saturating_sub(created))
    }

    /// Whether `f` is known to be older than `seconds` (never for 0 seconds).
    fn older_than(&self, f: &FileMeta, seconds: u64) -> bool {
        seconds > 0 && self.age(f).is_some_and(|age| age >= seconds)
    }
}

/// The FIFO pick (see the module doc).
pub fn pick(
    version: &Version,
    o: &PickerOptions,
    busy: &Busy,
    ages: &TableAges,
) -> Option<CompactionTask> {
    let l0 = &version.levels[0];
    let deletion = |files: Vec<Arc<FileMeta>>, score: f64, reason: Reason| {
        let task = CompactionTask::between(&version.order, 0, files, 0, Vec::new(), score, reason);
        Some(task).filter(|t| busy.allows(t))
    };
    // 1. Over the size: the oldest tables, enough to come back under it.
    let total: u64 = l0.iter().map(|f| f.size).sum();
    let max = o.fifo.max_table_files_size;
    if total > max {
        let mut over = total - max;
        let mut oldest = Vec::new();
        for f in l0.iter().rev() {
            if over == 0 {
                break;
            }
            over = over.saturating_sub(f.size);
            oldest.push(f.clone());
        }
        return deletion(
            oldest,
            total as f64 / max.max(1) as f64,
            Reason::FifoMaxSize,
        );
    }
    // 2. Expired: the oldest tables as long as each is older than the ttl.
    let expired: Vec<Arc<FileMeta>> = l0
        .iter()
        .rev()
        .take_while(|f| ages.older_than(f, o.table_ttl_seconds))
        .cloned()
        .collect();
    if !expired.is_empty() {
        return deletion(expired, 1.0, Reason::FifoTtl);
    }
    // 3. Small tables in a row, newest first, merged into one.
    if o.fifo.allow_compaction {
        let small = (max / 4).max(1);
        let run: Vec<Arc<FileMeta>> = l0
            .iter()
            .take_while(|f| f.size < small && !busy.files.contains(&f.number))
            .cloned()
            .collect();
        let trigger = o.level0_file_num_compaction_trigger.max(2);
        if run.len() >= trigger {
            let score = run.len() as f64 / trigger as f64;
            let task = CompactionTask::between(
                &version.order,
                0,
                run,
                0,
                Vec::new(),
                score,
                Reason::FifoIntraL0,
            );
            return Some(task).filter(|t| busy.allows(t));
        }
    }
    None
}

/// The leveled pick by age (see the module doc): the oldest table below L0 older than
/// `periodic_compaction_seconds` or `table_ttl_seconds` (the smaller one set), rewritten
/// into its own level.
pub fn pick_periodic(
    version: &Version,
    o: &PickerOptions,
    busy: &Busy,
    ages: &TableAges,
) -> Option<CompactionTask> {
    let period = [o.periodic_compaction_seconds, o.table_ttl_seconds]
        .into_iter()
        .filter(|&s| s > 0)
        .min()?;
    let (level, file) = version
        .levels
        .iter()
        .enumerate()
        .take(o.num_levels)
        .skip(1)
        .flat_map(|(level, files)| files.iter().map(move |f| (level, f)))
        .filter(|(_, f)| ages.older_than(f, period) && !busy.files.contains(&f.number))
        .max_by_key(|(_, f)| ages.age(f))?;
    let task = CompactionTask::between(
        &version.order,
        level,
        vec![file.clone()],
        level,
        Vec::new(),
        1.0,
        Reason::Periodic,
    );
    Some(task).filter(|t| busy.allows(t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::{CompactionStyle, FifoOptions, UniversalOptions};
    use crate::key::{append_internal_key, ValueKind};
    use crate::version::VersionEdit;

    fn options(max: u64, ttl: u64, allow_compaction: bool) -> PickerOptions {
        PickerOptions {
            num_levels: 7,
            level0_file_num_compaction_trigger: 3,
            max_bytes_for_level_base: 1000,
            max_bytes_for_level_multiplier: 10.0,
            style: CompactionStyle::Fifo,
            universal: UniversalOptions::default(),
            read_triggered: false,
            blob_gc_force: None,
            fifo: FifoOptions {
                max_table_files_size: max,
                allow_compaction,
            },
            periodic_compaction_seconds: 0,
            table_ttl_seconds: ttl,
        }
    }

    /// A version whose L0 holds files numbered 1.. of `sizes` (file 1 oldest), at `level`,
    /// each of keys `a`..`z` and sequence numbers rising with the number.
    fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
        let mut k = Vec::new();
        append_internal_key(&mut k, user, seq, ValueKind::Put as u8);
        k
    }

    fn version_of(level: usize, sizes: &[u64]) -> Version {
        let mut edit = VersionEdit::default();
        for (i, &size) in sizes.iter().enumerate() {
            let n = i as u64 + 1;
            let (lo, hi) = match level {
                0 => (b"a".to_vec(), b"z".to_vec()),
                _ => (vec![b'a' + i as u8], vec![b'a' + i as u8]),
            };
            edit.new_files.push((
                level,
                FileMeta {
                    number: n,
                    size,
                    smallest: ikey(&lo, n * 10),
                    largest: ikey(&hi, n * 10 + 1),
                    smallest_seq: n * 10,
                    largest_seq: n * 10 + 1,
                    ..FileMeta::default()
                },
            ));
        }
        Version::default().apply(&edit).unwrap()
    }

    fn numbers(task: &Option<CompactionTask>) -> Option<(Vec<u64>, Reason)> {
        task.as_ref().map(|t| {
            let mut n: Vec<u64> = t.all_inputs().map(|f| f.number).collect();
            n.sort();
            (n, t.reason)
        })
    }

    #[test]
    fn fifo_picks_by_the_table() {
        // (sizes oldest first, max size, ttl, creation times oldest first, now, allow
        // compaction) -> files picked and why.
        type Case = (&'static [u64], u64, u64, &'static [u64], u64, bool);
        type Picked = Option<(Vec<u64>, Reason)>;
        let cases: &[(Case, Picked)] = &[
            // Under the size: nothing.
            ((&[10, 10, 10], 30, 0, &[], 0, false), None),
            // 5 over: the oldest table goes.
            (
                (&[10, 10, 10], 25, 0, &[], 0, false),
                Some((vec![1], Reason::FifoMaxSize)),
            ),
            // 15 over: the two oldest.
            (
                (&[10, 10, 10], 15, 0, &[], 0, false),
                Some((vec![1, 2], Reason::FifoMaxSize)),
            ),
            // Expired: the two oldest are older than 100 s.
            (
                (&[10, 10, 10], 100, 100, &[1000, 1050, 1150], 1160, false),
                Some((vec![1, 2], Reason::FifoTtl)),
            ),
            // An unknown creation time stops the ttl at that table.
            (
                (&[10, 10, 10], 100, 100, &[0, 1000, 1000], 2000, false),
                None,
            ),
            // No ttl: age does not matter.
            ((&[10, 10, 10], 100, 0, &[1, 1, 1], 2000, false), None),
            // Intra-L0: the three newest small tables (under 160 / 4; the oldest is not).
            (
                (&[50, 10, 10, 10], 160, 0, &[], 0, true),
                Some((vec![2, 3, 4], Reason::FifoIntraL0)),
            ),
            // Too few small tables in a row.
            ((&[10, 600, 10, 10], 1000, 0, &[], 0, true), None),
        ];
        for ((sizes, max, ttl, created, now, allow), want) in cases {
            let v = version_of(0, sizes);
            let ages = TableAges {
                now: *now,
                created: created
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i as u64 + 1, *c))
                    .collect(),
            };
            let o = options(*max, *ttl, *allow);
            let got = pick(&v, &o, &Busy::default(), &ages);
            assert_eq!(numbers(&got), *want, "sizes {sizes:?} max {max} ttl {ttl}");
            if let Some(t) = got {
                assert_eq!(t.output_level, 0);
                assert!(!t.is_trivial_move());
            }
        }
    }

    #[test]
    fn fifo_waits_for_a_busy_table() {
        let v = version_of(0, &[10, 10, 10]);
        let o = options(15, 0, false);
        let mut busy = Busy::default();
        busy.files.insert(1);
        assert!(pick(&v, &o, &busy, &TableAges::default()).is_none());
    }

    #[test]
    fn periodic_rewrites_the_oldest_table_past_the_period_in_its_level() {
        let v = version_of(2, &[10, 10, 10]);
        let mut o = options(0, 0, false);
        o.style = CompactionStyle::Leveled;
        o.periodic_compaction_seconds = 100;
        let ages = TableAges {
            now: 1000,
            created: [(1, 950), (2, 800), (3, 850)].into_iter().collect(),
        };
        let t = pick_periodic(&v, &o, &Busy::default(), &ages).unwrap();
        assert_eq!(numbers(&Some(t.clone())), Some((vec![2], Reason::Periodic)));
        assert_eq!((t.start_level(), t.output_level), (2, 2));
        assert!(!t.is_trivial_move());
        // A shorter table ttl wins; nothing is old enough for a longer period.
        o.periodic_compaction_seconds = 500;
        assert!(pick_periodic(&v, &o, &Busy::default(), &ages).is_none());
        o.table_ttl_seconds = 160;
        let t = pick_periodic(&v, &o, &Busy::default(), &ages);
        assert_eq!(numbers(&t), Some((vec![2], Reason::Periodic)));
        // Off: nothing.
        o.periodic_compaction_seconds = 0;
        o.table_ttl_seconds = 0;
        assert!(pick_periodic(&v, &o, &Busy::default(), &ages).is_none());
    }
}
