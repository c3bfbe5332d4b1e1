//! Promise: `weft bake` reproduces the worked example of docs/physics.md exactly; its caches are
//! the same bytes for any `--threads` and either `--kernel`; `weft validate`, `weft demo` and `weft
//! --version` say what they should; and a bake replaces an old cache only with a complete one.

use std::ffi::OsStr;
use std::fs;
use std::path::{Path, PathBuf};

use weft::io::read_pc2;
use weft_testkit::cli::{Bin, contents};

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(name)
}

#[test]
fn seed_example_lands_exactly_at_one_and_one_and_a_half_metres() {
    for (scene, x, residual) in [("seed.toml", 1.0f32, "0.0"), ("seed-soft.toml", 1.5, "0.5")] {
        let dir = tempfile::tempdir().unwrap();
        let output =
            WEFT.run_ok([OsStr::new("bake"), example(scene).as_ref(), "--out".as_ref(), dir.path().as_ref()]);
        assert!(output.stdout.is_empty());
        let summary = String::from_utf8_lossy(&output.stderr);
        assert!(summary.contains("baked 1 frame (1 time step)"), "{summary}");
        assert!(summary.contains("degenerate projections: 0"), "{summary}");
        let wrote =
            format!("  wrote 3 files in {}: seed.pc2, stats.csv, summary.toml\n", dir.path().display());
        assert!(summary.contains(&wrote), "{summary}");

        let pc2 = read_pc2(&dir.path().join("seed.pc2")).unwrap();
        assert_eq!((pc2.point_count, pc2.sample_count), (2, 2));
        assert_eq!(pc2.sample(0), &[[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]);
        assert_eq!(pc2.sample(1)[0], [0.0, 0.0, 0.0], "{scene}: the pin moved");
        assert_eq!(pc2.sample(1)[1], [x, 0.0, 0.0], "{scene}");

        let stats = fs::read_to_string(dir.path().join("stats.csv")).unwrap();
        // The distance constraints' residual, and 0 for every kind the scene lacks.
        let kinds: Vec<&str> = weft::core::kinds::KindId::ALL
            .iter()
            .flat_map(|k| k.info().columns)
            .map(|c| if c.name.starts_with("distance_") { residual } else { "0.0" })
            .collect();
        assert_eq!(
            stats,
            format!("{}\n1,0.1,1,0,{},0,{residual},0,0,0,0\n", *weft::bake::STATS_HEADER, kinds.join(",")),
            "{scene}"
        );
        let mut names: Vec<_> = contents(dir.path()).into_keys().collect();
        names.sort();
        assert_eq!(names, ["seed.pc2", "stats.csv"]);
    }
}

/// A grid big enough that colours and particle passes are split into several parallel chunks
/// (over 64 batches per colour, over 4096 particles).
const GRID: &str = r#"[simulation]
fps = 24.0
frames = 4
substeps = 2
iterations = 4

[[cloth]]
name = "sheet"
grid = { resolution = [80, 64], size = [1.6, 1.2], origin = [0.0, 1.0, 0.0], plane = "xz" }
density = 0.2
stretch_compliance = 1e-5
shear_compliance = 1e-3
stretch_damping = 0.01
pin_corners = ["top-left", "top-right"]
"#;

#[test]
fn caches_are_the_same_bytes_for_any_thread_count_and_either_kernel() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("grid.toml");
    fs::write(&scene, GRID).unwrap();
    let bake = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args: Vec<&OsStr> = vec![
            "bake".as_ref(),
            scene.as_ref(),
            "--out".as_ref(),
            out.as_ref(),
            "--format".as_ref(),
            "pc2,usd".as_ref(),
            "--format".as_ref(),
            "obj".as_ref(),
            "--quiet".as_ref(),
        ];
        args.extend(extra.iter().map(OsStr::new));
        let output = WEFT.run_ok(&args);
        assert!(output.stderr.is_empty(), "--quiet printed something");
        contents(&out)
    };
    let one = bake("t1", &["--threads", "1"]);
    let expected_files = 1 + 1 + 5 + 1; // pc2, usda, 5 OBJ frames, stats.csv
    assert_eq!(one.len(), expected_files, "{:?}", one.keys());
    let pc2 = weft::io::parse_pc2(&one["sheet.pc2"]).unwrap();
    assert_eq!((pc2.point_count, pc2.sample_count), (80 * 64, 5));
    assert_ne!(pc2.sample(0), pc2.sample(4), "the sheet should fall");

    for (name, extra) in [
        ("t2", &["--threads", "2"][..]),
        ("t3", &["--threads", "3"]),
        ("scalar", &["--threads", "2", "--kernel", "scalar"]),
        ("simd", &["--threads", "3", "--kernel", "simd"]),
    ] {
        let other = bake(name, extra);
        assert_eq!(other.keys().collect::<Vec<_>>(), one.keys().collect::<Vec<_>>(), "{extra:?}");
        for (file, bytes) in &one {
            assert!(other[file] == *bytes, "{file} differs with {extra:?}");
        }
    }
}

