//! How to bake: [`BakeOptions`].

use std::path::PathBuf;

use weft_core::limits::Limits;
use weft_io::CacheFormat;
use weft_kernels::KernelPath;

use crate::checkpointing::CheckpointPolicy;
use crate::stats::StatsLevel;

/// How to bake.
#[derive(Debug, Clone, PartialEq)]
pub struct BakeOptions {
    /// Directory the caches and `stats.csv` are written to; created (with its parents) if missing.
    pub out_dir: PathBuf,
    /// Cache formats to write, each once (repeats are ignored); empty means `[Pc2]`.
    pub formats: Vec<CacheFormat>,
    /// Threads of the rayon pool the bake runs in. `None`: as many as the model has work for
    /// ([`crate::fitted_threads`]: one for a small cloth, else rayon's default); `Some(0)`:
    /// rayon's default (`RAYON_NUM_THREADS`, else one per logical CPU). The output does not
    /// depend on it.
    pub threads: Option<usize>,
    /// SIMD lanes or the scalar instantiation of the kernels (same bits either way).
    pub kernel: KernelPath,
    /// Resource limits the model is built under.
    pub limits: Limits,
    /// When to write checkpoints (`DIR/weft.checkpoint`; see [`crate::checkpointing`]).
    pub checkpoints: CheckpointPolicy,
    /// How much is measured after each frame for `stats.csv` ([`StatsLevel`]).
    pub stats: StatsLevel,
    /// Go on from the checkpoint in the output directory if it belongs to this bake; otherwise
    /// (none, or another bake's) start from frame 0 and say why in [`BakeReport::resume_note`](crate::BakeReport::resume_note).
    pub resume: bool,
    /// For tests of resuming: abort the process, as a crash would (no destructor runs, the
    /// temporary files stay), right after the checkpoint of this frame.
    pub crash_after_checkpoint: Option<u32>,
}

impl BakeOptions {
    /// PC2 into `out_dir`, the thread count the model has work for, the SIMD kernels, default limits,
    /// checkpoints every 30 s, [`StatsLevel::Light`] statistics, no resuming.
    pub fn new(out_dir: impl Into<PathBuf>) -> Self {
        BakeOptions {
            out_dir: out_dir.into(),
            formats: vec![CacheFormat::Pc2],
            threads: None,
            kernel: KernelPath::Simd,
            limits: Limits::default(),
            checkpoints: CheckpointPolicy::default(),
            stats: StatsLevel::default(),
            resume: false,
            crash_after_checkpoint: None,
        }
    }

    /// The formats to write: [`BakeOptions::formats`] without repeats, in the order given, or
    /// `[Pc2]` if none is given.
    pub fn effective_formats(&self) -> Vec<CacheFormat> {
        let mut formats: Vec<CacheFormat> = Vec::new();
        for &f in &self.formats {
            if !formats.contains(&f) {
                formats.push(f);
            }
        }
        if formats.is_empty() {
            formats.push(CacheFormat::Pc2);
        }
        formats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_default_and_deduplicate() {
        let mut o = BakeOptions::new("x");
        o.formats.clear();
        assert_eq!(o.effective_formats(), vec![CacheFormat::Pc2]);
        o.formats = vec![CacheFormat::Usd, CacheFormat::Pc2, CacheFormat::Usd];
        assert_eq!(o.effective_formats(), vec![CacheFormat::Usd, CacheFormat::Pc2]);
    }
}
