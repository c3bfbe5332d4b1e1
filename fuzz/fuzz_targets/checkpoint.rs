//! Checkpoint bytes → the checkpoint reader: a one-line error or a checkpoint that encodes back to
//! the same bytes.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| weft_testkit::fuzzing::checkpoint_bytes(data));
