//! Bytes → a small triangle soup → the intersecting-pair count of the bake's statistics, against testing every pair.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft_testkit::fuzzing::triangle_pairs(data));
