//! The bodies of the cargo-fuzz targets in `fuzz/`, as library functions: libFuzzer runs them
//! through `fuzz/fuzz_targets/*.rs`, and the `fuzz_replay` tests of the `weft` package run every
//! committed corpus and regression input through the same functions under plain `cargo test` on
//! the stable toolchain.
//!
//! Each body states the invariant it checks: any input either fails with a one-line error, or
//! gives a model whose state stays finite. A panic anywhere is a finding.

use std::path::Path;

use arbitrary::{Result as ArbResult, Unstructured};
use weft_core::collider::{Friction, RigidKey};
use weft_core::follow::FollowDesc;
use weft_core::kinds::{KindDescs, KindId};

use crate::examples::ExampleKeys;
use weft_core::kinds::bending::BendingDesc;
use weft_core::limits::Limits;
use weft_core::mesh::mesh_edges;
use weft_core::mesh_collider::MeshColliderDesc;
use weft_core::self_collision::{SelfCollisionDesc, SelfCollisionMode};
use weft_core::topology::MeshTopology;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder, NonManifold, SimSettings};
use weft_io::obj::{ObjMesh, ObjectSelection};
use weft_kernels::{KernelPath, StepOptions};
use weft_reference::ReferenceSolver;

/// Limits small enough that a fuzzer's inputs cannot make a run slow or large: a finding must be
/// a wrong answer, not a big scene.
pub const FUZZ_LIMITS: Limits = Limits {
    max_particles: 4096,
    max_constraints: 32_768,
    max_steps: 1_000_000,
    max_scene_bytes: 1 << 20,
    max_mesh_bytes: 1 << 20,
};

/// Time steps a scene that builds is advanced by.
const FUZZ_STEPS: usize = 2;

