//! What `strata bench --db=DIR` may delete: a previous database's own files, nothing else.

mod common;

use common::{bench, bench_db};

use std::path::Path;

/// The entries of `dir`, sorted, directories with a trailing `/`.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let slash = if e.file_type().unwrap().is_dir() {
                "/"
            } else {
                ""
            };
            format!("{}{slash}", e.file_name().to_string_lossy())
        })
        .collect();
    names.sort();
    names
}

#[test]
fn foreign_files_beside_a_database_are_named_and_nothing_is_deleted() {
    let (_dir, db) = bench_db(&["--benchmarks=fillseq,flush", "--num=100"]);
    std::fs::write(db.join("marker"), "mine").unwrap();
    std::fs::create_dir(db.join("photos")).unwrap();
    std::fs::write(db.join("photos").join("cat.jpg"), "meow").unwrap();
    let before = entries(&db);
    assert!(before.contains(&"CURRENT".to_string()), "{before:?}");

    let (ok, out, err) = bench(&db, &["--benchmarks=fillseq", "--num=100"]);
    assert!(!ok, "the run must refuse: {out}");
    assert!(err.contains(&db.display().to_string()), "{err}");
    assert!(err.contains("marker") && err.contains("photos/"), "{err}");
    assert_eq!(entries(&db), before, "nothing may be deleted");
    assert!(db.join("photos").join("cat.jpg").exists());

    // Without them, the database's own files go and the run starts afresh.
    std::fs::remove_file(db.join("marker")).unwrap();
    std::fs::remove_dir_all(db.join("photos")).unwrap();
    let (ok, out, err) = bench(&db, &["--benchmarks=fillseq,readseq", "--num=100"]);
    assert!(ok, "{err}");
    assert!(
        !out.contains("Recovered:"),
        "a new database recovers nothing:\n{out}"
    );
}
