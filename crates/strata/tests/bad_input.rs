//! Bad input gets a clear error naming what is wrong, and damages nothing.

use std::fs;

use strata::{Db, ErrorKind, Options, WriteBatch, WriteOptions};
use strata::{MAX_KEY_LEN, MAX_VALUE_LEN};

fn create() -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options
}

#[test]
fn missing_directory_without_create_if_missing_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope");
    let err = Db::open(&path, Options::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    assert!(err.to_string().contains("nope"), "{err}");
    assert!(err.to_string().contains("create_if_missing"), "{err}");
    assert!(
        !path.exists(),
        "a failed open must not create the directory"
    );
}

#[test]
fn a_directory_that_is_not_a_database_is_refused_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("photo.jpg"), b"not a database").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("not a Strata database"), "{err}");
    let names: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(
        names.len(),
        1,
        "nothing may be added to a foreign directory"
    );
}

#[test]
fn a_newer_format_version_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), create()).unwrap().close().unwrap();
    fs::write(dir.path().join("IDENTITY"), "strata format=99 id=0\n").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("format version 99"), "{err}");
}

#[test]
fn a_corrupt_identity_file_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), create()).unwrap().close().unwrap();
    fs::write(dir.path().join("IDENTITY"), [0xff, 0x00, 0x13]).unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Corruption);
    assert!(err.to_string().contains("IDENTITY"), "{err}");
}

#[test]
fn a_locked_database_is_busy_until_closed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    db.put(b"k", b"v").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Busy);
    assert!(err.to_string().contains("LOCK"), "{err}");
    db.close().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    assert_eq!(db.get(b"k").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn error_if_exists_refuses_an_existing_database() {
    let dir = tempfile::tempdir().unwrap();
    Db::open(dir.path(), create()).unwrap().close().unwrap();
    let mut options = create();
    options.error_if_exists = true;
    let err = Db::open(dir.path(), options).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("error_if_exists"), "{err}");
}

#[test]
fn invalid_options_name_the_option() {
    let dir = tempfile::tempdir().unwrap();
    /// Sets one option to a value `validate` refuses.
    type Spoil = fn(&mut Options);
    let cases: [(Spoil, &str); 18] = [
        (
            |o| {
                o.allow_mmap_reads = true;
                o.use_direct_reads = true;
            },
            "allow_mmap_reads and use_direct_reads",
        ),
        (|o| o.write_buffer_size = 10, "write_buffer_size"),
        (
            |o| o.memtable_prefix_bloom_size_ratio = 0.5,
            "memtable_prefix_bloom_size_ratio",
        ),
        (
            |o| o.memtable_prefix_bloom_size_ratio = f64::NAN,
            "memtable_prefix_bloom_size_ratio",
        ),
        (
            |o| o.memtable_point_index_ratio = 0.75,
            "memtable_point_index_ratio",
        ),
        (
            |o| o.memtable_point_index_ratio = -1.0,
            "memtable_point_index_ratio",
        ),
        (|o| o.max_write_buffer_number = 0, "max_write_buffer_number"),
        (|o| o.max_write_group_bytes = 0, "max_write_group_bytes"),
        (|o| o.blob_file_size = 0, "blob_file_size"),
        (
            |o| o.blob_garbage_collection_age_cutoff = 1.5,
            "blob_garbage_collection_age_cutoff",
        ),
        (
            |o| o.blob_garbage_collection_age_cutoff = -0.1,
            "blob_garbage_collection_age_cutoff",
        ),
        (
            |o| o.blob_garbage_collection_force_threshold = f64::NAN,
            "blob_garbage_collection_force_threshold",
        ),
        (
            |o| o.block_size_deviation = 101,
            "block_size_deviation is 101, it must be a percentage between 0 and 100",
        ),
        (|o| o.metadata_block_size = 0, "metadata_block_size"),
        (|o| o.metadata_block_size = 1 << 30, "metadata_block_size"),
        (
            |o| {
                o.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
                o.data_block_hash_table_util_ratio = 0.0;
            },
            "data_block_hash_table_util_ratio is 0, it must be above 0",
        ),
        (
            |o| {
                o.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
                o.data_block_hash_table_util_ratio = -1.0;
            },
            "data_block_hash_table_util_ratio is -1",
        ),
        (
            |o| {
                o.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
                o.data_block_hash_table_util_ratio = f64::NAN;
            },
            "data_block_hash_table_util_ratio is NaN",
        ),
    ];
    for (spoil, name) in cases {
        let mut opts = create();
        spoil(&mut opts);
        let err = Db::open(dir.path(), opts).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(err.to_string().contains(name), "{err}");
    }
}

