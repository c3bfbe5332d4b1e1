//! Promise: a cloth pile (`examples/pile.toml`: a strip laid in folds dropped onto a floor) has
//! zero intersecting triangle pairs in every frame with self-collision on, and
//! the same scene with self-collision off does show intersections, so the measure can fail.

use std::path::Path;
use weft::core::kinds::KindId;

use weft::bake::stats::StatsLevel;
use weft::bake::{BakeOptions, bake};
use weft::core::limits::Limits;
use weft::io::parse_scene;

fn intersections_per_frame(text: &str) -> Vec<u64> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pile.toml");
    let scene = parse_scene(text, &path, &Limits::default()).expect("the pile scene parses");
    let out = tempfile::tempdir().unwrap();
    let options = BakeOptions { threads: Some(2), stats: StatsLevel::Full, ..BakeOptions::new(out.path()) };
    let report = bake(&scene, &options).unwrap();
    // Self-collision never meets a pair closer than 1 µm here (no degenerate contacts).
    assert_eq!(report.totals.kinds[KindId::SelfCollision].degenerate, 0);
    report.per_frame.iter().map(|f| f.intersections.expect("every frame measured")).collect()
}

fn scene_text() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/pile.toml")).unwrap()
}

#[test]
fn with_self_collision_no_triangles_ever_cross() {
    let text = scene_text();
    assert!(text.contains("self_collision = true"));
    let per_frame = intersections_per_frame(&text);
    assert_eq!(per_frame.len(), 60);
    assert!(per_frame.iter().all(|&n| n == 0), "intersecting triangle pairs per frame: {per_frame:?}");
}

#[test]
fn without_self_collision_the_layers_fall_through_each_other() {
    let text: String =
        scene_text().lines().filter(|l| !l.starts_with("self_")).map(|l| format!("{l}\n")).collect();
    let per_frame = intersections_per_frame(&text);
    let most = per_frame.iter().copied().max().unwrap();
    assert!(most > 0, "the measure never saw a crossing: {per_frame:?}");
}
