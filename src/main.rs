//! The `weft` command line: bake a scene, validate it, run the demo, run the benchmark, draw the
//! report of a bake.
//!
//! On failure it prints one line, `error: <message>`, on stderr and exits with status 1; usage
//! errors keep clap's status 2.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::LazyLock;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use weft::bake::stats::StatsLevel;
use weft::bake::{BakeOptions, BakeReport, CheckpointPolicy, bake_with_progress, write_summary};
use weft::core::limits::Limits;
use weft::core::self_collision::ThinParticleContacts;
use weft::io::{CacheFormat, Scene, load_scene, load_scene_variant, wedge_variants};
use weft::kernels::KernelPath;

mod batch;
mod progress;
mod summary;

use progress::Bar;

/// `<version> (<SIMD level>)`, shown by `weft --version`.
static VERSION: LazyLock<String> =
    LazyLock::new(|| format!("{} ({})", env!("CARGO_PKG_VERSION"), weft::kernels::simd_level()));

/// XPBD cloth solver and offline cloth baker.
#[derive(Debug, Parser)]
#[command(name = "weft", version = VERSION.as_str(), propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Bake a scene into caches (PC2, USD, OBJ sequence) and stats.csv
    Bake(BakeArgs),
    /// Check a scene and report the model it builds, or the first error
    Validate(ValidateArgs),
    /// Bake the built-in demo (a flag held by two corners); needs no files
    Demo(DemoArgs),
    /// Print the side-by-side performance table
    Bench(BenchArgs),
    /// Draw PNG plots of a bake's stats.csv and preview images of its frames
    Report(ReportArgs),
}

#[derive(Debug, Args)]
struct BakeArgs {
    /// The scene file (TOML); several bake as a batch sharing the threads, each into DIR/<file stem>/
    #[arg(value_name = "SCENE", required = true)]
    scenes: Vec<PathBuf>,
    /// Directory to write the caches, stats.csv and summary.toml to (created if missing)
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// Bake variant I of the scene's [wedge] only, into DIR/<variant name>/ (without it, a scene
    /// with a [wedge] bakes every variant)
    #[arg(long, value_name = "I")]
    wedge_index: Option<usize>,
    #[command(flatten)]
    output: OutputArgs,
    #[command(flatten)]
    limits: LimitArgs,
    /// Go on from the checkpoint in DIR if it belongs to this bake (otherwise bake from frame 0)
    #[arg(long)]
    resume: bool,
    /// Write a checkpoint (DIR/weft.checkpoint) every N frames; 0: never [default: every 30 s]
    #[arg(long, value_name = "N")]
    checkpoint_every: Option<u32>,
    /// For tests: abort right after the checkpoint of frame N, as a crash would
    #[arg(long, value_name = "N", hide = true)]
    crash_after_checkpoint: Option<u32>,
}

#[derive(Debug, Args)]
struct ValidateArgs {
    /// The scene file (TOML)
    scene: PathBuf,
    #[command(flatten)]
    limits: LimitArgs,
}

#[derive(Debug, Args)]
struct DemoArgs {
    /// Directory to write the caches, stats.csv and demo.toml to (created if missing)
    #[arg(short, long, value_name = "DIR", default_value = weft::demo::DEFAULT_OUT_DIR)]
    out: PathBuf,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Args)]
struct BenchArgs {
    /// A shorter measurement (a smoke test, not figures to quote)
    #[arg(long)]
    quick: bool,
    /// Measure only these sections of the table (comma-separated, or the flag repeated): distance,
    /// kinds, steps, self-collision, mesh-collider, quality, bake, accuracy, memory
    #[arg(long, value_name = "SECTION", value_delimiter = ',', value_parser = bench_section)]
    only: Vec<weft::bench::Section>,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Bake folders (a `weft bake --out` folder); several: the variants of a sweep, side by side
    #[arg(required = true, value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Frames to preview (0 is the initial state; comma-separated) [default: one folder: the
    /// first, three between and the last; several: each one's last]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    frames: Vec<u32>,
    /// Folder to write the images to (created if missing) [default: DIR/report; several folders:
    /// their shared parent's report/]
    #[arg(short, long, value_name = "OUTDIR")]
    out: Option<PathBuf>,
    /// Draw the bakes with this scene file instead of the one their summary.toml names (for bakes
    /// without summary.toml)
    #[arg(long, value_name = "FILE")]
    scene: Option<PathBuf>,
}

/// The heap counted, for the memory rows of `weft bench` (no allocation happens per time step,
/// so the count costs nothing measurable).
#[global_allocator]
static HEAP: weft::bench::memory::Counting = weft::bench::memory::Counting;

