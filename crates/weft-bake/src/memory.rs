//! The memory a bake takes, estimated from its model: what `weft validate` prints (an upper
//! bound of the resident peak of `weft bake`, what a farm job's memory request is sized from),
//! and what `weft bench` holds against the allocator's count.
//!
//! Every term is an array the code allocates, sized from the model: the scene `weft bake` holds
//! for its summary ([`scene_bytes`]), the model ([`model_bytes`]), and what the bake adds
//! ([`bake_heap_bytes`]). Nothing in it depends on how the cloth moves but the surface
//! self-collision stage's lists, which grow as layers come within reach of each other and are
//! given a measured allowance per vertex and edge ([`SURFACE_BYTES_PER_FEATURE`]): the
//! intersection count's buffer is one record per triangle
//! ([`weft_geometry::intersections::BYTES_PER_TRIANGLE`]), and every other buffer of a bake is
//! sized by the model and kept from frame to frame. What building
//! the model freed is handed back to the system before the bake allocates
//! ([`release_freed_heap`]), and the build's own peak stays below the bake's (on the comparison
//! grids 0.85–0.88 of it, docs/performance.md), so the bake's peak is the process's.

use std::mem::size_of;

use weft_core::Model;
use weft_core::batches::Batches;
use weft_core::kinds::{BatchedKind, SetVisitor};
use weft_core::lanes::Lanes;
use weft_core::mesh_collider::MeshCollider;
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
    let meshes: u64 = model
        .mesh_colliders()
        .iter()
        .map(|m| m.triangles.len() as u64 * size_of::<[u32; 3]>() as u64 + frame_bytes(m))
        .sum();
    bytes + edges * size_of::<[u32; 2]>() as u64 + meshes
}

/// The positions of every frame of a mesh collider, in bytes (12 B per vertex and frame).
fn frame_bytes(mesh: &MeshCollider) -> u64 {
    mesh.frames.iter().map(|f| f.len() as u64).sum::<u64>() * size_of::<[f32; 3]>() as u64
}

/// Approximate bytes the model holds in memory: the particle arrays, the lane-packed constraint
/// sets with their batch plans, the volume and aerodynamic triangles, the cloths' triangles and
/// faces (the same arrays a bake steps and writes), and the collision settings kept per particle
/// whether or not a cloth collides with itself, with the self-collision lists of a cloth that does.
/// A cloth's render mesh (its binding and faces) is not counted.
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
        + collision_bytes(model)
        + model.mesh_colliders().iter().map(mesh_bytes).sum::<u64>()
}

/// Bytes a mesh collider holds through a bake: its frames ([`frame_bytes`]); per triangle its
/// corners and edge numbers (24 B) and its broad phase, a box and about 80 B of the tree over
/// the boxes; and the poses a step places it in: one for a mesh that never moves, three for one
/// that does (the last still one, the one being placed, the end of the last moving step), each
/// with per triangle a box, a face normal and about 1.5 edge normals (54 B) and per vertex its
/// positions at the start and end of the step and their normals (48 B), and per vertex its place
/// at the anchor of the mesh's reach (12 B).
fn mesh_bytes(mesh: &MeshCollider) -> u64 {
    let poses = if mesh.frames.len() > 1 || mesh.keys.len() > 1 { 3 } else { 1 };
    let (triangles, vertices) = (mesh.triangles.len() as u64, mesh.vertex_count() as u64);
    frame_bytes(mesh) + triangles * (24 + 24 + 80) + poses * (triangles * 54 + vertices * 48) + vertices * 12
}

/// Bytes of the model's collision settings: per particle the self-collision thickness, friction
/// and start of its excluded list and the surface self-collision thickness and friction (20 B,
/// kept for every particle); the self-collision members and excluded lists, and the surface
/// self-collision triangles, edges and vertices.
fn collision_bytes(model: &Model) -> u64 {
    let (sc, surface) = (model.self_collision(), model.surface_collision());
    let word = size_of::<u32>() as u64;
    model.particles().len() as u64 * 5 * word
        + (sc.members().len() + sc.excluded_len()) as u64 * word
        + surface.triangles().len() as u64 * 3 * word
        + surface.edges().len() as u64 * 2 * word
        + surface.vertices().len() as u64 * word
}

/// Resident bytes of the process besides its heap: the binary's pages in use, the threads'
/// stacks and the allocator's arenas. Measured as the resident peak of bakes of a 4 × 4 grid
/// (whose heap is a few KiB resident): 5.9 MiB on 1 thread, 6.1 on 2, 6.3 on 8 and 6.7 on 16
/// (about 55 KiB a thread); 7 MiB covers bakes on up to 16 threads with a margin of a few pages
/// a thread.
pub const PROCESS_BYTES: u64 = 7 << 20;

