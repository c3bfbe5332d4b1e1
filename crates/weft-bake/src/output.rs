//! What a bake writes after each frame, off the solver's path: [`Output`], fed by a
//! [`FrameWriter`].
//!
//! After a frame the bake copies the particle positions into a buffer and hands it to its
//! [`FrameWriter`] as a [`Frame`]. When the machine has more than one core, one thread of its own
//! writes the frames it is handed, in order: it measures the largest stretch (unless the stepper
//! measured it, baking to a strain tolerance), counts the intersecting triangle pairs on the
//! frames measured fully, writes the `stats.csv` row and every cache's sample, and hands the
//! buffer back. The solver runs up to [`BUFFERS`] − 1 frames ahead of it, so that a frame whose
//! count takes longer than a frame's steps does not hold the solver up. The writer is settled
//! (every frame handed to it written, the output back on the bake's thread) before a
//! checkpoint, which records what the files hold, and after the last frame. On a machine of one
//! core the frames are written in line. Every figure comes from the copied positions, so the
//! files are the same bytes either way, and the same for any thread count.
//!
//! Where the solver leaves a core free, the writing thread measures (the count and the largest
//! stretch) on a pool of one thread of its own; where the solver takes every core, both measures
//! run on the solver's threads, in line, before the frame is handed over (measured on one thread
//! beside a solver on every core, they would take a core from it, and a solver thread waiting
//! at a barrier for the one put aside waits for the whole measure). The writes, copies into the
//! system's file cache, stay on the writing thread either way.
//!
//! Measured (`weft bench --only bake`, ms per frame, medians of interleaved rounds, 2-core
//! machine; 5-substep × 1-iteration rigid grids, PC2 written): see docs/performance.md, "Where a
//! bake's time goes".

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::thread::{Scope, ScopedJoinHandle};

use weft_core::Model;
use weft_core::model::ClothInfo;
use weft_core::normals::vertex_normals;
use weft_io::{CacheFormat, CacheWriter, StagedFile};

use crate::stats::{Quality, StretchEdges, stats_row};
use crate::{BakeError, FrameStats};

/// Position buffers a bake holds: the frame being captured and those handed to the writer and
/// not yet written. The solver runs at most `BUFFERS − 1` frames ahead of the writer.
pub(crate) const BUFFERS: usize = 3;

/// A point in m.
type P = [f32; 3];

/// One open cache: the cloth it belongs to (index into the model's cloths), whether it holds the
/// cloth's render mesh (else its particles), its name and its writer.
pub(crate) struct OpenCache {
    pub(crate) cloth: usize,
    pub(crate) render: bool,
    pub(crate) name: String,
    pub(crate) format: CacheFormat,
    pub(crate) writer: Box<dyn CacheWriter>,
}

/// What the output writes of one state of the model.
pub(crate) struct Frame {
    /// The particle positions, m (a copy: the model steps on).
    positions: Vec<P>,
    /// The frame's `stats.csv` row, its intersections not yet counted; `None` for the initial
    /// state (sample 0), which has no row.
    row: Option<FrameStats>,
    /// Whether the intersecting triangle pairs are still to be counted.
    count: bool,
    /// The intersecting triangle pairs, once counted (in line, before the frame is handed over,
    /// where the writing thread does not count).
    intersections: Option<u64>,
    /// Whether the row's largest stretch is still to be measured (the stepper measures it only
    /// baking to a strain tolerance).
    stretch: bool,
}

impl Frame {
    /// The state after a frame: its row, counted when `measured`, and its largest stretch
    /// measured here unless `stretch_measured`.
    pub(crate) fn after(positions: Vec<P>, row: FrameStats, measured: bool, stretch_measured: bool) -> Self {
        Frame { positions, row: Some(row), count: measured, intersections: None, stretch: !stretch_measured }
    }

    /// The initial state: sample 0, its intersections counted (the report's
    /// `start_intersections`).
    pub(crate) fn start(positions: Vec<P>) -> Self {
        Frame { positions, row: None, count: true, intersections: None, stretch: false }
    }
}

/// The files of a bake and what it needs to fill them from a frame's positions.
pub(crate) struct Output {
    /// Every cache, in the order the samples are written.
    pub(crate) caches: Vec<OpenCache>,
    /// `stats.csv`.
    pub(crate) stats: StagedFile,
    quality: Quality,
    /// One cloth's render mesh placed on its particles, reused from cache to cache.
    sample: Vec<P>,
    /// The vertex normals of a cloth with a render mesh, to place it, and their sums.
    normals: Vec<P>,
    normal_sums: Vec<[f64; 3]>,
}

impl Output {
    /// The output of a bake of `model` into `caches` and `stats`.
    pub(crate) fn new(model: &Model, caches: Vec<OpenCache>, stats: StagedFile) -> Self {
        Output {
            caches,
            stats,
            quality: Quality::new(model),
            sample: Vec::new(),
            normals: Vec::new(),
            normal_sums: Vec::new(),
        }
    }

