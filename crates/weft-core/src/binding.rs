//! A render mesh bound to the simulated proxy: [`Binding`].
//!
//! A cloth may be simulated on a coarse mesh (the *proxy*) and rendered with a finer one. Each
//! render vertex is bound once, at rest, to the proxy triangle nearest to it:
//!
//! * its **weights** `β` are the barycentric coordinates of the closest point `c = Σ β_k x_k` of
//!   that triangle;
//! * its **offset** `o` is `p − c` in the frame `(t, b, n)` at `c`: `n` the normalised
//!   interpolation `Σ β_k N_k` of the proxy's smooth vertex normals `N_k` (area-weighted over
//!   its faces, [`crate::normals`]), `t` the triangle's first edge made perpendicular to `n`, `b = n × t`.
//!
//! After every frame the render vertex is placed at `c + o_t·t + o_b·b + o_n·n` of the moved
//! proxy. At rest this gives back the render mesh to rounding (a render mesh equal to the proxy
//! comes back to 1e-6 m, `tests/suite/render_mesh.rs`), and an offset along the normal follows the
//! smoothly interpolated normal rather than one triangle's, so a render shell around the proxy
//! does not crease at the proxy's edges.
//!
//! **Reach.** A render vertex must lie within [`Binding::reach`] of the proxy surface: one mean
//! rest edge length of the proxy. A farther vertex is a lever on one triangle that swings with
//! every turn of it, magnifying the proxy's motion; it is refused ([`BindError::TooFar`]), and a
//! render mesh with no vertex in reach ([`BindError::NoneNear`]) is most likely in other units
//! or another place than its proxy.
//!
//! Binding finds each render vertex's triangle with `weft_geometry::nearest` (a grid of the
//! proxy triangles' boxes, cells one reach wide), so it costs about one closest-point test per
//! nearby triangle per render vertex. Ties go to the lowest triangle index, so a binding depends
//! only on its inputs. A vertex out of reach is named with its distance from the proxy, measured
//! against every triangle. Placing runs in parallel chunks on the current rayon pool; each vertex
//! depends only on the proxy, so the output is the same for any number of threads.

use rayon::prelude::*;
use weft_geometry::nearest::{Nearest, NearestTriangle, distance_to_triangles};

use crate::digest::Digest;
use crate::normals::vertex_normals;
use crate::polygons::Polygons;

/// What a cache of the proxy beside its render mesh is named: the cloth's name and this.
pub const PROXY_SUFFIX: &str = "_proxy";

/// A render mesh as a scene gives it, for [`crate::ClothDesc::render_mesh`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RenderMeshDesc {
    /// Its vertices at rest, m, in the space of the cloth's rest positions.
    pub positions: Vec<[f32; 3]>,
    /// Its faces as given, with their UVs, written to the cloth's mesh caches.
    pub polygons: Polygons,
    /// Whether the proxy is cached too, as the cloth's name + [`PROXY_SUFFIX`].
    pub cache_proxy: bool,
}

/// A render mesh bound to its cloth, for [`crate::model::ClothInfo::render`].
#[derive(Debug, Clone, PartialEq)]
pub struct RenderMesh {
    /// Where each render vertex sits on the proxy.
    pub binding: Binding,
    /// Its faces as given, with their UVs.
    pub polygons: Polygons,
    /// Whether the proxy is cached too, as the cloth's name + [`PROXY_SUFFIX`].
    pub cache_proxy: bool,
}

type V = [f64; 3];

