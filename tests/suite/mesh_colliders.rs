//! Promise: triangle-mesh colliders (`weft_core::mesh_collider`) hold cloth outside a closed body
//! and on its side of a thin one, however fast it comes; an animated mesh carries cloth by
//! friction (and only by friction); pins that follow a keyframed path or an animated mesh are
//! where the path or the surface puts them; and the cape example (`examples/cape.toml`, made by
//! `cargo run --example make_cape`) bakes the same bytes on 1 and 2 threads with no particle deep
//! in the body.
//!
//! Every test runs the fast solver (`KernelPath::Simd`) and takes under a few seconds in release
//! (`cargo test --release --test suite mesh_colliders::`). The measured values quoted in each test's
//! documentation are from that build.

use std::collections::BTreeMap;
use std::path::Path;

use glam::DVec3;

use weft_core::collider::{ColliderDesc, ColliderShape, Friction, RigidKey};
use weft_core::follow::{FollowDesc, closest_point_on_triangle};
use weft_core::limits::Limits;
use weft_core::mesh_collider::MeshColliderDesc;
use weft_core::{ClothDesc, MassSpec, Model, ModelBuilder};
use weft_kernels::{KernelPath, StepOptions, StepStats, step};
use weft_testkit::cli::{Bin, contents};
use weft_testkit::models::{Grid, kinetic_energy, positions, settings};

/// The `weft` binary cargo built for these tests.
const WEFT: Bin = Bin(env!("CARGO_BIN_EXE_weft"));

/// One step of the fast path, with the residuals (and so the deep count).
fn one_step(model: &mut Model) -> StepStats {
    step(model, &StepOptions { path: KernelPath::Simd, residual: true })
}

fn friction(mu: f32) -> Friction {
    Friction { static_coefficient: mu, kinetic_coefficient: mu }
}

/// A point in m as a `glam` vector, in `f64`.
fn v64(p: [f32; 3]) -> DVec3 {
    DVec3::from_array(p.map(f64::from))
}

/// A grid cloth `resolution` particles across, `size` m, lying in the xz plane from `origin`
/// (m), density 0.2 kg/m², with stretch and shear compliances in m/N.
fn xz_sheet(resolution: [u32; 2], size: [f32; 2], origin: [f32; 3], stretch: f32, shear: f32) -> ClothDesc {
    let g = weft_core::grid::GridDesc { resolution, size, origin, plane: weft_core::grid::GridPlane::XZ };
    let c = |v: f32| weft_core::units::Elasticity::Compliance(weft_core::units::Compliance::new(v).unwrap());
    g.generate(&Limits::default()).unwrap().into_cloth("sheet", MassSpec::Density(0.2), c(stretch), c(shear))
}

