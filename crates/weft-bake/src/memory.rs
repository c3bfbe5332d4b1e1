//! The heap a bake takes, estimated from its model: what `weft validate` prints, and what
//! `weft bench` holds against the allocator's count.

use std::mem::size_of;

use weft_core::Model;
use weft_core::batches::Batches;
use weft_core::kinds::{BatchedKind, SetVisitor};
use weft_core::lanes::Lanes;
use weft_core::particles::RECORD;
use weft_core::polygons::Polygons;

/// Approximate bytes a batched constraint set holds: per batch, its particle and parameter lanes
/// (an all-zero parameter column is not stored), tags, `λ`, and the plan (constraint index per lane,
/// active lanes, write mask).
fn set_bytes<const K: usize, const P: usize>(set: &Batches<K, P>) -> u64 {
    let columns = (0..P).filter(|&c| set.has_param(c)).count();
    let per_batch = (K + 1) * size_of::<Lanes<u32>>()
        + (columns + 1) * size_of::<Lanes<f32>>()
        + size_of::<Lanes<u8>>()
        + size_of::<u8>()
        + size_of::<u32>();
    set.plan().len() as u64 * per_batch as u64
}

/// The bytes of every batched set, summed as `KindSets::visit` visits them.
struct SetBytes(u64);

impl SetVisitor<'_> for SetBytes {
    fn visit<T: BatchedKind<K, P>, const K: usize, const P: usize>(&mut self, _kind: T, set: &Batches<K, P>) {
        self.0 += set_bytes(set);
    }
}

/// Bytes of faces: per face its size and where its corners start, per corner its point and its
/// UV (when the faces have UVs).
fn polygon_bytes(p: &Polygons) -> u64 {
    let per_face = size_of::<u32>() + size_of::<usize>();
    p.len() as u64 * per_face as u64
        + p.corners().len() as u64 * size_of::<u32>() as u64
        + p.uvs().len() as u64 * size_of::<[f32; 2]>() as u64
}

/// Bytes of the model's cloths as a scene describes them, which the caller of a bake holds
/// through it (`weft bake` keeps the scene for the summary): their positions, triangles with one
/// UV per corner when their faces have UVs, faces (per face its size and start, per corner its point and UV) and distance edges.
pub fn scene_bytes(model: &Model) -> u64 {
    let mut bytes = model.particles().len() as u64 * size_of::<[f32; 3]>() as u64;
    for c in model.cloths() {
        let uvs = if c.polygons.uvs().is_empty() { 0 } else { size_of::<[[f32; 2]; 3]>() };
        bytes += c.triangles.len() as u64 * (size_of::<[u32; 3]>() + uvs) as u64 + polygon_bytes(&c.polygons);
    }
    let edges = model.sets().distance.len() as u64 + model.report().dropped_pinned as u64;
    bytes + edges * size_of::<[u32; 2]>() as u64
}

/// Approximate bytes the model holds in memory: the particle arrays, the lane-packed constraint
/// sets with their batch plans, the volume and aerodynamic triangles, and the cloths' triangles
/// and faces (the same arrays a bake steps and writes).
pub fn model_bytes(model: &Model) -> u64 {
    let particles = model.particles().len() as u64;
    // positions, previous positions, velocities: one 16-byte record each; inverse masses.
    let per_particle = (3 * RECORD * size_of::<f32>() + size_of::<f32>()) as u64;
    let triangle = size_of::<[u32; 3]>() as u64;
    let cloth_triangles: u64 = model.cloths().iter().map(|c| c.triangles.len() as u64).sum();
    let volume_triangles: u64 = model.volumes().iter().map(|v| v.triangles.len() as u64).sum();
    let aero_triangles = model.aero().triangles.len() as u64;
    let faces: u64 = model.cloths().iter().map(|c| polygon_bytes(&c.polygons)).sum();
    let mut sets = SetBytes(0);
    model.sets().visit(&mut sets);
    particles * per_particle
        + sets.0
        + (cloth_triangles + volume_triangles) * triangle
        + faces
        + aero_triangles * (triangle + size_of::<[f32; 2]>() as u64)
}

