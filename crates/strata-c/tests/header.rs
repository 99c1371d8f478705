//! `include/strata.h` is what cbindgen makes of the crate now: a change to an exported
//! function that is not in the header fails here. `STRATA_C_HEADER=write` rewrites it. And
//! every function the header declares is called by one of the C test programs.

use std::path::Path;

#[test]
fn the_committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = dir.join("include/strata.h");
    if std::env::var("STRATA_C_HEADER").as_deref() == Ok("write") {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what cbindgen makes of the crate: run \
         STRATA_C_HEADER=write cargo test -p strata-c --test header",
        path.display()
    );
}

/// The names of the functions `header` declares: `strata_NAME(` at the start of a
/// declaration's name, after its return type.
fn declared_functions(header: &str) -> Vec<String> {
    let mut names: Vec<String> = header
        .lines()
        .filter(|l| !l.trim_start().starts_with("//") && l.contains('('))
        .filter_map(|l| {
            let name_end = l.find('(')?;
            let start = l[..name_end].rfind(|c: char| !(c.is_alphanumeric() || c == '_'))?;
            let name = &l[start + 1..name_end];
            name.starts_with("strata_").then(|| name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn every_function_is_called_by_a_c_test_program() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let header = std::fs::read_to_string(dir.join("include/strata.h")).unwrap();
    let programs = [
        "tests/c/api_test.c",
        "tests/c/engine_test.c",
        "tests/c/feed_test.c",
        "tests/c/wal_test.c",
    ]
    .map(|p| std::fs::read_to_string(dir.join(p)).unwrap())
    .join("\n");
    let functions = declared_functions(&header);
    assert!(
        functions.len() > 100,
        "the header declares {} functions",
        functions.len()
    );
    let uncalled: Vec<&String> = functions
        .iter()
        .filter(|f| !programs.contains(&format!("{f}(")))
        .collect();
    assert!(
        uncalled.is_empty(),
        "functions of strata.h no C test program calls: {uncalled:?}"
    );
}
