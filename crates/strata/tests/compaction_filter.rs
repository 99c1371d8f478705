//! Compaction filters and TTL column families through the public API: what a filter removes
//! and changes, what snapshots protect from it, deletions vanishing at the bottom of the
//! tree, TTL values hidden once expired and dropped by compaction, TTL families across
//! reopens, and the errors for misuse. The clock is a `ManualClock`: nothing sleeps.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use strata::{
    CfOptions, CompactionFilter, Db, EntryKind, ErrorKind, FilterDecision, ManualClock, Options,
    ReadOptions, UInt64Add,
};

/// Removes keys starting with `rm`, upper-cases the values of keys starting with `up`,
/// panics on keys starting with `panic`; counts its calls.
#[derive(Default)]
struct Prefixes {
    calls: AtomicUsize,
}

impl CompactionFilter for Prefixes {
    fn name(&self) -> &str {
        "prefixes"
    }
    fn filter(
        &self,
        _level: usize,
        key: &[u8],
        kind: EntryKind,
        value: &[u8],
    ) -> Result<FilterDecision, String> {
        assert_eq!(kind, EntryKind::Value);
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(if key.starts_with(b"rm") {
            FilterDecision::Remove
        } else if key.starts_with(b"up") {
            FilterDecision::ChangeValue(value.to_ascii_uppercase())
        } else if key.starts_with(b"panic") {
            panic!("the filter cannot take {key:?}");
        } else {
            FilterDecision::Keep
        })
    }
}

fn options(filter: &Arc<Prefixes>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.disable_auto_compactions = true;
    options.compaction_filter = Some(filter.clone());
    options
}

fn scan(db: &Db, options: ReadOptions) -> Vec<(String, String)> {
    let mut it = db.iter(&options);
    it.seek_to_first();
    let mut out = Vec::new();
    while it.valid() {
        let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        out.push((s(it.key()), s(it.value())));
        it.next();
    }
    it.status().unwrap();
    out
}

fn scan_back(db: &Db) -> Vec<String> {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_last();
    let mut out = Vec::new();
    while it.valid() {
        out.push(String::from_utf8_lossy(it.key()).into_owned());
        it.prev();
    }
    it.status().unwrap();
    out
}

fn files(db: &Db) -> u64 {
    db.tree_shape().levels.iter().map(|l| l.files).sum()
}

#[test]
fn a_filter_removes_and_changes_values_at_compaction_not_at_flush() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(Prefixes::default());
    let db = Db::open(dir.path(), options(&filter)).unwrap();
    for k in ["keep1", "rm1", "up1", "rm2"] {
        db.put(k.as_bytes(), b"value").unwrap();
    }
    db.flush().unwrap();
    assert_eq!(
        filter.calls.load(Ordering::SeqCst),
        0,
        "flushes do not filter"
    );
    assert_eq!(db.get(b"rm1").unwrap().as_deref(), Some(&b"value"[..]));
    db.compact_range(None, None).unwrap();
    assert_eq!(filter.calls.load(Ordering::SeqCst), 4);
    assert_eq!(db.get(b"rm1").unwrap(), None);
    assert_eq!(db.get(b"up1").unwrap().as_deref(), Some(&b"VALUE"[..]));
    assert_eq!(
        scan(&db, ReadOptions::default()),
        [
            ("keep1".into(), "value".into()),
            ("up1".into(), "VALUE".into())
        ]
    );
    // At the bottom of the tree the removed keys leave no deletion behind.
    let stats = db.stats();
    assert_eq!(stats.level_files.iter().sum::<u64>(), 1);
    db.close().unwrap();
}

#[test]
fn snapshots_protect_what_they_see_until_released() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(Prefixes::default());
    let db = Db::open(dir.path(), options(&filter)).unwrap();
    db.put(b"rm-old", b"1").unwrap();
    db.put(b"up-old", b"a").unwrap();
    let snapshot = db.snapshot();
    db.put(b"rm-new", b"2").unwrap();
    db.compact_range(None, None).unwrap();
    // Written before the snapshot: not shown to the filter. After it: filtered.
    assert_eq!(filter.calls.load(Ordering::SeqCst), 1);
    assert_eq!(db.get(b"rm-old").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get(b"up-old").unwrap().as_deref(), Some(&b"a"[..]));
    assert_eq!(db.get(b"rm-new").unwrap(), None);
    assert_eq!(
        db.get_at(&snapshot, b"rm-old").unwrap().as_deref(),
        Some(&b"1"[..])
    );
    drop(snapshot);
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"rm-old").unwrap(), None);
    assert_eq!(db.get(b"up-old").unwrap().as_deref(), Some(&b"A"[..]));
    assert_eq!(scan_back(&db), ["up-old"]);
    db.close().unwrap();
}