/// Scene text → parse, validate, build, and (if it builds) a couple of time steps.
///
/// Checks: an error's message is one line; a built model has finite state before and after
/// stepping, and its report agrees with its constraint sets.
pub fn scene_text(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return; // `load_scene` turns non-UTF-8 files into an error before parsing
    };
    let scene = match weft_io::parse_scene(text, Path::new("fuzz.toml"), &FUZZ_LIMITS) {
        Ok(scene) => scene,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    let mut model = match scene.build_model() {
        Ok(model) => model,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    let report = model.report().clone();
    assert_eq!(report.stretch + report.shear, model.sets().distance.len());
    assert!(model.particles().all_finite(), "a valid scene starts finite");
    // Iterations × steps bounded so that one input stays fast.
    if model.settings().iterations <= 64 {
        for _ in 0..FUZZ_STEPS {
            weft_kernels::step(&mut model, &StepOptions { path: KernelPath::Simd, residual: true });
        }
        assert!(model.particles().all_finite(), "finite input never produces a non-finite position");
    }
}

fn assert_one_line(message: &str) {
    assert!(!message.is_empty() && !message.contains('\n'), "error messages are one line: {message:?}");
}

/// Runs `steps` SIMD time steps and checks that every position and velocity stays finite.
fn step_finite(model: &mut Model, steps: usize) {
    for _ in 0..steps {
        weft_kernels::step(model, &StepOptions { path: KernelPath::Simd, residual: true });
        assert!(model.particles().all_finite(), "finite input never produces a non-finite position");
    }
}

/// OBJ bytes → [`weft_io::parse_obj`], then the cloth a scene's `mesh = "…"` makes of it (mesh
/// edges, bending, mesh topology) built and stepped.
///
/// The first byte chooses the options the rest of the file is read with: bit 0 takes objects
/// named `a` and `b` instead of the file's only object, bit 1 accepts non-manifold edges
/// (`non_manifold = "skip"`), bit 2 gives masses by density instead of per particle.
///
/// Checks: an error's message is one line; a mesh read is consistent (every index in range, a
/// line for every particle and triangle, finite positions, distinct triangle corners, quads that
/// name two triangles); its topology counts every edge; a model that builds stays finite.
pub fn obj_bytes(data: &[u8]) {
    let Some((&options, text)) = data.split_first() else { return };
    let selection = if options & 1 == 1 {
        ObjectSelection::Named(vec!["a".into(), "b".into()])
    } else {
        ObjectSelection::Only
    };
    let mesh = match weft_io::obj::parse_obj_limited(text, &selection, &FUZZ_LIMITS) {
        Ok(mesh) => mesh,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    check_obj_mesh(&mesh);
    if mesh.positions.len() as u64 > FUZZ_LIMITS.max_particles {
        return; // the scene refuses it before building (`particles in the mesh`)
    }
    let topology = MeshTopology::new(&mesh.triangles);
    let edges_in_topology = topology.interior.len() + topology.boundary.len() + topology.non_manifold.len();
    assert_eq!(
        edges_in_topology,
        weft_core::topology::unique_edges(&mesh.triangles).len(),
        "every edge is interior, boundary or non-manifold"
    );
    let edges = mesh_edges(&mesh.triangles, &mesh.quads, true);
    let desc = ClothDesc {
        name: "fuzz".into(),
        positions: mesh.positions,
        mass: if options & 4 == 4 { MassSpec::Density(0.2) } else { MassSpec::ParticleMass(0.01) },
        triangles: mesh.triangles,
        uvs: mesh.uvs,
        polygons: mesh.polygons,
        edge_sets: vec![
            EdgeSet { edges: edges.stretch, ..EdgeSet::stretch() },
            EdgeSet {
                edges: edges.shear,
                elasticity: Elasticity::Compliance(Compliance::new(1e-6).expect("valid")),
                ..EdgeSet::shear()
            },
        ],
        pins: vec![0],
        kinds: KindDescs {
            bending: Some(BendingDesc {
                elasticity: Elasticity::Compliance(Compliance::new(1.0).expect("valid")),
                damping: 0.0,
            }),
            ..KindDescs::default()
        },
        non_manifold: if options & 2 == 2 { NonManifold::Skip } else { NonManifold::Error },
        ..ClothDesc::default()
    };
    let settings = SimSettings { substeps: 2, iterations: 4, ..SimSettings::default() };
    let mut builder = ModelBuilder::new(settings, FUZZ_LIMITS).expect("valid settings");
    if let Err(e) = builder.add_cloth(&desc) {
        return assert_one_line(&e.to_string());
    }
    let mut model = match builder.build() {
        Ok(model) => model,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    assert!(model.particles().all_finite(), "a mesh that builds starts finite");
    step_finite(&mut model, FUZZ_STEPS);
}

/// The invariants of a mesh [`weft_io::parse_obj`] returns.
fn check_obj_mesh(mesh: &ObjMesh) {
    let n = mesh.positions.len();
    assert!(n > 0 && !mesh.triangles.is_empty(), "a mesh read has particles and triangles");
    assert_eq!(mesh.vertex_numbers.len(), n);
    assert_eq!(mesh.vertex_lines.len(), n);
    assert_eq!(mesh.triangle_lines.len(), mesh.triangles.len());
    assert!(mesh.uvs.is_empty() || mesh.uvs.len() == mesh.triangles.len());
    assert_eq!(mesh.uvs.is_empty(), mesh.first_face_without_uv.is_some());
    assert!(mesh.positions.iter().flatten().all(|c| c.is_finite()), "positions are finite");
    assert!(mesh.vertex_numbers.windows(2).all(|w| w[0] < w[1]), "particles in file order");
    for t in &mesh.triangles {
        assert!(t.iter().all(|&i| (i as usize) < n), "triangle {t:?} indexes {n} particles");
        assert!(t[0] != t[1] && t[1] != t[2] && t[0] != t[2], "triangle {t:?} repeats a corner");
    }
    for q in &mesh.quads {
        assert!(q.iter().all(|&t| (t as usize) < mesh.triangles.len()) && q[1] == q[0] + 1);
    }
}

/// Checkpoint bytes → the checkpoint reader ([`weft_io::checkpoint::decode`]): a one-line error
/// or a checkpoint that encodes back to the same bytes, with every particle finite.
///
/// The input is read twice: as it is, and with its correct checksum appended, so that the fuzzer
/// explores the structure behind the checksum instead of stopping at it.
pub fn checkpoint_bytes(data: &[u8]) {
    use weft_io::checkpoint::{Fnv64, decode, encode};
    let mut sealed = data.to_vec();
    let mut h = Fnv64::default();
    h.write(data);
    sealed.extend_from_slice(&h.finish().to_le_bytes());
    for bytes in [data, &sealed[..]] {
        match decode(bytes) {
            Err(e) => assert_one_line(&e.to_string()),
            Ok(c) => {
                let finite = |v: &Vec<[f32; 4]>| v.iter().flatten().all(|x| x.is_finite());
                assert!(finite(&c.positions) && finite(&c.prev_positions) && finite(&c.velocities));
                assert_eq!(c.positions.len(), c.velocities.len());
                assert_eq!(encode(&c), bytes, "a checkpoint read back encodes to the same bytes");
            }
        }
    }
}

/// PC2 bytes → [`weft_io::pc2::parse_pc2`]: a clean error, or a cache whose counts match its
/// positions, every sample of which can be taken, and which writes back to the same bytes.
pub fn pc2_bytes(data: &[u8]) {
    let cache = match weft_io::pc2::parse_pc2(data) {
        Ok(cache) => cache,
        Err(e) => return assert_one_line(&e.to_string()),
    };
    assert_eq!(cache.positions.len(), cache.point_count * cache.sample_count);
    if cache.point_count > 0 {
        for k in 0..cache.sample_count {
            assert_eq!(cache.sample(k).len(), cache.point_count);
        }
    }
    // Re-encoding the cache gives the input back, bit for bit (NaNs included).
    let mut bytes = weft_io::pc2::header(
        cache.point_count as i32,
        cache.start_frame,
        cache.sample_rate,
        cache.sample_count as i32,
    )
    .to_vec();
    for p in &cache.positions {
        for c in p {
            bytes.extend_from_slice(&c.to_le_bytes());
        }
    }
    assert_eq!(bytes, data, "a PC2 cache read back writes the same bytes");
}

/// Bytes → a small triangle soup → [`weft_geometry::intersections::IntersectionCounter`], checked against
/// testing every pair with [`weft_geometry::intersections::triangles_intersect`].
///
/// Decoding: byte 0 gives the number of points (3 to 34); bit 0 of byte 1 chooses raw `f32` bits
/// for the coordinates (4 bytes each: huge, tiny, NaN, infinite) or a lattice of quarter metres
/// (1 byte each: exactly coplanar, touching and repeated corners); the remaining bytes are corner
/// indices in threes, some out of range. Checks: the count (its outline's certificate, else the
/// grid search) and the brute force agree, and a counter counting again gives the same count.
pub fn triangle_pairs(data: &[u8]) {
    use weft_geometry::intersections::{IntersectionCounter, intersecting_pairs, triangles_intersect};
    let [count, mode, rest @ ..] = data else { return };
    let n = 3 + *count as usize % 32;
    let width = if mode & 1 == 1 { 12 } else { 3 };
    let Some((coordinates, indices)) = rest.split_at_checked(n * width) else { return };
    let positions: Vec<[f32; 3]> = coordinates
        .chunks_exact(width)
        .map(|c| match width {
            12 => {
                std::array::from_fn(|k| f32::from_le_bytes(c[4 * k..4 * k + 4].try_into().expect("4 bytes")))
            }
            _ => std::array::from_fn(|k| c[k] as i8 as f32 * 0.25),
        })
        .collect();
    let triangles: Vec<[u32; 3]> = indices
        .chunks_exact(3)
        .take(64)
        .map(|t| std::array::from_fn(|k| t[k] as u32 % (n as u32 + 2)))
        .collect();
    let corners = |t: &[u32; 3]| -> Option<[[f32; 3]; 3]> {
        let p = t.map(|i| positions.get(i as usize).copied());
        let p = [p[0]?, p[1]?, p[2]?];
        p.iter().flatten().all(|v| v.is_finite()).then_some(p)
    };
    let mut brute = 0u64;
    for (i, a) in triangles.iter().enumerate() {
        for b in &triangles[i + 1..] {
            if let (Some(pa), Some(pb)) = (corners(a), corners(b))
                && !a.iter().any(|v| b.contains(v))
                && triangles_intersect(pa, pb)
            {
                brute += 1;
            }
        }
    }
    assert_eq!(intersecting_pairs(&positions, &triangles), brute, "grid search against every pair");
    let mut counter = IntersectionCounter::new(triangles);
    counter.count(&positions);
    assert_eq!(counter.count(&positions), brute, "a counter counting again");
}

/// Structured random scene (see [`ArbitraryScene`]) → build, then [`ARBITRARY_STEPS`] steps of
/// the SIMD path and of the reference solver side by side.
///
/// Checks: the build either fails with a one-line error or gives a model whose positions stay
/// finite on both paths, with the degenerate projections of each path bounded by the projections
/// made (the constraints' and the particle self-collision contacts'); and, for a scene in the
/// well-conditioned range of [`ArbitraryScene::well_conditioned`], the two paths count the same
/// degenerate projections and their positions agree within
/// [`AGREE_FLOOR`] `+` [`AGREE_FACTOR`] `×` the motion's own rounding sensitivity (the gap
/// between the reference and references started one ulp of the scene's largest coordinate off,
/// either way: see `nudged_reference`; counts are compared where 16 ulps either way do not
/// change the reference's own), the bound
/// `tests/suite/simd_matches_reference.rs` justifies.
pub fn arbitrary_scene(data: &[u8]) {
    let mut u = Unstructured::new(data);
    let Ok(scene) = ArbitraryScene::generate(&mut u, data.ends_with(TAME)) else { return };
    let model = match scene.build(scene.cloths()) {
        Ok(model) => model,
        Err(message) => return assert_one_line(&message),
    };
    assert!(model.particles().all_finite(), "a scene that builds starts finite");
    let mut fast = model;
    let mut reference = ReferenceSolver::from_model(&fast);
    let well_conditioned = scene.well_conditioned();
    // References started off by ±1 ulp (the rounding sensitivity: both ways, since at a fold a
    // perturbation one way may be amplified a thousand times more than the other way) and by ±16
    // ulps (whether a count sits at a threshold that rounding of the size the position bound
    // allows, AGREE_FACTOR ulps, could cross).
    let mut nudged: Vec<ReferenceSolver> = if well_conditioned {
        NUDGES.iter().map(|&ulps| nudged_reference(&scene, ulps)).collect()
    } else {
        Vec::new()
    };
    let r = fast.report();
    let constraints = r.sets.iter().map(|(_, set)| set.constraints).sum::<usize>() + r.volumes;
    // Particle self-collision projects a contact per pair of particles taking part that meet:
    // fewer than the square of their count in an iteration.
    let members = fast.self_collision().members().len() as u64;
    let projections = (constraints as u64 + members * members) * fast.settings().iterations as u64;
    for _ in 0..ARBITRARY_STEPS {
        let a = weft_kernels::step(&mut fast, &StepOptions { path: KernelPath::Simd, residual: true });
        let b = reference.step();
        assert!(
            fast.particles().all_finite(),
            "SIMD: finite input never produces a non-finite position: {scene:?}\nafter: {:?}",
            fast.particles()
        );
        let reference_positions = reference.positions();
        assert!(
            reference_positions.iter().flatten().all(|c| c.is_finite()),
            "reference: finite input never produces a non-finite position: {scene:?}"
        );
        assert!(a.degenerate() <= projections && b.degenerate <= projections, "degenerate lanes are counted");
        // A count is a threshold test (a triangle collapsing, particles meeting): where a nudge
        // changes the reference's own count, the two programs' rounding may too. Every nudged
        // reference steps (a fold, not `all`, which would stop at the first change).
        let counts_steady =
            nudged.iter_mut().map(|n| n.step().degenerate == b.degenerate).fold(true, |x, y| x & y);
        if well_conditioned && counts_steady {
            assert_eq!(a.degenerate(), b.degenerate, "both paths skip the same degenerate projections");
        }
    }
    if well_conditioned {
        let fast_positions: Vec<[f32; 3]> =
            (0..fast.particles().len()).map(|i| fast.particles().position(i)).collect();
        let gap = max_gap(&fast_positions, &reference.positions());
        let sensitivity = nudged
            .iter()
            .zip(NUDGES)
            .filter(|(_, ulps)| ulps.abs() == 1.0)
            .map(|(n, _)| max_gap(&n.positions(), &reference.positions()))
            .fold(0.0f32, f32::max);
        assert!(
            gap <= AGREE_FLOOR + AGREE_FACTOR * sensitivity,
            "SIMD and reference differ by {gap} m (sensitivity {sensitivity} m) in a well-conditioned scene"
        );
    }
}

/// The nudges of the references [`arbitrary_scene`] compares against, in ulps of the scene's
/// largest coordinate (see `nudged_reference`).
const NUDGES: [f32; 4] = [1.0, -1.0, AGREE_FACTOR, -AGREE_FACTOR];

/// The reference solver of `scene` with every coordinate moved by `ulps` ulps of the scene's
/// largest coordinate, alternately up and down. One ulp at the scene's scale, not at
/// each coordinate's own: the two paths' rounding differences are of the size of the largest
/// coordinates they combine, so a coordinate of exactly 0 (a cloth lying in a coordinate plane)
/// must move by that much too, not by the 1e-45 of `0.0.next_up()`, which probes nothing.
fn nudged_reference(scene: &ArbitraryScene, ulps: f32) -> ReferenceSolver {
    let scale = scene.cloths().flat_map(|c| c.positions.iter().flatten()).fold(0.0f32, |m, c| m.max(c.abs()));
    let ulp = ulps * (scale.next_up() - scale);
    let mut cloths: Vec<ClothDesc> = scene.cloths().cloned().collect();
    // The second cloth's pattern is the first's turned over: a particle and its copy move apart
    // along every axis, so that a distance between them at a threshold (a copy moved by exactly
    // the thickness) is probed too.
    for (n, cloth) in cloths.iter_mut().enumerate() {
        for (i, p) in cloth.positions.iter_mut().enumerate() {
            for (k, c) in p.iter_mut().enumerate() {
                *c = if (n + i * 3 + k) % 2 == 0 { *c + ulp } else { *c - ulp };
            }
        }
    }
    scene.build(&cloths).map(|m| ReferenceSolver::from_model(&m)).expect("a nudged scene builds")
}

/// Time steps [`arbitrary_scene`] runs.
pub const ARBITRARY_STEPS: usize = 3;
/// Gap (m) within which the SIMD path and the reference always agree in a well-conditioned scene.
pub const AGREE_FLOOR: f32 = 2e-5;
/// Allowed multiple of the motion's rounding sensitivity (see [`arbitrary_scene`]).
pub const AGREE_FACTOR: f32 = 16.0;

/// Largest distance between matching points, in m (infinite if any is not finite).
fn max_gap(a: &[[f32; 3]], b: &[[f32; 3]]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (0..3).map(|k| (p[k] as f64 - q[k] as f64).powi(2)).sum::<f64>().sqrt() as f32)
        .fold(0.0, f32::max)
}

/// A structured random scene: settings within the limits and one cloth built straight from
/// numbers, with the hostile cases drawn often (coincident, colinear, huge and tiny coordinates;
/// duplicate edges, self-edges and out-of-range indices; no pins or all pinned; compliances and
/// damping from 0 to 1e30; masses from 1e-6 to 1e6 kg; velocities up to 1e30 m/s; self-collision
/// off, by particles or by triangles, at any thickness and friction), sometimes with a second
/// cloth beside it (see [`ArbitraryScene::second`]).
#[derive(Debug, Clone)]
pub struct ArbitraryScene {
    /// The settings.
    pub settings: SimSettings,
    /// The cloth.
    pub cloth: ClothDesc,
    /// A second cloth or none: a copy of the first, named `fuzz2`, moved along z (in a tame scene
    /// by 0.1 to 1 m; otherwise also by 0, a micrometre, the 4 mm of a thin cloth or 1e30 m),
    /// with a self-collision of its own drawn as the first's is — so that surface and particle
    /// contacts are made between two cloths, the same mode or not.
    pub second: Option<ClothDesc>,
    /// Mesh colliders (none, or one named `"mesh"`).
    pub meshes: Vec<MeshColliderDesc>,
}

/// An [`arbitrary_scene`] input ending with these bytes draws a *tame* scene: every number from
/// the well-conditioned range of [`ArbitraryScene::well_conditioned`] (particles on a 0.25 m
/// lattice, indices in range), so that a good share of inputs compare the SIMD path with the
/// reference. Any other input draws from the whole hostile range.
pub const TAME: &[u8] = b"\xffTAME";

/// Most particles an arbitrary scene has.
const MAX_ARBITRARY_PARTICLES: usize = 40;

impl ArbitraryScene {
    /// Draws a scene from fuzzer bytes; a `tame` one from the well-conditioned range only.
    pub fn generate(u: &mut Unstructured<'_>, tame: bool) -> ArbResult<Self> {
        let settings = if tame {
            SimSettings {
                fps: *u.choose(&[30.0, 60.0, 120.0])?,
                frames: 1,
                substeps: u.int_in_range(1..=8)?,
                iterations: u.int_in_range(1..=16)?,
                gravity: *u.choose(&[[0.0, -9.81, 0.0], [0.0; 3]])?,
                velocity_damping: 0.0,
                ..SimSettings::default()
            }
        } else {
            SimSettings {
                fps: *u.choose(&[24.0, 30.0, 60.0, 120.0, 1e-3, 1e6])?,
                frames: 1,
                substeps: u.int_in_range(1..=8)?,
                iterations: u.int_in_range(1..=16)?,
                gravity: *u.choose(&[[0.0, -9.81, 0.0], [0.0; 3], [0.0, -1e6, 0.0], [3.0, 1e30, -2.0]])?,
                velocity_damping: *u.choose(&[0.0, 0.5, 1e30])?,
                ..SimSettings::default()
            }
        };
        let compliance = |u: &mut Unstructured<'_>| if tame { tame_compliance(u) } else { compliance(u) };
        let n = u.int_in_range(0..=MAX_ARBITRARY_PARTICLES)?;
        let mut positions: Vec<[f32; 3]> = Vec::with_capacity(n);
        for i in 0..n {
            if tame {
                // A 0.25 m lattice, lifted by at most 5 cm: particles at least 25 cm apart.
                let lift = f32::from(u.int_in_range(-5..=5i8)?) / 100.0;
                positions.push([(i % 7) as f32 * 0.25, (i / 7) as f32 * 0.25, lift]);
                continue;
            }
            let p = match u.int_in_range(0..=7u8)? {
                0..=2 => [small(u)?, small(u)?, small(u)?],
                3 if i > 0 => positions[u.choose_index(i)?], // coincident
                4 if i > 1 => {
                    // colinear with two earlier particles
                    let (a, b) = (positions[u.choose_index(i)?], positions[u.choose_index(i)?]);
                    let t = small(u)?;
                    [0, 1, 2].map(|k| a[k] + t * (b[k] - a[k]))
                }
                5 if i > 0 => {
                    // near-coincident: an earlier particle moved by a few ulp or a micrometre
                    let a = positions[u.choose_index(i)?];
                    let d = *u.choose(&[1e-7f32, 1e-6, 1e-5, 0.0])?;
                    [a[0] + d, a[1].next_up(), a[2]]
                }
                6 => [extreme(u)?, extreme(u)?, extreme(u)?],
                _ => [f32::from(u.int_in_range(0..=4u8)?), f32::from(u.int_in_range(0..=4u8)?), 0.0],
            };
            positions.push(p);
        }
        let index = |u: &mut Unstructured<'_>| -> ArbResult<u32> {
            // Mostly in range; sometimes one past the end, or absurd.
            Ok(match u.int_in_range(0..=15u8)? {
                0 if !tame => n as u32,
                1 if !tame => u32::MAX,
                _ if n > 0 => u.choose_index(n)? as u32,
                _ => 0,
            })
        };
        let mut edge_sets = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for set in [EdgeSet::stretch(), EdgeSet::shear()] {
            let count = u.int_in_range(0..=3 * n.min(24))?;
            let mut edges = Vec::with_capacity(count);
            for _ in 0..count {
                let a = index(u)?;
                let b = if !tame && u.ratio(1, 16)? { a } else { index(u)? }; // self-edges
                if tame && (a == b || !seen.insert([a.min(b), a.max(b)])) {
                    continue; // a tame scene has no self-edges and no duplicates
                }
                edges.push([a, b]);
                if !tame && u.ratio(1, 16)? {
                    edges.push([b, a]); // duplicates
                }
            }
            let rest_lengths = if u.ratio(1, 4)? {
                let length = |u: &mut Unstructured<'_>| {
                    if tame { Ok(*u.choose(&[1.0f32, 0.5, 0.1, 2.0])?) } else { length(u) }
                };
                Some(edges.iter().map(|_| length(u)).collect::<ArbResult<Vec<f32>>>()?)
            } else {
                None
            };
            edge_sets.push(EdgeSet {
                edges,
                rest_lengths,
                elasticity: Elasticity::Compliance(Compliance::new(compliance(u)?).expect("≥ 0")),
                damping: compliance(u)?,
                ..set
            });
        }
        let triangle_count = u.int_in_range(0..=2 * n.min(24))?;
        let mut triangles = Vec::with_capacity(triangle_count);
        for _ in 0..triangle_count {
            let t = [index(u)?, index(u)?, index(u)?];
            let area = || {
                let p = t.map(|k| positions[k as usize]);
                weft_core::topology::triangle_area(p[0], p[1], p[2])
            };
            if tame && area() < 1e-4 {
                continue; // nor triangles without area (repeated or colinear corners)
            }
            triangles.push(t);
        }
        let pins = match u.int_in_range(0..=3u8)? {
            0 => Vec::new(),
            1 => (0..n as u32).collect(),
            _ => (0..u.int_in_range(0..=4usize)?).map(|_| index(u)).collect::<ArbResult<_>>()?,
        };
        let speed = |u: &mut Unstructured<'_>| if tame { small(u) } else { speed(u) };
        let velocities = if u.ratio(1, 2)? {
            Some((0..n).map(|_| Ok([speed(u)?, speed(u)?, speed(u)?])).collect::<ArbResult<_>>()?)
        } else {
            None
        };
        let mass = if tame {
            MassSpec::ParticleMass(10f32.powi(u.int_in_range(-2..=2)?))
        } else if u.ratio(1, 4)? {
            MassSpec::Density(*u.choose(&[0.2f32, 1e-6, 1e6])?)
        } else {
            MassSpec::ParticleMass(10f32.powi(u.int_in_range(-6..=6)?))
        };
        let bending = if !triangles.is_empty() && u.ratio(1, 2)? {
            Some(BendingDesc {
                elasticity: Elasticity::Compliance(Compliance::new(compliance(u)?).expect("≥ 0")),
                damping: compliance(u)?,
            })
        } else {
            None
        };
        let cloth = ClothDesc {
            name: "fuzz".into(),
            positions,
            velocities,
            mass,
            triangles,
            edge_sets,
            pins,
            kinds: KindDescs { bending, ..KindDescs::default() },
            non_manifold: if u.arbitrary()? { NonManifold::Skip } else { NonManifold::Error },
            ..ClothDesc::default()
        };
        // Drawn last, from a byte that an exhausted input reads as 0 (no mesh, no follow), so
        // that the committed inputs of earlier versions still draw the scenes they drew.
        let meshes = if u.arbitrary::<u8>()? % 3 == 1 { vec![arbitrary_mesh(u)?] } else { Vec::new() };
        let mut cloth = cloth;
        if !cloth.pins.is_empty() {
            cloth.follow = match u.arbitrary::<u8>()? % 4 {
                1 => Some(FollowDesc::Collider("mesh".into())), // refused when there is no mesh
                2 => Some(FollowDesc::Keys(two_keys(u)?)),
                _ => None,
            };
        }
        // Every other batched kind of the registry, with its example keys, one byte each (drawn
        // last: an exhausted input reads 0, off). Bending keeps the values drawn above.
        let others: Vec<KindId> = KindId::ALL
            .iter()
            .copied()
            .filter(|&k| k.is_batched() && k != KindId::Bending && !k.info().example.is_empty())
            .collect();
        let mut on = Vec::new();
        for kind in others {
            if u.arbitrary::<u8>()? % 2 == 1 {
                on.push(kind);
            }
        }
        let has_pins = !cloth.pins.is_empty();
        if let Ok(mut kinds) = ExampleKeys::of(&on, has_pins).descs() {
            kinds.bending = cloth.kinds.bending.take();
            cloth.kinds = kinds;
        }
        (cloth.self_collision, cloth.self_collision_mode) = arbitrary_self_collision(u, tame)?;
        let second = arbitrary_second_cloth(u, &cloth, tame)?;
        Ok(ArbitraryScene { settings, cloth, second, meshes })
    }

    /// The scene's cloths: the first, then the second if there is one.
    pub fn cloths(&self) -> impl Iterator<Item = &ClothDesc> {
        std::iter::once(&self.cloth).chain(&self.second)
    }

    /// The model of `cloths` with this scene's settings and mesh colliders, or the error line.
    pub fn build<'c>(&self, cloths: impl IntoIterator<Item = &'c ClothDesc>) -> Result<Model, String> {
        let mut builder = ModelBuilder::new(self.settings.clone(), FUZZ_LIMITS).map_err(|e| e.to_string())?;
        for cloth in cloths {
            builder.add_cloth(cloth).map_err(|e| e.to_string())?;
        }
        for mesh in &self.meshes {
            builder.add_mesh_collider(mesh).map_err(|e| e.to_string())?;
        }
        builder.build().map_err(|e| e.to_string())
    }

    /// Whether the scene is in the range where the SIMD path must agree with the reference:
    ///
    /// * coordinates within ±10 m, initial speeds at most 10 m/s, gravity at most 10 m/s²,
    ///   no global velocity damping, 30 to 120 fps;
    /// * masses (per particle) from 1e-2 to 1e2 kg;
    /// * every compliance 0 or from 1e-9 to 1 (in its own unit), every damping at most 1;
    /// * every two particles at least 1 cm apart (no coincident or near-coincident particles),
    ///   and every triangle's area at least 1e-4 m² (no colinear corners);
    /// * every triangle's smallest height at least 1 cm and four times the farthest a particle
    ///   can move in one time step (initial speed and gravity): a particle that sweeps across a
    ///   sliver in one step turns its bending angle by up to π, and which way it goes round is a
    ///   matter of rounding;
    /// * no rest lengths given: every constraint starts at its rest length (a scene whose rest
    ///   lengths differ from the initial distances starts far from equilibrium, and the two
    ///   programs' different rounding of metre-sized corrections, projection after projection,
    ///   is not what the one-ulp sensitivity measures).
    ///
    /// Outside it the two are different programs rounding differently near a singularity (a
    /// vanishing edge or a flat bending quad amplifies a rounding difference by `1/|d|`), and
    /// only finiteness and counting are checked.
    pub fn well_conditioned(&self) -> bool {
        let s = &self.settings;
        let coordinate_ok = |p: &[f32; 3]| p.iter().all(|x| x.abs() <= 10.0);
        let material_ok =
            |alpha: f32, beta: f32| (alpha == 0.0 || (1e-9..=1.0).contains(&alpha)) && beta <= 1.0;
        let far = |a: [f32; 3], b: [f32; 3]| weft_core::topology::distance(a, b) >= 1e-2;
        let h = s.time_step().h64;
        let speeds = self.cloths().flat_map(|c| c.velocities.iter().flatten());
        let speed = speeds.map(|v| weft_core::topology::distance(*v, [0.0; 3]) as f64).fold(0.0, f64::max);
        let gravity = weft_core::topology::distance(s.gravity, [0.0; 3]) as f64;
        let reach = (speed + gravity * h * ARBITRARY_STEPS as f64) * h;
        let wide = |p: [[f32; 3]; 3]| {
            let longest = (0..3)
                .map(|k| weft_core::topology::distance(p[k], p[(k + 1) % 3]) as f64)
                .fold(0.0, f64::max);
            let height = 2.0 * weft_core::topology::triangle_area(p[0], p[1], p[2]) / longest;
            height >= 1e-2f64.max(4.0 * reach)
        };
        let cloth_ok = |c: &ClothDesc| {
            c.follow.is_none()
                && matches!(c.mass, MassSpec::ParticleMass(m) if (1e-2..=1e2).contains(&m))
                && c.positions.iter().all(coordinate_ok)
                && c.velocities.as_ref().is_none_or(|v| v.iter().all(coordinate_ok))
                && c.edge_sets.iter().all(|e| {
                    material_ok(e.elasticity.compliance().get(), e.damping) && e.rest_lengths.is_none()
                })
                && c.kinds
                    .bending
                    .as_ref()
                    .is_none_or(|b| material_ok(b.elasticity.compliance().get(), b.damping))
                && c.triangles.iter().all(|t| {
                    let p = |k: usize| c.positions.get(t[k] as usize).copied();
                    match (p(0), p(1), p(2)) {
                        (Some(a), Some(b), Some(d)) => {
                            weft_core::topology::triangle_area(a, b, d) >= 1e-4 && wide([a, b, d])
                        }
                        _ => true, // refused at build
                    }
                })
        };
        // Every particle of every cloth, for the distance between any two.
        let all: Vec<[f32; 3]> = self.cloths().flat_map(|c| c.positions.iter().copied()).collect();
        // Mesh contacts and following pins are checked for finiteness and counting only.
        self.meshes.is_empty()
            && (30.0..=120.0).contains(&s.fps)
            && s.velocity_damping == 0.0
            && s.gravity.iter().all(|g| g.abs() <= 10.0)
            && self.cloths().all(cloth_ok)
            && all.iter().enumerate().all(|(i, &a)| all[..i].iter().all(|&b| far(a, b)))
    }
}

