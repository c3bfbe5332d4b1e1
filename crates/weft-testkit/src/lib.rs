//! # weft-testkit — what weft's tests and fuzz targets share (unpublished)
//!
//! This crate's one job is to hold the test-only code of the workspace, so that the product does
//! not depend on it (nor on `arbitrary` or `weft-reference`, which only this code needs):
//!
//! * [`fuzzing`]: the bodies of the cargo-fuzz targets in `fuzz/`, also replayed by `cargo test`;
//! * [`models`]: model builders and state comparisons shared by the tests;
//! * [`examples`]: the registry's example keys of each constraint kind, as a cloth's keys;
//! * [`cli`]: running the `weft` binary from its integration tests and reading what it wrote.

pub mod cli;
pub mod examples;
pub mod fuzzing;
pub mod models;