#[test]
fn oversized_keys_and_values_are_refused_and_the_batch_is_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    let big_key = vec![b'k'; MAX_KEY_LEN + 1];
    let err = db.put(&big_key, b"v").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("key of"), "{err}");

    let big_value = vec![0u8; MAX_VALUE_LEN + 1];
    let mut batch = WriteBatch::new();
    batch.put(b"fine", b"v");
    batch.put(b"too-big", &big_value);
    let err = db.write(batch, &WriteOptions::default()).unwrap_err();
    assert!(err.to_string().contains("value of"), "{err}");
    assert_eq!(
        db.get(b"fine").unwrap(),
        None,
        "half a batch must not apply"
    );

    // The largest allowed key and an empty key work.
    let max_key = vec![b'm'; MAX_KEY_LEN];
    db.put(&max_key, b"ok").unwrap();
    db.put(b"", b"empty key").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    assert_eq!(db.get(&max_key).unwrap().as_deref(), Some(&b"ok"[..]));
    assert_eq!(db.get(b"").unwrap().as_deref(), Some(&b"empty key"[..]));
}

#[test]
fn a_current_file_naming_a_missing_manifest_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    db.put(b"k", b"v").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    fs::write(dir.path().join("CURRENT"), b"MANIFEST-009999\n").unwrap();
    let err = Db::open(dir.path(), create()).unwrap_err();
    assert!(err.to_string().contains("MANIFEST-009999"), "{err}");
    let tables = fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "sst")
        })
        .count();
    assert_eq!(tables, 1, "a failed open deletes no table");
}

#[test]
fn a_truncated_table_is_corruption_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    for i in 0..1000 {
        db.put(format!("key{i:04}").as_bytes(), b"value").unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let table = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .unwrap();
    let len = fs::metadata(&table).unwrap().len();
    fs::OpenOptions::new()
        .write(true)
        .open(&table)
        .unwrap()
        .set_len(len / 2)
        .unwrap();
    let name = table.file_name().unwrap().to_string_lossy().into_owned();
    let err = match Db::open(dir.path(), create()) {
        Err(e) => e,
        Ok(db) => db.get(b"key0500").unwrap_err(),
    };
    assert_eq!(err.kind(), ErrorKind::Corruption, "{err}");
    assert!(err.to_string().contains(&name), "{err}");
}

/// Small memtables on a file system that can refuse table writes as a full disk does.
fn fault_options(fs: &strata::fs::fault::FaultFs, auto_compactions: bool) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 16 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options.disable_auto_compactions = !auto_compactions;
    options.fs = std::sync::Arc::new(fs.clone());
    options
}

fn fill(db: &Db, from: u32, to: u32) {
    for i in from..to {
        db.put(format!("key{i:06}").as_bytes(), [b'v'; 100])
            .unwrap();
    }
}

/// Checks that `db` holds what `fill(db, from, to)` wrote, and not the key after.
fn assert_filled(db: &Db, from: u32, to: u32) {
    for i in from..to {
        let key = format!("key{i:06}");
        assert_eq!(
            db.get(key.as_bytes()).unwrap().as_deref(),
            Some(&[b'v'; 100][..]),
            "{key}"
        );
    }
    assert_eq!(db.get(format!("key{to:06}").as_bytes()).unwrap(), None);
}

/// Writes keys from `from` on until a write fails (background work stopped and the
/// memtables filled up); returns the first key not written.
fn fill_until_stopped(db: &Db, from: u32) -> u32 {
    let mut written = from;
    while written < 100_000
        && db
            .put(format!("key{written:06}").as_bytes(), [b'v'; 100])
            .is_ok()
    {
        written += 1;
    }
    assert!(written < 100_000, "writes never stopped");
    written
}

