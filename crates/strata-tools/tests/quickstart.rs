//! The library example of README.md is crates/strata/examples/quickstart.rs, word for word,
//! and it runs.

mod quickstart {
    include!("../../strata/examples/quickstart.rs");

    #[test]
    fn the_quickstart_example_runs() {
        main().unwrap();
    }
}

#[test]
fn the_readme_shows_the_quickstart_example_as_it_is() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let example =
        std::fs::read_to_string(format!("{root}/crates/strata/examples/quickstart.rs")).unwrap();
    assert!(
        readme.contains(&format!("```rust\n{example}```\n")),
        "README.md's library example differs from crates/strata/examples/quickstart.rs"
    );
    assert!(readme.contains("cargo run -p strata --example quickstart"));
}
