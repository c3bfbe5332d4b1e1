//! The table `weft bench` prints: weft's performance figures, measured side by side in one run
//! (what they mean and how to read them: `docs/performance.md`).
//!
//! These machines are shared and noisy, so absolute times mean little; ratios measured in the same
//! run do. Every variant works on its own copy of the same model and the variants run in
//! interleaved rounds (A B C D, A B C D, …), so a slow phase of the machine hits all of them
//! alike. A rate is the median over rounds; a ratio is the median of the per-round ratios.
//!
//! Rows:
//! * **distance projections per second** on a 128×128 and a 512×512 grid (stretch and shear
//!   constraints, colour batches): the scalar twin of the kernels on one thread, the SIMD kernels
//!   on one thread, and on all threads; with the ratios SIMD / scalar twin and N threads / 1
//!   thread. The sweeps of a round run in one team, as a step runs its iterations. (The reference
//!   solver is not part of the product: its figures are in the criterion benches, `cargo bench
//!   --bench kernels` from the repository root.);
//! * **projections per second of every other batched kind** (bending, tethers, any kind of the
//!   registry the bench cloth has) on a 128×128 hanging cloth with bending and tethers, after it
//!   has fallen for a while (so hinges are bent and tethers taut): the scalar twin and the SIMD
//!   kernels, each on one thread, and their ratio;
//! * **milliseconds per frame** of whole time steps (prediction, iterations, velocity update) on
//!   hanging 128×128 and 512×512 cloths, on one thread and on all threads, with the parameters.
//! * **self-collision**: milliseconds per frame of the collapsed cloth pile of
//!   `examples/pile.toml` (contacts between its layers) and of the demo flag swinging at 32
//!   substeps with `self_collision = true` (few contacts: what finding them costs), on one thread
//!   and on all threads, and without self-collision on one thread.
//! * **mesh collider**: milliseconds per frame of a 128×128 hanging cloth pressed by a ball, the
//!   ball a triangle mesh (an icosphere of 5,120 triangles), an analytic sphere, or absent; on one
//!   thread and on all threads;
//! * **quality measure**: what a bake measures after every frame (intersecting triangle pairs,
//!   largest stretch) on a 512×512 hanging cloth, against the frame it follows.
//! * **the steps against the whole bake**: milliseconds per frame of the time steps alone and of
//!   a whole bake (statistics, quality measure, cache writes) of 64², 128² and 256² comparison
//!   grids ([`crate::scenes::comparison_grid`]), on one thread and on all threads
//!   ([`crate::step_and_bake`]).
//! * **time to accuracy**: what a bake costs that keeps a hanging cloth (the demo flag and a
//!   128×128 cloth) within 2 % strain from t = 1 s on: fixed 8 substeps × 4 iterations, plain
//!   more substeps, and a bake to a tolerance ([`crate::accuracy`]).
//!
//! After each section that runs on several threads, a line says what the machine gave while it
//! was measured: how many times one thread's work its threads did, apart and in lockstep, just
//! before and just after the section ([`crate::machine`]).

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::Context as _;
use rayon::{ThreadPool, ThreadPoolBuilder};
use weft_bake::stats::Quality;
use weft_core::batches::Batches;
use weft_core::kinds::distance::Distance;
use weft_core::kinds::{BatchedKind, KindId, SetVisitorMut};
use weft_core::limits::Limits;
use weft_core::self_collision::SelfCollisionMode;
use weft_core::{Model, ModelBuilder, SimSettings};
use weft_kernels::schedule::solve;
use weft_kernels::{KernelPath, StepOptions, Stepper};

use crate::accuracy::{DEMO_FLAG, FINE_CLOTH, QUICK_CLOTH, time_to_accuracy_rows};
use crate::machine;
use crate::memory::memory_rows;
use crate::pile::{PileShape, pile_cloth};
use crate::scenes::{ITERATIONS, SUBSTEPS, hanging_builder, hanging_cloth, hanging_grid};
use crate::step_and_bake::step_and_bake_rows;

/// Options of `weft bench`.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    /// Small grids and few rounds: a smoke test that finishes in about a second.
    pub quick: bool,
    /// The sections to measure (every one when empty).
    pub only: Vec<Section>,
}

