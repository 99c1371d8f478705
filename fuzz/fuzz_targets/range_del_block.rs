#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| strata::internals::range_del::range_del_block(data));