#[test]
fn a_removed_value_above_the_bottom_stays_a_deletion_hiding_older_versions() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(Prefixes::default());
    let db = Db::open(dir.path(), options(&filter)).unwrap();
    // An old version at the bottom, protected by a snapshot while it is compacted there.
    db.put(b"rm", b"old").unwrap();
    let snapshot = db.snapshot();
    db.compact_range(None, None).unwrap();
    drop(snapshot);
    assert_eq!(db.get(b"rm").unwrap().as_deref(), Some(&b"old"[..]));
    // A newer version compacted from L0 into a level above the old one.
    db.put(b"rm", b"new").unwrap();
    db.flush().unwrap();
    db.compact_level(0).unwrap();
    assert_eq!(
        db.get(b"rm").unwrap(),
        None,
        "the deletion hides the old version"
    );
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"rm").unwrap(), None);
    assert_eq!(files(&db), 0, "at the bottom nothing is left");
    db.close().unwrap();
}

#[test]
fn a_panicking_filter_fails_the_compaction_and_leaves_the_tree_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let filter = Arc::new(Prefixes::default());
    let db = Db::open(dir.path(), options(&filter)).unwrap();
    for k in ["a", "panic", "rm"] {
        db.put(k.as_bytes(), b"v").unwrap();
        db.flush().unwrap();
    }
    let shape = |db: &Db| {
        db.tree_shape()
            .levels
            .iter()
            .map(|l| (l.files, l.bytes))
            .collect::<Vec<_>>()
    };
    let before = shape(&db);
    let err = db.compact_range(None, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("compaction filter 'prefixes' of column family 'default' failed on key 'panic': it panicked"),
        "{err}"
    );
    assert_eq!(shape(&db), before);
    for k in ["a", "panic", "rm"] {
        assert_eq!(db.get(k.as_bytes()).unwrap().as_deref(), Some(&b"v"[..]));
    }
    db.close().unwrap();
}

fn ttl_options(clock: &Arc<ManualClock>, ttl: Option<u64>) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    options.disable_auto_compactions = true;
    options.ttl = ttl.map(Duration::from_secs);
    options.clock = clock.clone();
    options
}

#[test]
fn expired_values_are_hidden_before_compaction_and_dropped_by_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000));
    let db = Db::open(dir.path(), ttl_options(&clock, Some(10))).unwrap();
    db.put(b"a", b"short-lived").unwrap();
    db.put_with_ttl(b"b", b"long-lived", Duration::from_secs(100))
        .unwrap();
    db.put(b"c", b"short-lived").unwrap();
    assert_eq!(db.get(b"a").unwrap().as_deref(), Some(&b"short-lived"[..]));
    db.flush().unwrap();
    // Read in place from the table, without the expiry the table stores after it.
    let pinned = db.get_pinned(b"b").unwrap().unwrap();
    assert!(pinned.is_pinned());
    assert_eq!(&pinned[..], b"long-lived");
    let before = db.snapshot();
    clock.advance(Duration::from_secs(10));
    assert_eq!(
        db.get(b"a").unwrap().as_deref(),
        Some(&b"short-lived"[..]),
        "due, not past"
    );
    clock.advance(Duration::from_secs(1));
    // Expired: hidden in every read, snapshots included, in both directions.
    assert_eq!(db.get(b"a").unwrap(), None);
    assert_eq!(db.get_pinned(b"a").unwrap(), None);
    assert_eq!(db.get_at(&before, b"a").unwrap(), None);
    assert_eq!(
        scan(&db, ReadOptions::default()),
        [("b".into(), "long-lived".into())]
    );
    assert_eq!(scan_back(&db), ["b"]);
    // Still stored: a snapshot keeps them through a compaction.
    db.compact_range(None, None).unwrap();
    assert_eq!(db.stats().level_files.iter().sum::<u64>(), 1);
    drop(before);
    // A new value for a key written after expiry reads again.
    db.put(b"c", b"again").unwrap();
    db.compact_range(None, None).unwrap();
    assert_eq!(db.get(b"c").unwrap().as_deref(), Some(&b"again"[..]));
    assert_eq!(
        scan(&db, ReadOptions::default()),
        [
            ("b".into(), "long-lived".into()),
            ("c".into(), "again".into())
        ]
    );
    clock.advance(Duration::from_secs(1_000));
    db.compact_range(None, None).unwrap();
    assert_eq!(files(&db), 0, "every value expired and compacted away");
    assert_eq!(scan(&db, ReadOptions::default()), []);
    db.close().unwrap();
}