/// Heap of the self-collision search per taking-part particle, in bytes: its place in the
/// sorted list (4), its position there, as built and as picked (16 each), its correction (16),
/// and about a dozen neighbours (4 each).
const SELF_COLLISION_BYTES_PER_MEMBER: u64 = 4 + 3 * 16 + 16 + 12 * 4;

/// Heap of a bake's small allocations, in bytes: its thread pools, its report, names and paths.
/// Measured with the allocator's count on bakes of a 4 × 4 grid: 50 KB on 1 thread, 140 KB on 16.
pub const SMALL_HEAP_BYTES: u64 = 256 << 10;

/// The write buffer of `stats.csv`, in bytes (the standard library's default for a buffered
/// writer: rows are short).
const STATS_BUFFER: u64 = 8 << 10;

/// Peak memory of a bake of `model` by `weft bake` writing `caches` PC2 caches of each cloth
/// (1: one per cloth, as `weft validate` assumes), in bytes: an upper bound of its resident size
/// at the peak (docs/performance.md). The process ([`PROCESS_BYTES`], 7 MiB), the scene the
/// model was built from ([`scene_bytes`], which `weft bake` holds for the summary), the heap
/// of the bake ([`bake_heap_bytes`]) and the write buffer of a checkpoint (`weft bake` writes
/// them by default; a checkpoint is written from the model's state in pieces, never copied
/// whole: `weft_io::checkpoint::write_checkpoint`).
pub fn peak_bytes(model: &Model, caches: usize) -> u64 {
    PROCESS_BYTES + scene_bytes(model) + bake_heap_bytes(model, caches) + weft_io::WRITE_BUFFER as u64
}

/// The heap of a bake of `model` at its peak, in bytes, the model included ([`model_bytes`]):
/// [`peak_bytes`] without the process and the scene (what [`crate::bake_model`] takes of the
/// heap). What the bake adds is kept from its first frame to its last, so the peak is its sum:
/// what writing the frames holds (the positions handed to the writer, a sample and its bytes per
/// cache, the write buffers, the quality measure with the intersection count's buffer), what
/// stepping them holds (the step's buffers per particle, the self-collision search, and baking
/// to a tolerance the snapshot and the stretch measure), a row per frame and the small
/// allocations ([`SMALL_HEAP_BYTES`]).
pub fn bake_heap_bytes(model: &Model, caches: usize) -> u64 {
    let frames = model.settings().frames as u64;
    model_bytes(model)
        + output_bytes(model, caches)
        + stepper_bytes(model)
        + frames * size_of::<crate::FrameStats>() as u64
        + SMALL_HEAP_BYTES
}

/// The triangles and stretch edges (with their rest lengths) a quality measure gathers, in bytes.
fn measure_bytes(model: &Model) -> u64 {
    let triangles: u64 = model.cloths().iter().map(|c| c.triangles.len() as u64).sum();
    triangles * size_of::<[u32; 3]>() as u64
        + model.report().stretch as u64 * (size_of::<[u32; 2]>() + size_of::<f32>()) as u64
}

/// What writing the frames holds, in bytes: the copies of the positions handed to the writer
/// (`weft_bake`'s output keeps up to three), a cloth's sample
/// (the largest), per cache (`caches` of each cloth) its bytes of a sample (PC2) and its write
/// buffer ([`weft_io::WRITE_BUFFER`]), the write buffer of `stats.csv`, the quality measure
/// counting the intersections with the count's buffer and the cloths' outline (what finding it
/// holds for a moment, 12 B per triangle and 8 B per particle, is freed before the count's
/// search first allocates its larger buffer), and for a cloth with a render mesh its normals and
/// their sums.
fn output_bytes(model: &Model, caches: usize) -> u64 {
    let point = size_of::<[f32; 3]>() as u64;
    let triangles: u64 = model.cloths().iter().map(|c| c.triangles.len() as u64).sum();
    let written = |c: &weft_core::model::ClothInfo| match &c.render {
        Some(r) => r.binding.len() as u64,
        None => c.particles.len() as u64,
    };
    let sample = model.cloths().iter().map(written).max().unwrap_or(0);
    let cache_points: u64 = model.cloths().iter().map(written).sum::<u64>() * caches as u64;
    let files = (model.cloths().len() * caches) as u64;
    let normals: u64 =
        model.cloths().iter().filter(|c| c.render.is_some()).map(|c| c.particles.len() as u64).sum();
    crate::output::BUFFERS as u64 * model.particles().len() as u64 * point
        + sample * point
        + cache_points * point
        + files * weft_io::WRITE_BUFFER as u64
        + STATS_BUFFER
        + measure_bytes(model)
        + triangles * weft_geometry::intersections::BYTES_PER_TRIANGLE as u64
        + model.particles().len() as u64 * weft_geometry::outline::BYTES_PER_PARTICLE as u64
        + normals * (point + size_of::<[f64; 3]>() as u64)
}

