//! FIFO compaction and compactions by table age, end to end, on a manual clock: FIFO keeps
//! exactly the newest tables' data (a model of which tables exist), deletes tables past the
//! ttl, merges small tables when allowed; leveled periodic compaction rewrites old tables so
//! that a compaction filter reaches them; bad combinations are refused.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata::{
    CompactionFilter, CompactionStyle, Db, EntryKind, ErrorKind, FilterDecision, ManualClock,
    Options,
};

fn fifo_options(max_table_files_size: u64, clock: Arc<ManualClock>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.compaction_style = CompactionStyle::Fifo;
    options.fifo.max_table_files_size = max_table_files_size;
    options.bloom_bits_per_key = 0;
    options.clock = clock;
    options
}

fn key(batch: u64, i: u64) -> Vec<u8> {
    format!("b{batch:03}-k{i:03}").into_bytes()
}

/// The model: FIFO keeps the newest tables whose sizes fit, oldest deleted first. Each batch
/// is written and flushed into a table of its own (distinct keys), so the data present must
/// be exactly the batches of the tables still in L0, and those must be the newest batches.
#[test]
fn fifo_keeps_exactly_the_newest_tables_data() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000));
    // Room for about four tables of ~12 KB.
    let db = Db::open(dir.path(), fifo_options(50_000, clock)).unwrap();
    for batch in 0..12u64 {
        for i in 0..100 {
            db.put(key(batch, i), vec![b'v'; 100]).unwrap();
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        // The model: every table is L0; their sizes sum to at most the limit.
        let shape = db.tree_shape();
        assert!(shape.levels.iter().skip(1).all(|l| l.files == 0));
        assert!(shape.levels[0].bytes <= 50_000, "{shape}");
        let kept = shape.levels[0].files;
        let newest: Vec<u64> = (0..=batch).rev().take(kept as usize).collect();
        for b in 0..=batch {
            let present = db.get(key(b, 0)).unwrap().is_some();
            let whole = (0..100).all(|i| db.get(key(b, i)).unwrap().is_some() == present);
            assert!(whole, "batch {b} is half there after batch {batch}");
            assert_eq!(
                present,
                newest.contains(&b),
                "batch {b} after batch {batch}"
            );
        }
        // A scan sees the same: only the newest batches, in order.
        let scanned: Vec<Vec<u8>> = db.range::<&[u8], _>(..).map(|e| e.unwrap().0).collect();
        let mut want: Vec<Vec<u8>> = newest
            .iter()
            .flat_map(|&b| (0..100).map(move |i| key(b, i)))
            .collect();
        want.sort();
        assert_eq!(scanned, want, "after batch {batch}");
    }
    // Reopened, the same tables stay.
    let kept = db.tree_shape().levels[0].files;
    db.close().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let db = Db::open(dir.path(), fifo_options(50_000, clock)).unwrap();
    assert_eq!(db.tree_shape().levels[0].files, kept);
    assert!(db.get(key(11, 99)).unwrap().is_some());
    assert!(db.get(key(0, 0)).unwrap().is_none());
}

#[test]
fn fifo_deletes_tables_older_than_the_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let mut options = fifo_options(1 << 30, clock.clone());
    options.table_ttl_seconds = 3600;
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"old", b"1").unwrap();
    db.flush().unwrap();
    clock.advance(Duration::from_secs(3000));
    db.put(b"new", b"2").unwrap();
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.tree_shape().levels[0].files, 2);
    // The first table passes the ttl; the second does not yet.
    clock.advance(Duration::from_secs(700));
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get(b"old").unwrap(), None);
    assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(db.tree_shape().levels[0].files, 1);
    clock.advance(Duration::from_secs(3000));
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get(b"new").unwrap(), None);
    assert_eq!(db.tree_shape().levels[0].files, 0);
}

#[test]
fn fifo_with_allow_compaction_merges_small_tables() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let mut options = fifo_options(1 << 30, clock);
    options.fifo.allow_compaction = true;
    options.level0_file_num_compaction_trigger = 4;
    let db = Db::open(dir.path(), options).unwrap();
    for batch in 0..4 {
        for i in 0..10 {
            db.put(key(batch, i), b"v").unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    let shape = db.tree_shape();
    assert_eq!(shape.levels[0].files, 1, "{shape}");
    assert!(shape.levels.iter().skip(1).all(|l| l.files == 0));
    for batch in 0..4 {
        for i in 0..10 {
            assert!(db.get(key(batch, i)).unwrap().is_some());
        }
    }
}

/// Drops every key starting with `x` once armed.
#[derive(Default)]
struct DropXWhenArmed(AtomicBool);

impl CompactionFilter for DropXWhenArmed {
    fn name(&self) -> &str {
        "drop-x-when-armed"
    }

    fn filter(
        &self,
        _level: usize,
        key: &[u8],
        _kind: EntryKind,
        _value: &[u8],
    ) -> Result<FilterDecision, String> {
        let armed = self.0.load(Ordering::SeqCst);
        Ok(match key.first() {
            Some(b'x') if armed => FilterDecision::Remove,
            _ => FilterDecision::Keep,
        })
    }
}

#[test]
fn periodic_compaction_rewrites_old_tables_so_the_filter_reaches_them() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000_000));
    let filter = Arc::new(DropXWhenArmed::default());
    let mut options = Options::default();
    options.create_if_missing = true;
    options.clock = clock.clone();
    options.periodic_compaction_seconds = 24 * 3600;
    options.compaction_filter = Some(filter.clone());
    let db = Db::open(dir.path(), options).unwrap();
    db.put(b"a", b"1").unwrap();
    db.put(b"x", b"2").unwrap();
    // Into the last level, the filter not yet armed: both stay.
    db.compact_range(None, None).unwrap();
    filter.0.store(true, Ordering::SeqCst);
    // Nothing is due before the period: no compaction rewrites the table.
    clock.advance(Duration::from_secs(24 * 3600 - 10));
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get(b"x").unwrap().as_deref(), Some(&b"2"[..]));
    // Past the period the table is rewritten, and the filter drops "x".
    clock.advance(Duration::from_secs(20));
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get(b"x").unwrap(), None);
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"1"[..]));
    // Rewritten, the table is young again: nothing more is picked.
    let rewrites = |db: &Db| db.stats().compactions.iter().map(|c| c.count).sum::<u64>();
    let after = rewrites(&db);
    db.wait_for_compactions().unwrap();
    assert_eq!(rewrites(&db), after);
}

#[test]
fn bad_combinations_are_refused_naming_the_options() {
    let clock = Arc::new(ManualClock::new(1));
    let cases: Vec<(Options, &str)> = vec![
        (
            fifo_options(0, clock.clone()),
            "fifo.max_table_files_size is 0",
        ),
        (
            {
                let mut o = fifo_options(1 << 20, clock.clone());
                o.periodic_compaction_seconds = 10;
                o
            },
            "periodic_compaction_seconds (10) is not supported with FIFO",
        ),
        (
            {
                let mut o = fifo_options(1 << 20, clock.clone());
                o.compaction_style = CompactionStyle::Universal;
                o.table_ttl_seconds = 10;
                o
            },
            "not supported with universal compaction",
        ),
    ];
    for (options, want) in cases {
        let dir = tempfile::tempdir().unwrap();
        let Err(err) = Db::open(dir.path(), options) else {
            panic!("opened despite: {want}");
        };
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.to_string().contains(want), "{err}");
        // Nothing was created.
        assert!(!dir.path().join("CURRENT").exists());
    }
}
