//! Writes `examples/pile.obj`, the folded strip of `examples/pile.toml` (see `weft::pile`):
//!
//! ```sh
//! cargo run --example make_pile               # into examples/ (or give another folder)
//! cargo run --release -- bake examples/pile.toml --out out/pile
//! ```
//!
//! The output depends on nothing but `src/pile.rs`: it is byte-for-byte the same on every run.

use std::path::PathBuf;

fn main() -> std::io::Result<()> {
    let dir = std::env::args().nth(1).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("examples"));
    let path = dir.join("pile.obj");
    std::fs::write(&path, weft::pile::obj_text(&weft::pile::PileShape::default()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}
