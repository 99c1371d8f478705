#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::fuzzing::block_reader(data));
