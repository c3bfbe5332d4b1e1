//! Running a command-line binary from the tests, and reading what it wrote.
//!
//! A test names the binary cargo built for it, then runs it:
//!
//! ```text
//! use weft_testkit::cli::Bin;
//! const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));
//! let output = WEFT.run_ok(["--version"]);
//! ```

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// A binary under test, by its path (`env!("CARGO_BIN_EXE_<name>")` in an integration test).
#[derive(Debug, Clone, Copy)]
pub struct Bin(pub &'static str);

impl Bin {
    /// Runs the binary with `args` (without the backtrace variables of the caller's environment,
    /// so a panic message is the one line a user would see).
    pub fn run<S: AsRef<OsStr>>(self, args: impl IntoIterator<Item = S>) -> Output {
        Command::new(self.0)
            .args(args)
            .env_remove("RUST_BACKTRACE")
            .env_remove("RUST_LIB_BACKTRACE")
            .output()
            .expect("the binary runs")
    }

    /// Runs the binary and insists that it succeeds.
    pub fn run_ok<S: AsRef<OsStr>>(self, args: impl IntoIterator<Item = S>) -> Output {
        let output = self.run(args);
        assert!(output.status.success(), "{} failed: {}", self.0, String::from_utf8_lossy(&output.stderr));
        output
    }
}

/// Every file of `dir` by name, with its bytes, but `summary.toml`: the one file of a bake that
/// holds timings (so differs from run to run), which tests read on their own.
pub fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name() != "summary.toml")
        .map(|e| (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap()))
        .collect()
}
