//! `include/strata.h` is what cbindgen makes of the crate now: a change to an exported
//! function that is not in the header fails here. `STRATA_C_HEADER=write` rewrites it.

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