/// A mesh collider named `"mesh"`: a few triangles over a few vertices, ordinary or extreme,
/// sometimes repeating corners or pointing past the end; one or two frames (the second sometimes
/// of another length); thickness, friction and frame times from 0 (refused) to huge; one or two
/// rigid keys.
fn arbitrary_mesh(u: &mut Unstructured<'_>) -> ArbResult<MeshColliderDesc> {
    let n = u.int_in_range(3..=12usize)?;
    let vertex = |u: &mut Unstructured<'_>| -> ArbResult<[f32; 3]> {
        if u.ratio(1, 8)? {
            Ok([extreme(u)?, small(u)?, small(u)?])
        } else {
            Ok([small(u)?, small(u)?, small(u)?])
        }
    };
    let frame: Vec<[f32; 3]> = (0..n).map(|_| vertex(u)).collect::<ArbResult<_>>()?;
    let triangles = (0..u.int_in_range(1..=8usize)?)
        .map(|_| {
            let mut t = [0u32; 3];
            for c in &mut t {
                *c = if u.ratio(1, 32)? { n as u32 } else { u.choose_index(n)? as u32 };
            }
            Ok(t)
        })
        .collect::<ArbResult<_>>()?;
    let mut frames = vec![frame];
    if u.arbitrary()? {
        let len = if u.ratio(1, 16)? { n + 1 } else { n };
        frames.push((0..len).map(|_| vertex(u)).collect::<ArbResult<_>>()?);
    }
    let keys = if u.arbitrary()? { two_keys(u)? } else { vec![RigidKey::at([0.0; 3])] };
    let coefficient = *u.choose(&[0.0f32, 0.5, 1e30])?;
    Ok(MeshColliderDesc {
        name: "mesh".into(),
        triangles,
        frames,
        frame_start: *u.choose(&[0.0f32, 0.005, 1e30])?,
        frame_interval: *u.choose(&[0.01f32, 0.0, 1e-30, 1e30])?,
        keys,
        thickness: *u.choose(&[0.005f32, 0.05, 1e-30, 1e9, 0.0, -1.0])?,
        friction: Friction { static_coefficient: coefficient, kinetic_coefficient: coefficient },
    })
}