    /// Stops writing, leaving every temporary file as it stands for a resumed bake (see
    /// [`weft_io::CacheWriter::suspend`]).
    pub(crate) fn suspend(self) {
        for cache in self.caches {
            cache.writer.suspend();
        }
        self.stats.suspend();
    }

    /// Counts `frame`'s intersecting pairs if they are still to be counted, on the current pool.
    fn count(&mut self, frame: &mut Frame) {
        if std::mem::take(&mut frame.count) {
            frame.intersections = Some(self.quality.intersections(&frame.positions));
        }
    }

    /// Writes `frame`, its passes on the current pool: its row, with the count and the stretch
    /// filled in where they are still to be measured, to `stats.csv`, and its positions to every
    /// cache; then records the row, or for the initial state its count, in `rows`. Returns the
    /// frame's buffer of positions, for another frame.
    fn write(
        &mut self,
        mut frame: Frame,
        cloths: &[ClothInfo],
        rows: &mut Rows,
    ) -> Result<Vec<P>, BakeError> {
        self.count(&mut frame);
        let (positions, intersections) = (&frame.positions, frame.intersections);
        let max_stretch = frame.stretch.then(|| self.quality.stretch(positions));
        let row = frame.row.map(|mut row| {
            row.intersections = intersections;
            row.max_stretch = max_stretch.unwrap_or(row.max_stretch);
            row
        });
        if let Some(row) = &row {
            let path = self.stats.target().to_path_buf();
            self.stats.write(stats_row(row).as_bytes()).map_err(|source| BakeError::File { path, source })?;
        }
        self.write_samples(positions, cloths)?;
        match row {
            Some(row) => rows.rows.push(row),
            None => rows.start = intersections,
        }
        Ok(frame.positions)
    }

    /// Writes `positions` to every cache: one sample. A cloth's render mesh is placed on its
    /// particles here (see `weft_core::binding`), in parallel on the current pool, once for all
    /// its caches; a cloth's particles are written from `positions` as they are.
    fn write_samples(&mut self, positions: &[P], cloths: &[ClothInfo]) -> Result<(), BakeError> {
        let mut placed = None;
        for cache in self.caches.iter_mut() {
            let cloth = &cloths[cache.cloth];
            let particles = &positions[cloth.particles.clone()];
            let sample = match cloth.render.as_ref().filter(|_| cache.render) {
                None => particles,
                Some(render) => {
                    if placed != Some(cache.cloth) {
                        vertex_normals(particles, &cloth.polygons, &mut self.normal_sums, &mut self.normals);
                        self.sample.resize(render.binding.len(), [0.0; 3]);
                        render.binding.place(particles, &cloth.triangles, &self.normals, &mut self.sample);
                        placed = Some(cache.cloth);
                    }
                    &self.sample[..]
                }
            };
            cache.writer.write_sample(sample).map_err(|source| BakeError::Cache {
                cloth: cache.name.clone(),
                format: cache.format,
                source,
            })?;
        }
        Ok(())
    }
}

/// What the output has written: the rows of the frames in frame order, and the initial state's
/// count.
#[derive(Default)]
struct Rows {
    rows: Vec<FrameStats>,
    start: Option<u64>,
}

/// The writing thread at work: where it is handed frames and hands their buffers back, and what
/// it returns when its frames run out (the output, the rows it wrote, and the error that
/// stopped it, if one did).
struct Writing<'scope> {
    frames: SyncSender<Frame>,
    buffers: Receiver<Vec<P>>,
    handle: ScopedJoinHandle<'scope, (Output, Rows, Result<(), BakeError>)>,
}

/// The body of the writing thread: writes every frame it is handed, in order, recording what each
/// gave after `rows` (the bake's, handed over and back, never copied), and hands each buffer
/// back, until the frames run out or a write fails.
fn serve(
    mut output: Output,
    mut rows: Rows,
    frames: Receiver<Frame>,
    buffers: Sender<Vec<P>>,
    cloths: &[ClothInfo],
) -> (Output, Rows, Result<(), BakeError>) {
    for frame in frames {
        match output.write(frame, cloths, &mut rows) {
            // The bake may be settling and no longer take buffers back: nothing is lost.
            Ok(positions) => _ = buffers.send(positions),
            Err(e) => return (output, rows, Err(e)),
        }
    }
    (output, rows, Ok(()))
}

/// Hands a bake's frames to its [`Output`]: to a thread of `scope` writing them while the next
/// frames step (see the [module docs](self)), or, on a machine of one core, written in line.
pub(crate) struct FrameWriter<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    cloths: &'scope [ClothInfo],
    /// The pool of one thread that writes frames beside the solver (`None`: written in line).
    pool: Option<Arc<rayon::ThreadPool>>,
    /// Whether the measures (the count and the largest stretch) run on that thread (else on the
    /// solver's, in line).
    measure_beside: bool,
    /// The stretch edges, for the largest stretch measured in line.
    stretch: Arc<StretchEdges>,
    /// The output when no thread is writing.
    parked: Option<Output>,
    /// The thread writing, while frames are handed to it.
    writing: Option<Writing<'scope>>,
    /// Position buffers not in use (every buffer is made up front: a bake's peak memory does
    /// not depend on how far the solver happens to run ahead).
    spare: Vec<Vec<P>>,
    /// What the frames written so far gave (grown as frames are baked, never reserved up front
    /// from a count in the scene; on the writing thread while it runs).
    rows: Rows,
}