/// A `weft bench --only` section by its name.
fn bench_section(name: &str) -> Result<weft::bench::Section, String> {
    weft::bench::Section::ALL.into_iter().find(|s| s.name() == name).ok_or_else(|| {
        let names: Vec<_> = weft::bench::Section::ALL.iter().map(|s| s.name()).collect();
        format!("no section '{name}'; the sections: {}", names.join(", "))
    })
}

/// Flags shared by `bake` and `demo`.
#[derive(Debug, Args)]
struct OutputArgs {
    /// Cache formats: pc2, usd, obj (repeat the flag or give a comma list) [default: pc2]
    #[arg(
        short,
        long = "format",
        value_name = "FORMAT",
        value_delimiter = ',',
        ignore_case = true,
        value_parser = PossibleValuesParser::new(["pc2", "usd", "obj"])
            .try_map(|s| s.parse::<CacheFormat>()),
    )]
    formats: Vec<CacheFormat>,
    /// Worker threads (the output is the same for any number) [default: one for a cloth of at
    /// most 4,096 particles, unless it has surface self-collision, or particle self-collision
    /// with 2,048 particles or more; else one per logical CPU]
    #[arg(short = 'j', long, value_name = "N",
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Kernel instantiation (both give the same bits)
    #[arg(long, value_enum, default_value_t = KernelArg::Simd)]
    kernel: KernelArg,
    /// No progress bar and no summary (errors are still printed)
    #[arg(short, long)]
    quiet: bool,
    /// What stats.csv measures: full (residuals, deep particles and intersecting triangle pairs
    /// after every frame), light (those after the first and last frames and about every 240 time
    /// steps × iterations), off (only the largest stretch and the substeps)
    #[arg(long, value_enum, default_value_t = StatsArg::Light)]
    stats: StatsArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum StatsArg {
    /// Every frame measured fully
    Full,
    /// Frames measured fully about every 240 sweeps, and the first and last
    Light,
    /// No frame measured fully
    Off,
}

/// Resource limits, checked before anything of that size is allocated.
#[derive(Debug, Args)]
struct LimitArgs {
    /// Most particles in the scene
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_particles)]
    max_particles: u64,
    /// Most constraints in the scene
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_constraints)]
    max_constraints: u64,
    /// Most time steps (frames × substeps) in a bake
    #[arg(long, value_name = "N", default_value_t = Limits::default().max_steps)]
    max_steps: u64,
    /// Largest scene file, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_scene_bytes)]
    max_scene_bytes: u64,
    /// Largest mesh (OBJ) file, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = Limits::default().max_mesh_bytes)]
    max_mesh_bytes: u64,
}

impl LimitArgs {
    fn limits(&self) -> Limits {
        Limits {
            max_particles: self.max_particles,
            max_constraints: self.max_constraints,
            max_steps: self.max_steps,
            max_scene_bytes: self.max_scene_bytes,
            max_mesh_bytes: self.max_mesh_bytes,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KernelArg {
    /// f32x8 SIMD lanes
    Simd,
    /// The same kernels one constraint at a time
    Scalar,
}

impl OutputArgs {
    /// The progress bar of a bake: drawn unless `--quiet` or stderr is not a terminal.
    fn progress(&self) -> Bar {
        Bar::new(!self.quiet && io::stderr().is_terminal())
    }

    fn bake_options(&self, out_dir: &Path, limits: Limits) -> BakeOptions {
        BakeOptions {
            out_dir: out_dir.to_path_buf(),
            formats: self.formats.clone(),
            threads: self.threads.map(usize::from),
            kernel: match self.kernel {
                KernelArg::Simd => KernelPath::Simd,
                KernelArg::Scalar => KernelPath::Scalar,
            },
            limits,
            stats: match self.stats {
                StatsArg::Full => StatsLevel::Full,
                StatsArg::Light => StatsLevel::Light,
                StatsArg::Off => StatsLevel::Off,
            },
            ..BakeOptions::new(out_dir)
        }
    }
}

/// A failure: one line for stderr.
struct Failure(String);

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure(e.to_string())
    }
}

fn main() -> ExitCode {
    std::panic::set_hook(Box::new(|info| {
        // A panic is a bug in weft, never an answer to input: say so on one line, no backtrace.
        let message = one_line(&info.to_string());
        let _ = writeln!(io::stderr(), "error: internal error (please report this bug): {message}");
    }));
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure(message)) => {
            let _ = writeln!(io::stderr(), "error: {}", one_line(&message));
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Bake(args) => bake(args),
        Command::Validate(args) => {
            let limits = args.limits.limits();
            let variants = wedge_variants(&args.scene, &limits)?;
            let scene = match variants.first() {
                None => load_scene(&args.scene, &limits)?,
                Some(first) => load_scene_variant(&args.scene, &limits, first.index)?,
            };
            let model = scene.build_model()?;
            let mut text = format!("scene:          {}\n", args.scene.display());
            text.push_str(&weft::validate::describe(&model));
            if !variants.is_empty() {
                // Every variant is read and built: the first that fails is the error.
                for v in &variants[1..] {
                    load_scene_variant(&args.scene, &limits, v.index)?.build_model()?;
                }
                text.push_str(&weft::validate::wedge_list(&variants));
            }
            text.push_str("ok: the scene is valid\n");
            print(&text)
        }
        Command::Demo(args) => {
            let options = args.output.bake_options(&args.out, Limits::default());
            let demo = weft::demo::run(&options, &mut args.output.progress())?;
            let files = [demo.bake.files.as_slice(), std::slice::from_ref(&demo.summary)].concat();
            if !args.output.quiet {
                print_summary(&demo.bake, &files);
            }
            print(&format!(
                "demo: {}\n  scene: {}\n  again: {} bake {} --out {}\n",
                summary::file_list(&files),
                demo.scene.display(),
                summary::this_program(),
                summary::shell_word(&demo.scene.display().to_string()),
                summary::shell_word(&args.out.join("again").display().to_string()),
            ))
        }
        Command::Bench(args) => {
            let table = weft::bench::run(&weft::bench::BenchOptions { quick: args.quick, only: args.only })
                .map_err(|e| Failure(format!("{e:#}")))?;
            print(&table)
        }
        Command::Report(args) => {
            let report = weft::report::report(&weft::report::ReportOptions {
                dirs: args.dirs,
                frames: args.frames,
                out: args.out,
                scene: args.scene,
            })?;
            for note in &report.notes {
                let _ = writeln!(io::stderr(), "note: {}", one_line(note));
            }
            let mut text = format!("report: {}\n", report.out_dir.display());
            for file in &report.files {
                text.push_str(&format!("  {}\n", file.display()));
            }
            print(&text)
        }
    }
}