/// After the background error: writes refused with the cause, reads fine; after `resume`
/// everything goes on, and a reopen finds every acknowledged write.
fn check_stopped_then_resumed(
    db: Db,
    fs: &strata::fs::fault::FaultFs,
    dir: &std::path::Path,
    written: u32,
) {
    let stopped_again = || loop {
        match db.put(b"more", b"x") {
            Err(e) => break e,
            Ok(()) => std::thread::sleep(std::time::Duration::from_millis(5)),
        }
    };
    let err = stopped_again();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains("No space left"), "{err}");
    assert!(db.get(b"key000000").unwrap().is_some());
    assert!(
        db.resume().is_ok(),
        "resume succeeds; the job fails again while the disk is full"
    );
    // The retried job fails again: waited for, or its failure could land after the resume
    // below and stop background work once more.
    let err = stopped_again();
    assert!(err.to_string().contains("No space left"), "{err}");
    fs.set_full_for(None);
    db.resume().unwrap();
    db.flush().unwrap();
    db.compact_all().unwrap();
    db.put(b"after", b"resume").unwrap();
    db.close().unwrap();
    let db = Db::open(dir, Options::default()).unwrap();
    for i in (0..written).step_by(37) {
        assert!(
            db.get(format!("key{i:06}").as_bytes()).unwrap().is_some(),
            "key {i}"
        );
    }
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"resume"[..]));
}

#[test]
fn a_full_disk_during_flush_stops_writes_until_resume() {
    let dir = tempfile::tempdir().unwrap();
    let fs = strata::fs::fault::FaultFs::new();
    let db = Db::open(dir.path(), fault_options(&fs, true)).unwrap();
    fill(&db, 0, 100);
    fs.set_full_for(Some(".sst"));
    // Write until the failed flush stops writes (the memtables fill up or the error shows).
    let written = fill_until_stopped(&db, 100);
    check_stopped_then_resumed(db, &fs, dir.path(), written);
}

#[test]
fn a_full_disk_while_writing_blob_files_stops_writes_until_resume() {
    let dir = tempfile::tempdir().unwrap();
    let fs = strata::fs::fault::FaultFs::new();
    let mut options = fault_options(&fs, true);
    options.enable_blob_files = true;
    options.min_blob_size = 50;
    options.enable_blob_garbage_collection = true;
    let db = Db::open(dir.path(), options).unwrap();
    fill(&db, 0, 100);
    db.flush().unwrap();
    fs.set_full_for(Some(".blob"));
    let written = fill_until_stopped(&db, 100);
    check_stopped_then_resumed(db, &fs, dir.path(), written);
    // The failed jobs left no blob file behind that the manifest does not name.
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let named = db.property("strata.num-blob-files").unwrap();
    let on_disk = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".blob")
        })
        .count();
    assert_eq!(named, on_disk.to_string());
    db.close().unwrap();
}

#[test]
fn a_full_disk_while_a_write_puts_its_value_in_a_blob_file_stops_writes_until_reopen() {
    // The failing write call: a value's append to the active file, or (each value in a file
    // of its own) the footer of the file it fills, or the creation of the next.
    for blob_file_size in [1 << 20, 1] {
        let dir = tempfile::tempdir().unwrap();
        let fs = strata::fs::fault::FaultFs::new();
        let mut options = fault_options(&fs, true);
        options.enable_blob_files = true;
        options.blob_separation_at_write = true;
        options.min_blob_size = 50;
        options.blob_file_size = blob_file_size;
        let db = Db::open(dir.path(), options.clone()).unwrap();
        fill(&db, 0, 100);
        fs.set_full_for(Some(".blob"));
        let err = db.put(b"key000100", [b'v'; 100]).unwrap_err();
        assert!(
            err.to_string().contains("No space left"),
            "{blob_file_size}: {err}"
        );
        // The file may end in part of the value: nothing more goes to it, and no write goes
        // on, a small value included, as after a failed WAL write; nor does a flush.
        let err = db.put(b"small", b"x").unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
        assert!(err.to_string().contains("No space left"), "{err}");
        assert!(
            db.resume().is_err(),
            "a failed value write is not resumable"
        );
        assert!(db.flush().is_err());
        assert_eq!(
            db.get(b"key000042").unwrap().as_deref(),
            Some(&[b'v'; 100][..])
        );
        drop(db);
        fs.set_full_for(None);
        let db = Db::open(dir.path(), options).unwrap();
        assert_filled(&db, 0, 100);
        db.put(b"after", [b'w'; 100]).unwrap();
        db.flush().unwrap();
        db.close().unwrap();
    }
}

