//! Ingesting behind the data (`IngestOptions::ingest_behind` into the last level reserved by
//! `Options::allow_ingest_behind`): backfilled keys show only where the family has never
//! written the key (a put or a deletion made before the ingest shadows them, through any
//! number of compactions after it), compaction never writes into the reserved level, and
//! every refusal names its reason and changes nothing.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use strata::internals::Rng;
use strata::{CompactionStyle, Db, ErrorKind, IngestOptions, Options, ReadOptions, SstWriter};

const LEVELS: usize = 4;
const KEYS: u64 = 400;

fn options(style: CompactionStyle) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.allow_ingest_behind = true;
    options.num_levels = LEVELS;
    options.compaction_style = style;
    options.write_buffer_size = 16 << 10;
    options.max_bytes_for_level_base = 32 << 10;
    options.target_file_size_base = 8 << 10;
    options
}

fn key(k: u64) -> Vec<u8> {
    format!("key{k:05}").into_bytes()
}

fn behind() -> IngestOptions {
    let mut o = IngestOptions::default();
    o.ingest_behind = true;
    o
}

fn write_sst(path: &Path, options: &Options, entries: &BTreeMap<Vec<u8>, Vec<u8>>) -> PathBuf {
    let mut w = SstWriter::create(path, options).unwrap();
    for (k, v) in entries {
        w.put(k, v).unwrap();
    }
    w.finish().unwrap();
    path.to_path_buf()
}

fn contents(db: &Db) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut it = db.iter(&ReadOptions::default());
    it.seek_to_first();
    let mut out = BTreeMap::new();
    while it.valid() {
        out.insert(it.key().to_vec(), it.value().to_vec());
        it.next();
    }
    it.status().unwrap();
    out
}

/// What the family must read: the newest write of each key (a deletion hides the key),
/// and the backfill of keys never written.
struct Model {
    written: BTreeMap<Vec<u8>, Option<Vec<u8>>>,
    backfill: BTreeMap<Vec<u8>, Vec<u8>>,
}

