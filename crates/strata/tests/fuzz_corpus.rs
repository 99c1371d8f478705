//! Replays the fuzz corpora checked in under `fuzz/corpus/<target>/` through the fuzz
//! targets' logic (`strata::internals::fuzzing`), so that every input the fuzzers found interesting,
//! and every crash they found and we fixed, is checked by every test run.
//!
//! `STRATA_WRITE_SEEDS=1 cargo test -p strata --test fuzz_corpus` (re)writes the seed inputs
//! made from real files (a WAL, a table and its blocks, a manifest record).

use std::path::{Path, PathBuf};

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 7] = [
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

/// Seed inputs from real files written by the engine.
fn write_seeds() {
    use strata::{Db, Options};
    let tmp = tempfile::tempdir().unwrap();
    let db = Db::open(
        tmp.path(),
        Options {
            create_if_missing: true,
            block_size: 256,
            ..Options::default()
        },
    )
    .unwrap();
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
    db.flush().unwrap();
    let table = std::fs::read(&files(".sst")[0]).unwrap();
    write("table_reader", "seed-table", &table);
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
    write(
        "api_ops",
        "seed-ops",
        &[
            0, 1, 9, 2, 3, 40, 5, 3, 4, 3, 1, 1, 2, 2, 7, 6, 8, 9, 5, 1, 6,
        ],
    );
    // Family operations (207: select and create f1, create f2 twice, drop it, drop the
    // default family, flush, reopen, a batch over two families, a drop of f1).
    write(
        "api_ops",
        "seed-families",
        &[
            207, 4, 0, 1, 9, 5, 1, 207, 0, 5, 1, 6, 207, 9, 207, 9, 207, 10, 207, 10, 207, 2, 207,
            3, 9, 6, 207, 4, 207, 0, 4, 3, 1, 1, 33, 1, 65, 3, 6, 207, 6, 9, 6,
        ],
    );
    db.close().unwrap();
}