fn sub(a: V, b: V) -> V {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: V, b: V) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn cross(a: V, b: V) -> V {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn scale(a: V, s: f64) -> V {
    [a[0] * s, a[1] * s, a[2] * s]
}

fn add(a: V, b: V) -> V {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

fn wide(p: [f32; 3]) -> V {
    p.map(f64::from)
}

/// `v / |v|`, or `None` when `v` has no usable length.
fn unit(v: V) -> Option<V> {
    let l = dot(v, v).sqrt();
    (l > 1e-30 && l.is_finite()).then(|| scale(v, 1.0 / l))
}

/// Why a render mesh cannot be bound to its proxy.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BindError {
    /// The proxy has no triangles to bind to.
    #[error("the simulated mesh has no triangles to bind a render mesh to")]
    NoTriangles,
    /// No render vertex lies within reach of the proxy.
    #[error(
        "no render vertex lies within {reach:.4} m (the reach) of the simulated mesh; the first, this one, is {distance:.4} m away: is the render mesh in the same place and units as the cloth?"
    )]
    NoneNear {
        /// The first render vertex (0-based).
        vertex: usize,
        /// Its distance from the proxy, m.
        distance: f64,
        /// The reach, m.
        reach: f64,
    },
    /// One render vertex is out of reach.
    #[error(
        "the render vertex is {distance:.4} m from the simulated mesh, beyond the reach of {reach:.4} m (one mean rest edge of the simulated mesh)"
    )]
    TooFar {
        /// The render vertex (0-based).
        vertex: usize,
        /// Its distance from the proxy, m.
        distance: f64,
        /// The reach, m.
        reach: f64,
    },
    /// A render vertex is not finite.
    #[error("the render vertex is not a finite position")]
    NotFinite {
        /// The render vertex (0-based).
        vertex: usize,
    },
}

/// Each render vertex's proxy triangle, weights and offset (module docs).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Binding {
    /// The proxy triangle of each render vertex (index into the proxy's triangles).
    triangle: Vec<u32>,
    /// Barycentric weights of the bound point in its triangle (sum 1).
    weights: Vec<[f64; 3]>,
    /// The offset from the bound point, m, in the frame (tangent, bitangent, normal) there.
    offset: Vec<[f64; 3]>,
    /// How far a render vertex may be from the proxy, m.
    reach: f64,
}

/// The frame `(t, b, n)` at weights `w` of triangle `tri` of `positions` with vertex normals
/// `normals`: `n` the interpolated normal (the face normal where that vanishes), `t` the first
/// edge made perpendicular to it, `b = n × t`. Always orthonormal, whatever the triangle.
fn frame(tri: [V; 3], normals: [V; 3], w: [f64; 3]) -> [V; 3] {
    let interpolated = add(add(scale(normals[0], w[0]), scale(normals[1], w[1])), scale(normals[2], w[2]));
    let edge = sub(tri[1], tri[0]);
    let face = cross(edge, sub(tri[2], tri[0]));
    let n = unit(interpolated).or_else(|| unit(face)).unwrap_or([0.0, 0.0, 1.0]);
    let along = sub(edge, scale(n, dot(edge, n)));
    let t = unit(along)
        .or_else(|| unit(cross(n, [1.0, 0.0, 0.0])))
        .or_else(|| unit(cross(n, [0.0, 1.0, 0.0])))
        .unwrap_or([1.0, 0.0, 0.0]);
    [t, cross(n, t), n]
}

/// The mean length of the triangles' edges (each triangle's three sides), m.
fn mean_edge(positions: &[[f32; 3]], triangles: &[[u32; 3]]) -> f64 {
    let mut sum = 0.0;
    for t in triangles {
        let [a, b, c] = t.map(|i| wide(positions[i as usize]));
        for (p, q) in [(a, b), (b, c), (c, a)] {
            sum += dot(sub(p, q), sub(p, q)).sqrt();
        }
    }
    sum / (3 * triangles.len()).max(1) as f64
}

impl Digest for RenderMesh {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let RenderMesh { binding, polygons, cache_proxy } = self;
        let Binding { triangle, weights, offset, reach } = binding;
        triangle.digest(h);
        weights.digest(h);
        offset.digest(h);
        reach.digest(h);
        polygons.digest(h);
        cache_proxy.digest(h);
    }
}