#[test]
fn validate_prints_the_model() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("flag.toml");
    fs::write(
        &scene,
        "[simulation]\nfps = 24\nframes = 2\n\n[[cloth]]\nname = \"flag\"\n\
         grid = { resolution = [4, 3], size = [1.5, 1.0] }\n\
         pin_corners = [\"top-left\", \"top-right\"]\n",
    )
    .unwrap();
    let output = WEFT.run_ok([OsStr::new("validate"), scene.as_ref()]);
    assert!(output.stderr.is_empty());
    let text = String::from_utf8(output.stdout).unwrap();
    // Every batched kind of the registry has its count: 29 distance constraints, 10 tethers, none
    // of the others.
    let kinds: Vec<String> = weft::core::kinds::KindId::ALL
        .iter()
        .filter(|k| k.is_batched())
        .map(|k| match k.info().name {
            "distance" => "29 distance (stretch 17, shear 12)".to_string(),
            "tethers" => "10 tethers".to_string(),
            name => format!("0 {name}"),
        })
        .collect();
    let constraints = format!("constraints:    {}, 0 volume, 0 triangles in the wind", kinds.join(", "));
    for line in [
        "cloth:          'flag', 12 particles (2 pinned), 12 triangles",
        "particles:      12 (2 pinned)",
        // 3 × 3 along the rows, 4 × 2 along the columns; two diagonals in each of 3 × 2 cells.
        // Neither substeps nor iterations: baked to a strain tolerance, 4 to 128 substeps of 1
        // iteration; the pinned cloth is tethered (10 free particles); at least (29 + 10)
        // constraints × 1 iteration × 2 frames × 4 steps.
        "simulation:     fps 24, frames 2, substeps 4 to 128 chosen per frame to max_strain 0.02 \
         (h = 0.010417 to 0.000326 s), iterations 1, gravity [0, -9.81, 0] m/s², velocity damping 0 1/s",
        &constraints,
        "dropped:        0 (both ends pinned: they can never move)",
        "work:           at least 8 time steps, 312 constraint projections",
        "ok: the scene is valid",
    ] {
        assert!(text.lines().any(|l| l == line), "no line {line:?} in\n{text}");
    }
    // One block holds all 12 particles: 29 constraints in 8 colours of one batch each (8 lanes),
    // none across blocks (no strand, no boundary colour), none serial; 29 of 64 lanes used.
    let row = |kind: &str| text.lines().find(|l| l.trim_start().starts_with(kind)).unwrap().to_string();
    let cells = |kind: &str| row(kind).split_whitespace().map(str::to_string).collect::<Vec<_>>();
    assert_eq!(
        cells("distance"),
        ["distance", "29", "1", "8", "0", "(", "0,", "0)", "0", "8", "45.3", "%"],
        "{text}"
    );
    assert_eq!(cells("bending"), ["bending", "0", "0", "0", "0", "(", "0,", "0)", "0", "0", "-"], "{text}");
    assert!(text.contains("memory:         about "), "{text}");
}

#[test]
fn demo_writes_a_pc2_and_a_scene_that_bakes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let output = WEFT.run_ok([OsStr::new("demo"), "--out".as_ref(), demo.as_ref(), "-q".as_ref()]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(&demo.join("demo.toml").display().to_string()), "{stdout}");
    // Every file it wrote is listed, and the command to bake it again names this very binary.
    assert!(
        stdout.starts_with(&format!(
            "demo: 3 files in {}: flag.pc2, stats.csv, summary.toml\n",
            demo.display()
        ))
    );
    let again = format!(
        "  again: {} bake {} --out {}\n",
        WEFT.0,
        demo.join("demo.toml").display(),
        demo.join("again").display()
    );
    assert!(stdout.ends_with(&again), "{stdout}");
    // Its summary.toml names the scene, so that `weft report` draws the flag.
    WEFT.run_ok([OsStr::new("report"), demo.as_ref()]);
    assert!(demo.join("report/sheet.png").is_file() && demo.join("report/frame_0090.png").is_file());

    let bytes = fs::read(demo.join("flag.pc2")).unwrap();
    let (points, samples) = (48 * 32, 91);
    assert_eq!(&bytes[..12], b"POINTCACHE2\0");
    let int = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let float = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(int(12), 1, "version");
    assert_eq!(int(16), points, "point count");
    assert_eq!(float(20), 0.0, "start frame");
    assert_eq!(float(24), 1.0, "sample rate");
    assert_eq!(int(28), samples, "sample count");
    assert_eq!(bytes.len(), 32 + 12 * (points * samples) as usize);

    // The scene it wrote is examples/flag.toml, and baking it gives the same bytes.
    let scene = demo.join("demo.toml");
    assert_eq!(fs::read_to_string(&scene).unwrap(), fs::read_to_string(example("flag.toml")).unwrap());
    let again = dir.path().join("again");
    WEFT.run_ok([OsStr::new("bake"), scene.as_ref(), "--out".as_ref(), again.as_ref(), "-q".as_ref()]);
    assert!(fs::read(again.join("flag.pc2")).unwrap() == bytes);
    assert_eq!(fs::read(again.join("stats.csv")).unwrap(), fs::read(demo.join("stats.csv")).unwrap());
}