/// A section of the table, to measure on its own (`weft bench --only NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Distance constraint projections per second.
    Distance,
    /// Bending and tether constraint projections per second.
    Kinds,
    /// Whole time steps of hanging cloths.
    Steps,
    /// The pile with and without self-collision.
    SelfCollision,
    /// A cloth pressed by a mesh ball, an analytic ball, or none.
    MeshCollider,
    /// The quality measure after a baked frame.
    Quality,
    /// The time steps against the whole bake of the comparison grids.
    Bake,
    /// Time to accuracy: fixed substeps against a bake to a tolerance.
    Accuracy,
    /// The peak heap of a bake per particle, against the estimate.
    Memory,
}

impl Section {
    /// Every section, in the table's order.
    pub const ALL: [Section; 9] = [
        Section::Distance,
        Section::Kinds,
        Section::Steps,
        Section::SelfCollision,
        Section::MeshCollider,
        Section::Quality,
        Section::Bake,
        Section::Accuracy,
        Section::Memory,
    ];

    /// The section's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Section::Distance => "distance",
            Section::Kinds => "kinds",
            Section::Steps => "steps",
            Section::SelfCollision => "self-collision",
            Section::MeshCollider => "mesh-collider",
            Section::Quality => "quality",
            Section::Bake => "bake",
            Section::Accuracy => "accuracy",
            Section::Memory => "memory",
        }
    }
}

/// One measured variant: seconds per sweep in each round.
struct Series {
    label: String,
    seconds: Vec<f64>,
}

/// The median of `v` (the upper one of an even count).
pub(crate) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median over rounds of `a.seconds / b.seconds` (how many times faster `b` is than `a`).
fn speedup(slow: &Series, fast: &Series) -> f64 {
    median(slow.seconds.iter().zip(&fast.seconds).map(|(s, f)| s / f).collect())
}

/// A thread pool of `threads` workers.
pub(crate) fn pool(threads: usize) -> anyhow::Result<ThreadPool> {
    ThreadPoolBuilder::new().num_threads(threads).build().context("cannot start a thread pool")
}

/// Times `sweeps` distance sweeps of one variant (one round).
type Sweep<'a> = Box<dyn FnMut(usize) -> f64 + 'a>;

/// A sweep of the kernels over a copy of `model`, on `pool`.
fn kernel_sweep<'a>(model: &Model, path: KernelPath, pool: &'a ThreadPool) -> Sweep<'a> {
    let mut model = model.clone();
    let step = model.settings().time_step();
    // The displacements a step carries, which every correction moves too.
    let mut moves = vec![[0.0; 4]; model.particles().positions().len()];
    Box::new(move |sweeps| {
        let parts = model.parts_mut();
        let p = parts.particles;
        let moves = &mut moves;
        let (lanes, lambda) = parts.sets.distance.lanes_and_lambda_mut();
        pool.install(|| {
            // All sweeps of a round in one team, as a time step runs its iterations.
            let start = Instant::now();
            solve(Distance, &lanes, lambda, p.positions, moves, p.prev_positions, &step, path, sweeps);
            start.elapsed().as_secs_f64()
        })
    })
}

/// `sweeps` solver iterations of the set of kind `kind` (and of no other), as
/// [`SetVisitorMut`] reaches it.
struct SolveOne<'m> {
    kind: KindId,
    positions: &'m mut [weft_kernels::records::Record],
    moves: &'m mut [weft_kernels::records::Record],
    prev: &'m [weft_kernels::records::Record],
    step: weft_core::settings::TimeStep,
    path: KernelPath,
    sweeps: usize,
}

impl SetVisitorMut<'_> for SolveOne<'_> {
    fn visit<T: BatchedKind<K, P>, const K: usize, const P: usize>(
        &mut self,
        kind: T,
        set: &mut Batches<K, P>,
    ) {
        if T::ID == self.kind {
            let (lanes, lambda) = set.lanes_and_lambda_mut();
            let (x, d, prev, step) = (&mut *self.positions, &mut *self.moves, self.prev, &self.step);
            solve(kind, &lanes, lambda, x, d, prev, step, self.path, self.sweeps);
        }
    }
}