impl Binding {
    /// Binds every point of `render` (m) to the nearest triangle of the proxy, `positions` (m)
    /// with `triangles` and the faces `polygons` its normals are taken over (its triangles, or
    /// the faces they were cut from), both at rest (module docs). Indices must be in range.
    pub fn bind(
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
        polygons: &Polygons,
        render: &[[f32; 3]],
    ) -> Result<Self, BindError> {
        if triangles.is_empty() {
            return Err(BindError::NoTriangles);
        }
        if let Some(vertex) = render.iter().position(|p| p.iter().any(|c| !c.is_finite())) {
            return Err(BindError::NotFinite { vertex });
        }
        let reach = mean_edge(positions, triangles);
        let search = NearestTriangle::new(positions, triangles, reach);
        let mut normals = Vec::new();
        vertex_normals(positions, polygons, &mut Vec::new(), &mut normals);
        let mut binding = Binding {
            triangle: Vec::with_capacity(render.len()),
            weights: Vec::with_capacity(render.len()),
            offset: Vec::with_capacity(render.len()),
            reach,
        };
        // The first vertex out of reach, and whether any is within reach.
        let mut far = None;
        let mut any_near = false;
        for (v, &p) in render.iter().enumerate() {
            match search.find(p) {
                Some(nearest) => {
                    any_near = true;
                    binding.push(wide(p), nearest, positions, triangles, &normals);
                }
                None => {
                    far = far.or(Some(v));
                    if any_near {
                        break;
                    }
                    // Go on: whether any vertex is in reach tells a stray vertex from a
                    // misplaced mesh.
                }
            }
        }
        // Only the vertex named is measured against every triangle, so bad input costs one
        // search more, not one per vertex.
        let distance = |vertex: usize| distance_to_triangles(render[vertex], positions, triangles);
        match far {
            None => Ok(binding),
            Some(vertex) if any_near => Err(BindError::TooFar { vertex, distance: distance(vertex), reach }),
            Some(vertex) => Err(BindError::NoneNear { vertex, distance: distance(vertex), reach }),
        }
    }

    /// Binds the render vertex at `p` (m) to its nearest point `nearest` of the proxy.
    fn push(
        &mut self,
        p: V,
        nearest: Nearest,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
        normals: &[[f32; 3]],
    ) {
        let (k, w) = (nearest.triangle, nearest.weights);
        let t = &triangles[k as usize];
        let c = t.map(|i| wide(positions[i as usize]));
        let n = t.map(|i| wide(normals[i as usize]));
        let [ft, fb, fnrm] = frame(c, n, w);
        let q = add(add(scale(c[0], w[0]), scale(c[1], w[1])), scale(c[2], w[2]));
        let r = sub(p, q);
        self.triangle.push(k);
        self.weights.push(w);
        self.offset.push([dot(r, ft), dot(r, fb), dot(r, fnrm)]);
    }

    /// Render vertices bound.
    pub fn len(&self) -> usize {
        self.triangle.len()
    }

    /// Whether no vertex is bound.
    pub fn is_empty(&self) -> bool {
        self.triangle.is_empty()
    }

    /// How far from the proxy a render vertex may be, m: the proxy's mean rest edge length.
    pub fn reach(&self) -> f64 {
        self.reach
    }

    /// The largest offset of a render vertex from its bound point, m.
    pub fn largest_offset(&self) -> f64 {
        self.offset.iter().map(|o| dot(*o, *o).sqrt()).fold(0.0, f64::max)
    }

