//! PC2 bytes → the cache reader: a one-line error or a cache that writes back to the same bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft_testkit::fuzzing::pc2_bytes(data));
