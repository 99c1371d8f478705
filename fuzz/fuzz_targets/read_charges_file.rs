#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::internals::fuzzing::read_charges_file(data));