/// Two rigid keys, at 0 and at 0.01 s, 1e-30 s or 1e30 s: ordinary or extreme positions, and
/// quaternions of any length (sometimes zero, which is refused).
fn two_keys(u: &mut Unstructured<'_>) -> ArbResult<Vec<RigidKey>> {
    let key = |u: &mut Unstructured<'_>, time: f32| -> ArbResult<RigidKey> {
        let position =
            if u.ratio(1, 8)? { [extreme(u)?, 0.0, 0.0] } else { [small(u)?, small(u)?, small(u)?] };
        let rotation = [small(u)?, small(u)?, small(u)?, small(u)?];
        Ok(RigidKey { time, position, rotation })
    };
    let later = *u.choose(&[0.01f32, 1e-30, 1e30])?;
    Ok(vec![key(u, 0.0)?, key(u, later)?])
}

/// Self-collision for an arbitrary cloth, drawn last (an exhausted input reads 0: off): off,
/// particle contacts or surface contacts (vertex–triangle and edge–edge, with the guard), with a
/// thickness and friction across their range: in a tame scene a thickness from 1 cm to 0.3 m
/// (particles 25 cm apart: both thinner and thicker than the spacing) and a friction from 0 to 1;
/// otherwise also 0, negative, non-finite or huge values, which the builder refuses.
fn arbitrary_self_collision(
    u: &mut Unstructured<'_>,
    tame: bool,
) -> ArbResult<(Option<SelfCollisionDesc>, SelfCollisionMode)> {
    let mode = match u.arbitrary::<u8>()? % 3 {
        1 => SelfCollisionMode::Particles,
        2 => SelfCollisionMode::Triangles,
        _ => return Ok((None, SelfCollisionMode::default())),
    };
    let (thickness, friction) = if tame {
        (*u.choose(&[0.01f32, 0.05, 0.1, 0.3])?, *u.choose(&[0.0f32, 0.2, 1.0])?)
    } else {
        let thickness = *u.choose(&[0.004f32, 0.05, 0.5, 4.0, 1e-30, 1e30, 0.0, -0.01, f32::NAN])?;
        (thickness, *u.choose(&[0.0f32, 0.3, 1.0, 1e30, -0.5, f32::INFINITY])?)
    };
    Ok((Some(SelfCollisionDesc { thickness, friction }), mode))
}

