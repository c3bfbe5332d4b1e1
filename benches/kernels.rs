//! Criterion benches of the distance kernel: the reference solver, the kernels' scalar twin on
//! one thread, the SIMD kernels on one thread and on all threads, on 128×128 and 512×512 grids;
//! and whole frames of the hanging 128×128 cloth.
//!
//! ```text
//! cargo bench -p weft-benches                      # measure (throughput in projections/s)
//! cargo bench -p weft-benches -- --profile-time 5  # flamegraphs instead, one per bench:
//!     target/criterion/<group>/<bench>/profile/flamegraph.svg
//! ```
//!
//! The reference solver is measured here only (`weft bench` leaves it out: it is not part of the
//! product). For the side-by-side ratio table in one run, use `weft bench` (`docs/performance.md`).

use std::fs::File;
use std::path::Path;

use criterion::profiler::Profiler;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rayon::ThreadPoolBuilder;
use weft_bench::hanging_grid;
use weft_kernels::{KernelPath, StepOptions};
use weft_reference::ReferenceSolver;

/// Criterion's `--profile-time` hook around pprof's sampling profiler: a flamegraph per bench.
/// (pprof's own `criterion` feature is written for criterion 0.5; this is the same in a few lines.)
struct Flamegraph {
    frequency: i32,
    guard: Option<pprof::ProfilerGuard<'static>>,
}

impl Profiler for Flamegraph {
    fn start_profiling(&mut self, _benchmark_id: &str, _benchmark_dir: &Path) {
        self.guard = Some(pprof::ProfilerGuard::new(self.frequency).expect("start pprof"));
    }

    fn stop_profiling(&mut self, _benchmark_id: &str, benchmark_dir: &Path) {
        let Some(guard) = self.guard.take() else { return };
        std::fs::create_dir_all(benchmark_dir).expect("create the profile folder");
        let path = benchmark_dir.join("flamegraph.svg");
        let report = guard.report().build().expect("build the pprof report");
        report.flamegraph(File::create(&path).expect("create flamegraph.svg")).expect("write the flamegraph");
        eprintln!("flamegraph: {}", path.display());
    }
}

/// Sweeps per bench iteration: the iterations of one time step of the standard scenes.
const SWEEPS: usize = 8;

fn distance(c: &mut Criterion) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let one = ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let all = ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    for n in [128, 512] {
        let model = hanging_grid(n).unwrap();
        let mut group = c.benchmark_group(format!("distance/{n}x{n}"));
        // One iteration of a bench is SWEEPS sweeps in one team, as a step runs its iterations.
        group.throughput(Throughput::Elements(SWEEPS as u64 * model.sets().distance.len() as u64));
        if n > 128 {
            group.sample_size(20);
        }

        let mut reference = ReferenceSolver::from_model(&model);
        group.bench_function("reference_1t", |b| {
            b.iter(|| (0..SWEEPS).map(|_| reference.project_distances()).sum::<u64>())
        });

        let cases = [("scalar_1t", KernelPath::Scalar, &one), ("simd_1t", KernelPath::Simd, &one)];
        let all_threads = format!("simd_{threads}t");
        for (name, path, pool) in cases.into_iter().chain([(all_threads.as_str(), KernelPath::Simd, &all)]) {
            let mut m = model.clone();
            let step = m.settings().time_step();
            let mut moves = vec![[0.0; 4]; m.particles().positions().len()];
            group.bench_function(BenchmarkId::from_parameter(name), |b| {
                let parts = m.parts_mut();
                let p = parts.particles;
                let (lanes, lambda) = parts.sets.distance.lanes_and_lambda_mut();
                b.iter(|| {
                    pool.install(|| {
                        weft_kernels::schedule::solve(
                            weft_core::kinds::distance::Distance,
                            &lanes,
                            lambda,
                            p.positions,
                            &mut moves,
                            p.prev_positions,
                            &step,
                            path,
                            SWEEPS,
                        )
                    })
                })
            });
        }
        group.finish();
    }
}

fn frame(c: &mut Criterion) {
    let mut model = hanging_grid(128).unwrap();
    let substeps = model.settings().substeps;
    let mut group = c.benchmark_group("frame/128x128");
    group.throughput(Throughput::Elements(1));
    group.bench_function("simd_all_threads", |b| {
        b.iter(|| {
            for _ in 0..substeps {
                weft_kernels::step(&mut model, &StepOptions::default());
            }
        })
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().with_profiler(Flamegraph { frequency: 997, guard: None });
    targets = distance, frame
}
criterion_main!(benches);
