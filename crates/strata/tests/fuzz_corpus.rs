//! Replays the fuzz corpora checked in under `fuzz/corpus/<target>/` through the fuzz
//! targets' logic (`strata::internals::fuzzing`), so that every input the fuzzers found interesting,
//! and every crash they found and we fixed, is checked by every test run.
//!
//! `STRATA_WRITE_SEEDS=1 cargo test -p strata --test fuzz_corpus` (re)writes the seed inputs
//! made from real files (a WAL, a table and its blocks, a manifest record) and the written
//! sequences of API operations.
//!
//! Beside the replay, random sequences of API operations weighted toward the TTL family's
//! operations run on every test run (`STRATA_FUZZ_SEEDS=<n>` runs n seeds instead of 8), so
//! that the model of expiry is checked without `cargo fuzz`.

use std::path::{Path, PathBuf};

use strata::internals::Rng;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 13] = [
    ("blob_reader", strata::internals::fuzzing::blob_reader),
    ("wal_reader", strata::internals::fuzzing::wal_reader),
    ("block_reader", strata::internals::fuzzing::block_reader),
    ("table_reader", strata::internals::fuzzing::table_reader),
    ("filter_reader", strata::internals::fuzzing::filter_reader),
    (
        "manifest_decoder",
        strata::internals::fuzzing::manifest_decoder,
    ),
    ("api_ops", strata::internals::fuzzing::api_ops),
    (
        "range_del_block",
        strata::internals::range_del::range_del_block,
    ),
    (
        "compression_dict",
        strata::internals::fuzzing::compression_dict,
    ),
    ("prepared_file", strata::internals::fuzzing::prepared_file),
    (
        "read_charges_file",
        strata::internals::fuzzing::read_charges_file,
    ),
    ("backup_meta", strata::internals::fuzzing::backup_meta),
    (
        "compressed_block",
        strata::internals::fuzzing::compressed_block,
    ),
];

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

#[test]
fn every_corpus_input_passes_its_target() {
    if std::env::var_os("STRATA_WRITE_SEEDS").is_some() {
        write_seeds();
        write_blob_seeds();
        write_prepared_and_backup_seeds();
        write_compressed_block_seeds();
        write_read_charges_seeds();
    }
    for (name, target) in TARGETS {
        let dir = corpus_dir(name);
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{} has no inputs", dir.display());
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name} failed on {}", input.display());
        }
    }
}

/// A block compressed by each algorithm, whole, cut short, and with a raw length it cannot
/// hold (the first byte picks the algorithm: 0 snappy, 1 lz4, 2 zstd).
fn write_compressed_block_seeds() {
    use strata::Compression;
    let dir = corpus_dir("compressed_block");
    std::fs::create_dir_all(&dir).unwrap();
    let raw = b"key0001 value of a block, key0002 value of a block, ".repeat(40);
    for (pick, kind) in [Compression::Snappy, Compression::Lz4, Compression::Zstd]
        .into_iter()
        .enumerate()
    {
        let mut out = Vec::new();
        assert_eq!(
            strata::internals::compress_block(kind, &raw, &mut out),
            kind
        );
        let mut seed = vec![pick as u8];
        seed.extend_from_slice(&out);
        let name = kind.name();
        std::fs::write(dir.join(format!("seed-{name}")), &seed).unwrap();
        std::fs::write(
            dir.join(format!("seed-{name}-cut")),
            &seed[..seed.len() / 2],
        )
        .unwrap();
        // The raw length (a 2-byte varint here) claiming 64 times the bytes.
        let mut forged = vec![pick as u8, 0xff, 0xff, 0x7f];
        forged.extend_from_slice(&out[2..]);
        std::fs::write(dir.join(format!("seed-{name}-forged")), &forged).unwrap();
    }
}