/// The second cloth of an arbitrary scene (see [`ArbitraryScene::second`]), drawn last, from a
/// byte that an exhausted input reads as 0 (none), so that the committed inputs of earlier
/// versions still draw the scenes they drew.
fn arbitrary_second_cloth(
    u: &mut Unstructured<'_>,
    first: &ClothDesc,
    tame: bool,
) -> ArbResult<Option<ClothDesc>> {
    if u.arbitrary::<u8>()? % 2 == 0 {
        return Ok(None);
    }
    let shift =
        if tame { *u.choose(&[0.1f32, 0.3, 1.0])? } else { *u.choose(&[0.0f32, 1e-6, 0.004, 0.3, 1e30])? };
    let mut cloth = ClothDesc { name: "fuzz2".into(), ..first.clone() };
    for p in &mut cloth.positions {
        p[2] += shift;
    }
    (cloth.self_collision, cloth.self_collision_mode) = arbitrary_self_collision(u, tame)?;
    Ok(Some(cloth))
}

/// A coordinate of everyday size: −4 to 4 m in steps of 1/8 m, or a random `f32` of that range.
fn small(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    Ok(if u.arbitrary()? {
        f32::from(u.int_in_range(-32..=32i8)?) / 8.0
    } else {
        (u.arbitrary::<u16>()? as f32 / 65535.0 - 0.5) * 8.0
    })
}

