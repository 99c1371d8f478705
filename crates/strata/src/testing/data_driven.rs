//! The runner of the data-driven tests (Pebble's `testdata` format, through the `datadriven`
//! crate): a test names a file or a directory of cases under the crate, and a function that
//! turns each case's directive, arguments and input into the output the file expects.
//! `REWRITE=1` in the environment rewrites the expected outputs.

/// Runs every case of the data-driven test file or directory `path` (relative to the crate)
/// through `f`, with a state of type `S` shared by the cases of a file; returns how many ran.
pub fn run<S: Default>(
    path: &str,
    mut f: impl FnMut(&mut datadriven::TestCase, &mut S) -> Result<String, String>,
) -> usize {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let mut ran = 0;
    datadriven::walk(&path, |file| {
        let mut state = S::default();
        file.run(|case| {
            ran += 1;
            f(case, &mut state)
        });
    });
    ran
}

/// Sets `$field` from the directive argument `$name` if the case has it:
/// `take_arg!(case, "trigger", options.trigger)`.
macro_rules! take_arg {
    ($case:expr, $name:literal, $field:expr) => {
        if let Some(v) = $case.try_take_arg($name).map_err(|e| e.to_string())? {
            $field = v;
        }
    };
}
pub(crate) use take_arg;