#[test]
fn version_names_the_simd_level() {
    let output = WEFT.run_ok(["--version"]);
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        format!("weft {} ({})\n", env!("CARGO_PKG_VERSION"), weft::kernels::simd_level())
    );
}

#[test]
fn a_bake_replaces_an_old_cache_only_with_a_complete_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    fs::create_dir(&out).unwrap();
    fs::write(out.join("seed.pc2"), b"an old cache").unwrap();
    fs::write(out.join("stats.csv"), b"old stats").unwrap();
    let old = contents(&out);

    // A bake that fails leaves the old files as they were.
    let bad = dir.path().join("bad.toml");
    let text = fs::read_to_string(example("seed.toml")).unwrap().replace("iterations = 1", "iterations = 0");
    fs::write(&bad, text).unwrap();
    let output = WEFT.run([OsStr::new("bake"), bad.as_ref(), "--out".as_ref(), out.as_ref()]);
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(contents(&out), old);

    // A bake that succeeds replaces them whole, leaving no temporary file.
    WEFT.run_ok([
        OsStr::new("bake"),
        example("seed.toml").as_ref(),
        "--out".as_ref(),
        out.as_ref(),
        "-q".as_ref(),
    ]);
    let new = contents(&out);
    assert_eq!(new.keys().collect::<Vec<_>>(), ["seed.pc2", "stats.csv"]);
    let pc2 = read_pc2(&out.join("seed.pc2")).unwrap();
    assert_eq!(pc2.sample(1)[1], [1.0, 0.0, 0.0]);
    assert!(new["stats.csv"].starts_with(b"frame,"));
}

