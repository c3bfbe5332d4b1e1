//! Structured random scene → build, then SIMD and reference steps side by side: a clean error, or finite positions, counted degenerate lanes, and agreement where well conditioned.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft_testkit::fuzzing::arbitrary_scene(data));