impl<'scope, 'env> FrameWriter<'scope, 'env> {
    /// `output`, parked, writing the caches of `cloths` from the positions of `particles`
    /// particles: on a thread of `scope` beside a solver of `threads` threads when the machine
    /// has more than one core, measuring there when the solver leaves a core free (see the
    /// [module docs](self)), with [`BUFFERS`] buffers; in line with one.
    pub(crate) fn new(
        scope: &'scope Scope<'scope, 'env>,
        cloths: &'scope [ClothInfo],
        output: Output,
        particles: usize,
        threads: usize,
    ) -> Result<Self, BakeError> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let pool = (cores > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(1)
                    .thread_name(|_| "weft-output".to_string())
                    .build()
                    .map_err(|source| BakeError::ThreadPool { threads: 1, source })
            })
            .transpose()?;
        let buffers = if pool.is_some() { BUFFERS } else { 1 };
        Ok(FrameWriter {
            scope,
            cloths,
            pool: pool.map(Arc::new),
            measure_beside: threads < cores,
            stretch: output.quality.stretch_edges(),
            parked: Some(output),
            writing: None,
            spare: (0..buffers).map(|_| Vec::with_capacity(particles)).collect(),
            rows: Rows::default(),
        })
    }

    /// A buffer for the next frame's positions: a spare one, else the first the writing thread
    /// hands back (waiting for it).
    pub(crate) fn buffer(&mut self) -> Result<Vec<P>, BakeError> {
        if let Some(writing) = &self.writing {
            self.spare.extend(writing.buffers.try_iter());
        }
        if let Some(buffer) = self.spare.pop() {
            return Ok(buffer);
        }
        match self.writing.as_ref().map(|w| w.buffers.recv()) {
            Some(Ok(buffer)) => Ok(buffer),
            // The thread stopped on an error (its buffers come back with the output).
            _ => {
                self.settle()?;
                Ok(self.spare.pop().expect("every buffer is back once the writer is settled"))
            }
        }
    }

    /// Stage **emit**: hands `frame` to the writing thread (started if none is running), or
    /// writes it here on a machine of one core. The measures the writing thread would do on the
    /// solver's threads are done here first, in line: the count with the output back from the
    /// thread.
    pub(crate) fn emit(&mut self, mut frame: Frame) -> Result<(), BakeError> {
        if !self.measure_beside {
            if frame.count {
                self.settle()?.count(&mut frame);
            }
            if let Some(row) = frame.row.as_mut().filter(|_| frame.stretch) {
                row.max_stretch = self.stretch.max_stretch(&frame.positions);
                frame.stretch = false;
            }
        }
        if self.pool.is_none() {
            self.settle()?;
            let output = self.parked.as_mut().expect("the output is parked once settled");
            let positions = output.write(frame, self.cloths, &mut self.rows)?;
            self.spare.push(positions);
            return Ok(());
        }
        let writing = match &self.writing {
            Some(writing) => writing,
            None => self.start_writing(),
        };
        if writing.frames.send(frame).is_err() {
            // The thread stopped on an error: settling returns it.
            self.settle()?;
        }
        Ok(())
    }

    /// Settles the writer: every frame handed over written, and the output back here, parked (a
    /// checkpoint records what its files hold). Returns it, or the error that stopped a write.
    pub(crate) fn settle(&mut self) -> Result<&mut Output, BakeError> {
        if let Some(Writing { frames, buffers, handle }) = self.writing.take() {
            drop(frames);
            let (output, rows, result) =
                handle.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            self.spare.extend(buffers.try_iter());
            self.rows = rows;
            self.parked = Some(output);
            result?;
        }
        Ok(self.parked.as_mut().expect("the output is parked once settled"))
    }

    /// The output, every frame's row and the initial state's count, once the last frame is
    /// written.
    pub(crate) fn finish(mut self) -> Result<(Output, Vec<FrameStats>, Option<u64>), BakeError> {
        self.settle()?;
        let output = self.parked.take().expect("the output is parked once settled");
        Ok((output, self.rows.rows, self.rows.start))
    }

    /// Starts the writing thread with the parked output; it runs on the output's pool.
    fn start_writing(&mut self) -> &Writing<'scope> {
        let output = self.parked.take().expect("a writing thread starts from the parked output");
        let (frames, queue) = sync_channel(BUFFERS);
        let (returned, buffers) = channel();
        let (cloths, rows) = (self.cloths, std::mem::take(&mut self.rows));
        let pool = Arc::clone(self.pool.as_ref().expect("a writing thread runs on the output's pool"));
        let handle = self.scope.spawn(move || pool.install(|| serve(output, rows, queue, returned, cloths)));
        self.writing.insert(Writing { frames, buffers, handle })
    }
}
