//! Builds `tests/c/api_test.c` with the system C compiler against `include/strata.h` and the
//! static library, and runs it: once plainly, once with AddressSanitizer and
//! UndefinedBehaviorSanitizer, whose leak checker fails the run if the program leaks what the
//! API hands it (so the ownership rules of the header are exercised, not only stated).
//! Skipped, saying so, where no C compiler is installed.

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
    works.then_some(cc)
}

/// Compiles the test program with `flags` to `out`.
fn build(cc: &str, flags: &[&str], out: &Path) {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = static_library();
    let status = Command::new(cc)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-g"])
        .args(flags)
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("tests/c/api_test.c"))
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
    assert!(status.success(), "{cc} failed to build the C test");
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

#[test]
fn the_c_test_program_passes() {
    let Some(cc) = compiler() else {
        eprintln!("no C compiler (cc or $CC): the C test program was not built");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("api_test");
    build(&cc, &["-O1"], &plain);
    run(&plain, &[]);
}

#[test]
fn the_c_test_program_passes_under_sanitizers() {
    let Some(cc) = compiler() else {
        eprintln!("no C compiler (cc or $CC): the sanitizer build was not made");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let checked = dir.path().join("api_test_asan");
    build(
        &cc,
        &[
            "-O1",
            "-fsanitize=address,undefined",
            "-fno-omit-frame-pointer",
        ],
        &checked,
    );
    run(
        &checked,
        &[
            ("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0"),
            ("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1"),
        ],
    );
}