/// Bytes of the blob files in `dir`.
fn blob_file_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".blob"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

#[test]
fn a_failed_wal_write_stops_values_going_to_blob_files_before_their_writes_queue() {
    // Separated at write, a writer puts its values in the blob file before it queues. Once a
    // WAL write has failed the leader refuses every write, so such a value would be garbage.
    let dir = tempfile::tempdir().unwrap();
    let fs = strata::fs::fault::FaultFs::new();
    let mut options = fault_options(&fs, false);
    options.enable_blob_files = true;
    options.blob_separation_at_write = true;
    options.min_blob_size = 50;
    let db = Db::open(dir.path(), options.clone()).unwrap();
    fill(&db, 0, 20);
    fs.set_full_for(Some(".log"));
    let err = db.put(b"key000020", [b'v'; 100]).unwrap_err();
    assert!(err.to_string().contains("No space left"), "{err}");
    let before = blob_file_bytes(dir.path());
    assert!(before > 0, "the values went to a blob file");
    for i in 21..30 {
        let err = db
            .put(format!("key{i:06}").as_bytes(), [b'v'; 100])
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
        assert!(err.to_string().contains("No space left"), "{err}");
    }
    assert_eq!(
        blob_file_bytes(dir.path()),
        before,
        "refused writes put their values in a blob file"
    );
    drop(db);
    fs.set_full_for(None);
    let db = Db::open(dir.path(), options).unwrap();
    assert_filled(&db, 0, 20);
    db.close().unwrap();
}

#[test]
fn a_full_disk_during_a_manifest_write_stops_writes_until_resume_on_a_new_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let fs = strata::fs::fault::FaultFs::new();
    let db = Db::open(dir.path(), fault_options(&fs, true)).unwrap();
    fill(&db, 0, 100);
    let manifest = || {
        strata::internals::current_manifest(&strata::fs::PosixFs, dir.path())
            .unwrap()
            .0
    };
    let before = manifest();
    fs.set_full_for(Some("MANIFEST-"));
    // The first flush fails to record its table; writes stop once the memtables are full.
    let written = fill_until_stopped(&db, 100);
    let err = db.put(b"more", b"x").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Unavailable, "{err}");
    assert!(err.to_string().contains("No space left"), "{err}");
    // The failed manifest may end in part of a record: after resume the edits go to a new
    // one, which CURRENT names, and the old one is gone.
    fs.set_full_for(None);
    db.resume().unwrap();
    db.flush().unwrap();
    let after = manifest();
    assert_ne!(
        after, before,
        "the edits after resume went to the failed manifest"
    );
    assert!(!dir.path().join(format!("MANIFEST-{before:06}")).exists());
    db.put(b"after", b"resume").unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    for i in (0..written).step_by(37) {
        let key = format!("key{i:06}");
        assert!(db.get(key.as_bytes()).unwrap().is_some(), "{key}");
    }
    assert_eq!(db.get(b"after").unwrap().as_deref(), Some(&b"resume"[..]));
}

#[test]
fn a_full_disk_during_compaction_stops_writes_until_resume() {
    let dir = tempfile::tempdir().unwrap();
    let fs = strata::fs::fault::FaultFs::new();
    // Several L0 tables, written with compaction off.
    let db = Db::open(dir.path(), fault_options(&fs, false)).unwrap();
    fill(&db, 0, 900);
    db.flush().unwrap();
    assert!(db.stats().level_files[0] >= 2);
    db.close().unwrap();
    // Reopened with compaction on and a full disk: the first merge fails.
    fs.set_full_for(Some(".sst"));
    let db = Db::open(dir.path(), fault_options(&fs, true)).unwrap();
    check_stopped_then_resumed(db, &fs, dir.path(), 900);
}

#[test]
fn a_range_deletion_with_begin_after_end_is_refused_naming_both_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), create()).unwrap();
    db.put(b"m", b"v").unwrap();
    let err = db.delete_range(b"z", b"a").unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let msg = err.to_string();
    assert!(msg.contains("'z'") && msg.contains("'a'"), "{msg}");
    // In a batch, nothing of the batch is applied.
    let mut batch = WriteBatch::new();
    batch.put(b"n", b"v").delete_range(b"q", b"p");
    let err = db.write(batch, &WriteOptions::default()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(db.get(b"n").unwrap(), None);
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"v"[..]));
    // An empty range is a no-op, not an error.
    db.delete_range(b"m", b"m").unwrap();
    assert_eq!(db.get(b"m").unwrap().as_deref(), Some(&b"v"[..]));
}

