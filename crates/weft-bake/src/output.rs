//! What a bake writes after each frame, off the solver's path: [`Output`].
//!
//! After a frame the bake copies the particle positions into its [`Output`]. When the machine has
//! a core the solver's threads leave free, it hands the output to a thread of its own, which
//! counts the intersecting triangle pairs, writes the `stats.csv` row and writes every cache's
//! sample while the solver steps the next frame; otherwise (the solver on every core) it writes
//! in line, counting on the solver's threads. The bake takes the `Output` back before it hands
//! over the next frame, so rows and samples are written in frame order, and before a checkpoint,
//! which records what the files hold; between frames a [`FrameWriter`] holds it (parked, or on
//! the thread writing the last frame). Every figure comes from the copied positions, so the files
//! are the same bytes either way.
//!
//! Measured (ms per frame, medians of three interleaved rounds, 2-core machine; a 5-substep
//! × 1-iteration rigid grid, PC2 written): 128² on one thread 22.4 in line, 14.7 on a thread of
//! its own; 64² 4.7 and 3.6. With the solver on both cores a thread of its own made the 128² bake
//! slower (15.9 against 19.0): the count then takes a core from the solver, and runs on one
//! thread instead of two.

use std::thread::{Scope, ScopedJoinHandle};

use weft_core::Model;
use weft_core::model::ClothInfo;
use weft_core::normals::vertex_normals;
use weft_io::{CacheFormat, CacheWriter, StagedFile};

use crate::stats::{Quality, stats_row};
use crate::{BakeError, FrameStats};

/// One open cache: the cloth it belongs to (index into the model's cloths), whether it holds the
/// cloth's render mesh (else its particles), its name and its writer.
pub(crate) struct OpenCache {
    pub(crate) cloth: usize,
    pub(crate) render: bool,
    pub(crate) name: String,
    pub(crate) format: CacheFormat,
    pub(crate) writer: Box<dyn CacheWriter>,
}

/// The files of a bake and what it needs to fill them from a frame's positions.
pub(crate) struct Output {
    /// Every cache, in the order the samples are written.
    pub(crate) caches: Vec<OpenCache>,
    /// `stats.csv`.
    pub(crate) stats: StagedFile,
    quality: Quality,
    /// The particle positions of the frame being written, m.
    positions: Vec<[f32; 3]>,
    /// One cloth's positions (its particles', or its render mesh's), reused from cache to cache.
    sample: Vec<[f32; 3]>,
    /// The vertex normals of a cloth with a render mesh, to place it, and their sums.
    normals: Vec<[f32; 3]>,
    normal_sums: Vec<[f64; 3]>,
    /// Written on a thread of its own: one thread for the intersection count's parallel passes,
    /// so that they never take the solver's threads. `None`: written in line, counted on the
    /// solver's threads.
    pool: Option<rayon::ThreadPool>,
}