#[test]
fn a_bake_that_fails_while_publishing_leaves_no_file_of_its_own() {
    // `seed.usda` is taken by a directory, so the USD cache cannot be renamed into place after
    // the PC2 cache already was: the bake must take the PC2 cache back and leave no stats.csv.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    fs::create_dir_all(out.join("seed.usda")).unwrap();
    let output = WEFT.run([
        OsStr::new("bake"),
        example("seed.toml").as_ref(),
        "--out".as_ref(),
        out.as_ref(),
        "--format".as_ref(),
        "pc2,usd".as_ref(),
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: usd cache of cloth 'seed': "), "{stderr}");
    let left: Vec<_> =
        fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(left, ["seed.usda"], "only the directory that was there");
}

#[test]
fn bench_measures_the_sections_asked_for_and_names_the_sections_on_a_typo() {
    let output = WEFT.run_ok(["bench", "--quick", "--only", "bake"]);
    let table = String::from_utf8_lossy(&output.stdout);
    assert!(table.contains("the time steps against the whole bake"), "{table}");
    assert!(!table.contains("distance constraint projections"), "{table}");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(
        table.contains("the machine meanwhile: "),
        threads > 1,
        "a probe of the machine, where it has threads to share: {table}"
    );
    let output = WEFT.run(["bench", "--only", "nope"]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(error.contains("no section 'nope'; the sections: distance, kinds,"), "{error}");
}

#[test]
fn stats_levels_measure_every_frame_some_frames_or_none() {
    // The demo flag at 4 to 128 substeps × 1 iteration, 90 frames.
    let dir = tempfile::tempdir().unwrap();
    let measured = |level: &str| {
        let out = dir.path().join(level);
        WEFT.run_ok(["demo".as_ref(), "-o".as_ref(), out.as_os_str(), "--stats".as_ref(), level.as_ref()]);
        let stats = fs::read_to_string(out.join("stats.csv")).unwrap();
        let header: Vec<&str> = stats.lines().next().unwrap().split(',').collect();
        let at = |name| header.iter().position(|h| *h == name).unwrap();
        let (pairs, stretch, substeps) =
            (at("intersecting_triangle_pairs"), at("max_stretch"), at("substeps"));
        let rows: Vec<Vec<&str>> = stats.lines().skip(1).map(|l| l.split(',').collect()).collect();
        // Every row has its substeps and stretch.
        assert!(
            rows.iter().all(|r| r.len() == header.len() && !r[stretch].is_empty() && !r[substeps].is_empty())
        );
        assert_eq!(rows.len(), 90);
        rows.iter().filter(|r| !r[pairs].is_empty()).count()
    };
    assert_eq!(measured("full"), 90);
    let light = measured("light");
    assert!((3..90).contains(&light), "light measured {light} frames");
    assert_eq!(measured("off"), 0);
}

#[test]
fn particle_contacts_thinner_than_the_vertex_spacing_are_warned_of_before_the_bake() {
    let dir = tempfile::tempdir().unwrap();
    let bake = |mode: &str, thickness: f64| {
        let scene = dir.path().join("thin.toml");
        fs::write(
            &scene,
            format!(
                "[simulation]\nfps = 30.0\nframes = 1\n[[cloth]]\nname = \"sheet\"\n\
                 grid = {{ resolution = [11, 11], size = [1.0, 1.0], plane = \"xz\" }}\n\
                 self_collision = {mode}\nself_thickness = {thickness}\n"
            ),
        )
        .unwrap();
        let out = dir.path().join("out");
        let output = WEFT.run_ok([OsStr::new("bake"), scene.as_ref(), "--out".as_ref(), out.as_ref()]);
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    // Edges of 0.1 m and diagonals of 0.141 m: a mean edge of 0.114 m, so 8 cm is under h/√2.
    let thin = bake("true", 0.004);
    let first = thin.lines().next().unwrap_or_default();
    assert!(
        first.starts_with(
            "warning: cloth \"sheet\": self_thickness 0.004 m is under its vertex spacing (0.113807 m"
        ),
        "{thin}"
    );
    assert!(first.ends_with("thin cloth needs self_collision = \"triangles\""), "{thin}");
    assert!(bake("true", 0.07).starts_with("warning:"), "0.07 m is under 0.0805 m");
    assert!(!bake("true", 0.09).contains("warning"), "0.09 m holds a layer at this spacing");
    assert!(!bake("\"triangles\"", 0.004).contains("warning"), "surface contacts hold at any spacing");
}

/// A sweep (a batch of bakes) warns of particle contacts too thin as a single bake does, each
/// warning once with the first variant that has it.
#[test]
fn a_sweep_warns_of_thin_particle_contacts_once_per_warning() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("thin.toml");
    fs::write(
        &scene,
        "[simulation]\nfps = 30.0\nframes = 1\n[[cloth]]\nname = \"sheet\"\n\
         grid = { resolution = [11, 11], size = [1.0, 1.0], plane = \"xz\" }\n\
         self_collision = true\nself_thickness = 0.004\n\
         [wedge]\n\"cloth.sheet.density\" = [0.1, 0.2]\n\"cloth.sheet.self_thickness\" = [0.004, 0.09]\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let output = WEFT.run_ok([OsStr::new("bake"), scene.as_ref(), "--out".as_ref(), out.as_ref()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("warning:")).collect();
    // Variants 0 and 2 have 4 mm (the same warning: told once, for variant 0); 1 and 3 have 9 cm.
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains("variant") && warnings[0].contains("self_thickness 0.004 m"), "{stderr}");
}

/// A cache whose writes fail part way through the frames (its temporary file is a link to
/// `/dev/full`, so the first buffer of samples written to it fails with "no space"): the bake
/// stops with one error line naming the cache, on the writer's thread or in line alike, and
/// publishes nothing.
#[cfg(target_os = "linux")]
#[test]
fn a_cache_that_fills_the_disk_mid_bake_stops_it_with_one_error_line_and_publishes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let scene = dir.path().join("grid.toml");
    // 64² particles: 48 KiB a sample, so the 1 MiB write buffer is first flushed after ~20 frames.
    fs::write(
        &scene,
        "[simulation]\nfps = 60.0\nframes = 40\nsubsteps = 2\niterations = 1\n\n[[cloth]]\nname = \"grid\"\n\
         grid = { resolution = [64, 64], size = [1.0, 1.0], plane = \"xz\" }\n\
         pin_corners = [\"top-left\", \"top-right\"]\n",
    )
    .unwrap();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("out{threads}"));
        fs::create_dir(&out).unwrap();
        std::os::unix::fs::symlink("/dev/full", out.join("grid.pc2.partial")).unwrap();
        let output = WEFT.run([
            OsStr::new("bake"),
            scene.as_ref(),
            "--out".as_ref(),
            out.as_ref(),
            "-j".as_ref(),
            threads.as_ref(),
            "-q".as_ref(),
        ]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{threads} threads: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{threads} threads: {stderr}");
        assert!(stderr.starts_with("error: pc2 cache of cloth 'grid': "), "{threads} threads: {stderr}");
        assert!(stderr.contains("No space left on device"), "{threads} threads: {stderr}");
        let left: Vec<_> = fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(left.iter().all(|f| f != "grid.pc2" && f != "stats.csv"), "{threads} threads: {left:?}");
    }
}