#[test]
fn direct_io_on_a_file_system_without_it_is_refused_at_open_naming_the_option() {
    // FaultFs, like any file system that does not implement direct IO, refuses it.
    for (option, read_only) in [
        ("use_direct_reads", false),
        ("use_direct_io_for_flush_and_compaction", false),
        ("use_direct_reads", true),
    ] {
        let fs = strata::fs::fault::FaultFs::new();
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), fault_options(&fs, false)).unwrap();
        db.put(b"kept", b"value").unwrap();
        db.close().unwrap();

        let mut options = fault_options(&fs, false);
        match option {
            "use_direct_reads" => options.use_direct_reads = true,
            _ => options.use_direct_io_for_flush_and_compaction = true,
        }
        let err = match read_only {
            true => Db::open_read_only(dir.path(), options)
                .map(drop)
                .unwrap_err(),
            false => Db::open(dir.path(), options).map(drop).unwrap_err(),
        };
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
        let text = err.to_string();
        assert!(
            text.contains(option) && text.contains("direct IO"),
            "{text}"
        );

        // Nothing was damaged: the database opens without the option.
        let db = Db::open(dir.path(), fault_options(&fs, false)).unwrap();
        assert_eq!(db.get(b"kept").unwrap().as_deref(), Some(&b"value"[..]));
    }
}

/// Partitioned filters without the two-level index are refused naming both options, for the
/// database and for a column family, as RocksDB refuses them; with the two-level index they
/// are taken.
#[test]
fn partition_filters_without_the_two_level_index_are_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = create();
    opts.partition_filters = true;
    let err = Db::open(dir.path(), opts.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let msg = err.to_string();
    for part in ["partition_filters", "index_type", "TwoLevelIndexSearch"] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    assert!(!dir.path().join("CURRENT").exists(), "nothing is created");
    opts.index_type = strata::IndexType::TwoLevelIndexSearch;
    let db = Db::open(dir.path(), opts).unwrap();
    let mut cf = strata::CfOptions::default();
    cf.partition_filters = true;
    let err = db.create_cf("partitioned", cf.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.to_string().contains("partition_filters"), "{err}");
    cf.index_type = strata::IndexType::TwoLevelIndexSearch;
    db.create_cf("partitioned", cf).unwrap();
    db.close().unwrap();
}

/// The data-block hash index finds keys by their bytes: a family with an application's
/// comparator (whose equal keys may differ in bytes) refuses it, naming the option and the
/// comparator, for the database and for a column family; a ratio it ignores (with the binary
/// search) is taken, as RocksDB takes it.
#[test]
fn the_data_block_hash_index_is_refused_with_an_application_comparator() {
    struct Folding;
    impl strata::Comparator for Folding {
        fn name(&self) -> &str {
            "test.case-folding"
        }
        fn compare(&self, a: &[u8], b: &[u8]) -> std::cmp::Ordering {
            a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let mut opts = create();
    opts.comparator = std::sync::Arc::new(Folding);
    opts.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
    let err = Db::open(dir.path(), opts.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let msg = err.to_string();
    for part in [
        "data_block_index_type",
        "binary_and_hash",
        "test.case-folding",
    ] {
        assert!(msg.contains(part), "{msg} lacks {part}");
    }
    assert!(!dir.path().join("CURRENT").exists(), "nothing is created");
    let mut opts = create();
    opts.data_block_hash_table_util_ratio = 0.0;
    let db = Db::open(dir.path(), opts).unwrap();
    let mut cf = strata::CfOptions::default();
    cf.comparator = std::sync::Arc::new(Folding);
    cf.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
    let err = db.create_cf("folded", cf.clone()).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let msg = err.to_string();
    assert!(msg.contains("options of column family 'folded'"), "{msg}");
    assert!(msg.contains("test.case-folding"), "{msg}");
    cf.data_block_index_type = strata::DataBlockIndexType::BinarySearch;
    db.create_cf("folded", cf).unwrap();
    db.close().unwrap();
}
