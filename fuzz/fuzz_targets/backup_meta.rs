#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::internals::fuzzing::backup_meta(data));
