//! The heap a bake takes, estimated from its model: what `weft validate` prints, and what
//! `weft bench` holds against the allocator's count.

use std::mem::size_of;

use weft_core::Model;
use weft_core::batches::Batches;
use weft_core::kinds::{BatchedKind, SetVisitor};
use weft_core::lanes::Lanes;
use weft_core::particles::RECORD;

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

/// Approximate bytes the model holds in memory: the particle arrays, the lane-packed constraint
/// sets with their batch plans, the volume and aerodynamic triangles, and the cloths' triangles
/// (the same arrays a bake steps).
pub fn model_bytes(model: &Model) -> u64 {
    let particles = model.particles().len() as u64;
    // positions, previous positions, velocities: one 16-byte record each; inverse masses.
    let per_particle = (3 * RECORD * size_of::<f32>() + size_of::<f32>()) as u64;
    let triangle = size_of::<[u32; 3]>() as u64;
    let cloth_triangles: u64 = model.cloths().iter().map(|c| c.triangles.len() as u64).sum();
    let volume_triangles: u64 = model.volumes().iter().map(|v| v.triangles.len() as u64).sum();
    let aero_triangles = model.aero().triangles.len() as u64;
    let mut sets = SetBytes(0);
    model.sets().visit(&mut sets);
    particles * per_particle
        + sets.0
        + (cloth_triangles + volume_triangles) * triangle
        + aero_triangles * (triangle + size_of::<[f32; 2]>() as u64)
}

/// Heap the count of intersecting triangle pairs takes at its peak, per triangle, in bytes: its
/// triangles with their boxes, and their grid listings while they are gathered and sorted
/// (measured on the 64², 128² and 256² comparison grids of `weft bench`).
const COUNT_BYTES_PER_TRIANGLE: u64 = 170;

/// Heap of the self-collision search per taking-part particle, in bytes: its bucket, its place in
/// the sorted list, two entries of the hash table, its correction, and about a dozen neighbours.
const SELF_COLLISION_BYTES_PER_MEMBER: u64 = 4 + 4 + 2 * 8 + 16 + 12 * 4;

/// Approximate peak heap of a bake of `model`, in bytes: the model ([`model_bytes`]) and what a
/// bake adds to it: the step's displacement, the copies of the positions the measure and the
/// output keep, the triangles and stretch edges of the two quality measures (one beside the
/// solver, one with the output), the intersection count at its peak, the self-collision search,
/// and, baking to a tolerance, the snapshot a frame is stepped again from; and per file written
/// (`caches` caches and `stats.csv`), its write buffer ([`weft_io::WRITE_BUFFER`]) and a
/// sample. Caches are written sample by sample and hold no more than a sample.
pub fn peak_bytes(model: &Model, caches: usize) -> u64 {
    let particles = model.particles().len() as u64;
    let triangles: u64 = model.cloths().iter().map(|c| c.triangles.len() as u64).sum();
    let edges = model.sets().distance.len() as u64;
    let record = (RECORD * size_of::<f32>()) as u64;
    let point = size_of::<[f32; 3]>() as u64;
    let measure =
        triangles * size_of::<[u32; 3]>() as u64 + edges * (size_of::<[u32; 2]>() + size_of::<f32>()) as u64;
    let snapshot = if model.settings().tolerance.is_some() { 3 * record * particles } else { 0 };
    model_bytes(model)
        + particles * (record + 4 * point)
        + 2 * measure
        + triangles * COUNT_BYTES_PER_TRIANGLE
        + model.self_collision().members().len() as u64 * SELF_COLLISION_BYTES_PER_MEMBER
        + snapshot
        + (caches as u64 + 1) * weft_io::WRITE_BUFFER as u64
        + caches as u64 * particles * point
}
