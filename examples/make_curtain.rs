//! Writes `examples/curtain_render.obj`, the render mesh of `examples/curtain.toml`:
//!
//! ```sh
//! cargo run --example make_curtain            # into examples/ (or give another folder)
//! cargo run --release -- bake examples/curtain.toml --out out/curtain --format pc2,usd,obj
//! ```
//!
//! The curtain is simulated on a grid of 25 × 31 particles (5 cm apart). Its render mesh is the
//! same 1.2 m × 1.5 m sheet three times finer in each direction (73 × 91 vertices, 8.6 times the
//! particles), with shallow pleats the simulation does not have: the sheet waves 3 mm in and out
//! of its plane every 10 cm across. Each render vertex is bound to the simulated grid and follows
//! it (see `weft_core::binding`).
//!
//! One OBJ object, `curtain`, of quads, with UVs that keep the sheet's aspect ratio (`u` across it
//! from 0 to 0.8, `v` up it from 0 to 1). The output depends on nothing but this file.

use std::fmt::Write as _;
use std::path::PathBuf;

/// The sheet's lower-left corner (m), width and height (m): those of the scene's grid.
const ORIGIN: [f64; 3] = [-0.6, 0.3, 0.0];
const WIDTH: f64 = 1.2;
const HEIGHT: f64 = 1.5;
/// Render vertices across and up the sheet.
const NU: usize = 73;
const NV: usize = 91;
/// Depth (m) and width (m) of the pleats.
const PLEAT_DEPTH: f64 = 0.003;
const PLEAT_WIDTH: f64 = 0.1;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples"));
    let mut obj = String::new();
    obj.push_str("# The render mesh of examples/curtain.toml, written by examples/make_curtain.rs.\n");
    obj.push_str("o curtain\n");
    for j in 0..NV {
        for i in 0..NU {
            let (s, t) = (i as f64 / (NU - 1) as f64, j as f64 / (NV - 1) as f64);
            let x = ORIGIN[0] + s * WIDTH;
            let y = ORIGIN[1] + t * HEIGHT;
            let z = ORIGIN[2] + PLEAT_DEPTH * (std::f64::consts::TAU * (x - ORIGIN[0]) / PLEAT_WIDTH).sin();
            let _ = writeln!(obj, "v {x:.6} {y:.6} {z:.6}");
        }
    }
    let scale = WIDTH.max(HEIGHT);
    for j in 0..NV {
        for i in 0..NU {
            let (u, v) =
                (i as f64 / (NU - 1) as f64 * WIDTH / scale, j as f64 / (NV - 1) as f64 * HEIGHT / scale);
            let _ = writeln!(obj, "vt {u:.6} {v:.6}");
        }
    }
    // Counter-clockwise seen from +z, the side the sheet faces.
    for j in 0..NV - 1 {
        for i in 0..NU - 1 {
            let k = |i: usize, j: usize| j * NU + i + 1;
            let c = [k(i, j), k(i + 1, j), k(i + 1, j + 1), k(i, j + 1)];
            let _ = writeln!(obj, "f {0}/{0} {1}/{1} {2}/{2} {3}/{3}", c[0], c[1], c[2], c[3]);
        }
    }
    let path = dir.join("curtain_render.obj");
    std::fs::write(&path, obj).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    println!("wrote {}", path.display());
}
