//! Triangle meshes of a model's colliders at a time: spheres, capsules and boxes tessellated,
//! planes as a square around the bake, triangle-mesh colliders as they are; each placed where the
//! solver has it at that time (`Collider::placed`, `MeshCollider::vertices_at`: the same keyed
//! motion).

use weft_core::Model;
use weft_core::collider::ColliderShape;

use crate::camera::{Bounds, add, cross, dot, normalised, scaled, sub};
use crate::shading::{Mesh, Surface};

/// Segments around a sphere or capsule.
const AROUND: usize = 32;
/// Rings from pole to pole of a sphere.
const RINGS: usize = 16;

/// Every collider of `model` at time `t` (s). A plane is a square centred on the point of the
/// plane nearest the centre of `bounds` (the bake's), as wide as the bounds' diagonal × 1.5.
pub fn collider_meshes(model: &Model, t: f64, bounds: &Bounds) -> Vec<Mesh> {
    let mut meshes = Vec::new();
    for collider in model.colliders() {
        let placed = collider.placed(t, t);
        let place = |l: [f32; 3]| -> [f32; 3] {
            let r = placed.rotation;
            add(std::array::from_fn(|i| dot(r[i], l)), placed.position)
        };
        let (local, smooth) = match collider.shape {
            ColliderShape::Sphere { radius } => (capsule(radius, 0.0), true),
            ColliderShape::Capsule { radius, half_length } => (capsule(radius, half_length), true),
            ColliderShape::Box { half_extents } => (cuboid(half_extents), false),
            ColliderShape::Plane { normal } => {
                let world_normal = normalised(sub(place(normal), place([0.0; 3])));
                meshes.push(plane(place([0.0; 3]), world_normal, bounds));
                continue;
            }
        };
        let (positions, triangles) = local;
        meshes.push(Mesh {
            positions: positions.into_iter().map(place).collect(),
            triangles,
            surface: Surface::Collider,
            smooth,
        });
    }
    for mesh in model.mesh_colliders() {
        meshes.push(Mesh {
            positions: mesh.vertices_at(t),
            triangles: mesh.triangles.clone(),
            surface: Surface::Collider,
            smooth: true,
        });
    }
    meshes
}

/// A capsule along y (a sphere when `half_length` is 0): a UV sphere whose upper half is moved
/// up by `half_length` and lower half down.
fn capsule(radius: f32, half_length: f32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let mut positions = Vec::new();
    // Rings from the top pole (ring 0) to the bottom (ring RINGS); the equator is doubled for a
    // capsule so that the cylinder between the caps has its own band.
    let mut rings = Vec::new();
    for r in 0..=RINGS {
        let polar = std::f32::consts::PI * r as f32 / RINGS as f32;
        let shift = if r < RINGS / 2 {
            half_length
        } else if r > RINGS / 2 {
            -half_length
        } else {
            0.0
        };
        if r == RINGS / 2 && half_length > 0.0 {
            rings.push((polar, half_length));
            rings.push((polar, -half_length));
        } else {
            rings.push((polar, shift));
        }
    }
    for &(polar, shift) in &rings {
        for a in 0..AROUND {
            let azimuth = 2.0 * std::f32::consts::PI * a as f32 / AROUND as f32;
            let (s, c) = polar.sin_cos();
            positions.push([radius * s * azimuth.cos(), radius * c + shift, radius * s * azimuth.sin()]);
        }
    }
    let mut triangles = Vec::new();
    for r in 0..rings.len() - 1 {
        for a in 0..AROUND {
            let i = |r: usize, a: usize| (r * AROUND + a % AROUND) as u32;
            triangles.push([i(r, a), i(r, a + 1), i(r + 1, a)]);
            triangles.push([i(r, a + 1), i(r + 1, a + 1), i(r + 1, a)]);
        }
    }
    (positions, triangles)
}

/// A box of half extents `h`, centred on the origin.
fn cuboid(h: [f32; 3]) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
    let positions =
        (0..8).map(|k| std::array::from_fn(|i| if k >> i & 1 == 0 { -h[i] } else { h[i] })).collect();
    // Each face as two triangles (corner k has bit i set for +h[i]); unshared corners per face
    // would shade better, but the boxes are drawn flat anyway.
    let faces = [[0, 2, 6, 4], [1, 5, 7, 3], [0, 4, 5, 1], [2, 3, 7, 6], [0, 1, 3, 2], [4, 6, 7, 5]];
    let triangles = faces.iter().flat_map(|f: &[u32; 4]| [[f[0], f[1], f[2]], [f[0], f[2], f[3]]]).collect();
    (positions, triangles)
}

/// A square of the plane through `point` with unit `normal`, around the bounds.
fn plane(point: [f32; 3], normal: [f32; 3], bounds: &Bounds) -> Mesh {
    let c = bounds.centre();
    let centre = sub(c, scaled(normal, dot(sub(c, point), normal)));
    let other = if normal[0].abs() < 0.9 { [1.0, 0.0, 0.0] } else { [0.0, 1.0, 0.0] };
    let u = normalised(cross(normal, other));
    let v = cross(normal, u);
    let half = 0.75 * if bounds.is_empty() { 2.0 } else { bounds.diagonal().max(1e-3) };
    let corner = |a: f32, b: f32| add(centre, add(scaled(u, a * half), scaled(v, b * half)));
    Mesh {
        positions: vec![corner(-1.0, -1.0), corner(1.0, -1.0), corner(1.0, 1.0), corner(-1.0, 1.0)],
        triangles: vec![[0, 1, 2], [0, 2, 3]],
        surface: Surface::Ground,
        smooth: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spheres_and_capsules_have_their_size() {
        let (p, t) = capsule(0.5, 0.0);
        assert!(p.iter().all(|q| (dot(*q, *q).sqrt() - 0.5).abs() < 1e-5));
        assert!(t.iter().all(|t| t.iter().all(|&i| (i as usize) < p.len())));
        let (p, _) = capsule(0.5, 1.0);
        let top = p.iter().map(|q| q[1]).fold(f32::MIN, f32::max);
        let bottom = p.iter().map(|q| q[1]).fold(f32::MAX, f32::min);
        assert!((top - 1.5).abs() < 1e-5 && (bottom + 1.5).abs() < 1e-5, "{top} {bottom}");
        let (p, t) = cuboid([1.0, 2.0, 3.0]);
        assert_eq!((p.len(), t.len()), (8, 12));
    }
}
