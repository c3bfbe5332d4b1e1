//! Writes `examples/pile.obj`, the folded strip of `examples/pile.toml` (see `weft::bench::pile`):
//!
//! ```sh
//! cargo run --example make_pile               # into examples/ (or give another folder)
//! cargo run --release -- bake examples/pile.toml --out out/pile
//! ```
//!
//! The output depends on nothing but `crates/weft-bench/src/pile.rs`: it is byte-for-byte the same on every run.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("examples"));
    let path = dir.join("pile.obj");
    std::fs::write(&path, weft::bench::pile::obj_text(&weft::bench::pile::PileShape::default()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