/// A 1 m cloth (21 × 21) dropped from 0.75 m onto a static icosphere (radius 0.3 m, 1280
/// triangles) resting on a floor plane, friction 0.5 on both, thickness 1 cm, 60 fps × 4
/// substeps, 10 iterations, damping 1/s, 2 s.
///
/// Promise: after every step no particle is deeper than half the thickness in the sphere
/// (`colliders.deep == Some(0)`), and no particle is ever inside the sphere's inscribed ball
/// (the faces' nearest distance to the centre, less half the thickness); the cloth's centre
/// rests on top of the sphere (at `0.6 m + thickness`, within 5 mm); and with friction the
/// cloth has settled: its kinetic energy at the end is below 1e-4 J.
///
/// Measured: the deep count is 0 after every step; the closest any particle came to the centre
/// was 0.3087 m (inscribed radius 0.2986 m); the centre ended 0.6100 m up; the kinetic
/// energy ended at 2.1e-5 J (cloth mass 0.2 kg).
#[test]
fn cloth_drapes_over_a_static_mesh_sphere_without_entering_it() {
    let (r, centre) = (0.3f32, [0.0f32, 0.3, 0.0]);
    let (vertices, triangles) = weft_core::shapes::icosphere(3, r, centre);
    let centre = v64(centre);
    let thickness = 0.01f32;
    // The faces' nearest distance to the centre (the inscribed radius of the polyhedron).
    let inscribed = triangles
        .iter()
        .map(|t| {
            let c = t.map(|i| v64(vertices[i as usize]));
            let n = (c[1] - c[0]).cross(c[2] - c[0]);
            let d = (c[0] - centre).dot(n) / n.length();
            assert!(d > 0.0, "the icosphere's faces point outward");
            d
        })
        .fold(f64::INFINITY, f64::min);
    let mut s = settings(60.0, 4, 10, [0.0, -9.81, 0.0]);
    s.velocity_damping = 1.0;
    let mut b = ModelBuilder::new(s, Limits::default()).unwrap();
    b.add_cloth(&xz_sheet([21, 21], [1.0, 1.0], [-0.5, 0.75, -0.5], 1e-7, 1e-5)).unwrap();
    b.add_mesh_collider(&MeshColliderDesc {
        name: "ball".into(),
        triangles,
        frames: vec![vertices],
        thickness,
        friction: friction(0.5),
        ..MeshColliderDesc::default()
    })
    .unwrap();
    b.add_collider(&ColliderDesc {
        name: "floor".into(),
        shape: ColliderShape::Plane { normal: [0.0, 1.0, 0.0] },
        thickness,
        friction: friction(0.5),
        ..ColliderDesc::default()
    })
    .unwrap();
    let mut model = b.build().unwrap();
    let mut closest = f64::INFINITY;
    for k in 0..480 {
        let stats = one_step(&mut model);
        assert_eq!(stats.colliders.deep, Some(0), "deep particles after step {k}");
        for p in positions(&model) {
            closest = closest.min(v64(p).distance(centre));
        }
        assert!(
            closest >= inscribed - thickness as f64 / 2.0,
            "step {k}: a particle {closest} m from the centre"
        );
    }
    let top = positions(&model)[10 * 21 + 10][1] as f64;
    let ke = kinetic_energy(&model);
    eprintln!(
        "closest {closest:.4} m (inscribed {inscribed:.4}), centre at {top:.4} m, kinetic energy {ke:.2e} J"
    );
    assert!((top - (0.6 + thickness as f64)).abs() < 5e-3, "the cloth's centre is at {top} m");
    assert!(ke < 1e-4, "kinetic energy {ke} J");
}

/// A thin wall: one quad (two triangles) in the plane `x = 0`, 2 m × 2 m, static, thickness
/// 1 cm, no friction, one substep at 60 fps (`h` = 16.7 ms), 4 iterations, no gravity. A soft
/// 11 × 11 cloth (0.6 m square, parallel to the wall at `x = −0.3`) is thrown at it at 30 m/s,
/// loose particles from the same side at 20 to 50 m/s (up to 0.83 m in one step: they would be
/// past the wall after one prediction), and loose particles from the far side (`x = +0.05` to
/// `+0.4`) at −20 to −50 m/s.
///
/// Promise: after every one of 30 steps, every particle is on the side it started on, at least
/// half the thickness from the wall (`x ≤ −0.005` or `x ≥ 0.005`), and the deep count is 0. A
/// solver that resolved contacts by the nearest side of the end position would push all of them
/// out of the far side.
///
/// Measured: the largest `x` of the near side over all steps is −0.0100 m (the thickness) and
/// the smallest of the far side +0.0100 m.
#[test]
fn a_thin_wall_stops_fast_particles_on_the_side_they_came_from() {
    let thickness = 0.01f32;
    let mut b = ModelBuilder::new(settings(60.0, 1, 4, [0.0; 3]), Limits::default()).unwrap();
    let mut grid = Grid::new(11, 11);
    grid.stretch = 1e-4;
    grid.shear = 1e-3;
    grid.pins = Vec::new();
    let mut cloth = grid.cloth();
    // The grid is in the xy plane, [0, 1]²: turn it into the plane x = −0.3, 0.6 m square.
    for p in &mut cloth.positions {
        *p = [-0.3, (p[0] - 0.5) * 0.6, (p[1] - 0.5) * 0.6];
    }
    for set in &mut cloth.edge_sets {
        set.rest_lengths = None;
    }
    let cloth_n = cloth.positions.len();
    cloth.velocities = Some(vec![[30.0, 0.0, 0.0]; cloth_n]);
    b.add_cloth(&cloth).unwrap();
    // Loose particles: (x, speed) pairs from both sides, spread over the wall.
    let loose: Vec<(f32, f32)> = (0..16)
        .map(|i| {
            let speed = 20.0 + 2.0 * i as f32;
            if i % 2 == 0 { (-0.05 - 0.02 * i as f32, speed) } else { (0.05 + 0.02 * i as f32, -speed) }
        })
        .collect();
    b.add_cloth(&ClothDesc {
        name: "loose".into(),
        positions: loose
            .iter()
            .enumerate()
            .map(|(i, &(x, _))| [x, -0.8 + 0.1 * i as f32, 0.7 - 0.09 * i as f32])
            .collect(),
        velocities: Some(loose.iter().map(|&(_, v)| [v, 0.0, 0.0]).collect()),
        mass: MassSpec::ParticleMass(0.01),
        ..ClothDesc::default()
    })
    .unwrap();
    b.add_mesh_collider(&MeshColliderDesc {
        name: "wall".into(),
        triangles: vec![[0, 1, 2], [2, 1, 3]],
        frames: vec![vec![[0.0, -1.0, -1.0], [0.0, 1.0, -1.0], [0.0, -1.0, 1.0], [0.0, 1.0, 1.0]]],
        thickness,
        ..MeshColliderDesc::default()
    })
    .unwrap();
    let mut model = b.build().unwrap();
    let start: Vec<f32> = positions(&model).iter().map(|p| p[0]).collect();
    let (mut near, mut far) = (f32::NEG_INFINITY, f32::INFINITY);
    for k in 0..30 {
        let stats = one_step(&mut model);
        assert_eq!(stats.colliders.deep, Some(0), "deep particles after step {k}");
        for (i, p) in positions(&model).iter().enumerate() {
            if start[i] < 0.0 {
                assert!(
                    p[0] <= -thickness / 2.0,
                    "step {k}: particle {i} (from x = {}) at x = {}",
                    start[i],
                    p[0]
                );
                near = near.max(p[0]);
            } else {
                assert!(
                    p[0] >= thickness / 2.0,
                    "step {k}: particle {i} (from x = {}) at x = {}",
                    start[i],
                    p[0]
                );
                far = far.min(p[0]);
            }
        }
    }
    eprintln!("near side at most x = {near}, far side at least x = {far}");
    // They did reach the wall (a wall that stopped nothing would fail the loop; one that pushed
    // everything far away would fail this).
    assert!(near > -0.02 && far < 0.02, "near {near}, far {far}");
}