/// A prepared transaction's file and a backup's metadata file, whole and cut short.
fn write_prepared_and_backup_seeds() {
    use strata::{
        BackupEngine, Options, TransactionBase, TransactionDb, TransactionOptions, WriteOptions,
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    let tdb = TransactionDb::open(tmp.path().join("db"), options).unwrap();
    tdb.db().put(b"plain", b"1").unwrap();
    let mut t = tdb.transaction(&WriteOptions::default(), &TransactionOptions::default());
    t.put(b"in-flight", b"2").unwrap();
    t.delete(b"plain").unwrap();
    t.set_name("xid-7").unwrap();
    t.prepare().unwrap();
    let mut engine = BackupEngine::open(tmp.path().join("backups")).unwrap();
    let info = engine.create_backup(tdb.db()).unwrap();
    let only = |dir: &Path, starts: &str| -> Vec<u8> {
        let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(starts))
            .collect();
        found.sort();
        std::fs::read(&found[0]).unwrap()
    };
    let prepared = only(&tmp.path().join("db"), "PREPARED-");
    let meta = only(&tmp.path().join("backups/meta"), &format!("{:06}", info.id));
    t.commit().unwrap();
    for (target, bytes) in [("prepared_file", prepared), ("backup_meta", meta)] {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("seed"), &bytes).unwrap();
        std::fs::write(dir.join("seed-cut"), &bytes[..bytes.len() / 2]).unwrap();
    }
}

/// The read charges a close leaves over one L0 file, whole and cut short.
fn write_read_charges_seeds() {
    use strata::{Db, Options};
    let tmp = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    let db = Db::open(tmp.path(), options).unwrap();
    // A few keys in L0 over many below: too few for an idle merge to rewrite them all.
    for i in 0..1000 {
        db.put(format!("key{i:04}"), "0").unwrap();
    }
    db.compact_range(None, None).unwrap();
    for i in 0..5 {
        db.put(format!("key{:04}", i * 200), "1").unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    // Enough seeks for a charge, too few to pay for the merge.
    for i in 0..20 {
        let mut it = db.iter(&strata::ReadOptions::default());
        it.seek(format!("key{:04}", i * 50));
    }
    db.close().unwrap();
    let bytes = std::fs::read(tmp.path().join("READ_CHARGES")).unwrap();
    let dir = corpus_dir("read_charges_file");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("seed"), &bytes).unwrap();
    std::fs::write(dir.join("seed-cut"), &bytes[..bytes.len() / 2]).unwrap();
}

/// Seed inputs from real files written by the engine.
/// A blob file of a few values (one compressible), and the same cut before its footer.
fn write_blob_seeds() {
    use strata::fs::PosixFs;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("000001.blob");
    let mut writer = strata::internals::BlobFileWriter::create(
        &PosixFs,
        &path,
        1,
        0,
        strata::Compression::Snappy,
    )
    .unwrap();
    for i in 0..6u32 {
        let value = if i == 3 {
            vec![b'v'; 200]
        } else {
            format!("value{i}").into_bytes()
        };
        writer.add(format!("key{i}").as_bytes(), &value).unwrap();
    }
    writer.finish().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let dir = corpus_dir("blob_reader");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("seed-blob"), &bytes).unwrap();
    std::fs::write(dir.join("seed-blob-unfinished"), &bytes[..bytes.len() - 28]).unwrap();
}

