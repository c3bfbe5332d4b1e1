//! Running the `weft` binary from the cross-crate tests, and reading what it wrote.
#![allow(dead_code, unreachable_pub)]

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// The `weft` binary cargo built for these tests.
pub const WEFT: &str = env!("CARGO_BIN_EXE_weft");

/// Runs `weft` with `args` (without the backtrace variables of the caller's environment, so a
/// panic message is the one line a user would see).
pub fn weft<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    Command::new(WEFT)
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE")
        .output()
        .expect("weft runs")
}

/// Runs `weft` and insists that it succeeds.
pub fn weft_ok<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> Output {
    let output = weft(args);
    assert!(output.status.success(), "weft failed: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// Every file of `dir` by name, with its bytes.
pub fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap())
        })
        .collect()
}