/// `weft bake`: one scene (or one wedge variant) with its progress bar and summary, or a batch
/// ([`batch`]) with a line per bake started and finished; `summary.toml` beside each bake's files.
fn bake(args: BakeArgs) -> Result<(), Failure> {
    let limits = args.limits.limits();
    let mut options = args.output.bake_options(&args.out, limits);
    options.resume = args.resume;
    options.checkpoints = match args.checkpoint_every {
        None => CheckpointPolicy::default(),
        Some(0) => CheckpointPolicy::Never,
        Some(n) => CheckpointPolicy::EveryFrames(n),
    };
    options.crash_after_checkpoint = args.crash_after_checkpoint;
    match batch::plan(&args.scenes, args.wedge_index, &args.out, &limits).map_err(Failure)? {
        batch::Plan::Single { scene, out } => {
            options.out_dir = out;
            warn_of_thin_contacts(&scene);
            let report = bake_with_progress(&scene, &options, &mut args.output.progress())?;
            let summary = write_summary(&scene, &options, &report)?;
            if !args.output.quiet {
                print_summary(&report, &[report.files.as_slice(), &[summary]].concat());
            }
            Ok(())
        }
        batch::Plan::Batch(jobs) => {
            let budget = match args.output.threads {
                Some(n) => usize::from(n),
                None => std::thread::available_parallelism().map_or(1, |n| n.get()),
            };
            let mut failures = batch::run(jobs, &options, budget, args.output.quiet);
            // One line per failed bake; the last is main's.
            let last = failures.pop();
            for failure in failures {
                let _ = writeln!(io::stderr(), "error: {}", one_line(&failure));
            }
            last.map_or(Ok(()), |f| Err(Failure(f)))
        }
    }
}

/// A warning on stderr, before the bake starts, for each cloth whose particle self-collision is
/// too thin to hold its layers apart (see `weft validate`).
fn warn_of_thin_contacts(scene: &Scene) {
    for cloth in scene.cloths() {
        if let Some(thin) = ThinParticleContacts::of_cloth(cloth) {
            let _ = writeln!(io::stderr(), "warning: cloth \"{}\": {thin}", cloth.name);
        }
    }
}

/// The bake summary on stderr, listing `files` as written.
fn print_summary(report: &BakeReport, files: &[PathBuf]) {
    let _ = io::stderr().write_all(summary::summary(report, files).as_bytes());
}

/// Writes `text` to stdout; a closed pipe (`weft validate s.toml | head -1`) is not an error.
fn print(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => {
            Err(Failure(format!("cannot write to stdout: {e}")))
        }
        _ => Ok(()),
    }
}

/// `text` on one line: line breaks become spaces.
fn one_line(text: &str) -> String {
    text.trim_end().chars().map(|c| if c == '\n' || c == '\r' { ' ' } else { c }).collect()
}
