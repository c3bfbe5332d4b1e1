//! The bodies of the cargo-fuzz targets in `fuzz/`, as library functions: libFuzzer runs them
//! through `fuzz/fuzz_targets/*.rs`, and `tests/fuzz_replay.rs` runs every committed corpus and
//! regression input through the same functions under plain `cargo test` on the stable toolchain.
//!
//! Each body states the invariant it checks: any input either fails with a one-line error, or
//! gives a model whose state stays finite. A panic anywhere is a finding.

use std::path::Path;

use weft_core::limits::Limits;
use weft_kernels::{KernelPath, StepOptions};

/// Limits small enough that a fuzzer's inputs cannot make a run slow or large: a finding must be
/// a wrong answer, not a big scene.
pub const FUZZ_LIMITS: Limits = Limits { max_particles: 4096, max_constraints: 32_768, max_steps: 1_000_000 };

/// Time steps a scene that builds is advanced by.
const FUZZ_STEPS: usize = 2;

/// Scene text → parse, validate, build, and (if it builds) a couple of time steps.
///
/// Checks: an error's message is one line; a built model has finite state before and after
/// stepping, and its report agrees with its constraint sets.
pub fn scene_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // `load_scene` turns non-UTF-8 files into an error before parsing
    };
    let scene = match weft_io::parse_scene(text, Path::new("fuzz.toml"), &FUZZ_LIMITS) {
        Ok(scene) => scene,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    let mut model = match scene.build_model() {
        Ok(model) => model,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    let report = model.report().clone();
    assert_eq!(report.stretch + report.shear, model.distance().len());
    assert!(model.particles().all_finite(), "a valid scene starts finite");
    // Iterations × steps bounded so that one input stays fast.
    if model.settings().iterations <= 64 {
        for _ in 0..FUZZ_STEPS {
            weft_kernels::step(&mut model, &StepOptions { path: KernelPath::Simd, residual: true });
        }
        assert!(model.particles().all_finite(), "finite input never produces a non-finite position");
    }
}

fn assert_one_line(message: &str) {
    assert!(!message.is_empty() && !message.contains('\n'), "error messages are one line: {message:?}");
}