impl Model {
    fn expected(&self) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let mut out: BTreeMap<Vec<u8>, Vec<u8>> = self
            .backfill
            .iter()
            .filter(|(k, _)| !self.written.contains_key(*k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        for (k, v) in &self.written {
            if let Some(v) = v {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }
}

fn check(db: &Db, model: &Model, ctx: &str) {
    let want = model.expected();
    assert_eq!(contents(db), want, "{ctx}: scan");
    for k in (0..KEYS).step_by(7) {
        let k = key(k);
        assert_eq!(
            db.get(&k).unwrap(),
            want.get(&k).cloned(),
            "{ctx}: get {k:?}"
        );
    }
    // Compaction wrote nothing into the reserved level: only ingested files are there.
    for f in db.live_files_metadata() {
        if f.level == LEVELS - 1 {
            assert!(
                f.smallest_seqno == 0 && f.largest_seqno == 0,
                "{ctx}: a file at sequence numbers {}..{} in the reserved level",
                f.smallest_seqno,
                f.largest_seqno
            );
        }
    }
}

fn run(style: CompactionStyle, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = options(style);
    let mut db = Db::open(&path, opts.clone()).unwrap();
    let mut rng = Rng::new(seed);
    let mut model = Model {
        written: BTreeMap::new(),
        backfill: BTreeMap::new(),
    };
    // Four backfills, each over its own quarter of the keys (files of one level must not
    // overlap), ingested between rounds of writes, compactions and reopens.
    for (round, quarter) in [2u64, 0, 3, 1].into_iter().enumerate() {
        let ctx = format!("{style:?} seed {seed} round {round}");
        for step in 0..600 {
            let k = key(rng.below(KEYS));
            match rng.below(10) {
                0..=5 => {
                    let v = format!("new-{round}-{step}").repeat(4).into_bytes();
                    db.put(&k, &v).unwrap();
                    model.written.insert(k, Some(v));
                }
                6..=8 => {
                    db.delete(&k).unwrap();
                    model.written.insert(k, None);
                }
                _ => {
                    let lo = rng.below(KEYS);
                    let hi = (lo + rng.below(10)).min(KEYS);
                    db.delete_range(key(lo), key(hi)).unwrap();
                    for k in lo..hi {
                        model.written.insert(key(k), None);
                    }
                }
            }
        }
        db.flush().unwrap();
        if rng.one_in(2) {
            db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
        }
        let backfill: BTreeMap<Vec<u8>, Vec<u8>> = (quarter * KEYS / 4..(quarter + 1) * KEYS / 4)
            .filter(|_| !rng.one_in(4))
            .map(|k| (key(k), format!("old-{k}").into_bytes()))
            .collect();
        let file = write_sst(
            &dir.path().join(format!("backfill{round}.sst")),
            &opts,
            &backfill,
        );
        db.ingest(&[&file], &behind()).unwrap();
        model.backfill.extend(backfill);
        check(&db, &model, &format!("{ctx}: after the ingest"));
        // Deletions made before the ingest must still hide its keys after compactions that
        // would have dropped them at the bottom of the tree.
        db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
        check(&db, &model, &format!("{ctx}: after a full compaction"));
        db.close().unwrap();
        db = Db::open(&path, opts.clone()).unwrap();
        check(&db, &model, &format!("{ctx}: after a reopen"));
    }
    let backfilled = model.backfill.len();
    assert!(
        backfilled > KEYS as usize / 2,
        "the backfills held {backfilled} keys"
    );
}

#[test]
fn backfilled_keys_show_only_where_the_family_never_wrote_them() {
    for seed in 1..=3 {
        run(CompactionStyle::Leveled, seed);
        run(CompactionStyle::Universal, seed);
    }
}

#[test]
fn a_plain_ingest_stays_out_of_the_reserved_level() {
    let dir = tempfile::tempdir().unwrap();
    let opts = options(CompactionStyle::Leveled);
    let db = Db::open(dir.path().join("db"), opts.clone()).unwrap();
    let entries: BTreeMap<Vec<u8>, Vec<u8>> =
        (0..50).map(|k| (key(k), b"plain".to_vec())).collect();
    let file = write_sst(&dir.path().join("plain.sst"), &opts, &entries);
    db.ingest(&[&file], &IngestOptions::default()).unwrap();
    let levels: Vec<usize> = db.live_files_metadata().iter().map(|f| f.level).collect();
    assert_eq!(levels, [LEVELS - 2], "a plain ingest into an empty family");
    assert_eq!(db.get(key(3)).unwrap().as_deref(), Some(&b"plain"[..]));
}

/// Each refusal: how the database is set up, and what the error must name.
#[test]
fn refusals_name_their_reason_and_change_nothing() {
    type Setup = fn(&Path, &Path) -> (Db, PathBuf);
    let cases: [(&str, Setup, &str); 3] = [
        (
            "no reserved level",
            |db_dir, sst_dir| {
                let mut opts = options(CompactionStyle::Leveled);
                opts.allow_ingest_behind = false;
                let db = Db::open(db_dir, opts.clone()).unwrap();
                let file = sst(sst_dir, &opts, 0..10);
                (db, file)
            },
            "allow_ingest_behind",
        ),
        (
            "overlaps the last level",
            |db_dir, sst_dir| {
                let opts = options(CompactionStyle::Leveled);
                let db = Db::open(db_dir, opts.clone()).unwrap();
                let first = sst(sst_dir, &opts, 0..10);
                db.ingest(&[&first], &behind()).unwrap();
                let file = sst(&sst_dir.join("second"), &opts, 5..15);
                (db, file)
            },
            "already in the last level",
        ),
        (
            "data at sequence 0 from before the level was reserved",
            |db_dir, sst_dir| {
                // Compacted to the bottom of a 3-level tree without the reservation, the
                // keys lose their sequence numbers (and their deletions); reopened with 4
                // levels and the reservation, that file is above the reserved level.
                let mut opts = options(CompactionStyle::Leveled);
                opts.allow_ingest_behind = false;
                opts.num_levels = 3;
                let db = Db::open(db_dir, opts.clone()).unwrap();
                for round in 0..2 {
                    for k in 0..20 {
                        db.put(key(k), format!("v{round}")).unwrap();
                    }
                    db.flush().unwrap();
                }
                db.compact_range(None::<&[u8]>, None::<&[u8]>).unwrap();
                db.close().unwrap();
                let opts = options(CompactionStyle::Leveled);
                let db = Db::open(db_dir, opts.clone()).unwrap();
                let file = sst(sst_dir, &opts, 10..30);
                (db, file)
            },
            "sequence number 0",
        ),
    ];
    for (name, setup, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let sst_dir = dir.path().join("ssts");
        std::fs::create_dir_all(&sst_dir).unwrap();
        let (db, file) = setup(&dir.path().join("db"), &sst_dir);
        let before = contents(&db);
        let files_before = db.live_files_metadata().len();
        let e = db.ingest(&[&file], &behind()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
        assert!(e.to_string().contains(says), "{name}: {e}");
        assert_eq!(contents(&db), before, "{name}: the data changed");
        assert_eq!(db.live_files_metadata().len(), files_before, "{name}");
        assert!(file.exists(), "{name}: the source is kept");
    }
}

fn sst(dir: &Path, options: &Options, keys: std::ops::Range<u64>) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let entries: BTreeMap<Vec<u8>, Vec<u8>> = keys.map(|k| (key(k), b"old".to_vec())).collect();
    write_sst(&dir.join("file.sst"), options, &entries)
}

#[test]
fn options_that_cannot_reserve_a_level_are_refused_at_open() {
    type Change = fn(&mut Options);
    let cases: [(&str, Change, &str); 2] = [
        (
            "FIFO",
            |o| o.compaction_style = CompactionStyle::Fifo,
            "FIFO",
        ),
        ("two levels", |o| o.num_levels = 2, "at least 3"),
    ];
    for (name, change, says) in cases {
        let dir = tempfile::tempdir().unwrap();
        let mut opts = options(CompactionStyle::Leveled);
        change(&mut opts);
        let e = Db::open(dir.path(), opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}: {e}");
        assert!(e.to_string().contains(says), "{name}: {e}");
    }
}
