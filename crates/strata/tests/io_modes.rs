//! Direct IO (`use_direct_reads`, `use_direct_io_for_flush_and_compaction`) and memory-mapped
//! reads (`allow_mmap_reads`): the engine opens the files each option names that way and no
//! others, and the data reads back the same whichever way it is read.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use strata::fs::{FileLock, FileSystem, PosixFs, RandomAccessFile, SequentialFile, WritableFile};
use strata::{Db, Options, ReadOptions, Result};

/// The real file system, recording the names of the files opened or created with direct IO
/// or mapped.
#[derive(Default, Clone)]
struct RecordingFs {
    direct_reads: Arc<Mutex<Vec<String>>>,
    direct_writes: Arc<Mutex<Vec<String>>>,
    mapped: Arc<Mutex<Vec<String>>>,
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

impl FileSystem for RecordingFs {
    fn create_dir_all(&self, path: &Path) -> Result<()> {
        PosixFs.create_dir_all(path)
    }
    fn create_writable(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        PosixFs.create_writable(path)
    }
    fn open_sequential(&self, path: &Path) -> Result<Box<dyn SequentialFile>> {
        PosixFs.open_sequential(path)
    }
    fn open_random(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        PosixFs.open_random(path)
    }
    fn open_random_direct(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        self.direct_reads.lock().unwrap().push(name(path));
        PosixFs.open_random_direct(path)
    }
    fn create_writable_direct(&self, path: &Path) -> Result<Box<dyn WritableFile>> {
        self.direct_writes.lock().unwrap().push(name(path));
        PosixFs.create_writable_direct(path)
    }
    fn open_random_mmap(&self, path: &Path) -> Result<Box<dyn RandomAccessFile>> {
        self.mapped.lock().unwrap().push(name(path));
        PosixFs.open_random_mmap(path)
    }
    fn list_dir(&self, path: &Path) -> Result<Vec<String>> {
        PosixFs.list_dir(path)
    }
    fn exists(&self, path: &Path) -> bool {
        PosixFs.exists(path)
    }
    fn file_size(&self, path: &Path) -> Result<u64> {
        PosixFs.file_size(path)
    }
    fn truncate(&self, path: &Path, len: u64) -> Result<()> {
        PosixFs.truncate(path, len)
    }
    fn remove_file(&self, path: &Path) -> Result<()> {
        PosixFs.remove_file(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        PosixFs.rename(from, to)
    }
    fn sync_dir(&self, path: &Path) -> Result<()> {
        PosixFs.sync_dir(path)
    }
    fn sync_file(&self, path: &Path) -> Result<()> {
        PosixFs.sync_file(path)
    }
    fn lock(&self, path: &Path) -> Result<Box<dyn FileLock>> {
        PosixFs.lock(path)
    }
    fn available_space(&self, path: &Path) -> Result<u64> {
        PosixFs.available_space(path)
    }
}

impl RecordingFs {
    /// The kinds of file (by extension) opened for direct reads, created for direct writes,
    /// and mapped, each listed once.
    fn kinds(&self) -> (Vec<String>, Vec<String>, Vec<String>) {
        let kinds = |names: &Mutex<Vec<String>>| {
            let mut kinds: Vec<String> = names
                .lock()
                .unwrap()
                .iter()
                .map(|n| n.rsplit('.').next().unwrap_or("").to_string())
                .collect();
            kinds.sort();
            kinds.dedup();
            kinds
        };
        (
            kinds(&self.direct_reads),
            kinds(&self.direct_writes),
            kinds(&self.mapped),
        )
    }
}

/// How a case reads and writes.
#[derive(Debug, Clone, Copy)]
struct Modes {
    direct_reads: bool,
    direct_flush_and_compaction: bool,
    mmap_reads: bool,
}

const BUFFERED: Modes = Modes {
    direct_reads: false,
    direct_flush_and_compaction: false,
    mmap_reads: false,
};

fn options(fs: &RecordingFs, modes: Modes) -> Options {
    let mut options = Options::default();
    options.create_if_missing = true;
    options.write_buffer_size = 64 << 10;
    options.target_file_size_base = 64 << 10;
    options.max_bytes_for_level_base = 256 << 10;
    options.level0_file_num_compaction_trigger = 2;
    options.block_cache_size = 64 << 10;
    options.enable_blob_files = true;
    options.min_blob_size = 500;
    options.blob_file_size = 100 << 10;
    options.use_direct_reads = modes.direct_reads;
    options.use_direct_io_for_flush_and_compaction = modes.direct_flush_and_compaction;
    options.allow_mmap_reads = modes.mmap_reads;
    options.compaction_readahead_size = 16 << 10;
    options.fs = Arc::new(fs.clone());
    options
}

/// A value of a length from a few bytes to over `min_blob_size`, that names its key and
/// round.
fn value(key: u32, round: u32) -> Vec<u8> {
    let len = [7, 100, 600, 3000][(key as usize + round as usize) % 4];
    format!("{key}:{round}:")
        .bytes()
        .cycle()
        .take(len)
        .collect()
}

fn check(db: &Db, model: &BTreeMap<Vec<u8>, Vec<u8>>) {
    for (k, v) in model {
        assert_eq!(db.get(k).unwrap().as_ref(), Some(v), "key {k:?}");
    }
    let mut it = db.iter(&ReadOptions::default());
    let mut forward = Vec::new();
    it.seek_to_first();
    while it.valid() {
        forward.push((it.key().to_vec(), it.value().to_vec()));
        it.next();
    }
    it.status().unwrap();
    assert!(forward.iter().map(|(k, v)| (k, v)).eq(model.iter()));
    let mut backward = Vec::new();
    it.seek_to_last();
    while it.valid() {
        backward.push((it.key().to_vec(), it.value().to_vec()));
        it.prev();
    }
    it.status().unwrap();
    assert!(backward.iter().rev().map(|(k, v)| (k, v)).eq(model.iter()));
}

#[test]
fn each_option_opens_its_files_its_way_and_the_data_reads_back() {
    let modes = |direct_reads, direct_flush_and_compaction, mmap_reads| Modes {
        direct_reads,
        direct_flush_and_compaction,
        mmap_reads,
    };
    // (modes, and the kinds of file expected to be read directly, written directly, and
    // mapped.) The open check of direct IO reads IDENTITY; user reads open tables and blob
    // files; compactions read their input tables; flushes and compactions write both kinds.
    type Kinds = &'static [&'static str];
    let cases: [(Modes, Kinds, Kinds, Kinds); 6] = [
        (BUFFERED, &[], &[], &[]),
        (
            modes(true, false, false),
            &["IDENTITY", "blob", "sst"],
            &[],
            &[],
        ),
        (
            modes(false, true, false),
            &["IDENTITY", "sst"],
            &["blob", "sst"],
            &[],
        ),
        (
            modes(true, true, false),
            &["IDENTITY", "blob", "sst"],
            &["blob", "sst"],
            &[],
        ),
        (modes(false, false, true), &[], &[], &["blob", "sst"]),
        (
            modes(false, true, true),
            &["IDENTITY", "sst"],
            &["blob", "sst"],
            &["blob", "sst"],
        ),
    ];
    for (case, read_kinds, write_kinds, map_kinds) in cases {
        let fs = RecordingFs::default();
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), options(&fs, case)).unwrap();
        let mut model = BTreeMap::new();
        for round in 0..3u32 {
            for i in 0..3000u32 {
                let key = format!("key{:06}", (i * 7919 + round * 13) % 5000).into_bytes();
                if i % 11 == 0 {
                    db.delete(&key).unwrap();
                    model.remove(&key);
                } else {
                    db.put(&key, value(i, round)).unwrap();
                    model.insert(key, value(i, round));
                }
            }
            db.flush().unwrap();
        }
        db.compact_all().unwrap();
        db.wait_for_compactions().unwrap();
        check(&db, &model);
        db.close().unwrap();
        let (read, written, mapped) = fs.kinds();
        assert_eq!(read, read_kinds, "{case:?}");
        assert_eq!(written, write_kinds, "{case:?}");
        assert_eq!(mapped, map_kinds, "{case:?}");

        // What one way wrote reads back every other way.
        let plain = RecordingFs::default();
        for other in [
            BUFFERED,
            modes(true, true, false),
            modes(false, false, true),
        ] {
            let db = Db::open(dir.path(), options(&plain, other)).unwrap();
            check(&db, &model);
            db.close().unwrap();
        }
    }
}
