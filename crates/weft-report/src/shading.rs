//! What the previews draw and how: meshes of cloth and colliders, lit by a fixed light with
//! Lambert's law, the cloth's front and back in different colours.

use crate::camera::{Camera, add, cross, dot, normalised, scaled, sub};
use crate::raster::{Canvas, Vertex};

/// What a mesh is, which sets its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// A cloth: [`FRONT`] where its triangles wind anticlockwise seen from the camera (their
    /// normal `(b − a) × (c − a)` towards it), [`BACK`] elsewhere.
    Cloth,
    /// A collider: [`COLLIDER`] grey.
    Collider,
    /// A collider plane, drawn as a square: [`GROUND`].
    Ground,
}

/// A triangle mesh in the world, in m.
#[derive(Debug, Clone, PartialEq)]
pub struct Mesh {
    /// Vertex positions, in m.
    pub positions: Vec<[f32; 3]>,
    /// Triangles (vertex indices).
    pub triangles: Vec<[u32; 3]>,
    /// What it is.
    pub surface: Surface,
    /// Shaded smooth (vertex normals interpolated) or flat.
    pub smooth: bool,
}

/// Colour of a cloth's front face (linear RGB, before shading): orange.
pub const FRONT: [f32; 3] = [0.90, 0.32, 0.06];
/// Colour of a cloth's back face: blue.
pub const BACK: [f32; 3] = [0.06, 0.22, 0.75];
/// Colour of a collider: neutral grey.
pub const COLLIDER: [f32; 3] = [0.42, 0.42, 0.42];
/// Colour of a collider plane: a lighter neutral grey.
pub const GROUND: [f32; 3] = [0.60, 0.60, 0.60];
/// Background of the previews: a pale blue-grey, not neutral (so it is no collider).
pub const BACKGROUND: [f32; 3] = [0.86, 0.89, 0.94];

/// Light reaching a surface facing away from the light, as a fraction.
const AMBIENT: f32 = 0.35;

/// Draws `meshes` as `camera` sees them on `canvas` (a canvas of the camera's size).
pub fn draw(canvas: &mut Canvas, camera: &Camera, meshes: &[Mesh], edges: bool) {
    // The light: from the upper left, in front of the scene, fixed to the camera.
    let light = normalised(add(add(scaled(camera.right, -0.45), scaled(camera.up, 0.7)), camera.to_eye));
    for mesh in meshes {
        let projected: Vec<[f32; 3]> = mesh.positions.iter().map(|&p| camera.project(p)).collect();
        let normals = if mesh.smooth { vertex_normals(mesh) } else { Vec::new() };
        // Edges of a cloth are drawn only where its triangles are large enough on the image.
        let mut edge_lines = Vec::new();
        for t in &mesh.triangles {
            let corners = t.map(|i| mesh.positions[i as usize]);
            let face = cross(sub(corners[1], corners[0]), sub(corners[2], corners[0]));
            if !face.iter().all(|c| c.is_finite()) {
                continue;
            }
            let front = dot(face, camera.to_eye) >= 0.0;
            // Lit on the side the camera sees.
            let facing = normalised(if front { face } else { scaled(face, -1.0) });
            let base = match mesh.surface {
                Surface::Cloth if front => FRONT,
                Surface::Cloth => BACK,
                Surface::Collider => COLLIDER,
                Surface::Ground => GROUND,
            };
            let vertex = |k: usize| {
                let i = t[k] as usize;
                let n = match normals.get(i) {
                    Some(&n) if dot(n, facing) < 0.0 => scaled(n, -1.0),
                    Some(&n) if dot(n, n) > 0.0 => n,
                    _ => facing,
                };
                let lit = AMBIENT + (1.0 - AMBIENT) * dot(n, light).max(0.0);
                let [x, y, z] = projected[i];
                Vertex { x, y, z, colour: base.map(|c| c * lit) }
            };
            let v = [vertex(0), vertex(1), vertex(2)];
            canvas.triangle(v);
            if edges && mesh.surface == Surface::Cloth {
                edge_lines.push(v);
            }
        }
        if !edge_lines.is_empty() {
            let mean = edge_lines.iter().map(|v| (v[1].x - v[0].x).hypot(v[1].y - v[0].y)).sum::<f32>()
                / edge_lines.len() as f32;
            if mean >= 10.0 {
                // Depth slack: a few pixels' worth, so a triangle's own edges pass the z test.
                let bias = 2.0 / camera.scale;
                for v in edge_lines {
                    for k in 0..3 {
                        let (a, b) = (v[k], v[(k + 1) % 3]);
                        canvas.line(a, b, a.colour.map(|c| c * 0.7), bias);
                    }
                }
            }
        }
    }
}

/// Area-weighted vertex normals of `mesh` (zero for a vertex of no triangle).
fn vertex_normals(mesh: &Mesh) -> Vec<[f32; 3]> {
    let mut normals = vec![[0.0f32; 3]; mesh.positions.len()];
    for t in &mesh.triangles {
        let p = t.map(|i| mesh.positions[i as usize]);
        let face = cross(sub(p[1], p[0]), sub(p[2], p[0]));
        if face.iter().all(|c| c.is_finite()) {
            for &i in t {
                normals[i as usize] = add(normals[i as usize], face);
            }
        }
    }
    normals.into_iter().map(normalised).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::camera::Bounds;

    /// One cloth triangle facing the camera, wound one way or the other.
    fn facing_triangle(camera: &Camera, flip: bool) -> Mesh {
        let c = camera.centre;
        let (r, u) = (scaled(camera.right, 0.5), scaled(camera.up, 0.5));
        let (a, b, d) = (sub(sub(c, r), u), add(sub(c, u), r), add(c, u));
        Mesh {
            positions: if flip { vec![a, d, b] } else { vec![a, b, d] },
            triangles: vec![[0, 1, 2]],
            surface: Surface::Cloth,
            smooth: true,
        }
    }

    #[test]
    fn front_and_back_faces_have_their_colours() {
        let bounds = Bounds { min: [-1.0; 3], max: [1.0; 3] };
        let camera = Camera::framing(&bounds, [0.0, 1.0, 0.0], 64, 64);
        for (flip, want_orange) in [(false, true), (true, false)] {
            let mut canvas = Canvas::new(64, 64, BACKGROUND);
            draw(&mut canvas, &camera, &[facing_triangle(&camera, flip)], false);
            let p = canvas.to_image().pixel(32, 40);
            let orange = p[0] > p[1] && p[1] > p[2] && p[0] > 120;
            let blue = i32::from(p[2]) > i32::from(p[0]) + 60;
            assert_eq!((orange, blue), (want_orange, !want_orange), "flip {flip}: {p:?}");
        }
    }
}