/// A sweep of one kind's kernels over a copy of `model`, on `pool`.
fn kind_sweep<'a>(model: &Model, kind: KindId, path: KernelPath, pool: &'a ThreadPool) -> Sweep<'a> {
    let mut model = model.clone();
    let step = model.settings().time_step();
    let mut moves = vec![[0.0; 4]; model.particles().positions().len()];
    Box::new(move |sweeps| {
        let parts = model.parts_mut();
        let p = parts.particles;
        let mut one = SolveOne {
            kind,
            positions: p.positions,
            moves: &mut moves,
            prev: p.prev_positions,
            step,
            path,
            sweeps,
        };
        pool.install(|| {
            let start = Instant::now();
            parts.sets.visit_mut(&mut one);
            start.elapsed().as_secs_f64()
        })
    })
}

/// Times `variants` in interleaved rounds of `sweeps` each (after one warm-up round); returns the
/// seconds per sweep of each variant in each round.
fn measure(variants: &mut [(String, Sweep<'_>)], sweeps: usize, rounds: usize) -> Vec<Series> {
    for (_, sweep) in variants.iter_mut() {
        sweep(sweeps); // warm up caches and the pools
    }
    let mut series: Vec<Series> =
        variants.iter().map(|(label, _)| Series { label: label.clone(), seconds: Vec::new() }).collect();
    for _ in 0..rounds {
        for (s, (_, sweep)) in series.iter_mut().zip(variants.iter_mut()) {
            s.seconds.push(sweep(sweeps) / sweeps as f64);
        }
    }
    series
}

/// Enough sweeps per round that `probe` (one sweep) takes about 40 ms in all.
fn sweeps_for(probe: &mut Sweep<'_>) -> usize {
    let seconds = probe(1).max(1e-6);
    ((0.04 / seconds).ceil() as usize).clamp(1, 10_000)
}

/// Runs the rows of every batched kind but distance on an `n × n` hanging cloth that has fallen
/// for 0.25 s.
fn kind_rows(n: u32, rounds: usize, out: &mut String) -> anyhow::Result<()> {
    let mut model = hanging_cloth(n, true)?;
    let one = pool(1)?;
    one.install(|| {
        for _ in 0..15 * SUBSTEPS {
            weft_kernels::step(&mut model, &StepOptions::default());
        }
    });
    // Every batched kind but distance (which has rows of its own), on the cloth that has them all.
    let reports = model.report().sets.clone();
    for (kind, set) in reports.iter().filter(|(kind, set)| *kind != KindId::Distance && set.constraints > 0) {
        let (name, count) = (kind.info().name, set.constraints);
        let mut variants: Vec<(String, Sweep<'_>)> = vec![
            ("scalar twin, 1 thread".into(), kind_sweep(&model, kind, KernelPath::Scalar, &one)),
            ("SIMD, 1 thread".into(), kind_sweep(&model, kind, KernelPath::Simd, &one)),
        ];
        let sweeps = sweeps_for(&mut variants[0].1);
        let series = measure(&mut variants, sweeps, rounds);
        writeln!(
            out,
            "\n{n}×{n} hanging cloth, {name}: {count} constraints in {} blocks + {} across blocks, \
             {:.1}% lane fill; {sweeps} sweeps per round, {rounds} rounds",
            set.blocks,
            set.across(),
            set.fill * 100.0
        )?;
        writeln!(out, "  {:<34} {:>12} {:>12}", "variant", "Mproj/s", "ms/sweep")?;
        for s in &series {
            let t = median(s.seconds.clone());
            writeln!(out, "  {:<34} {:>12.1} {:>12.3}", s.label, count as f64 / t / 1e6, t * 1e3)?;
        }
        writeln!(out, "  SIMD vs its scalar twin, 1 thread:  {:.2}×", speedup(&series[0], &series[1]))?;
    }
    Ok(())
}

/// Runs the distance-projection rows for an `n × n` grid.
fn distance_rows(n: u32, rounds: usize, threads: usize, out: &mut String) -> anyhow::Result<()> {
    let model = hanging_grid(n)?;
    let constraints = model.sets().distance.len();
    let (one, all) = (pool(1)?, pool(threads)?);
    let mut variants: Vec<(String, Sweep<'_>)> = vec![
        ("scalar twin, 1 thread".into(), kernel_sweep(&model, KernelPath::Scalar, &one)),
        ("SIMD, 1 thread".into(), kernel_sweep(&model, KernelPath::Simd, &one)),
        (format!("SIMD, {threads} threads"), kernel_sweep(&model, KernelPath::Simd, &all)),
    ];
    // Enough sweeps per round that the slowest variant (the scalar twin) takes about 40 ms.
    let sweeps = sweeps_for(&mut variants[0].1);
    let series = measure(&mut variants, sweeps, rounds);
    let fill = model.report().sets.distance.fill * 100.0;
    let r = model.report();
    let boundary = r.sets.distance.across();
    writeln!(
        out,
        "\n{n}×{n} grid: {constraints} distance constraints (stretch + shear) in {} blocks \
         (≤ {} colours each) + {boundary} across blocks, {fill:.1}% lane fill; {sweeps} sweeps per \
         round, {rounds} rounds",
        r.sets.distance.blocks, r.sets.distance.block_colours
    )?;
    writeln!(out, "  {:<34} {:>12} {:>12}", "variant", "Mproj/s", "ms/sweep")?;
    for s in &series {
        let t = median(s.seconds.clone());
        writeln!(out, "  {:<34} {:>12.1} {:>12.3}", s.label, constraints as f64 / t / 1e6, t * 1e3)?;
    }
    let [scalar, simd, parallel] = [&series[0], &series[1], &series[2]];
    writeln!(out, "  SIMD vs its scalar twin, 1 thread:  {:.2}×", speedup(scalar, simd))?;
    writeln!(out, "  SIMD {threads} threads vs 1 thread:       {:.2}×", speedup(simd, parallel))?;
    Ok(())
}

/// Seconds per frame (the model's substeps, time steps) of each `(model, pool)` in each of `rounds` rounds,
/// the runs interleaved within a round, after one warm-up round. Each run keeps one
/// [`Stepper`] throughout, as a bake does, so its buffers are allocated in the warm-up round.
fn frame_seconds(runs: &mut [(Model, &ThreadPool)], rounds: usize) -> Vec<Vec<f64>> {
    let mut seconds = vec![Vec::with_capacity(rounds); runs.len()];
    let mut steppers: Vec<Stepper> = runs.iter().map(|_| Stepper::new(StepOptions::default())).collect();
    for round in 0..=rounds {
        for (k, (m, pool)) in runs.iter_mut().enumerate() {
            let stepper = &mut steppers[k];
            let start = Instant::now();
            pool.install(|| {
                for _ in 0..m.settings().substeps {
                    stepper.step(m);
                }
            });
            if round > 0 {
                seconds[k].push(start.elapsed().as_secs_f64());
            }
        }
    }
    seconds
}

/// Runs the frame-time rows for an `n × n` hanging cloth.
fn frame_rows(n: u32, rounds: usize, threads: usize, out: &mut String) -> anyhow::Result<()> {
    let model = hanging_grid(n)?;
    let (one, all) = (pool(1)?, pool(threads)?);
    let mut runs: Vec<(Model, &ThreadPool)> = vec![(model.clone(), &one), (model, &all)];
    let seconds: [Vec<f64>; 2] = frame_seconds(&mut runs, rounds).try_into().expect("two runs");
    let ratio = median(seconds[0].iter().zip(&seconds[1]).map(|(a, b)| a / b).collect());
    let [t1, tn] = seconds.map(median);
    writeln!(
        out,
        "  {n}×{n} hanging cloth ({} particles, {} constraints; 60 fps, {SUBSTEPS} substeps, \
         {ITERATIONS} iterations): {:.2} ms/frame on 1 thread, {:.2} ms/frame on {threads} ({ratio:.2}×)",
        runs[0].0.particles().len(),
        runs[0].0.sets().distance.len(),
        t1 * 1e3,
        tn * 1e3,
    )?;
    Ok(())
}

/// The pile of `examples/pile.toml` (see [`crate::pile`](mod@crate::pile)) at 60 fps, [`SUBSTEPS`] substeps and
/// [`ITERATIONS`] iterations, with self-collision (2.5 cm thickness, friction 0.3) or without,
/// after it has collapsed for `settle` time steps on `threads` threads (so layers lie on layers).
fn settled_pile(
    shape: &PileShape,
    self_collision: Option<SelfCollisionMode>,
    settle: u32,
) -> anyhow::Result<Model> {
    let settings = SimSettings {
        fps: 60.0,
        substeps: SUBSTEPS,
        iterations: ITERATIONS,
        velocity_damping: 1.0,
        ..SimSettings::default()
    };
    let mut builder = ModelBuilder::new(settings, Limits::default())?;
    let mut cloth = pile_cloth(shape, None);
    if let Some(mode) = self_collision {
        let thickness = if mode == SelfCollisionMode::Particles { 0.025 } else { 0.005 };
        cloth.self_collision =
            Some(weft_core::self_collision::SelfCollisionDesc { thickness, friction: 0.3 });
        cloth.self_collision_mode = mode;
    }
    builder.add_cloth(&cloth)?;
    let mut model = builder.build()?;
    for _ in 0..settle {
        weft_kernels::step(&mut model, &StepOptions::default());
    }
    Ok(model)
}

/// Substeps per frame of the folding sheet of the self-collision rows.
const FOLD_SUBSTEPS: u32 = 16;

/// `examples/fold.toml` ([`FOLD_SCENE`](crate::scenes::FOLD_SCENE): a sheet whose edge is carried
/// over it and laid on top), with surface self-collision or without, at a fixed
/// [`FOLD_SUBSTEPS`] substeps, after `settle` frames of 1/60 s on the current pool.
fn folding_sheet(self_collision: bool, settle: u32) -> anyhow::Result<Model> {
    let text = crate::scenes::FOLD_SCENE;
    let text: String = if self_collision {
        text.to_string()
    } else {
        text.lines().filter(|l| !l.starts_with("self_")).map(|l| format!("{l}\n")).collect()
    };
    stepped_scene(&text, "fold.toml", FOLD_SUBSTEPS, settle)
}

/// The model of scene `text` (named `file` in messages) at a fixed `substeps` per frame, after
/// `settle` frames stepped on the current pool.
fn stepped_scene(text: &str, file: &str, substeps: u32, settle: u32) -> anyhow::Result<Model> {
    let scene = weft_io::scene::parse_scene(text, std::path::Path::new(file), &Limits::default())?;
    let mut model = scene.build_model()?;
    model.set_substeps(substeps)?;
    let mut stepper = Stepper::new(StepOptions::default());
    for _ in 0..settle * substeps {
        stepper.step(&mut model);
    }
    Ok(model)
}

/// Substeps per frame of the swinging flag of the self-collision rows.
const FLAG_SUBSTEPS: u32 = 32;

/// The flag of `weft demo` (`examples/flag.toml`: 48 × 32 particles on 1.6 m × 1.0 m, two
/// corners pinned, tethered as a bake to a tolerance tethers it) with self-collision (3.5 cm,
/// about its particle spacing; no friction) or without, at a fixed [`FLAG_SUBSTEPS`] substeps of
/// one iteration, after it has swung down for `settle` frames of 1/30 s on the current pool.
fn swinging_flag(self_collision: bool, settle: u32) -> anyhow::Result<Model> {
    let cloth = if self_collision { "self_collision = true\nself_thickness = 0.035" } else { "" };
    let text =
        crate::accuracy::scene_text(DEMO_FLAG.resolution, DEMO_FLAG.size, 90, "max_strain = 0.02", cloth);
    stepped_scene(&text, "flag.toml", FLAG_SUBSTEPS, settle)
}

/// Runs the self-collision rows: the collapsed pile (particle and surface self-collision), the
/// folding sheet (surface) and the swinging demo flag (particles), milliseconds per
/// frame with self-collision on 1 thread and on all threads, and without self-collision on 1
/// thread (what it costs).
fn self_collision_rows(quick: bool, rounds: usize, threads: usize, out: &mut String) -> anyhow::Result<()> {
    let shape =
        if quick { PileShape { layers: 3, width: 0.1, ..Default::default() } } else { PileShape::default() };
    let settle = if quick { 24 } else { 96 };
    let (one, all) = (pool(1)?, pool(threads)?);
    let off = one.install(|| settled_pile(&shape, None, settle))?;
    for (mode, what) in
        [(SelfCollisionMode::Particles, "particles 2.5 cm"), (SelfCollisionMode::Triangles, "triangles 5 mm")]
    {
        let on = one.install(|| settled_pile(&shape, Some(mode), settle))?;
        let what = format!(
            "pile, {} layers ({} particles; self-collision {what}, 60 fps, {SUBSTEPS} substeps, {ITERATIONS} iterations)",
            shape.layers,
            on.particles().len()
        );
        on_and_off_row(&what, on, off.clone(), (&one, &all), rounds, out)?;
    }
    let settle = if quick { 40 } else { 90 };
    let on = one.install(|| folding_sheet(true, settle))?;
    let off = one.install(|| folding_sheet(false, settle))?;
    let what = format!(
        "folding sheet (examples/fold.toml) after {:.1} s ({} particles; self-collision triangles 4 mm, \
         60 fps, {FOLD_SUBSTEPS} substeps, 1 iteration)",
        settle as f64 / 60.0,
        on.particles().len()
    );
    on_and_off_row(&what, on, off, (&one, &all), rounds, out)?;
    let settle = if quick { 3 } else { 30 };
    let on = one.install(|| swinging_flag(true, settle))?;
    let off = one.install(|| swinging_flag(false, settle))?;
    let what = format!(
        "demo flag swinging after {:.1} s ({} particles; self-collision 3.5 cm, 30 fps, {FLAG_SUBSTEPS} substeps, \
         1 iteration)",
        settle as f64 / 30.0,
        on.particles().len()
    );
    on_and_off_row(&what, on, off, (&one, &all), rounds, out)
}

/// One self-collision row: `on` stepped on 1 thread and on all (`pools`), `off` (the same cloth
/// without self-collision) on 1 thread, interleaved; milliseconds per frame and the ratios.
fn on_and_off_row(
    what: &str,
    on: Model,
    off: Model,
    (one, all): (&ThreadPool, &ThreadPool),
    rounds: usize,
    out: &mut String,
) -> anyhow::Result<()> {
    let mut runs: Vec<(Model, &ThreadPool)> = vec![(on.clone(), one), (on, all), (off, one)];
    let seconds: [Vec<f64>; 3] = frame_seconds(&mut runs, rounds).try_into().expect("three runs");
    let ratio = median(seconds[0].iter().zip(&seconds[1]).map(|(a, b)| a / b).collect());
    let cost = median(seconds[0].iter().zip(&seconds[2]).map(|(a, b)| a / b).collect());
    let [t1, tn, t0] = seconds.map(median);
    writeln!(
        out,
        "  {what}: {:.2} ms/frame on 1 thread, {:.2} ms/frame on {} ({ratio:.2}×); {:.2} ms/frame without \
         self-collision on 1 thread (self-collision on costs {cost:.2}× that, median of per-round ratios)",
        t1 * 1e3,
        tn * 1e3,
        all.current_num_threads(),
        t0 * 1e3,
    )?;
    Ok(())
}

/// The 128×128 hanging cloth (or `n × n`) pressed 0.1 m deep by a ball of radius 0.25 m that
/// comes from behind it in the first 0.2 s and stays: a mesh (an icosphere of 5,120 triangles),
/// an analytic sphere, or nothing; after 0.25 s, so the contacts are established.
fn pressed_cloth(n: u32, ball: Option<bool>) -> anyhow::Result<Model> {
    let mut builder = hanging_builder(n, false)?;
    let keys = vec![
        weft_core::collider::RigidKey::at([0.5, 0.5, -0.3]),
        weft_core::collider::RigidKey { time: 0.2, ..weft_core::collider::RigidKey::at([0.5, 0.5, -0.15]) },
    ];
    let (thickness, friction) = (0.005, weft_core::collider::Friction::default());
    match ball {
        Some(true) => {
            let (vertices, triangles) = weft_core::shapes::icosphere(4, 0.25, [0.0; 3]);
            builder.add_mesh_collider(&weft_core::mesh_collider::MeshColliderDesc {
                name: "ball".into(),
                triangles,
                frames: vec![vertices],
                keys,
                thickness,
                friction,
                ..Default::default()
            })?;
        }
        Some(false) => {
            builder.add_collider(&weft_core::collider::ColliderDesc {
                name: "ball".into(),
                shape: weft_core::collider::ColliderShape::Sphere { radius: 0.25 },
                keys,
                thickness,
                friction,
            })?;
        }
        None => {}
    }
    let mut model = builder.build()?;
    for _ in 0..(0.25 * model.settings().fps * SUBSTEPS as f64) as u32 {
        weft_kernels::step(&mut model, &StepOptions::default());
    }
    Ok(model)
}

/// Runs the mesh-collider row (see [`pressed_cloth`]).
fn mesh_collider_rows(n: u32, rounds: usize, threads: usize, out: &mut String) -> anyhow::Result<()> {
    let (one, all) = (pool(1)?, pool(threads)?);
    let mesh = one.install(|| pressed_cloth(n, Some(true)))?;
    let sphere = one.install(|| pressed_cloth(n, Some(false)))?;
    let bare = one.install(|| pressed_cloth(n, None))?;
    let mut runs: Vec<(Model, &ThreadPool)> =
        vec![(mesh.clone(), &one), (mesh, &all), (sphere, &one), (bare, &one)];
    let seconds: [Vec<f64>; 4] = frame_seconds(&mut runs, rounds).try_into().expect("four runs");
    let per_round =
        |a: usize, b: usize| median(seconds[a].iter().zip(&seconds[b]).map(|(x, y)| x / y).collect());
    let (ratio, vs_sphere, vs_bare) = (per_round(0, 1), per_round(0, 2), per_round(0, 3));
    let [t1, tn, ts, t0] = seconds.map(median);
    writeln!(
        out,
        "  {n}×{n} cloth pressed by a ball (mesh of 5,120 triangles): {:.2} ms/frame on 1 thread, \
         {:.2} ms/frame on {threads} ({ratio:.2}×); analytic sphere {:.2} ms/frame and no ball {:.2} \
         ms/frame on 1 thread (the mesh costs {vs_sphere:.2}× the sphere's frame, {vs_bare:.2}× the bare frame)",
        t1 * 1e3,
        tn * 1e3,
        ts * 1e3,
        t0 * 1e3,
    )?;
    Ok(())
}

/// Runs the quality-measure row: what a bake measures after every frame (intersecting triangle
/// pairs and the largest stretch), on an `n × n` hanging cloth after 0.25 s of fall, against the
/// frame it follows.
fn quality_rows(n: u32, rounds: usize, threads: usize, out: &mut String) -> anyhow::Result<()> {
    let (one, all) = (pool(1)?, pool(threads)?);
    let mut model = hanging_grid(n)?;
    all.install(|| {
        for _ in 0..15 * SUBSTEPS {
            weft_kernels::step(&mut model, &StepOptions::default());
        }
    });
    let mut quality = [Quality::new(&model), Quality::new(&model)];
    let mut frame = vec![(model.clone(), &one)];
    let mut seconds = [Vec::new(), Vec::new(), Vec::new()];
    for round in 0..=rounds {
        for (k, pool) in [&one, &all].into_iter().enumerate() {
            let start = Instant::now();
            let (pairs, _) = pool.install(|| quality[k].measure(&model));
            std::hint::black_box(pairs);
            if round > 0 {
                seconds[k].push(start.elapsed().as_secs_f64());
            }
        }
        if round > 0 {
            seconds[2].extend(frame_seconds(&mut frame, 1).into_iter().flatten());
        }
    }
    let per_round =
        |a: usize, b: usize| median(seconds[a].iter().zip(&seconds[b]).map(|(x, y)| x / y).collect());
    let (ratio, vs_frame) = (per_round(0, 1), per_round(0, 2));
    let [t1, tn, tf] = seconds.map(median);
    writeln!(
        out,
        "  {n}×{n} hanging cloth after 0.25 s ({} triangles): {:.2} ms on 1 thread, {:.2} ms on \
         {threads} ({ratio:.2}×); {vs_frame:.2}× its frame on 1 thread ({:.2} ms)",
        quality[0].triangle_count(),
        t1 * 1e3,
        tn * 1e3,
        tf * 1e3,
    )?;
    Ok(())
}

/// Runs the benchmark and returns the table as text.
pub fn run(options: &BenchOptions) -> anyhow::Result<String> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let (sizes, rounds, frame_rounds) = if options.quick { ([48, 96], 3, 2) } else { ([128, 512], 11, 5) };
    let mut out = String::new();
    writeln!(
        out,
        "weft {} bench: {} threads available; SIMD: {}\n\
         method: variants on copies of one model, interleaved rounds, medians of rates and of \
         per-round ratios",
        env!("CARGO_PKG_VERSION"),
        threads,
        weft_kernels::simd_level()
    )?;
    let wanted = |section: Section| options.only.is_empty() || options.only.contains(&section);
    if wanted(Section::Distance) {
        let title = "distance constraint projections (projections = constraints × sweeps)";
        probed(&mut out, title, threads, |out| {
            sizes.iter().try_for_each(|&n| distance_rows(n, rounds, threads, out))
        })?;
    }
    if wanted(Section::Kinds) {
        writeln!(out, "\nconstraint projections of the other batched kinds")?;
        kind_rows(sizes[0], rounds, &mut out)?;
    }
    if wanted(Section::Steps) {
        let title = "whole time steps (milliseconds per frame)";
        probed(&mut out, title, threads, |out| {
            sizes.iter().try_for_each(|&n| frame_rows(n, frame_rounds, threads, out))
        })?;
    }
    if wanted(Section::SelfCollision) {
        probed(&mut out, "self-collision (milliseconds per frame)", threads, |out| {
            self_collision_rows(options.quick, frame_rounds, threads, out)
        })?;
    }
    if wanted(Section::MeshCollider) {
        probed(&mut out, "mesh collider (milliseconds per frame)", threads, |out| {
            mesh_collider_rows(sizes[0], frame_rounds, threads, out)
        })?;
    }
    if wanted(Section::Quality) {
        let title = "quality measure after each baked frame (intersecting triangle pairs, largest stretch)";
        probed(&mut out, title, threads, |out| quality_rows(sizes[1], frame_rounds, threads, out))?;
    }
    if wanted(Section::Bake) {
        let (grids, frames): (&[u32], u32) =
            if options.quick { (&[32, 64], 5) } else { (&[64, 128, 256], 120) };
        probed(&mut out, "the time steps against the whole bake (milliseconds per frame)", threads, |out| {
            step_and_bake_rows(grids, frames, frame_rounds, threads, out)
        })?;
    }
    if wanted(Section::Accuracy) {
        writeln!(
            out,
            "\ntime to accuracy: a hanging cloth's largest stretch within 2 % from t = 1 s on \
             (milliseconds per frame of the whole bake, 1 thread; × the fixed 8 × 4)"
        )?;
        let (cloths, frames) =
            if options.quick { (&[QUICK_CLOTH][..], 31) } else { (&[DEMO_FLAG, FINE_CLOTH][..], 60) };
        time_to_accuracy_rows(cloths, frames, &mut out)?;
    }
    if wanted(Section::Memory) {
        writeln!(out, "\npeak heap of a bake (counted by the allocator)")?;
        let grids: &[u32] = if options.quick { &[32, 64] } else { &[64, 128, 256] };
        memory_rows(grids, &mut out)?;
    }
    Ok(out)
}

/// Writes the section `title` and its `rows` to `out`; on a machine of more than one thread,
/// with a line saying how many times one thread's work `threads` threads did together just
/// before and just after the rows ([`machine::capacity`]), so that the section's thread ratios
/// can be read against what the machine gave at the time.
fn probed(
    out: &mut String,
    title: &str,
    threads: usize,
    rows: impl FnOnce(&mut String) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    writeln!(out, "\n{title}")?;
    let probe = || (threads > 1).then(|| [false, true].map(|lockstep| machine::capacity(threads, lockstep)));
    let before = probe();
    rows(out)?;
    if let (Some([apart, lockstep]), Some([apart_after, lockstep_after])) = (before, probe()) {
        writeln!(
            out,
            "  the machine meanwhile: {threads} threads did {apart} one thread's work apart and {lockstep} in \
             lockstep just before these rows, {apart_after} and {lockstep_after} just after"
        )?;
    }
    Ok(())
}
