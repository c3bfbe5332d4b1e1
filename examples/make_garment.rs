//! Writes `examples/garment.obj` (a T-shirt) and `examples/garment.toml` (a scene that hangs it by
//! its shoulders):
//!
//! ```sh
//! cargo run --example make_garment            # into examples/ (or give another folder)
//! cargo run --release -- bake examples/garment.toml --out out/garment --format pc2,usd,obj
//! ```
//!
//! The shirt is sewn the way a real one is: two flat T-shaped panels, a front and a back, each a
//! grid of square quads (2.5 cm), with a neck scooped out of the top (deeper at the front). The
//! panels are joined along their side seams, the seams under the sleeves and the shoulder seams
//! over the sleeves: a vertex on a seam is one vertex shared by both panels. The hem, the two cuffs
//! and the neck stay open. Between the seams the panels bulge out (front towards +z, back towards
//! −z), so the shirt has a body and two sleeves with room inside, like a shirt on a hanger.
//!
//! Everything is one OBJ object, `tshirt`, of quads, with UVs laid out per panel: the front panel
//! in `u ∈ [0, 0.48]`, the back panel in `u ∈ [0.52, 1]`, both upright and at the same scale as the
//! cloth (`U` across the shirt, `V` up it), so a seam vertex has one UV in each panel (a UV seam)
//! while staying one particle. `U` runs across the shirt (weft's warp threads, the course of a
//! knit), `V` up and down it.
//!
//! The output depends on nothing but this file: it is byte-for-byte the same on every run.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Side of a grid cell, m.
const CELL: f64 = 0.025;
/// Cells across the whole T (sleeve tip to sleeve tip): 0.9 m.
const NX: i32 = 36;
/// Cells from hem to shoulder: 0.7 m.
const NY: i32 = 28;
/// Cells across the body: 0.5 m.
const BODY: i32 = 20;
/// Cells from the underarm seam to the shoulder seam: 0.2 m.
const SLEEVE: i32 = 8;
/// Half-width of the neck opening, m.
const NECK_HALF_WIDTH: f64 = 0.1;
/// Depth of the neck scoop at the front and at the back, m.
const NECK_DEPTH: [f64; 2] = [0.1, 0.04];
/// Height of the hem above the floor, m.
const HEM_Y: f64 = 0.8;
/// Half-depth of the body and of the sleeves at their fullest, m.
const BODY_DEPTH: f64 = 0.1;
const SLEEVE_DEPTH: f64 = 0.07;
/// The body narrows towards the shoulder seam over this height, m.
const SHOULDER_ROUND: f64 = 0.1;

/// Front (0) or back (1).
type Panel = usize;

/// x of grid column `i` (0 at the centre of the shirt), m.
fn x(i: i32) -> f64 {
    (i - NX / 2) as f64 * CELL
}

/// Height of grid row `j` above the hem, m.
fn y(j: i32) -> f64 {
    j as f64 * CELL
}

/// Whether cell `(i, j)` (lower-left corner at vertex `(i, j)`) is inside the T: the body, or the
/// band of the sleeves and shoulders across the top.
fn in_t(i: i32, j: i32) -> bool {
    let body = ((NX - BODY) / 2..(NX + BODY) / 2).contains(&i);
    let band = j >= NY - SLEEVE;
    (0..NX).contains(&i) && (0..NY).contains(&j) && (body || band)
}

/// Whether cell `(i, j)` is scooped out of `panel` for the neck: an ellipse at the top, tested at
/// the cell's centre (the front's scoop holds the back's).
fn scooped(panel: Panel, i: i32, j: i32) -> bool {
    let (cx, cy) = (x(i) + CELL / 2.0, y(j) + CELL / 2.0);
    (cx / NECK_HALF_WIDTH).powi(2) + ((y(NY) - cy) / NECK_DEPTH[panel]).powi(2) < 1.0
}

/// Whether cell `(i, j)` is cloth in `panel`.
fn cell(panel: Panel, i: i32, j: i32) -> bool {
    in_t(i, j) && !scooped(panel, i, j)
}

/// Whether the grid edge from vertex `a` to its neighbour `b` is on an open edge of the shirt: the
/// hem, a cuff, or the neck (beside a cell of the T scooped out of either panel). Every other
/// edge on a panel's border is a seam, where the panels are joined.
fn open_edge(a: (i32, i32), b: (i32, i32)) -> bool {
    let hem = a.1 == 0 && b.1 == 0;
    let cuff = (a.0 == 0 && b.0 == 0) || (a.0 == NX && b.0 == NX);
    let beside = if a.1 == b.1 {
        let i = a.0.min(b.0);
        [(i, a.1), (i, a.1 - 1)]
    } else {
        let j = a.1.min(b.1);
        [(a.0, j), (a.0 - 1, j)]
    };
    let neck = beside.iter().any(|&(i, j)| in_t(i, j) && (scooped(0, i, j) || scooped(1, i, j)));
    hem || cuff || neck
}