fn write_seeds() {
    use strata::{Db, Options};
    let tmp = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.block_size = 256;
    let db = Db::open(tmp.path(), options).unwrap();
    for i in 0..200u32 {
        db.put(
            format!("key{i:04}").as_bytes(),
            format!("value{i}").as_bytes(),
        )
        .unwrap();
        if i % 7 == 0 {
            db.delete(format!("key{:04}", i / 2).as_bytes()).unwrap();
        }
    }
    let files = |ext: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(ext))
            .collect();
        v.sort();
        v
    };
    let write = |target: &str, name: &str, data: &[u8]| {
        let dir = corpus_dir(target);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), data).unwrap();
    };
    let wal = std::fs::read(files(".log").last().unwrap()).unwrap();
    write("wal_reader", "seed-wal", &wal);
    write("wal_reader", "seed-wal-torn", &wal[..wal.len() / 2]);
    // A WAL of compressed records (`wal_compression`), whole and cut in a record.
    let compressed = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.wal_compression = strata::Compression::Zstd;
    let db_compressed = Db::open(compressed.path(), options).unwrap();
    for i in 0..50u32 {
        let value = format!("value {i}, ").repeat(10 + i as usize);
        db_compressed
            .put(format!("key{i:04}").as_bytes(), value.as_bytes())
            .unwrap();
    }
    let mut logs: Vec<PathBuf> = std::fs::read_dir(compressed.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".log"))
        .collect();
    logs.sort();
    let wal = std::fs::read(logs.last().unwrap()).unwrap();
    write("wal_reader", "seed-wal-compressed", &wal);
    write(
        "wal_reader",
        "seed-wal-compressed-torn",
        &wal[..wal.len() / 2],
    );
    db_compressed.close().unwrap();
    db.flush().unwrap();
    let table = std::fs::read(&files(".sst")[0]).unwrap();
    write("table_reader", "seed-table", &table);
    let partitioned = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.block_size = 128;
    options.index_type = strata::IndexType::TwoLevelIndexSearch;
    options.partition_filters = true;
    options.metadata_block_size = 64;
    let pdb = Db::open(partitioned.path(), options).unwrap();
    for i in 0..120u32 {
        pdb.put(format!("key{i:04}"), format!("value{i}")).unwrap();
    }
    pdb.flush().unwrap();
    let sst = std::fs::read_dir(partitioned.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".sst"))
        .unwrap();
    write(
        "table_reader",
        "seed-table-partitioned",
        &std::fs::read(sst).unwrap(),
    );
    pdb.close().unwrap();
    let mut block = strata::internals::BlockBuilder::new(4);
    for i in 0..40u64 {
        let mut k = Vec::new();
        strata::internals::append_internal_key(
            &mut k,
            format!("key{i:03}").as_bytes(),
            i + 1,
            strata::internals::ValueKind::Put as u8,
        );
        block.add(&k, format!("value{i}").as_bytes());
    }
    write("block_reader", "seed-block", block.finish());
    // The same entries in a block carrying a hash index, and a table of such blocks.
    let mut hashed = strata::internals::BlockBuilder::with_hash_index(4, 0.75);
    for i in 0..40u64 {
        let mut k = Vec::new();
        strata::internals::append_internal_key(
            &mut k,
            format!("key{:03}", i / 2).as_bytes(),
            100 - i,
            strata::internals::ValueKind::Put as u8,
        );
        hashed.add(&k, format!("value{i}").as_bytes());
    }
    write("block_reader", "seed-block-hashed", hashed.finish());
    let with_hash = tempfile::tempdir().unwrap();
    let mut options = Options::default();
    options.create_if_missing = true;
    options.block_size = 128;
    options.data_block_index_type = strata::DataBlockIndexType::BinaryAndHash;
    let hdb = Db::open(with_hash.path(), options).unwrap();
    for i in 0..120u32 {
        hdb.put(format!("key{i:04}"), format!("value{i}")).unwrap();
    }
    hdb.flush().unwrap();
    let sst = std::fs::read_dir(with_hash.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".sst"))
        .unwrap();
    write(
        "table_reader",
        "seed-table-hashed",
        &std::fs::read(sst).unwrap(),
    );
    hdb.close().unwrap();
    let manifest = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("MANIFEST-")
        })
        .unwrap();
    let mut record = std::fs::read(manifest).unwrap();
    record.drain(..7.min(record.len())); // the first record's payload, after its log header
    write("manifest_decoder", "seed-manifest-record", &record);
    let mut fb = strata::internals::FilterBuilder::new(10);
    for i in 0..100u32 {
        fb.add(format!("key{i}").as_bytes());
    }
    write("filter_reader", "seed-filter", &fb.finish());
    for (name, ops) in API_OPS_SEEDS {
        write("api_ops", name, ops);
    }
    db.close().unwrap();
}

