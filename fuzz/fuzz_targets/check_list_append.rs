#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| isolde_fuzz::check_list_append(data));
