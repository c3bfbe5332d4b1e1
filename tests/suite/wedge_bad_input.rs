//! Promise: every bad `[wedge]` and every bad use of `--wedge-index` or of several scenes ends as
//! any bad input does (docs/cli.md) — exit status 1, one line on stderr, `error: ` then the file
//! (with the line of the wedge key or table where there is one), the key and the rule, never a
//! panic — and leaves no file in the output directory.

use std::ffi::OsString;
use std::fs;
use std::path::{Path, PathBuf};

use weft_testkit::cli::Bin;

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// A small grid cloth with a two-variant wedge.
const WEDGE: &str = r#"[simulation]
fps = 24.0
frames = 2

[wedge]
"cloth.flag.stretch_compliance" = [1e-6, 1e-4]

[[cloth]]
name = "flag"
grid = { resolution = [4, 3], size = [1.5, 1.0], origin = [0.0, 1.0, 0.0] }
density = 0.2
stretch_compliance = 1e-6
pin_corners = ["top-left", "top-right"]
"#;

/// `WEDGE` with the first `from` replaced by `to` (which must be there).
fn with(from: &str, to: &str) -> String {
    assert!(WEDGE.contains(from), "{from:?} not in the scene");
    WEDGE.replacen(from, to, 1)
}

/// One bad input: the scene, the text marking the line the error names (`None`: it names the
/// file only), what the message must say, and the extra arguments.
struct Case {
    name: &'static str,
    scene: String,
    line_of: Option<&'static str>,
    says: Vec<&'static str>,
    args: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    let key = "\"cloth.flag.stretch_compliance\"";
    let case = |name, scene, line_of, says: &[&'static str], args: &[&'static str]| Case {
        name,
        scene,
        line_of,
        says: says.to_vec(),
        args: args.to_vec(),
    };
    vec![
        case(
            "a misspelt key",
            with(key, "\"cloth.flag.strech_compliance\""),
            Some("strech_compliance"),
            &["cloth.flag.strech_compliance", "unknown field `strech_compliance`"],
            &[],
        ),
        case(
            "no cloth of that name",
            with(key, "\"cloth.nosuch.density\""),
            Some("nosuch"),
            &["cloth.nosuch.density", "no [[cloth]] is named 'nosuch'", "flag"],
            &[],
        ),
        case(
            "no table of that name",
            with(key, "\"simulaton.fps\""),
            Some("simulaton"),
            &["simulaton.fps", "is not a scene key", "simulation.KEY"],
            &[],
        ),
        case(
            "a value that is not an array",
            with("[1e-6, 1e-4]", "1e-6"),
            Some("cloth.flag.stretch_compliance"),
            &["cloth.flag.stretch_compliance", "takes an array"],
            &[],
        ),
        case(
            "an empty sweep",
            with("[1e-6, 1e-4]", "[]"),
            Some("cloth.flag.stretch_compliance"),
            &["cloth.flag.stretch_compliance", "empty array sweeps nothing"],
            &[],
        ),
        case(
            "a value of the wrong type",
            with("[1e-6, 1e-4]", "[1e-6, \"stiff\"]"),
            Some("cloth.flag.stretch_compliance"),
            &["cloth.flag.stretch_compliance", "\"stiff\"", "invalid type"],
            &[],
        ),
        case(
            "an empty wedge",
            with("\"cloth.flag.stretch_compliance\" = [1e-6, 1e-4]", ""),
            Some("[wedge]"),
            &["wedge", "names no key"],
            &[],
        ),
        case(
            "a wedge index out of range",
            WEDGE.to_string(),
            Some("[wedge]"),
            &["variant 2 does not exist", "the wedge has 2 variants, 0 to 1"],
            &["--wedge-index", "2"],
        ),
        case(
            "a variant that breaks a rule",
            with("[1e-6, 1e-4]", "[1e-6, -1.0]"),
            Some("cloth.flag.stretch_compliance"),
            &[
                "variant w001_stretch_compliance=-1",
                "wedge key \"cloth.flag.stretch_compliance\"",
                "cloth 'flag': stretch_compliance",
                "negative",
            ],
            &["--wedge-index", "1"],
        ),
        case(
            "a wedge index for a scene without a wedge",
            with(&format!("{key} = [1e-6, 1e-4]"), "").replace("[wedge]\n", ""),
            None,
            &["variant 0 asked for", "no [wedge] table"],
            &["--wedge-index", "0"],
        ),
    ]
}

