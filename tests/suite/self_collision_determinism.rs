//! Promise: with self-collision on, a bake writes the same bytes (caches and statistics) for pools
//! of 1, 2 and 3 threads, and for either kernel path.

use std::collections::BTreeMap;

use weft::bake::{BakeOptions, bake_model};
use weft::bench::pile::{PileShape, pile_cloth};
use weft::core::builder::ModelBuilder;
use weft::core::limits::Limits;
use weft::core::self_collision::SelfCollisionDesc;
use weft::core::settings::SimSettings;
use weft::io::CacheFormat;
use weft::kernels::KernelPath;

fn bake_bytes(threads: usize, kernel: KernelPath) -> BTreeMap<String, Vec<u8>> {
    // A smaller pile than the example (3 layers), for 20 frames: its top layer lands on the middle
    // one around frame 7, so many contacts (and their friction) are exercised.
    let shape = PileShape { layers: 3, width: 0.2, ..PileShape::default() };
    let settings =
        SimSettings { fps: 60.0, frames: 20, substeps: 4, iterations: 6, ..SimSettings::default() };
    let mut builder = ModelBuilder::new(settings, Limits::default()).unwrap();
    builder
        .add_cloth(&pile_cloth(&shape, Some(SelfCollisionDesc { thickness: 0.025, friction: 0.3 })))
        .unwrap();
    let mut model = builder.build().unwrap();
    assert!(!model.self_collision().is_empty());
    let out = tempfile::tempdir().unwrap();
    let options = BakeOptions {
        threads: Some(threads),
        kernel,
        formats: vec![CacheFormat::Pc2],
        ..BakeOptions::new(out.path())
    };
    let report = bake_model(&mut model, &options).unwrap();
    assert_eq!(report.threads, threads);
    std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

#[test]
fn the_same_bytes_for_any_thread_count() {
    let one = bake_bytes(1, KernelPath::Simd);
    assert_eq!(one.keys().collect::<Vec<_>>(), ["pile.pc2", "stats.csv"]);
    for threads in [2, 3] {
        assert!(bake_bytes(threads, KernelPath::Simd) == one, "{threads} threads differ from 1");
    }
    assert!(bake_bytes(2, KernelPath::Scalar) == one, "the scalar kernels differ");
}