/// What stepping the frames holds, in bytes: per particle the step's displacement and the
/// self-collision search's predicted position (16 B each, the latter kept even when no particle
/// takes part), the wind's force with aerodynamic triangles (16 B) and a push per collider (4 B
/// each); per aerodynamic triangle its force (12 B); per particle and mesh collider the
/// triangles it keeps between steps ([`MESH_KEPT_BYTES`]); the self-collision search per member;
/// and, baking to a tolerance, the snapshot a frame is stepped again from and the measure of its
/// stretch with its copy of the positions.
fn stepper_bytes(model: &Model) -> u64 {
    let record = (RECORD * size_of::<f32>()) as u64;
    let particles = model.particles().len() as u64;
    let wind = if model.aero().triangles.is_empty() { 0 } else { record };
    let colliders = (model.colliders().len() + model.report().mesh_colliders) as u64;
    let tolerance = match model.settings().tolerance {
        Some(_) => measure_bytes(model) + particles * (3 * record + size_of::<[f32; 3]>() as u64),
        None => 0,
    };
    tolerance
        + particles * (2 * record + wind + colliders * 4)
        + model.aero().triangles.len() as u64 * size_of::<[f32; 3]>() as u64
        + particles * model.report().mesh_colliders as u64 * MESH_KEPT_BYTES
        + model.self_collision().members().len() as u64 * SELF_COLLISION_BYTES_PER_MEMBER
        + surface_bytes(model)
}

/// Bytes per particle and mesh collider of the triangles the particle keeps between steps: the
/// box they were found in, its drift and anchor (40 B), and two lists of kept triangles (the
/// step's and the last's, 4 B per triangle and their starts) at up to 4 triangles each.
const MESH_KEPT_BYTES: u64 = 40 + 2 * (4 + 4 * 4);

/// What the surface self-collision stage holds through a bake, in bytes (0 when no cloth has
/// it): per particle its predicted position, box, anchor, cluster and wander (68 B); per
/// triangle and edge a box and a grid range (48 B); per vertex its box in the stage's order (24
/// B), and per vertex and edge itself and the start and home of its kept pairs (12 B); and per
/// vertex and edge [`SURFACE_BYTES_PER_FEATURE`] for what grows with how the cloth lies (module
/// docs).
fn surface_bytes(model: &Model) -> u64 {
    let surface = model.surface_collision();
    let (v, e, t) =
        (surface.vertices().len() as u64, surface.edges().len() as u64, surface.triangles().len() as u64);
    if v + e + t == 0 {
        return 0;
    }
    model.particles().len() as u64 * 68 + (t + e) * 48 + v * 24 + (v + e) * (12 + SURFACE_BYTES_PER_FEATURE)
}

/// Heap of the surface self-collision stage per vertex and edge that grows with how the cloth
/// lies, in bytes: the pairs its search keeps between rebuilds (12 B each: the second feature,
/// the box gap and the floor), the pairs a step's search cannot prove apart (40 B each) and its
/// contacts (104 B each),
/// each list's capacity up to twice its longest, and the cells its grids list (each listing of
/// the edges' grid 16 B, and 52 B more in the lanes a rebuild tests them in: 2.4 listings an
/// edge on the drop sheet on average, 3.5 at most). Nothing bounds these but the geometry: more layers within reach
/// of each other keep more pairs. Measured as the resident peak of each shipped scene with
/// surface self-collision (90 or 60 frames, 1 and 2 threads, the larger) less the same bake's
/// estimate without this term: 733 B (the drop sheet, 64² fallen on a ball and folded), 569 B
/// (the layers), 261 B (the walk), 205 B (the garment), 0 B (the fold); 1,000 B covers them with
/// some margin. (It was 800 B before the lanes, against 592 B for the drop sheet; with the lanes
/// in the queries' smaller cells the drop sheet took 1,177 B.) A cloth crumpled tighter than
/// these, many layers deep, can take more.
pub const SURFACE_BYTES_PER_FEATURE: u64 = 1000;

/// Hands the free pages of the heap back to the system: what [`crate::bake`] and
/// [`crate::bake_model`] do before they allocate, so that what building the model freed is not
/// resident through the bake, and the bake's resident peak is its heap and the process
/// ([`peak_bytes`]). glibc keeps freed blocks of up to 32 MiB in its heap (the size above which
/// it maps a block of its own rises to the largest block freed), and trims only a free top of
/// the heap over twice that: without this, 4, 17 and 48 MiB the build had freed stayed resident
/// through the bakes of the 256², 512² and 1024² comparison grids (about 6–9 % of their peaks).
/// A no-op where the C library is not glibc.
pub fn release_freed_heap() {
    // SAFETY: `malloc_trim` takes no pointer and reads nothing of the caller's; it only
    // releases pages of blocks that are free, each arena under its lock, so any thread may call
    // it at any time, and no block in use moves or changes.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    unsafe {
        libc::malloc_trim(0);
    }
}
