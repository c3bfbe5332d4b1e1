//! OBJ bytes (first byte: options) → parse + topology + model build + two steps: a one-line error or a finite model.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft_testkit::fuzzing::obj_bytes(data));