/// How far the cloth bulges out of the seam plane at `(x, y)`, m: 0 on every seam.
fn bulge(px: f64, py: f64) -> f64 {
    let half_body = BODY as f64 * CELL / 2.0;
    let top = y(NY);
    let body = if px.abs() < half_body {
        let across = (1.0 - (px / half_body).powi(2)).max(0.0).sqrt();
        let down = ((py - (top - SHOULDER_ROUND)) / SHOULDER_ROUND).clamp(0.0, 1.0);
        BODY_DEPTH * across * (1.0 - down * down).max(0.0).sqrt()
    } else {
        0.0
    };
    let low = y(NY - SLEEVE);
    let sleeve = if (low..=top).contains(&py) {
        let t = (py - (low + top) / 2.0) / ((top - low) / 2.0);
        SLEEVE_DEPTH * (1.0 - t * t).max(0.0).sqrt()
    } else {
        0.0
    };
    body.max(sleeve)
}

/// The dress form under the shirt: a closed surface swept along `y`, whose cross-section at each
/// height is an ellipse of half-width `a` (along x) and half-depth `b` (along z), m. Rows of
/// `(y, a, b)` from the hips up to the neck; between rows the section is interpolated linearly.
/// The top row is closed by a cap, and so is the bottom.
const FORM: [(f64, f64, f64); 13] = [
    (0.72, 0.170, 0.070),
    (0.80, 0.185, 0.078),
    (0.95, 0.160, 0.068),
    (1.10, 0.170, 0.074),
    (1.25, 0.190, 0.076),
    (1.36, 0.195, 0.072),
    (1.42, 0.190, 0.062),
    (1.455, 0.165, 0.048),
    (1.475, 0.120, 0.040),
    (1.49, 0.070, 0.040),
    (1.50, 0.048, 0.040),
    (1.56, 0.045, 0.040),
    (1.64, 0.043, 0.038),
];
/// Points around each cross-section of the form.
const FORM_AROUND: usize = 48;
/// Rows of the form between two rows of [`FORM`], counting the first.
const FORM_SPLIT: usize = 3;

/// The form's half-width and half-depth at height `py`, or `None` above or below it.
fn form_section(py: f64) -> Option<(f64, f64)> {
    FORM.windows(2).find(|w| (w[0].0..=w[1].0).contains(&py)).map(|w| {
        let t = (py - w[0].0) / (w[1].0 - w[0].0);
        (w[0].1 + t * (w[1].1 - w[0].1), w[0].2 + t * (w[1].2 - w[0].2))
    })
}

/// The dress form as an OBJ object named `mannequin`, numbered from vertex `first` (1-based),
/// with outward-facing triangles. Returns the text and the vertex and triangle counts.
fn mannequin(first: usize) -> (String, usize, usize) {
    let mut rows: Vec<(f64, f64, f64)> = Vec::new();
    for w in FORM.windows(2) {
        for k in 0..FORM_SPLIT {
            let t = k as f64 / FORM_SPLIT as f64;
            rows.push((
                w[0].0 + t * (w[1].0 - w[0].0),
                w[0].1 + t * (w[1].1 - w[0].1),
                w[0].2 + t * (w[1].2 - w[0].2),
            ));
        }
    }
    rows.push(FORM[FORM.len() - 1]);
    let mut obj = String::from("o mannequin\n");
    for &(py, a, b) in &rows {
        for k in 0..FORM_AROUND {
            let t = std::f64::consts::TAU * k as f64 / FORM_AROUND as f64;
            let _ = writeln!(obj, "v {:.4} {:.4} {:.4}", a * t.cos(), py, b * t.sin());
        }
    }
    let ring = |r: usize, k: usize| first + r * FORM_AROUND + k % FORM_AROUND;
    let (bottom, top) = (first + rows.len() * FORM_AROUND, first + rows.len() * FORM_AROUND + 1);
    let _ = writeln!(obj, "v 0.0000 {:.4} 0.0000", rows[0].0);
    let _ = writeln!(obj, "v 0.0000 {:.4} 0.0000", rows[rows.len() - 1].0);
    let mut triangles = 0;
    // The angle runs from +x towards +z, so (r, k), (r + 1, k), (r + 1, k + 1) faces outwards.
    for r in 0..rows.len() - 1 {
        for k in 0..FORM_AROUND {
            let _ = writeln!(obj, "f {} {} {}", ring(r, k), ring(r + 1, k), ring(r + 1, k + 1));
            let _ = writeln!(obj, "f {} {} {}", ring(r, k), ring(r + 1, k + 1), ring(r, k + 1));
            triangles += 2;
        }
    }
    for k in 0..FORM_AROUND {
        let _ = writeln!(obj, "f {} {} {}", bottom, ring(0, k), ring(0, k + 1));
        let _ = writeln!(obj, "f {} {} {}", top, ring(rows.len() - 1, k + 1), ring(rows.len() - 1, k));
        triangles += 2;
    }
    (obj, rows.len() * FORM_AROUND + 2, triangles)
}