    /// Places every render vertex on the proxy `positions` (m, with the `triangles` it was bound
    /// to, and the vertex normals `normals` of its faces, see [`crate::normals`]) into `out`, one
    /// per bound vertex. In parallel on the current rayon pool; the same for any thread count.
    pub fn place(
        &self,
        positions: &[[f32; 3]],
        triangles: &[[u32; 3]],
        normals: &[[f32; 3]],
        out: &mut [[f32; 3]],
    ) {
        assert_eq!(out.len(), self.len(), "one output per bound render vertex");
        const CHUNK: usize = 4096;
        out.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, out)| {
            let first = chunk * CHUNK;
            for (i, o) in out.iter_mut().enumerate() {
                let v = first + i;
                let t = &triangles[self.triangle[v] as usize];
                let c = t.map(|k| wide(positions[k as usize]));
                let n = t.map(|k| wide(normals[k as usize]));
                let w = self.weights[v];
                let [ft, fb, fnrm] = frame(c, n, w);
                let q = add(add(scale(c[0], w[0]), scale(c[1], w[1])), scale(c[2], w[2]));
                let [ot, ob, on] = self.offset[v];
                let p = add(q, add(add(scale(ft, ot), scale(fb, ob)), scale(fnrm, on)));
                *o = p.map(|c| c as f32);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flat `n × n` grid of 1 m in the xy plane, and its triangles.
    fn grid(n: u32) -> (Vec<[f32; 3]>, Vec<[u32; 3]>) {
        let s = 1.0 / (n - 1) as f32;
        let p = (0..n * n).map(|i| [(i % n) as f32 * s, (i / n) as f32 * s, 0.0]).collect();
        let mut t = Vec::new();
        for j in 0..n - 1 {
            for i in 0..n - 1 {
                let a = j * n + i;
                t.push([a, a + 1, a + n + 1]);
                t.push([a, a + n + 1, a + n]);
            }
        }
        (p, t)
    }

    fn faces(t: &[[u32; 3]]) -> Polygons {
        Polygons::from_triangles(t, &[]).unwrap()
    }

    fn placed(b: &Binding, p: &[[f32; 3]], t: &[[u32; 3]]) -> Vec<[f32; 3]> {
        let mut normals = Vec::new();
        vertex_normals(p, &faces(t), &mut Vec::new(), &mut normals);
        let mut out = vec![[0.0; 3]; b.len()];
        b.place(p, t, &normals, &mut out);
        out
    }

    #[test]
    fn the_proxy_itself_comes_back() {
        let (p, t) = grid(5);
        let b = Binding::bind(&p, &t, &faces(&t), &p).unwrap();
        for (a, b) in placed(&b, &p, &t).iter().zip(&p) {
            for k in 0..3 {
                assert!((a[k] - b[k]).abs() < 1e-6, "{a:?} {b:?}");
            }
        }
    }

    #[test]
    fn an_offset_follows_a_rotation() {
        let (p, t) = grid(3);
        // Points 1 cm above the proxy and within it.
        let render: Vec<[f32; 3]> = vec![[0.3, 0.4, 0.01], [0.75, 0.2, -0.01]];
        let b = Binding::bind(&p, &t, &faces(&t), &render).unwrap();
        // Turn the proxy 90° about x: z becomes y, y becomes −z.
        let turned: Vec<[f32; 3]> = p.iter().map(|q| [q[0], -q[2], q[1]]).collect();
        let out = placed(&b, &turned, &t);
        for (o, r) in out.iter().zip(&render) {
            let want = [r[0], -r[2], r[1]];
            for k in 0..3 {
                assert!((o[k] - want[k]).abs() < 1e-6, "{o:?} {want:?}");
            }
        }
    }

    #[test]
    fn a_far_vertex_and_a_far_mesh_are_named() {
        let (p, t) = grid(3); // mean edge about 0.57 m
        let far = vec![[0.5, 0.5, 0.0], [0.5, 0.5, 3.0]];
        match Binding::bind(&p, &t, &faces(&t), &far) {
            Err(BindError::TooFar { vertex: 1, distance, .. }) => assert!((distance - 3.0).abs() < 1e-6),
            other => panic!("{other:?}"),
        }
        let away = vec![[0.5, 0.5, 5.0], [0.5, 0.5, 4.0]];
        match Binding::bind(&p, &t, &faces(&t), &away) {
            Err(BindError::NoneNear { vertex: 0, distance, .. }) => assert!((distance - 5.0).abs() < 1e-6),
            other => panic!("{other:?}"),
        }
        assert_eq!(Binding::bind(&p, &[], &Polygons::default(), &far), Err(BindError::NoTriangles));
        assert_eq!(
            Binding::bind(&p, &t, &faces(&t), &[[f32::NAN, 0.0, 0.0]]),
            Err(BindError::NotFinite { vertex: 0 })
        );
    }
}