/// The platform's `x` offset at time `t`: still for 0.25 s, then 1 m/s² up to 0.5 m/s.
fn platform_offset(t: f64) -> f64 {
    let t = (t - 0.25).max(0.0);
    let (a, v) = (1.0, 0.5);
    let ramp = v / a;
    if t < ramp { 0.5 * a * t * t } else { 0.5 * v * ramp + v * (t - ramp) }
}

/// Runs a 0.5 m cloth (11 × 11) lying on a horizontal mesh platform (a 3 m quad at `y = 0`,
/// thickness 1 cm) that is animated by frames (every 1/60 s, `platform_offset`) for 2 s at 60
/// fps × 4 substeps, 8 iterations; returns the cloth's mean `x` displacement and the platform's.
fn carried(mu: f32) -> (f64, f64) {
    let mut b = ModelBuilder::new(settings(60.0, 4, 8, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    b.add_cloth(&xz_sheet([11, 11], [0.5, 0.5], [-0.25, 0.0101, -0.25], 1e-6, 1e-5)).unwrap();
    let frames = (0..=130)
        .map(|k| {
            let x = platform_offset(k as f64 / 60.0) as f32;
            vec![[x - 1.5, 0.0, -1.5], [x + 1.5, 0.0, -1.5], [x - 1.5, 0.0, 1.5], [x + 1.5, 0.0, 1.5]]
        })
        .collect();
    b.add_mesh_collider(&MeshColliderDesc {
        name: "platform".into(),
        triangles: vec![[0, 2, 1], [1, 2, 3]],
        frames,
        frame_start: 0.0,
        frame_interval: 1.0 / 60.0,
        thickness: 0.01,
        friction: friction(mu),
        ..MeshColliderDesc::default()
    })
    .unwrap();
    let mut model = b.build().unwrap();
    let mean_x = |m: &Model| positions(m).iter().map(|p| p[0] as f64).sum::<f64>() / 121.0;
    let x0 = mean_x(&model);
    for k in 0..480 {
        let stats = one_step(&mut model);
        assert_eq!(stats.colliders.deep, Some(0), "μ = {mu}: deep particles after step {k}");
    }
    (mean_x(&model) - x0, platform_offset(model.time()))
}

/// A cloth between two animated mesh colliders: a platform rising under it and a wall sweeping
/// across it, both with new frames every step, so that each step samples both meshes (on the
/// pool's threads when there are several).
fn between_two_meshes() -> Model {
    let mut b = ModelBuilder::new(settings(60.0, 4, 4, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    b.add_cloth(&xz_sheet([11, 11], [0.5, 0.5], [-0.25, 0.02, -0.25], 1e-6, 1e-5)).unwrap();
    // Corner (u, v) ∈ {−1, 1}² of each quad at time t (s).
    fn platform(u: f32, v: f32, t: f32) -> [f32; 3] {
        [u, 0.2 * t, v]
    }
    fn wall(u: f32, v: f32, t: f32) -> [f32; 3] {
        [-0.4 + 1.5 * t, 0.5 * u + 0.3, v]
    }
    type Corner = fn(f32, f32, f32) -> [f32; 3];
    let shapes: [(&str, Corner); 2] = [("platform", platform), ("wall", wall)];
    for (name, corner) in shapes {
        let frames = (0..=20)
            .map(|k| {
                let t = k as f32 / 60.0;
                vec![corner(-1.0, -1.0, t), corner(1.0, -1.0, t), corner(-1.0, 1.0, t), corner(1.0, 1.0, t)]
            })
            .collect();
        b.add_mesh_collider(&MeshColliderDesc {
            name: name.into(),
            triangles: vec![[0, 2, 1], [1, 2, 3]],
            frames,
            frame_interval: 1.0 / 60.0,
            thickness: 0.01,
            friction: friction(0.4),
            ..MeshColliderDesc::default()
        })
        .unwrap();
    }
    b.build().unwrap()
}

/// Promise: with two animated meshes the steps are the same bits on 1, 2 and 3 threads, and the
/// meshes touch the cloth (the wall pushes it: some particle moves more than 5 cm along +x).
#[test]
fn two_animated_meshes_give_the_same_bits_on_any_thread_count() {
    let steps = 60;
    let one = weft_testkit::models::bits_after(between_two_meshes, steps, KernelPath::Simd, 1);
    for threads in [2, 3] {
        let other = weft_testkit::models::bits_after(between_two_meshes, steps, KernelPath::Simd, threads);
        assert!(one == other, "{threads} threads: the state differs");
    }
    let mut model = between_two_meshes();
    let start = positions(&model);
    for _ in 0..steps {
        assert_eq!(one_step(&mut model).colliders.deep, Some(0));
    }
    let pushed = positions(&model).iter().zip(&start).map(|(p, q)| p[0] - q[0]).fold(f32::MIN, f32::max);
    assert!(pushed > 0.05, "the wall moved the cloth only {pushed} m");
}

/// A moving mesh platform carries the cloth lying on it by friction, and only by friction.
///
/// Promise: with `μ = 0.5` (static friction holds up to 4.9 m/s², the platform accelerates at 1
/// m/s²) the cloth moves with the platform: its mean displacement after 2 s is within 5 mm of
/// the platform's (0.75 m); with `μ = 0` the cloth stays where it was (mean displacement under
/// 1 cm), so the carrying is friction relative to the moving surface, not an artefact of the
/// contact.
///
/// Measured: `μ = 0.5`: 0.7500 m (platform 0.7500 m); `μ = 0`: 0.0000 m.
#[test]
fn a_moving_mesh_platform_carries_cloth_by_friction_only() {
    let (cloth, platform) = carried(0.5);
    let (slipping, _) = carried(0.0);
    eprintln!("μ = 0.5: cloth {cloth:.4} m, platform {platform:.4} m; μ = 0: cloth {slipping:.4} m");
    assert!((platform - 0.75).abs() < 1e-6, "platform moved {platform} m");
    assert!(
        (cloth - platform).abs() < 0.005,
        "with friction the cloth moved {cloth} m, the platform {platform} m"
    );
    assert!(slipping.abs() < 0.01, "without friction the cloth moved {slipping} m");
}

/// `v` turned by `angle` (rad) about +y.
fn yaw(v: [f64; 3], angle: f64) -> [f64; 3] {
    let (s, c) = angle.sin_cos();
    [c * v[0] + s * v[2], v[1], -s * v[0] + c * v[2]]
}

/// Pins of a 6 × 6 grid (its two top corners and two more) follow a keyframed path: at rest,
/// then to `(0.3, 0.1, 0)` turned 90° about y at 0.5 s, then to `(0.3, 0.5, 0.4)` turned 150°
/// at 1 s, held after. 60 fps × 4 substeps, gravity on, 1.25 s.
///
/// Promise: at every frame time the pins are where the path puts them, computed here
/// independently (`R_y(θ(t))·x_rest + c(t)`, θ and c linear between the keys — slerp about one
/// axis is linear in the angle), within 1e-6 m; and bit for bit where
/// `Followers::targets(model.time())` says (the solver puts them there and nothing moves them
/// after).
///
/// Measured: the largest gap to the independent computation over 75 frames is 6.4e-8 m (f32
/// rounding); the pins moved up to 1.65 m.
#[test]
fn pins_follow_a_keyframed_path_exactly() {
    let mut b = ModelBuilder::new(settings(60.0, 4, 6, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    let mut grid = Grid::new(6, 6);
    grid.stretch = 1e-6;
    grid.pins = vec![30, 35, 33, 14];
    let mut cloth = grid.cloth();
    let deg = |a: f64| (a.to_radians() / 2.0).sin() as f32;
    let w = |a: f64| (a.to_radians() / 2.0).cos() as f32;
    cloth.follow = Some(FollowDesc::Keys(vec![
        RigidKey::at([0.0; 3]),
        RigidKey { time: 0.5, position: [0.3, 0.1, 0.0], rotation: [0.0, deg(90.0), 0.0, w(90.0)] },
        RigidKey { time: 1.0, position: [0.3, 0.5, 0.4], rotation: [0.0, deg(150.0), 0.0, w(150.0)] },
    ]));
    let rest: Vec<[f64; 3]> = grid.pins.iter().map(|&i| cloth.positions[i as usize].map(f64::from)).collect();
    b.add_cloth(&cloth).unwrap();
    let mut model = b.build().unwrap();
    let expected = |t: f64, x: [f64; 3]| -> [f64; 3] {
        let (angle, c) = if t <= 0.5 {
            let s = t / 0.5;
            (s * 90f64.to_radians(), [0.3 * s, 0.1 * s, 0.0])
        } else {
            let s = ((t - 0.5) / 0.5).min(1.0);
            let a = 90.0 + 60.0 * s;
            (a.to_radians(), [0.3, 0.1 + 0.4 * s, 0.4 * s])
        };
        let r = yaw(x, angle);
        std::array::from_fn(|i| r[i] + c[i])
    };
    let (mut gap, mut moved) = (0.0f64, 0.0f64);
    for frame in 1..=75 {
        for _ in 0..4 {
            one_step(&mut model);
        }
        let t = model.time();
        assert!((t - frame as f64 / 60.0).abs() < 1e-12);
        let now = positions(&model);
        let targets = model.followers().targets(model.mesh_colliders(), t);
        assert_eq!(targets.len(), 4);
        for &(i, target) in &targets {
            let x_rest =
                &rest[grid.pins.iter().position(|&p| p == i).expect("a following pin is one of the pins")];
            assert_eq!(now[i as usize].map(f32::to_bits), target.map(f32::to_bits), "frame {frame}: pin {i}");
            let e = expected(t, *x_rest);
            let x = v64(now[i as usize]);
            gap = gap.max(x.distance(DVec3::from_array(e)));
            moved = moved.max(x.distance(DVec3::from_array(*x_rest)));
        }
    }
    eprintln!("largest gap {gap:.2e} m, pins moved up to {moved:.3} m");
    assert!(gap <= 1e-6, "a pin is {gap} m off its path");
    assert!(moved > 0.9, "the pins moved only {moved} m");
}

/// Where the hinge's vertices are at time `t`: a strip of two 0.5 m quads along x, the second
/// folding up about their shared edge (`x = 0.5`) by up to 60°, the whole strip moving along
/// (0.4, 0.3, −0.2) m/s and turning about y at 1 rad/s.
fn hinge_frame(t: f64) -> Vec<[f32; 3]> {
    let fold = 60f64.to_radians() * (t / 1.0).min(1.0);
    let local: Vec<[f64; 3]> = vec![
        [0.0, 0.0, 0.0],
        [0.5, 0.0, 0.0],
        [0.5 + 0.5 * fold.cos(), 0.5 * fold.sin(), 0.0],
        [0.0, 0.0, 0.5],
        [0.5, 0.0, 0.5],
        [0.5 + 0.5 * fold.cos(), 0.5 * fold.sin(), 0.5],
    ];
    local
        .into_iter()
        .map(|p| {
            let p = yaw(p, t);
            [(p[0] + 0.4 * t) as f32, (p[1] + 0.3 * t) as f32, (p[2] - 0.2 * t) as f32]
        })
        .collect()
}

/// Pins follow an animated mesh (`hinge_frame`, frames every 1/60 s for 1.2 s): ten pins, one
/// over the middle of each of the four triangles 1 cm above, two 3 cm below, four on the surface;
/// 60 fps × 2 substeps.
///
/// Promise: at every frame time (where the vertices are exactly the frame's) each pin's distance
/// to the mesh (nearest point over all triangles, in f64) is its distance at time 0 within 1e-4
/// m, and the pins on the surface stay on it (within 1e-4 m); the pins do move (more than 0.4 m),
/// so pins that stayed put would fail.
///
/// Measured: the largest change of distance over 72 frames is 5.4e-8 m; the pins moved up to
/// 1.30 m.
#[test]
fn pins_following_an_animated_mesh_keep_their_distance_to_it() {
    let frames: Vec<Vec<[f32; 3]>> = (0..=72).map(|k| hinge_frame(k as f64 / 60.0)).collect();
    let triangles: Vec<[u32; 3]> = vec![[0, 3, 1], [1, 3, 4], [1, 4, 2], [2, 4, 5]];
    let centroid = |t: &[u32; 3]| -> [f32; 3] {
        std::array::from_fn(|i| t.iter().map(|&v| frames[0][v as usize][i]).sum::<f32>() / 3.0)
    };
    let mut pins: Vec<[f32; 3]> = Vec::new();
    for (k, t) in triangles.iter().enumerate() {
        let c = centroid(t);
        pins.push([c[0], c[1] + 0.01, c[2]]);
        pins.push([c[0], c[1] + [0.0, -0.03][k % 2], c[2]]);
    }
    pins.extend([[0.25, 0.0, 0.1], [0.75, 0.0, 0.4]]);
    let n = pins.len() as u32;
    let mut b = ModelBuilder::new(settings(60.0, 2, 4, [0.0, -9.81, 0.0]), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "pins".into(),
        positions: pins.clone(),
        mass: MassSpec::ParticleMass(0.01),
        pins: (0..n).collect(),
        follow: Some(FollowDesc::Collider("hinge".into())),
        ..ClothDesc::default()
    })
    .unwrap();
    b.add_mesh_collider(&MeshColliderDesc {
        name: "hinge".into(),
        triangles,
        frames,
        frame_start: 0.0,
        frame_interval: 1.0 / 60.0,
        thickness: 0.005,
        ..MeshColliderDesc::default()
    })
    .unwrap();
    let mut model = b.build().unwrap();
    let distance = |m: &Model, p: [f32; 3]| -> f64 {
        let mesh = &m.mesh_colliders()[0];
        let p = p.map(f64::from);
        (0..mesh.triangles.len())
            .map(|t| {
                DVec3::from_array(p)
                    .distance(DVec3::from_array(closest_point_on_triangle(p, mesh.triangle_at(t, m.time()))))
            })
            .fold(f64::INFINITY, f64::min)
    };
    let start: Vec<f64> = pins.iter().map(|&p| distance(&model, p)).collect();
    assert!(start[..8].iter().step_by(2).all(|d| (d - 0.01).abs() < 1e-6), "{start:?}");
    let (mut worst, mut moved) = (0.0f64, 0.0f64);
    for frame in 1..=72 {
        for _ in 0..2 {
            one_step(&mut model);
        }
        for (i, p) in positions(&model).into_iter().enumerate() {
            let change = (distance(&model, p) - start[i]).abs();
            assert!(
                change <= 1e-4,
                "frame {frame}: pin {i} is {} m from the mesh, was {}",
                distance(&model, p),
                start[i]
            );
            worst = worst.max(change);
            moved = moved.max(v64(p).distance(v64(pins[i])));
        }
    }
    eprintln!("largest change of distance {worst:.2e} m, pins moved up to {moved:.3} m");
    assert!(moved > 0.4, "the pins moved only {moved} m");
}

/// The OBJ file's vertices and triangles (1-based `f a b c` lines), as written by `make_cape`.
fn read_obj(text: &str) -> (Vec<[f64; 3]>, Vec<[usize; 3]>) {
    let (mut v, mut f) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let mut w = line.split_whitespace();
        match w.next() {
            Some("v") => v.push(std::array::from_fn(|_| w.next().unwrap().parse().unwrap())),
            Some("f") => f.push(std::array::from_fn(|_| w.next().unwrap().parse::<usize>().unwrap() - 1)),
            _ => {}
        }
    }
    (v, f)
}

/// The volume enclosed by triangles `f` over vertices `v` (m³), after checking that they close
/// up consistently: every edge in exactly two triangles, once each way. Positive when they are
/// wound outward.
fn closed_outward_volume(v: &[[f64; 3]], f: &[[usize; 3]]) -> f64 {
    let mut edges = BTreeMap::new();
    for t in f {
        for k in 0..3 {
            *edges.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
        }
    }
    for (&(a, b), &count) in &edges {
        assert_eq!(count, 1, "edge {a}→{b} used {count} times the same way");
        assert_eq!(edges.get(&(b, a)), Some(&1), "edge {a}→{b} has no opposite");
    }
    let at = |k: usize| DVec3::from_array(v[k]);
    f.iter().map(|t| at(t[0]).dot(at(t[1]).cross(at(t[2]))) / 6.0).sum()
}

/// The cape example's body (`examples/cape/body.obj`, `body.pc2`, from `make_cape`).
///
/// Promise: the body is closed and consistently wound outward (every edge in exactly two
/// triangles, once each way; positive volume) with a few hundred triangles, about 0.4 m across
/// the shoulders; the cache has one point per vertex and 61 frames, starts at the rest pose, and
/// moves the shoulders by more than 1 m (the walk) and by more than 0.2 m sideways (the turn).
///
/// Measured: 416 triangles over 210 vertices; volume 0.0390 m³; 0.40 m across the shoulders;
/// the shoulders moved up to 1.85 m, 0.64 m sideways.
#[test]
fn the_cape_body_is_a_closed_outward_mesh_that_walks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cape");
    let (v, f) = read_obj(&std::fs::read_to_string(dir.join("body.obj")).unwrap());
    assert!((300..1000).contains(&f.len()), "{} triangles", f.len());
    let volume = closed_outward_volume(&v, &f);
    let width = v.iter().map(|p| p[0]).fold(f64::NEG_INFINITY, f64::max)
        - v.iter().map(|p| p[0]).fold(f64::INFINITY, f64::min);
    let pc2 = weft_io::pc2::read_pc2(&dir.join("body.pc2")).unwrap();
    assert_eq!((pc2.point_count, pc2.sample_count), (v.len(), 61));
    let frame = |k: usize| &pc2.positions[k * v.len()..(k + 1) * v.len()];
    for (p, q) in frame(0).iter().zip(&v) {
        assert!(
            (0..3).all(|i| (p[i] as f64 - q[i]).abs() < 1e-6),
            "frame 0 is not the rest pose: {p:?} {q:?}"
        );
    }
    // The shoulders: the vertices at the widest ring (±x at 1.40 m).
    let shoulders: Vec<usize> =
        (0..v.len()).filter(|&i| (v[i][1] - 1.40).abs() < 1e-6 && v[i][0].abs() > 0.19).collect();
    assert_eq!(shoulders.len(), 2);
    let (mut moved, mut sideways) = (0.0f64, 0.0f64);
    for &i in &shoulders {
        let (a, b) = (frame(0)[i], frame(60)[i]);
        let d = v64(b) - v64(a);
        moved = moved.max(d.length());
        sideways = sideways.max(d.x.abs());
    }
    eprintln!(
        "{} triangles over {} vertices; volume {volume:.4} m³; {width:.2} m wide; shoulders moved {moved:.2} m, {sideways:.2} m sideways",
        f.len(),
        v.len()
    );
    assert!(volume > 0.02, "volume {volume} m³ (negative: wound inward)");
    assert!((0.35..0.45).contains(&width), "{width} m wide");
    assert!(moved > 1.0 && sideways > 0.2, "the shoulders moved {moved} m, {sideways} m sideways");
}

/// The walking character of `examples/walk.toml` (`examples/walk/body.obj`, `body.pc2`, from
/// `make_walk`).
///
/// Promise: three objects (torso, left arm, right arm), each closed and wound outward; the cache
/// has one point per vertex and 91 frames and starts at the rest pose (a T-pose); the arms come
/// down (each hand more than 0.25 m lower at the end, however its swing lifts it) and swing (a hand's place along the walk,
/// relative to the hips, ranges over more than 0.2 m after 1.2 s); the hips walk more than 1.2 m
/// along +z.
///
/// Measured: torso 0.0351 m³, arms 0.0030 m³ each; hands 0.46 and 0.30 m lower; each swings
/// over 0.64 m; walked 1.89 m.
#[test]
fn the_walking_body_is_three_closed_outward_meshes_that_lower_their_arms_and_walk() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/walk");
    let text = std::fs::read_to_string(dir.join("body.obj")).unwrap();
    let (v, _) = read_obj(&text);
    let mut hands = Vec::new();
    let mut names = Vec::new();
    for object in text.split("\no ").skip(1) {
        let name = object.lines().next().unwrap();
        let (_, f) = read_obj(object);
        let volume = closed_outward_volume(&v, &f);
        eprintln!("{name}: {} triangles, {volume:.4} m³", f.len());
        assert!(volume > 0.002, "{name}: volume {volume} m³ (negative: wound inward)");
        if name.ends_with("_arm") {
            // The hand's pole is the arm's last vertex.
            hands.push(f.iter().flatten().copied().max().unwrap());
        }
        names.push(name);
    }
    assert_eq!(names, ["torso", "left_arm", "right_arm"]);
    let pc2 = weft_io::pc2::read_pc2(&dir.join("body.pc2")).unwrap();
    assert_eq!((pc2.point_count, pc2.sample_count), (v.len(), 91));
    let frame = |k: usize| &pc2.positions[k * v.len()..(k + 1) * v.len()];
    for (p, q) in frame(0).iter().zip(&v) {
        assert!(
            (0..3).all(|i| (p[i] as f64 - q[i]).abs() < 1e-6),
            "frame 0 is not the rest pose: {p:?} {q:?}"
        );
    }
    // The hips: the torso's bottom pole, vertex 0.
    let walked = v64(frame(90)[0]).z - v64(frame(0)[0]).z;
    for &hand in &hands {
        let drop = v64(frame(0)[hand]).y - v64(frame(90)[hand]).y;
        let along: Vec<f64> = (36..91).map(|k| v64(frame(k)[hand]).z - v64(frame(k)[0]).z).collect();
        let swing = along.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b))
            - along.iter().fold(f64::INFINITY, |a, &b| a.min(b));
        eprintln!("hand {hand}: {drop:.2} m lower, swings over {swing:.2} m; walked {walked:.2} m");
        assert!(drop > 0.25 && swing > 0.2, "hand {hand}: {drop} m lower, swing {swing} m");
    }
    assert!(walked > 1.2, "walked {walked} m");
}

