//! Promise: the folding sheet `weft bench` measures is `examples/fold.toml`, byte for byte. The
//! bench keeps its own copy (`crates/weft-bench/scenes/fold.toml`, as
//! `weft_bench::scenes::FOLD_SCENE`) so that the weft-bench crate packages on its own; this test
//! fails when the two drift apart.

#[test]
fn the_bench_folds_the_example_sheet() {
    let example = include_str!("../../examples/fold.toml");
    assert!(
        weft_bench::scenes::FOLD_SCENE == example,
        "crates/weft-bench/scenes/fold.toml differs from examples/fold.toml: copy the example over it"
    );
}