/// How far outside the form's cross-section a point is: `(x/a)² + (z/b)²` at its height (above 1
/// is outside), or infinity above and below the form.
fn form_outside(p: [f64; 3]) -> f64 {
    form_section(p[1]).map_or(f64::INFINITY, |(a, b)| (p[0] / a).powi(2) + (p[2] / b).powi(2))
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples"));

    // Vertices of each panel (corners of its cells), in row-major order.
    let corners = |panel: Panel| -> Vec<(i32, i32)> {
        let mut v = Vec::new();
        for j in 0..=NY {
            for i in 0..=NX {
                if [(i, j), (i - 1, j), (i, j - 1), (i - 1, j - 1)]
                    .iter()
                    .any(|&(ci, cj)| cell(panel, ci, cj))
                {
                    v.push((i, j));
                }
            }
        }
        v
    };
    // Boundary edges of a panel: grid edges with cloth on one side only.
    let seam_vertices = |panel: Panel| -> Vec<(i32, i32)> {
        let mut on_seam = Vec::new();
        for j in 0..=NY {
            for i in 0..=NX {
                for (b, beside) in [((i + 1, j), [(i, j), (i, j - 1)]), ((i, j + 1), [(i, j), (i - 1, j)])] {
                    let sides = beside.iter().filter(|&&(ci, cj)| cell(panel, ci, cj)).count();
                    if sides == 1 && !open_edge((i, j), b) {
                        on_seam.push((i, j));
                        on_seam.push(b);
                    }
                }
            }
        }
        on_seam.sort_unstable();
        on_seam.dedup();
        on_seam
    };
    let seams = seam_vertices(0);
    assert_eq!(seams, seam_vertices(1), "the panels' seams must match");

    // OBJ vertices: the front panel's, then the back panel's that are not on a seam.
    let mut number: [BTreeMap<(i32, i32), usize>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let mut positions: Vec<[f64; 3]> = Vec::new();
    for panel in [0, 1] {
        for (i, j) in corners(panel) {
            let shared = seams.binary_search(&(i, j)).is_ok();
            if panel == 1 && shared {
                number[1].insert((i, j), number[0][&(i, j)]);
                continue;
            }
            let side = if panel == 0 { 1.0 } else { -1.0 };
            let z = if shared { 0.0 } else { side * bulge(x(i), y(j)) };
            positions.push([x(i), HEM_Y + y(j), z]);
            number[panel].insert((i, j), positions.len());
        }
    }

    // UVs: one per panel vertex, each panel upright in its own island at the cloth's scale.
    let scale = 0.48 / (NX as f64 * CELL);
    let mut uv_number: [BTreeMap<(i32, i32), usize>; 2] = [BTreeMap::new(), BTreeMap::new()];
    let mut uvs: Vec<[f64; 2]> = Vec::new();
    for panel in [0, 1] {
        for (i, j) in corners(panel) {
            let u0 = if panel == 0 { 0.0 } else { 0.52 };
            uvs.push([u0 + i as f64 * CELL * scale, j as f64 * CELL * scale]);
            uv_number[panel].insert((i, j), uvs.len());
        }
    }

    // Faces: every cell of each panel, counter-clockwise seen from outside (+z front, −z back).
    let mut faces = String::new();
    let mut quads = 0;
    for panel in [0, 1] {
        for j in 0..NY {
            for i in 0..NX {
                if !cell(panel, i, j) {
                    continue;
                }
                let mut ring = [(i, j), (i + 1, j), (i + 1, j + 1), (i, j + 1)];
                if panel == 1 {
                    ring.reverse();
                }
                faces.push('f');
                for c in ring {
                    let _ = write!(faces, " {}/{}", number[panel][&c], uv_number[panel][&c]);
                }
                faces.push('\n');
                quads += 1;
            }
        }
    }

    let mut obj = String::new();
    let _ =
        writeln!(obj, "# A T-shirt for weft: front and back panels sewn at the sides, under the sleeves and");
    let _ = writeln!(obj, "# over the shoulders; open at the hem, the cuffs and the neck. Units: m, y up.");
    let _ = writeln!(obj, "# Written by `cargo run --example make_garment` (examples/make_garment.rs).");
    let _ = writeln!(obj, "# {} vertices, {quads} quads ({} triangles).", positions.len(), 2 * quads);
    let _ = writeln!(obj, "o tshirt");
    for p in &positions {
        let _ = writeln!(obj, "v {:.4} {:.4} {:.4}", p[0], p[1], p[2]);
    }
    for t in &uvs {
        let _ = writeln!(obj, "vt {:.5} {:.5}", t[0], t[1]);
    }
    obj.push_str(&faces);

    // The dress form, in the same file: it starts inside the shirt, clear of every vertex.
    let clearance = positions.iter().map(|&p| form_outside(p)).fold(f64::INFINITY, f64::min);
    assert!(clearance > 1.1_f64.powi(2), "the form must start inside the shirt (clearance {clearance})");
    let (form, form_vertices, form_triangles) = mannequin(positions.len() + 1);
    obj.push_str(&form);

    let scene = format!(
        r#"# A T-shirt dropped onto a dress form, swaying in a gust. Made by
# `cargo run --example make_garment` with garment.obj: the shirt ({vertices} vertices, {triangles}
# triangles from {quads} quads) and the form ({form_vertices} vertices, {form_triangles} triangles).
# The shirt starts around the form, clear of it, and settles onto its shoulders.
#
#   weft validate examples/garment.toml
#   weft bake examples/garment.toml --out out/garment --format pc2,usd,obj
#
# Units are SI: m, kg, s.

[simulation]
fps = 30.0                       # frames per second of the cache
frames = 60                      # 2 s
max_strain = 0.02                # each frame takes as many substeps (4 to 128) as keep the shirt within 2 % strain
gravity = [0.0, -9.81, 0.0]      # m/s², y up
velocity_damping = 0.2           # 1/s
# A breeze from the front that picks up and dies down again (m/s); it acts through `drag`.
wind = [
    {{ time = 0.0, velocity = [0.0, 0.0, 0.0] }},
    {{ time = 0.5, velocity = [0.0, 0.0, -2.0] }},
    {{ time = 1.5, velocity = [0.0, 0.0, 0.0] }},
]
air_density = 1.2                # kg/m³

[[cloth]]
name = "tshirt"
mesh = "garment.obj"             # next to this file
object = "tshirt"
density = 0.15                   # kg/m²: a cotton jersey
# Stretch along the threads, sorted by the UV direction of each edge: U runs across the shirt,
# V up it. Diagonal (bias) edges would keep stretch_compliance; this mesh has none.
stretch_compliance = 1e-4        # m/N
warp_compliance = 2e-4           # m/N: across, a knit gives more
weft_compliance = 5e-5           # m/N: down the body, firmer
shear_compliance = 0.02          # m/N: both diagonals of every quad; a knit shears easily
# A jersey's bending rigidity is about 3e-5 N·m; on 2.5 cm quads that is a hinge stiffness of
# about 5e-5 N·m/rad², so sleeves fold under their own weight instead of standing out as tubes.
bending_compliance = 20000.0     # rad²/(N·m)
drag = 0.8                       # the breeze pushes the cloth
lift = 0.1
# The sleeves fold flat and the body's layers meet: keep them 4 mm apart, vertex against
# triangle and edge against edge, and never let two triangles cross (`"triangles"`; particle
# contacts, `true`, would need a thickness of at least the vertex spacing, 2.5 cm).
self_collision = "triangles"
self_thickness = 0.004           # m: at most half the shortest edge (here 1.25 cm)
self_friction = 0.2

[[collider]]
name = "form"
shape = "mesh"
mesh = "garment.obj"
object = "mannequin"
thickness = 0.006                # m
friction = 0.6                   # cotton on a padded form
"#,
        vertices = positions.len(),
        triangles = 2 * quads,
    );

    std::fs::create_dir_all(&dir).expect("create the output folder");
    for (name, text) in [("garment.obj", &obj), ("garment.toml", &scene)] {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        println!("wrote {}", path.display());
    }
    println!("{} vertices, {quads} quads, {} triangles", positions.len(), 2 * quads);
}