/// Written sequences of API operations (see `api_ops` for the op codes), each reaching
/// operations the random ones seldom line up.
const API_OPS_SEEDS: [(&str, &[u8]); 7] = [
    (
        "seed-ops",
        &[
            0, 1, 9, 2, 3, 40, 5, 3, 4, 3, 1, 1, 2, 2, 7, 6, 8, 9, 5, 1, 6,
        ],
    ),
    // Family operations (207: select and create f1, create f2 twice, drop it, drop the
    // default family, flush, reopen, a batch over two families, a drop of f1).
    (
        "seed-families",
        &[
            207, 4, 0, 1, 9, 5, 1, 207, 0, 5, 1, 6, 207, 9, 207, 9, 207, 10, 207, 10, 207, 2, 207,
            3, 9, 6, 207, 4, 207, 0, 4, 3, 1, 1, 33, 1, 65, 3, 6, 207, 6, 9, 6,
        ],
    ),
    // The TTL family (207 16: select it): a put flushed, read at its expiry second (207 58:
    // 10 seconds later), hidden a second later (207 22), compacted away, reopened.
    (
        "seed-ttl-expiry",
        &[
            207, 16, 0, 1, 1, 7, 207, 58, 5, 1, 6, 207, 22, 5, 1, 8, 6, 9, 6, 5, 1,
        ],
    ),
    // put_with_ttl (207 17 key len ttl) with ttl 0 and 31, the clock moved past one and
    // then the other (read at its expiry second and the one after), with reopens between
    // the writes and the expiries.
    (
        "seed-ttl-put-with-ttl",
        &[
            207, 16, 207, 17, 2, 2, 0, 207, 17, 3, 1, 31, 5, 2, 9, 207, 22, 5, 2, 6, 207, 82, 8, 6,
            207, 58, 5, 3, 9, 207, 34, 6, 207, 22, 6, 5, 3,
        ],
    ),
    // Refused: a merge into the TTL family, a batch merging into it, put_with_ttl into the
    // default family.
    (
        "seed-ttl-refusals",
        &[
            207, 16, 0, 1, 1, 160, 1, 9, 4, 2, 35, 3, 36, 1, 6, 207, 0, 207, 17, 1, 1, 5, 6, 5, 1,
        ],
    ),
    // Deletes and a range deletion in the TTL family, its drop (207 19), a reopen without
    // it, a new empty one.
    (
        "seed-ttl-drop",
        &[
            207, 16, 0, 1, 1, 0, 2, 1, 0, 5, 1, 203, 1, 3, 3, 5, 6, 207, 19, 9, 207, 19, 207, 16, 6,
        ],
    ),
    // Batches over the default and the TTL family (key bytes 32-63 pick it), values
    // expiring while others are written, flushes and compactions between.
    (
        "seed-ttl-batches",
        &[
            207, 16, 4, 3, 33, 1, 34, 5, 2, 1, 7, 207, 30, 4, 2, 35, 1, 33, 0, 8, 207, 34, 6, 207,
            17, 6, 3, 2, 4, 1, 38, 46, 7, 207, 26, 8, 6, 9, 6, 207, 22, 6, 207, 22, 6, 8, 6,
        ],
    ),
];

/// The ops of `api_ops` with the number of argument bytes each reads, for generating
/// inputs that decode as intended: a random op byte other than the family operations.
fn random_plain_op(rng: &mut Rng, out: &mut Vec<u8>) {
    let mut op = rng.below(256) as u8;
    if op % 10 == 7 && op >= 200 {
        op = 7; // a flush: family operations are chosen by the caller
    }
    let args = match op % 10 {
        0..=2 => 2,
        3 if op >= 200 => 2,
        3 | 5 => 1,
        4 => {
            let n = rng.below(4) as u8;
            out.extend([op, n]);
            for _ in 0..2 * n {
                out.push(rng.below(256) as u8);
            }
            return;
        }
        _ => 0,
    };
    out.push(op);
    for _ in 0..args {
        // Short values: a length byte is multiplied by 4.
        out.push(rng.below(if op % 10 <= 2 { 64 } else { 256 }) as u8);
    }
}

/// A random input of `ops` operations, a third of them TTL family operations (select,
/// `put_with_ttl`, clock advances, now and then a drop) and some selections of other
/// families, the rest any other operation.
fn ttl_heavy_input(rng: &mut Rng, ops: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..ops {
        match rng.below(30) {
            0..=2 => out.extend([207, 16 + 4 * rng.below(28) as u8]),
            3..=6 => {
                let sub = 17 + 4 * rng.below(28) as u8;
                let args = [rng.below(256), rng.below(16), rng.below(256)];
                out.push(207);
                out.push(sub);
                out.extend(args.map(|b| b as u8));
            }
            7..=8 => {
                // Mostly a few seconds, now and then up to 27: values expire at all ages.
                let most = if rng.below(4) == 0 { 28 } else { 4 };
                out.extend([207, 18 + 4 * rng.below(most) as u8]);
            }
            9 if rng.below(5) == 0 => out.extend([207, 19]),
            10 => out.extend([207, 4 * rng.below(4) as u8]),
            _ => random_plain_op(rng, &mut out),
        }
    }
    out
}

#[test]
fn random_inputs_with_ttl_operations_agree_with_the_model() {
    let seeds: u64 = std::env::var("STRATA_FUZZ_SEEDS")
        .map(|n| n.parse().expect("STRATA_FUZZ_SEEDS is a number"))
        .unwrap_or(8);
    for seed in 0..seeds {
        let mut rng = Rng::new(seed);
        let input = ttl_heavy_input(&mut rng, 150);
        let outcome = std::panic::catch_unwind(|| strata::internals::fuzzing::api_ops(&input));
        assert!(
            outcome.is_ok(),
            "api_ops failed on seed {seed}, input {input:?}"
        );
    }
}
