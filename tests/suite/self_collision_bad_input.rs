//! Promise: bad self-collision keys in a scene are one-line errors that name the file, the line,
//! the cloth, the key and the rule; good ones build a model with self-collision.

use std::path::Path;

use weft::core::limits::Limits;
use weft::io::parse_scene;

const HEAD: &str = "[simulation]\nfps = 30.0\nframes = 1\n\n[[cloth]]\nname = \"c\"\n\
positions = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]\n";

/// The error of a scene with `keys` appended to its cloth.
fn error(keys: &str) -> String {
    let text = format!("{HEAD}{keys}\n");
    let result = parse_scene(&text, Path::new("bad.toml"), &Limits::default()).and_then(|s| s.build_model());
    let e = result.expect_err(keys).to_string();
    assert_eq!(e.lines().count(), 1, "one line: {e}");
    e
}

#[test]
fn each_bad_key_is_named_with_its_line() {
    for (keys, expect) in [
        (
            "self_collision = true\nself_thickness = -0.01",
            ["bad.toml:9:", "self_thickness", "greater than zero"],
        ),
        (
            "self_collision = true\nself_thickness = 0.0",
            ["bad.toml:9:", "self_thickness", "greater than zero"],
        ),
        (
            "self_collision = true\nself_thickness = 0.01\nself_friction = -1",
            ["bad.toml:10:", "self_friction", "negative"],
        ),
        ("self_collision = true", ["bad.toml:8:", "self_collision", "self_thickness"]),
        ("self_thickness = 0.01", ["bad.toml:8:", "self_thickness", "self_collision = \"triangles\""]),
        (
            "self_collision = false\nself_friction = 0.5",
            ["bad.toml:9:", "self_friction", "self_collision = \"triangles\""],
        ),
        ("self_collision = 1", ["bad.toml:8:", "true, false, \"particles\" or \"triangles\"", ""]),
        ("self_collision = \"cloth\"", ["bad.toml:8:", "\"cloth\"", "\"particles\" or \"triangles\""]),
        // Surface self-collision needs triangles (this cloth has none) ...
        (
            "self_collision = \"triangles\"\nself_thickness = 0.01",
            ["cloth 'c': self_collision", "needs triangles", ""],
        ),
        // ... and a thickness of at most half the shortest edge (1 m here).
        (
            "triangles = [[0, 1, 2]]\nself_collision = \"triangles\"\nself_thickness = 0.6",
            ["bad.toml:10:", "self_thickness", "at most 0.5"],
        ),
        ("self_collision = true\nself_thickness = 1e40", ["bad.toml:9:", "self_thickness", ""]),
    ] {
        let e = error(keys);
        for part in expect {
            assert!(e.contains(part), "{keys:?}: {e:?} lacks {part:?}");
        }
    }
}

#[test]
fn good_keys_build_self_collision() {
    let text = format!("{HEAD}self_collision = true\nself_thickness = 0.5\nself_friction = 0.25\n");
    let model =
        parse_scene(&text, Path::new("good.toml"), &Limits::default()).unwrap().build_model().unwrap();
    let sc = model.self_collision();
    assert_eq!(sc.members(), &[0, 1, 2]);
    assert_eq!((sc.thickness()[1], sc.friction()[1], sc.max_thickness()), (0.5, 0.25, 0.5));
    // Rest distances 1 m and 1.41 m: beyond 0.5 m, so no pair is excluded.
    assert_eq!(sc.excluded_len(), 0);
    // Off: no member.
    let text = format!("{HEAD}self_collision = false\n");
    let model = parse_scene(&text, Path::new("off.toml"), &Limits::default()).unwrap().build_model().unwrap();
    assert!(model.self_collision().is_empty());
}