/// Heap the count of intersecting triangle pairs keeps per triangle, in bytes, besides its
/// listings: the triangle with its box (36 B) and the range of grid cells it covers (24 B).
const COUNT_BYTES_PER_TRIANGLE: u64 = 36 + 24;

/// Heap the count keeps per listing of a triangle in a grid cell, in bytes: the listing and its
/// copy while sorted (16 B each), and up to two table buckets (4 B each; the table is the next
/// power of two above the listings).
const COUNT_BYTES_PER_LISTING: u64 = 2 * 16 + 2 * 4;

/// Grid cells a triangle is listed in, on average, at the count's peak: about 3 for a flat cloth
/// (its boxes, flat, span one or two cells of twice their mean extent along each of two axes),
/// and, swinging down from level, up to about 7 on the 512² comparison grid after 30 frames (see
/// docs/performance.md): the figure taken, so that the estimate bounds the peak. The grid never
/// lists more than 27 per triangle.
const LISTINGS_PER_TRIANGLE: u64 = 7;

/// Resident bytes of the process besides its heap, measured on a bake of a few particles: the
/// binary's pages in use and the threads' stacks.
const PROCESS_BYTES: u64 = 6 << 20;

/// Heap of the self-collision search per taking-part particle, in bytes: its bucket, its place in
/// the sorted list, two entries of the hash table, its correction, and about a dozen neighbours.
const SELF_COLLISION_BYTES_PER_MEMBER: u64 = 4 + 4 + 2 * 8 + 16 + 12 * 4;

/// Approximate peak memory of a bake of `model` by `weft bake`, in bytes: an upper bound of its
/// resident size at the peak (docs/performance.md). The model ([`model_bytes`]) and the scene it
/// was built from ([`scene_bytes`]), the process (binary and stacks, 6 MiB), and what a bake adds at its
/// peak, after its first frame is counted: the step's displacement, the copies of the positions
/// the measure and the output keep, the triangles and stretch edges of the two quality measures
/// (one beside the solver, one with the output), the intersection count's buffers, the
/// self-collision search, and, baking to a tolerance, the snapshot a frame is stepped again
/// from; and per file written (`caches` caches and `stats.csv`), its write buffer
/// ([`weft_io::WRITE_BUFFER`]) and a sample. Caches are written sample by sample and hold no more
/// than a sample. The build's own temporaries are freed before the bake opens its files, and
/// are fewer than what the bake adds (measured on the comparison grids).
pub fn peak_bytes(model: &Model, caches: usize) -> u64 {
    PROCESS_BYTES + scene_bytes(model) + bake_heap_bytes(model, caches)
}

/// The heap of a bake of `model` at its peak, in bytes, the model included: [`peak_bytes`]
/// without the process and the scene (what [`crate::bake_model`] takes of the heap).
pub fn bake_heap_bytes(model: &Model, caches: usize) -> u64 {
    let particles = model.particles().len() as u64;
    let triangles: u64 = model.cloths().iter().map(|c| c.triangles.len() as u64).sum();
    let edges = model.sets().distance.len() as u64;
    let record = (RECORD * size_of::<f32>()) as u64;
    let point = size_of::<[f32; 3]>() as u64;
    let measure =
        triangles * size_of::<[u32; 3]>() as u64 + edges * (size_of::<[u32; 2]>() + size_of::<f32>()) as u64;
    let count = triangles * (COUNT_BYTES_PER_TRIANGLE + LISTINGS_PER_TRIANGLE * COUNT_BYTES_PER_LISTING);
    let snapshot = if model.settings().tolerance.is_some() { 3 * record * particles } else { 0 };
    model_bytes(model)
        + particles * (record + 4 * point)
        + 2 * measure
        + count
        + model.self_collision().members().len() as u64 * SELF_COLLISION_BYTES_PER_MEMBER
        + snapshot
        + (caches as u64 + 1) * weft_io::WRITE_BUFFER as u64
        + caches as u64 * particles * point
}