impl Output {
    /// The output of a bake of `model` into `caches` and `stats`, written on a thread of its own
    /// when `beside` (see [`Output::beside`]).
    pub(crate) fn new(
        model: &Model,
        caches: Vec<OpenCache>,
        stats: StagedFile,
        beside: bool,
    ) -> Result<Self, BakeError> {
        let pool = beside
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|_| "weft-output".to_string())
                    .build()
                    .map_err(|source| BakeError::ThreadPool { threads: 1, source })
            })
            .transpose()?;
        Ok(Output {
            caches,
            stats,
            quality: Quality::new(model),
            positions: Vec::new(),
            sample: Vec::new(),
            normals: Vec::new(),
            normal_sums: Vec::new(),
            pool,
        })
    }

    /// Stops writing, leaving every temporary file as it stands for a resumed bake (see
    /// [`weft_io::CacheWriter::suspend`]).
    pub(crate) fn suspend(self) {
        for cache in self.caches {
            cache.writer.suspend();
        }
        self.stats.suspend();
    }

    /// Whether frames are written on a thread of their own, beside the solver.
    pub(crate) fn beside(&self) -> bool {
        self.pool.is_some()
    }

    /// Copies `model`'s particle positions: what [`Output::write_frame`] and
    /// [`Output::write_samples`] write next.
    pub(crate) fn capture(&mut self, model: &Model) {
        self.positions.clear();
        self.positions.extend(model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]));
    }

    /// The intersecting triangle pairs of the captured positions, counted on the current pool.
    pub(crate) fn intersections(&mut self) -> u64 {
        self.quality.intersections(&self.positions)
    }

    /// Counts the intersecting triangle pairs of the captured positions into `row` if `count`,
    /// writes the row to `stats.csv` and the positions to every cache; returns the row.
    pub(crate) fn write_frame(
        &mut self,
        mut row: FrameStats,
        count: bool,
        cloths: &[ClothInfo],
    ) -> Result<FrameStats, BakeError> {
        let (quality, positions) = (&mut self.quality, &self.positions);
        row.intersections = count.then(|| match &self.pool {
            Some(pool) => pool.install(|| quality.intersections(positions)),
            None => quality.intersections(positions),
        });
        let path = self.stats.target().to_path_buf();
        self.stats.write(stats_row(&row).as_bytes()).map_err(|source| BakeError::File { path, source })?;
        self.write_samples(cloths)?;
        Ok(row)
    }

    /// Writes the captured positions to every cache: one sample.
    /// A cloth's render mesh is placed on its particles here (see `weft_core::binding`), in
    /// parallel on the output's thread or the solver's.
    pub(crate) fn write_samples(&mut self, cloths: &[ClothInfo]) -> Result<(), BakeError> {
        let mut filled = None;
        for cache in self.caches.iter_mut() {
            let cloth = &cloths[cache.cloth];
            if filled != Some((cache.cloth, cache.render)) {
                let particles = &self.positions[cloth.particles.clone()];
                self.sample.clear();
                match cloth.render.as_ref().filter(|_| cache.render) {
                    None => self.sample.extend_from_slice(particles),
                    Some(render) => {
                        vertex_normals(particles, &cloth.polygons, &mut self.normal_sums, &mut self.normals);
                        self.sample.resize(render.binding.len(), [0.0; 3]);
                        let (normals, sample) = (&self.normals, &mut self.sample);
                        let mut place = || render.binding.place(particles, &cloth.triangles, normals, sample);
                        match &self.pool {
                            Some(pool) => pool.install(place),
                            None => place(),
                        }
                    }
                }
                filled = Some((cache.cloth, cache.render));
            }
            cache.writer.write_sample(&self.sample).map_err(|source| BakeError::Cache {
                cloth: cache.name.clone(),
                format: cache.format,
                source,
            })?;
        }
        Ok(())
    }
}

/// An [`Output`] back from writing a frame, with the frame's row or the error that stopped it.
type Written = (Output, Result<FrameStats, BakeError>);

/// Where a bake's [`Output`] is while the frames are baked: parked here, or on the thread of
/// `scope` writing the last frame; and the rows of the frames written so far.
pub(crate) struct FrameWriter<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    cloths: &'scope [ClothInfo],
    writing: Option<ScopedJoinHandle<'scope, Written>>,
    parked: Option<Output>,
    /// One row per frame written, in frame order (grown as frames are baked, never reserved up
    /// front from a count in the scene).
    rows: Vec<FrameStats>,
}

impl<'scope, 'env> FrameWriter<'scope, 'env> {
    /// `output`, parked, writing the caches of `cloths` on threads of `scope`.
    pub(crate) fn new(
        scope: &'scope Scope<'scope, 'env>,
        cloths: &'scope [ClothInfo],
        output: Output,
    ) -> Self {
        FrameWriter { scope, cloths, writing: None, parked: Some(output), rows: Vec::new() }
    }

    /// The output, back from the thread writing the last frame (its row recorded), or from where
    /// it was parked when no frame is being written.
    pub(crate) fn take_back(&mut self) -> Result<Output, BakeError> {
        match self.writing.take() {
            Some(handle) => {
                let (output, row) = handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                self.rows.push(row?);
                Ok(output)
            }
            None => Ok(self.parked.take().expect("the output is parked when no frame is being written")),
        }
    }

    /// Stage **emit**: writes `row` (its intersections counted if `measured`) and the positions
    /// `out` captured: on a thread of its own while the next frame steps when `out` has one and
    /// not `in_line`; else here, and then returns the output, parked (a checkpoint records what
    /// its files hold).
    pub(crate) fn emit(
        &mut self,
        mut out: Output,
        row: FrameStats,
        measured: bool,
        in_line: bool,
    ) -> Result<Option<&mut Output>, BakeError> {
        if out.beside() && !in_line {
            let cloths = self.cloths;
            self.writing = Some(self.scope.spawn(move || {
                let row = out.write_frame(row, measured, cloths);
                (out, row)
            }));
            return Ok(None);
        }
        self.rows.push(out.write_frame(row, measured, self.cloths)?);
        Ok(Some(self.parked.insert(out)))
    }

    /// The output and every frame's row, once the last frame is written.
    pub(crate) fn finish(mut self) -> Result<(Output, Vec<FrameStats>), BakeError> {
        let output = self.take_back()?;
        Ok((output, self.rows))
    }
}
