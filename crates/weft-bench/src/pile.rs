//! The cloth pile of `examples/pile.toml`: a long strip laid in folds, like an accordion; under
//! gravity the layers collapse onto the lowest one (on a floor collider in the example, pinned in
//! [`pile_cloth`]). With self-collision they stack; without it they fall through each other.
//!
//! The strip runs along a centre line in the `y`–`z` plane: layer `k` is straight, at
//! `y = 2·R·k`, running towards `+z` for even `k` and `−z` for odd `k`; consecutive layers are
//! joined by half circles of radius `R` that bulge outwards past the layers' ends. The strip is
//! `width` wide along `x`. Vertices are about `spacing` apart along the centre line and exactly
//! `spacing` apart across, joined by quads.
//!
//! `cargo run --example make_pile` writes `examples/pile.obj` with [`obj_text`];
//! [`pile_cloth`] builds the same cloth in code (for `weft bench` and the tests).

use std::f64::consts::PI;
use std::fmt::Write as _;

use weft_core::builder::{ClothDesc, EdgeSet, MassSpec};
use weft_core::self_collision::SelfCollisionDesc;
use weft_core::units::{Compliance, Elasticity};

/// The shape of a folded strip.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PileShape {
    /// Layers (`≥ 1`).
    pub layers: u32,
    /// Width of the strip along `x`, m.
    pub width: f64,
    /// Length of each straight layer along `z`, m.
    pub layer_length: f64,
    /// Radius `R` of the folds, m; layers are `2R` apart.
    pub fold_radius: f64,
    /// Vertex spacing, m.
    pub spacing: f64,
}

impl Default for PileShape {
    /// The example's strip: 5 layers of 0.4 m × 0.3 m, 2 cm vertex spacing, 3 cm folds (6 cm
    /// between layers): 16 × 117 = 1872 vertices.
    fn default() -> Self {
        PileShape { layers: 5, width: 0.3, layer_length: 0.4, fold_radius: 0.03, spacing: 0.02 }
    }
}

/// Vertices (m) and quads of a folded strip: `(positions, quads)`, quads as `[a, b, c, d]` in
/// order around the quad. The lowest layer lies at `y = 0`.
pub fn folded_strip(shape: &PileShape) -> (Vec<[f32; 3]>, Vec<[u32; 4]>) {
    let PileShape { layers, width, layer_length, fold_radius: r, spacing } = *shape;
    let straight = ((layer_length / spacing).round() as usize).max(1);
    let arc = ((PI * r / spacing).round() as usize).max(2);
    // Centre line points (y, z).
    let mut line: Vec<(f64, f64)> = Vec::new();
    for k in 0..layers as usize {
        let y = 2.0 * r * k as f64;
        let forward = k % 2 == 0;
        for s in 0..=straight {
            if k > 0 && s == 0 {
                continue; // the arc ended here
            }
            let t = s as f64 / straight as f64 * layer_length;
            line.push((y, if forward { t } else { layer_length - t }));
        }
        if k + 1 < layers as usize {
            let (cz, dir) = if forward { (layer_length, 1.0) } else { (0.0, -1.0) };
            for s in 1..arc {
                let a = PI * s as f64 / arc as f64;
                line.push((y + r - r * a.cos(), cz + dir * r * a.sin()));
            }
        }
    }
    let across = ((width / spacing).round() as usize).max(1) + 1;
    let mut positions = Vec::with_capacity(across * line.len());
    for &(y, z) in &line {
        for a in 0..across {
            positions.push([(a as f64 * spacing) as f32, y as f32, z as f32]);
        }
    }
    let mut quads = Vec::new();
    for s in 0..line.len() - 1 {
        for a in 0..across - 1 {
            let v = |a: usize, s: usize| (s * across + a) as u32;
            quads.push([v(a, s), v(a + 1, s), v(a + 1, s + 1), v(a, s + 1)]);
        }
    }
    (positions, quads)
}

/// The strip as OBJ text: one object `pile` of quads.
pub fn obj_text(shape: &PileShape) -> String {
    let (positions, quads) = folded_strip(shape);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# A strip laid in {} folds for weft's self-collision pile. Units: m, y up.",
        shape.layers
    );
    let _ = writeln!(s, "# Written by `cargo run --example make_pile` (crates/weft-bench/src/pile.rs).");
    let _ = writeln!(s, "# {} vertices, {} quads.", positions.len(), quads.len());
    let _ = writeln!(s, "o pile");
    for p in &positions {
        let _ = writeln!(s, "v {} {} {}", p[0], p[1], p[2]);
    }
    for q in &quads {
        let _ = writeln!(s, "f {} {} {} {}", q[0] + 1, q[1] + 1, q[2] + 1, q[3] + 1);
    }
    s
}

/// The pile as a cloth built in code, as `examples/pile.toml` builds it from the OBJ but with the
/// lowest layer pinned instead of lying on a floor collider (no collider needed): 0.2 kg/m²,
/// stretch along the quads' sides (compliance 1e-6 m/N), shear along both diagonals (1e-4 m/N),
/// the lowest layer pinned, and self-collision with the given thickness (m) and friction, or none.
pub fn pile_cloth(shape: &PileShape, self_collision: Option<SelfCollisionDesc>) -> ClothDesc {
    let (positions, quads) = folded_strip(shape);
    let mut triangles = Vec::with_capacity(2 * quads.len());
    let mut sides = std::collections::BTreeSet::new();
    let mut diagonals = Vec::with_capacity(2 * quads.len());
    for &[a, b, c, d] in &quads {
        triangles.push([a, b, c]);
        triangles.push([a, c, d]);
        for (p, q) in [(a, b), (b, c), (c, d), (d, a)] {
            sides.insert([p.min(q), p.max(q)]);
        }
        diagonals.push([a, c]);
        diagonals.push([b, d]);
    }
    let compliance = |a: f32| Elasticity::Compliance(Compliance::new(a).expect("a valid compliance"));
    let pins = positions.iter().enumerate().filter(|(_, p)| p[1] == 0.0).map(|(i, _)| i as u32).collect();
    ClothDesc {
        name: "pile".into(),
        positions,
        mass: MassSpec::Density(0.2),
        triangles,
        edge_sets: vec![
            EdgeSet {
                edges: sides.into_iter().collect(),
                elasticity: compliance(1e-6),
                ..EdgeSet::stretch()
            },
            EdgeSet { edges: diagonals, elasticity: compliance(1e-4), ..EdgeSet::shear() },
        ],
        pins,
        self_collision,
        ..ClothDesc::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_strip_is_folded_without_touching_itself() {
        let shape = PileShape::default();
        let (p, q) = folded_strip(&shape);
        assert_eq!(p.len(), 16 * 117);
        assert_eq!(q.len(), 15 * 116);
        let triangles: Vec<[u32; 3]> = q.iter().flat_map(|&[a, b, c, d]| [[a, b, c], [a, c, d]]).collect();
        assert_eq!(weft_geometry::intersections::intersecting_pairs(&p, &triangles), 0);
        assert_eq!(p.iter().filter(|v| v[1] == 0.0).count(), 16 * 21, "the lowest layer lies at y = 0");
    }
}