#[test]
fn a_ttl_family_keeps_its_values_and_expiry_across_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(50));
    let ttl_cf = || {
        let mut ttl_cf = CfOptions::default();
        ttl_cf.ttl = Some(Duration::from_secs(20));
        ttl_cf
    };
    {
        let db = Db::open_cf(dir.path(), ttl_options(&clock, None), [("t", ttl_cf())]).unwrap();
        let t = db.cf("t").unwrap();
        db.put_cf(&t, b"k", b"v").unwrap();
        db.put(b"plain", b"p").unwrap();
        db.close().unwrap();
    }
    // The ttl's length may change at a reopen; what is stored keeps its expiry (70).
    let mut longer = CfOptions::default();
    longer.ttl = Some(Duration::from_secs(3_600));
    let db = Db::open_cf(dir.path(), ttl_options(&clock, None), [("t", longer)]).unwrap();
    let t = db.cf("t").unwrap();
    assert_eq!(db.get_cf(&t, b"k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(db.get(b"plain").unwrap().as_deref(), Some(&b"p"[..]));
    clock.set(71);
    assert_eq!(db.get_cf(&t, b"k").unwrap(), None);
    assert_eq!(db.get(b"plain").unwrap().as_deref(), Some(&b"p"[..]));
    db.close().unwrap();
    // A read-only open reads the family as the manifest records it.
    clock.set(60);
    let ro = Db::open_read_only(dir.path(), ttl_options(&clock, None)).unwrap();
    let t = ro.cf("t").unwrap();
    assert_eq!(ro.get_cf(&t, b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

/// The directory's files with their bytes (the info log aside).
fn contents(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("LOG"))
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn opening_a_family_with_a_ttl_setting_it_was_not_created_with_is_refused_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(50));
    let db = Db::open(dir.path(), ttl_options(&clock, Some(60))).unwrap();
    db.put(b"k", b"v").unwrap();
    db.create_cf("plain", CfOptions::default()).unwrap();
    db.close().unwrap();
    let before = contents(dir.path());

    let err = Db::open_cf(
        dir.path(),
        ttl_options(&clock, None),
        [("plain", CfOptions::default())],
    )
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        err.to_string(),
        "invalid argument: column family 'default' was created with ttl 60s but is opened \
         without a ttl: whether a family has a ttl cannot change"
    );
    let mut with_ttl = CfOptions::default();
    with_ttl.ttl = Some(Duration::from_secs(5));
    let err = Db::open_cf(
        dir.path(),
        ttl_options(&clock, Some(60)),
        [("plain", with_ttl)],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: column family 'plain' was created without a ttl but is opened \
         with ttl 5s: whether a family has a ttl cannot change"
    );
    assert_eq!(
        contents(dir.path()),
        before,
        "a refused open writes nothing"
    );

    let db = Db::open_cf(
        dir.path(),
        ttl_options(&clock, Some(60)),
        [("plain", CfOptions::default())],
    )
    .unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
    db.close().unwrap();
}

#[test]
fn misuse_of_ttl_options_and_calls_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(50));
    let mut short_ttl = ttl_options(&clock, None);
    short_ttl.ttl = Some(Duration::from_millis(500));
    let err = Db::open(dir.path(), short_ttl).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: ttl is 500ms, it must be at least 1 second"
    );
    let mut with_merges = ttl_options(&clock, Some(10));
    with_merges.merge_operator = Some(Arc::new(UInt64Add));
    let err = Db::open(dir.path(), with_merges).unwrap_err();
    assert!(
        err.to_string()
            .contains("ttl and merge_operator cannot be combined"),
        "{err}"
    );
    let db = Db::open(dir.path(), ttl_options(&clock, None)).unwrap();
    let err = db
        .put_with_ttl(b"k", b"v", Duration::from_secs(1))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: put_with_ttl into column family 'default', which has no ttl (set \
         ttl in its options when it is created)"
    );
    let mut bad_ttl = CfOptions::default();
    bad_ttl.ttl = Some(Duration::ZERO);
    let err = db.create_cf("bad", bad_ttl).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid argument: options of column family 'bad': ttl is 0ns, it must be at least 1 \
         second"
    );
    assert_eq!(db.get(b"k").unwrap(), None, "nothing was written");
    db.close().unwrap();
}

#[test]
fn batches_into_ttl_families_carry_the_family_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(0));
    let mut short = CfOptions::default();
    short.ttl = Some(Duration::from_secs(5));
    let db = Db::open_cf(dir.path(), ttl_options(&clock, None), [("t", short)]).unwrap();
    let t = db.cf("t").unwrap();
    let mut batch = strata::WriteBatch::new();
    batch.put_cf(&t, b"x", b"1");
    batch.put(b"x", b"plain");
    batch.delete_cf(&t, b"gone");
    db.write(batch, &Default::default()).unwrap();
    assert_eq!(db.get_cf(&t, b"x").unwrap().as_deref(), Some(&b"1"[..]));
    clock.set(6);
    assert_eq!(db.get_cf(&t, b"x").unwrap(), None);
    assert_eq!(db.get(b"x").unwrap().as_deref(), Some(&b"plain"[..]));
    db.close().unwrap();
}