/// The last row's `collider_deep_particles` of a bake's `stats.csv`.
fn last_deep(stats: &str) -> u64 {
    let header = stats.lines().next().unwrap();
    let at = header.split(',').position(|h| h == "collider_deep_particles").expect(header);
    stats.lines().last().unwrap().split(',').nth(at).unwrap().parse().unwrap()
}

/// The cape example through the CLI: `weft validate examples/cape.toml`, and `weft bake` of it
/// (60 frames: 2.5 s of walking) with `-j 1` and `-j 2`, PC2 and OBJ caches.
///
/// Promise: validation succeeds and prints the mesh collider's line (448 triangles over 226
/// vertices, 61 frames) and the following pins; both bakes write the same bytes in every file
/// (the PC2 cache, the 61 OBJ frames and `stats.csv`); and no particle is
/// deeper than half the thickness in the body or the floor after the last frame (nor after any
/// frame).
///
/// Measured: 0 deep particles on every frame; 16 following pins.
#[test]
fn the_cape_example_bakes_the_same_on_one_and_two_threads_with_no_deep_particles() {
    let scene = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/cape.toml");
    let out = WEFT.run_ok(["validate".as_ref(), scene.as_os_str()]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("'body', mesh of 416 triangles over 210 vertices, 61 frames"), "{text}");
    assert!(text.contains("following pins: 16"), "{text}");
    let tmp = tempfile::tempdir().unwrap();
    let mut baked = Vec::new();
    for threads in ["1", "2"] {
        let dir = tmp.path().join(format!("j{threads}"));
        let output = WEFT.run([
            "bake".as_ref(),
            scene.as_os_str(),
            "--out".as_ref(),
            dir.as_os_str(),
            "--format".as_ref(),
            "pc2,obj".as_ref(),
            "-j".as_ref(),
            threads.as_ref(),
            "--stats".as_ref(),
            "full".as_ref(),
            "--quiet".as_ref(),
        ]);
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        let files = contents(&dir);
        let stats = String::from_utf8(files["stats.csv"].clone()).unwrap();
        assert_eq!(last_deep(&stats), 0, "{stats}");
        for row in stats.lines().skip(1) {
            assert!(row.ends_with(",0"), "deep particles: {row}");
        }
        baked.push(files);
    }
    let names: Vec<&String> = baked[0].keys().collect();
    assert!(names.iter().any(|n| n.ends_with(".pc2")), "{names:?}");
    assert!(names.iter().any(|n| n.ends_with(".obj")), "{names:?}");
    assert_eq!(names, baked[1].keys().collect::<Vec<_>>());
    for name in names {
        assert!(baked[0][name] == baked[1][name], "{name} differs between -j 1 and -j 2");
    }
}
