//! `weft.bake()`: a scene baked as `weft bake` bakes it, on a thread of its own while the caller
//! keeps the GIL free, telling a Python callable of every frame, and stopped by Ctrl-C (or by
//! the callable raising) after a frame with its checkpoint kept.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use weft_bake::stats::StatsLevel;
use weft_bake::{BakeOptions, CheckpointPolicy, Progress, bake_with_progress, write_summary};
use weft_io::CacheFormat;
use weft_kernels::KernelPath;

use crate::scene::scene_arg;
use crate::values::table_to_python;
use crate::weft_error;

/// How often the waiting caller looks for a signal (Ctrl-C) while no frame ends.
const POLL: Duration = Duration::from_millis(50);

/// Bakes `scene` (a `weft.Scene`, a dict laid out as a scene file, or a path) into `out`, as
/// `weft bake SCENE --out OUT` does, and returns the fields of the `summary.toml` it writes.
#[pyfunction]
#[pyo3(signature = (
    scene, out, *, formats = None, threads = None, progress = None, resume = false,
    stats = "light", kernel = "simd", checkpoint_every = None
))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn bake<'py>(
    py: Python<'py>,
    scene: &Bound<'py, PyAny>,
    out: PathBuf,
    formats: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
    progress: Option<Bound<'py, PyAny>>,
    resume: bool,
    stats: &str,
    kernel: &str,
    checkpoint_every: Option<u32>,
) -> PyResult<Bound<'py, PyDict>> {
    let scene = scene_arg(py, scene)?;
    let options = BakeOptions {
        formats: formats.map(cache_formats).transpose()?.unwrap_or_else(|| vec![CacheFormat::Pc2]),
        threads,
        kernel: kernel_path(kernel)?,
        stats: stats_level(stats)?,
        resume,
        checkpoints: match checkpoint_every {
            None => CheckpointPolicy::default(),
            Some(0) => CheckpointPolicy::Never,
            Some(n) => CheckpointPolicy::EveryFrames(n),
        },
        ..BakeOptions::new(&out)
    };
    let scene = scene.get();
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel();
    let rx = Mutex::new(rx);
    // The first Python exception raised while baking: Ctrl-C, or the progress callable's.
    let mut raised: Option<PyErr> = None;
    let result = std::thread::scope(|s| {
        let baking = s.spawn(|| {
            let mut told = Told { tx, stop: &stop, frames: 0 };
            let report = bake_with_progress(&scene.inner, &options, &mut told)?;
            write_summary(&scene.inner, &options, &report)
        });
        loop {
            let next = py.detach(|| rx.lock().expect("only this thread receives").recv_timeout(POLL));
            match next {
                Ok((frame, frames)) => {
                    if let (Some(callable), None) = (&progress, &raised)
                        && let Err(e) = callable.call1((frame, frames))
                    {
                        raised = Some(e);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if raised.is_none()
                && let Err(e) = py.check_signals()
            {
                raised = Some(e);
            }
            if raised.is_some() {
                stop.store(true, Ordering::Relaxed);
            }
        }
        baking.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    if let Some(e) = raised {
        return Err(e);
    }
    let summary = result.map_err(weft_error)?;
    let text =
        std::fs::read_to_string(&summary).map_err(|e| weft_error(format!("{}: {e}", summary.display())))?;
    let table: toml::Table =
        toml::from_str(&text).map_err(|e| weft_error(format!("{}: {e}", summary.display())))?;
    table_to_python(py, &table)
}

/// The bake's progress, told to the waiting caller: `(frame, frames)` after every frame; and
/// whether the caller asked to stop.
struct Told<'a> {
    tx: Sender<(u32, u32)>,
    stop: &'a AtomicBool,
    frames: u32,
}

impl Progress for Told<'_> {
    fn start(&mut self, frames: u32, _substeps: u32) {
        self.frames = frames;
    }

    fn frame_done(&mut self, frame: u32) {
        // The caller may have stopped listening (it raised); the bake goes on to its stop.
        let _ = self.tx.send((frame, self.frames));
    }

    fn should_stop(&mut self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// Cache formats from `"pc2"`, `"pc2,usd"` or a sequence of names (any case).
pub(crate) fn cache_formats(formats: &Bound<'_, PyAny>) -> PyResult<Vec<CacheFormat>> {
    let names: Vec<String> = match formats.cast::<PyString>() {
        Ok(s) => s.extract::<String>()?.split(',').map(|n| n.trim().to_string()).collect(),
        Err(_) => formats
            .extract()
            .map_err(|_| weft_error("formats: give a sequence of format names, e.g. (\"pc2\", \"usd\")"))?,
    };
    names.iter().map(|n| n.parse::<CacheFormat>().map_err(weft_error)).collect()
}

/// `"simd"` or `"scalar"`.
pub(crate) fn kernel_path(kernel: &str) -> PyResult<KernelPath> {
    match kernel {
        "simd" => Ok(KernelPath::Simd),
        "scalar" => Ok(KernelPath::Scalar),
        other => Err(weft_error(format!("kernel '{other}': use simd or scalar"))),
    }
}

/// `"full"`, `"light"` or `"off"`.
fn stats_level(stats: &str) -> PyResult<StatsLevel> {
    match stats {
        "full" => Ok(StatsLevel::Full),
        "light" => Ok(StatsLevel::Light),
        "off" => Ok(StatsLevel::Off),
        other => Err(weft_error(format!("stats '{other}': use full, light or off"))),
    }
}
