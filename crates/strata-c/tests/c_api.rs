//! Builds the C test programs (`tests/c/api_test.c`: the basic API; `tests/c/engine_test.c`:
//! merge operators, callbacks, transactions, backups, bulk loading, statistics and the
//! refusal of null pointers; `tests/c/feed_test.c`: the change feed; `tests/c/wal_test.c`:
//! WAL records held by `manual_wal_flush` until `strata_flush_wal`) with the system C
//! compiler against `include/strata.h` and the static library, and runs each: once plainly,
//! once with AddressSanitizer and UndefinedBehaviorSanitizer, whose leak checker fails the
//! run if the program leaks what the API hands it (so the ownership rules of the header are
//! exercised, not only stated). The quick start of the crate's README is built and run the
//! same way, so that it stays a program that works.
//!
//! Where no C compiler is installed these tests say so and pass, unless
//! `STRATA_C_REQUIRE_COMPILER=1` is set (as CI does, after installing one): then a missing
//! compiler fails them, so that CI cannot skip them silently.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The static library cargo built for this test run: in `deps`, beside the test binary
/// (where `cargo test` leaves it), or in the directory above (where `cargo build` copies
/// it).
fn static_library() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    [deps, deps.parent().unwrap()]
        .iter()
        .map(|dir| dir.join("libstrata_c.a"))
        .find(|lib| lib.exists())
        .unwrap_or_else(|| panic!("libstrata_c.a is not in {} or above", deps.display()))
}

fn compiler() -> Option<String> {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let works = Command::new(&cc)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        works || std::env::var("STRATA_C_REQUIRE_COMPILER").as_deref() != Ok("1"),
        "STRATA_C_REQUIRE_COMPILER=1 but there is no working C compiler ({cc}): install one"
    );
    works.then_some(cc)
}

/// Compiles the test program `tests/c/{program}.c` with `flags` to `out`.
fn build(cc: &str, program: &str, flags: &[&str], out: &Path) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    build_source(
        cc,
        &crate_dir.join(format!("tests/c/{program}.c")),
        flags,
        out,
    );
}

/// Compiles C file `source` with `flags` to `out`, against the header and static library.
fn build_source(cc: &str, source: &Path, flags: &[&str], out: &Path) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = static_library();
    let status = Command::new(cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-g"])
        .args(flags)
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(source)
        .arg(&lib)
        // What a Rust static library needs from the system on Linux.
        .args([
            "-lpthread",
            "-ldl",
            "-lm",
            "-lrt",
            "-lutil",
            "-lgcc_s",
            "-lc",
        ])
        .arg("-o")
        .arg(out)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "{cc} failed to build {}",
        source.display()
    );
}

fn run(program: &Path, env: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(program)
        .arg(dir.path().join("dbs"))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(" passed, 0 failed"),
        "{} failed:\n{stdout}\n{stderr}",
        program.display()
    );
}

/// Builds `program` plainly and runs it.
fn plain(program: &str) {
    let Some(cc) = compiler() else {
        eprintln!("no C compiler (cc or $CC): {program} was not built");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(program);
    build(&cc, program, &["-O1"], &out);
    run(&out, &[]);
}

/// Builds `program` with AddressSanitizer and UndefinedBehaviorSanitizer and runs it.
fn sanitized(program: &str) {
    let Some(cc) = compiler() else {
        eprintln!("no C compiler (cc or $CC): the sanitizer build of {program} was not made");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("{program}_asan"));
    build(
        &cc,
        program,
        &[
            "-O1",
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
        ],
        &out,
    );
    run(
        &out,
        &[
            ("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0"),
            ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
        ],
    );
}

#[test]
fn the_c_test_program_passes() {
    plain("api_test");
}

#[test]
fn the_c_test_program_passes_under_sanitizers() {
    sanitized("api_test");
}

#[test]
fn the_c_engine_test_program_passes() {
    plain("engine_test");
}

#[test]
fn the_c_engine_test_program_passes_under_sanitizers() {
    sanitized("engine_test");
}

#[test]
fn the_c_change_feed_test_program_passes() {
    plain("feed_test");
}

#[test]
fn the_c_change_feed_test_program_passes_under_sanitizers() {
    sanitized("feed_test");
}

#[test]
fn the_c_wal_test_program_passes() {
    plain("wal_test");
}

#[test]
fn the_c_wal_test_program_passes_under_sanitizers() {
    sanitized("wal_test");
}

/// The first ```c block of the crate's README.
fn readme_program() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let start = readme.find("```c\n").expect("README.md has a ```c block") + "```c\n".len();
    let len = readme[start..]
        .find("```")
        .expect("the ```c block is closed");
    readme[start..start + len].to_string()
}

#[test]
fn the_readme_quick_start_builds_and_runs() {
    let Some(cc) = compiler() else {
        eprintln!("no C compiler (cc or $CC): the README's program was not built");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("app.c");
    std::fs::write(&source, readme_program()).unwrap();
    let app = dir.path().join("app");
    build_source(&cc, &source, &[], &app);
    let db = dir.path().join("db");
    for round in 0..2 {
        // The second run opens the database the first created.
        let out = Command::new(&app).arg(&db).output().unwrap();
        assert!(
            out.status.success(),
            "round {round}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "key = value\n");
    }
}
