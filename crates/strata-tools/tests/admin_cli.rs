//! `strata sst dump|verify` and `strata manifest dump` on a database built by `strata bench`.

mod common;
use common::strata;

#[test]
fn dump_and_verify_tables_and_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db_flag = format!("--db={}", db.display());
    let (ok, _, err) = strata(&[
        "bench",
        &db_flag,
        "--num=3000",
        "--benchmarks=fillseq,flush",
        "--write_buffer_size=100000",
        "--bloom_bits=10",
        "--disable_auto_compactions=1",
    ]);
    assert!(ok, "{err}");
    let mut tables: Vec<_> = std::fs::read_dir(&db)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sst"))
        .collect();
    tables.sort();
    assert!(tables.len() >= 2);

    let (ok, out, err) = strata(&["manifest", "dump", db.to_str().unwrap()]);
    assert!(ok, "{err}");
    for t in &tables {
        let number = t.file_stem().unwrap().to_str().unwrap();
        assert!(out.contains(&format!("add L0 {number}:[")), "{out}");
    }
    assert!(
        out.contains(&format!("L0: {} files", tables.len())),
        "{out}"
    );

    let (ok, out, err) = strata(&["stats", db.to_str().unwrap()]);
    assert!(ok, "{err}");
    assert!(
        out.contains(&format!("(0 entries) + 0 imm | L0 {} files", tables.len())),
        "{out}"
    );
    assert!(out.contains("** Strata stats **"), "{out}");
    let (ok, _, err) = strata(&["stats", dir.path().join("missing").to_str().unwrap()]);
    assert!(!ok && err.contains("no database"), "{err}");

    let first = tables[0].to_str().unwrap();
    let (ok, out, _) = strata(&["sst", "verify", first]);
    assert!(ok && out.contains("OK"), "{out}");
    let (ok, out, _) = strata(&["sst", "dump", "--keys-only", first]);
    assert!(ok);
    assert!(
        out.contains("#1,PUT"),
        "the first key written has sequence 1:\n{out}"
    );
    assert!(out.contains("compression snappy"), "{out}");

    let mut bytes = std::fs::read(&tables[0]).unwrap();
    bytes[10] ^= 0x01;
    std::fs::write(&tables[0], &bytes).unwrap();
    let (ok, _, err) = strata(&["sst", "verify", first]);
    assert!(!ok);
    assert!(
        err.contains("corruption") && err.contains(first) && err.contains("offset 0"),
        "{err}"
    );
}