/// A huge, tiny or subnormal coordinate, or an ordinary one.
fn extreme(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    let v = *u.choose(&[1e30f32, -1e30, 1e20, 1e9, 3e38, 1e-30, -1e-38, 1e-45, 0.0, -0.0, 1e5])?;
    Ok(v)
}

/// A rest length: ordinary, tiny or huge (and sometimes 0 or negative, which the builder refuses).
fn length(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    Ok(*u.choose(&[1.0f32, 0.5, 0.1, 1e-7, 1e-30, 1e30, 0.0, -1.0, 2.0])?)
}

/// A compliance or damping: 0, or `10^k` for `k` from −12 to 30.
fn compliance(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    let k: i32 = u.int_in_range(-13..=30)?;
    Ok(if k == -13 { 0.0 } else { 10f32.powi(k) })
}

/// A compliance or damping of the well-conditioned range: 0, or `10^k` for `k` from −9 to 0.
fn tame_compliance(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    let k: i32 = u.int_in_range(-10..=0)?;
    Ok(if k == -10 { 0.0 } else { 10f32.powi(k) })
}

/// A speed component, m/s: ordinary or extreme (up to 1e30).
fn speed(u: &mut Unstructured<'_>) -> ArbResult<f32> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => *u.choose(&[1e30f32, -1e30, 1e9, -3e5, 1e-30])?,
        1 => 0.0,
        _ => small(u)? * 2.0,
    })
}
