//! `weft bench`: the side-by-side performance table of DESIGN §6 (work in progress).

/// Options of `weft bench`.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    /// Run a shorter measurement (for smoke tests).
    pub quick: bool,
}

/// Runs the benchmark and returns the table as text.
pub fn run(options: &BenchOptions) -> anyhow::Result<String> {
    let _ = options;
    Ok(String::from("weft bench: not written yet\n"))
}