/// Every file under `dir`.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        if e.path().is_dir() {
            files.extend(files_under(&e.path()));
        } else {
            files.push(e.path());
        }
    }
    files
}

/// Runs `weft ARGS` and lists what is wrong with its failure: not status 1, not exactly one
/// `error: ` line, a panic, words missing, files left in `out`.
fn problems(args: &[OsString], out: &Path, names: &str, says: &[&str]) -> Vec<String> {
    let output = WEFT.run(args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let mut problems = Vec::new();
    if output.status.code() != Some(1) {
        problems.push(format!("exit status {:?}, not 1", output.status.code()));
    }
    if stderr.lines().count() != 1 || !stderr.starts_with("error: ") || stderr.contains("panicked") {
        problems.push("stderr is not one `error: ` line".to_string());
    }
    for word in std::iter::once(&names).chain(says) {
        if !stderr.contains(word) {
            problems.push(format!("does not say {word:?}"));
        }
    }
    let left = files_under(out);
    if !left.is_empty() {
        problems.push(format!("left files: {left:?}"));
    }
    if !problems.is_empty() {
        problems.insert(0, format!("stderr: {stderr:?}"));
    }
    problems
}

#[test]
fn every_bad_wedge_is_one_error_line_naming_the_file_and_key_and_no_files() {
    let mut failures = Vec::new();
    for case in cases() {
        let dir = tempfile::tempdir().unwrap();
        let scene = dir.path().join("scene.toml");
        fs::write(&scene, &case.scene).unwrap();
        let out = dir.path().join("out");
        fs::create_dir(&out).unwrap();
        let names = match case.line_of {
            Some(marker) => {
                let line =
                    case.scene.lines().position(|l| l.contains(marker)).expect("the marker is there") + 1;
                format!("{}:{line}:", scene.display())
            }
            None => format!("{}:", scene.display()),
        };
        let mut args: Vec<OsString> =
            vec!["bake".into(), scene.clone().into(), "--out".into(), out.clone().into()];
        args.extend(case.args.iter().map(OsString::from));
        let mut found = problems(&args, &out, &names, &case.says);
        // `weft validate` reads every variant: the same error, but for an index it is not given.
        if !case.args.contains(&"--wedge-index") {
            let validate: Vec<OsString> = vec!["validate".into(), scene.clone().into()];
            found.extend(
                problems(&validate, &out, &names, &case.says).into_iter().map(|p| format!("validate: {p}")),
            );
        }
        if !found.is_empty() {
            failures.push(format!("{}:\n    {}", case.name, found.join("\n    ")));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn several_scenes_refuse_one_folder_for_two_and_a_wedge_index() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    fs::create_dir_all(&a).unwrap();
    fs::create_dir_all(&b).unwrap();
    let (first, second) = (a.join("shot.toml"), b.join("shot.toml"));
    fs::write(&first, WEDGE).unwrap();
    fs::write(&second, WEDGE).unwrap();
    let out = dir.path().join("out");
    let bake = |extra: &[&str]| -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "bake".into(),
            first.clone().into(),
            second.clone().into(),
            "--out".into(),
            out.clone().into(),
        ];
        args.extend(extra.iter().map(OsString::from));
        args
    };
    let found = problems(
        &bake(&[]),
        &out,
        &first.display().to_string(),
        &[&second.display().to_string(), "both bake into"],
    );
    assert!(found.is_empty(), "{found:?}");
    let found =
        problems(&bake(&["--wedge-index", "0"]), &out, "--wedge-index", &["one variant of one scene"]);
    assert!(found.is_empty(), "{found:?}");
    assert!(!out.exists(), "the output directory was created");
}
