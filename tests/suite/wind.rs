//! Promise: drag and lift (`weft_core::aero`) push a cloth the way air does, exactly zero in
//! still air, keyed over time, and the same bits for any thread count.
//!
//! * A sheet pinned along its top edge, facing a steady wind in zero gravity, is blown round
//!   until it streams along the wind: the area-weighted `|n̂·ŵ|` of its triangles goes from 1 to
//!   below 0.25 (it flutters, having no bending stiffness: measured up to 0.18 over its last
//!   second), and its free edge ends downwind of its pinned one.
//! * A triangle facing the wind feels `½ρC_dAU²` along the wind, a third on each corner; one at
//!   45° also feels lift `½ρC_lAU²·cos θ sin θ` across the wind.
//! * Without wind and gravity a cloth with aerodynamics stays at rest bit for bit.
//! * Keyed wind is interpolated in time, and the force follows the wind at the step's start.
//! * The forces (and whole steps) are bit-identical on pools of 1 and 3 threads.

use weft_core::aero::{AeroDesc, AeroModel, wind_at};
use weft_core::grid::{GridDesc, GridPlane};
use weft_core::limits::Limits;
use weft_core::settings::WindKey;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, MassSpec, Model, ModelBuilder, Rule, SimSettings};
use weft_kernels::{KernelPath, StepOptions, step};
use weft_testkit::models::settings;

fn compliance(v: f32) -> Elasticity {
    Elasticity::Compliance(Compliance::new(v).unwrap())
}

/// An `n × n` sheet, 1 m square in the xy plane (normal +z), 0.2 kg/m², pinned along its top
/// row, drag 1 and lift `lift`.
fn sheet(n: u32, lift: f32) -> (GridDesc, ClothDesc) {
    let g = GridDesc { resolution: [n, n], size: [1.0, 1.0], origin: [0.0; 3], plane: GridPlane::XY };
    let mut cloth = g.generate(&Limits::default()).unwrap().into_cloth(
        "sheet",
        MassSpec::Density(0.2),
        compliance(1e-6),
        compliance(1e-5),
    );
    cloth.pins = (0..n).map(|i| g.index(i, n - 1)).collect();
    cloth.aero = Some(AeroDesc { drag: 1.0, lift });
    (g, cloth)
}

fn build(settings: SimSettings, cloth: &ClothDesc) -> Model {
    let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
    b.add_cloth(cloth).unwrap();
    b.build().unwrap()
}

fn wind(velocity: [f32; 3]) -> Vec<WindKey> {
    vec![WindKey { time: 0.0, velocity }]
}

/// Area-weighted mean of `|n̂·ŵ|` over the cloth's triangles, `ŵ` = +z.
fn facing(model: &Model) -> f64 {
    let x = model.particles().positions();
    let (mut facing, mut area) = (0.0, 0.0);
    for t in &model.cloths()[0].triangles {
        let [a, b, c] = t.map(|p| x[p as usize].map(f64::from));
        let (u, w) = ([0, 1, 2].map(|k| b[k] - a[k]), [0, 1, 2].map(|k| c[k] - a[k]));
        let n = [u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]];
        facing += n[2].abs();
        area += (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    }
    facing / area
}

fn one_step(model: &mut Model) {
    step(model, &StepOptions { path: KernelPath::Simd, residual: false });
}

#[test]
fn a_sheet_in_steady_wind_turns_to_stream_along_it() {
    let (g, cloth) = sheet(12, 0.3);
    let mut s = settings(60.0, 4, 8, [0.0; 3]);
    s.velocity_damping = 2.0;
    s.wind = wind([0.0, 0.0, 10.0]);
    let mut m = build(s, &cloth);
    assert_eq!(facing(&m), 1.0);
    let mut last_second = 0.0f64;
    for k in 0..480 {
        one_step(&mut m);
        if k >= 240 {
            last_second = last_second.max(facing(&m));
        }
    }
    assert!(m.particles().all_finite());
    assert!(last_second < 0.25, "the sheet still faces the wind: |n̂·ŵ| up to {last_second}");
    let z = |j: u32| (0..12).map(|i| m.particles().position(g.index(i, j) as usize)[2]).sum::<f32>() / 12.0;
    assert!(z(0) - z(11) > 0.8, "the free edge is {} m downwind of the pinned one", z(0) - z(11));
}

#[test]
fn drag_and_lift_of_one_triangle() {
    // A right triangle of 0.5 m² in the xy plane, at rest, air of 1.2 kg/m³.
    let x = [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]];
    let v = [[0.0; 4]; 3];
    let force = |drag: f32, lift: f32, velocity: [f32; 3]| {
        let s = SimSettings { air_density: 1.2, wind: wind(velocity), ..SimSettings::default() };
        let aero = AeroModel::new(&[([0, 1, 2], [drag, lift])], &s, 3);
        let f = weft_kernels::aero::forces(&aero, &x, &v, 0.0);
        assert!(f.iter().all(|c| c == &f[0]), "a third on each corner: {f:?}");
        [0, 1, 2].map(|k| 3.0 * f[0][k])
    };
    let close = |a: [f32; 3], b: [f32; 3]| (0..3).all(|k| (a[k] - b[k]).abs() <= 1e-5 * (1.0 + b[k].abs()));
    // Face on, 10 m/s: ½·1.2·C_d·0.5·100 = 30·C_d N along the wind; lift vanishes.
    let f = force(1.0, 1.0, [0.0, 0.0, 10.0]);
    assert!(close(f, [0.0, 0.0, 30.0]), "{f:?}");
    // 45° in the yz plane, 10 m/s: drag along the normal, 30·cos 45° = 21.2 N; lift across the
    // wind, in the plane of n and v: 30·cos 45°·sin 45° = 15 N along (0, −1, 1)/√2.
    let u = 10.0 / 2f32.sqrt();
    let drag = force(1.0, 0.0, [0.0, u, u]);
    assert!(close(drag, [0.0, 0.0, 30.0 * 0.5f32.sqrt()]), "{drag:?}");
    let lift = force(0.0, 1.0, [0.0, u, u]);
    let wind_dir = [0.0, 0.5f32.sqrt(), 0.5f32.sqrt()];
    assert!((lift[1] * wind_dir[1] + lift[2] * wind_dir[2]).abs() < 1e-5, "lift ⟂ wind: {lift:?}");
    assert!(close(lift, [0.0, -15.0 * 0.5f32.sqrt(), 15.0 * 0.5f32.sqrt()]), "{lift:?}");
    // Edge on: nothing. Still air: nothing, exactly.
    assert_eq!(force(1.0, 1.0, [10.0, 0.0, 0.0]), [0.0; 3]);
    assert_eq!(force(1.0, 1.0, [0.0; 3]), [0.0; 3]);
}

#[test]
fn still_air_leaves_a_cloth_at_rest_bit_for_bit() {
    let (_, mut cloth) = sheet(9, 0.5);
    cloth.pins.clear();
    // Rest lengths exactly as the kernel measures them (f32), so that the distance constraints
    // are satisfied to the bit and only the air could move anything.
    for set in &mut cloth.edge_sets {
        let x = &cloth.positions;
        set.rest_lengths = Some(
            set.edges
                .iter()
                .map(|&[a, b]| {
                    let d = [0, 1, 2].map(|k| x[b as usize][k] - x[a as usize][k]);
                    (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt()
                })
                .collect(),
        );
    }
    for keys in [Vec::new(), wind([0.0; 3])] {
        let mut s = settings(60.0, 2, 4, [0.0; 3]);
        s.wind = keys;
        let mut m = build(s, &cloth);
        let start = m.particles().clone();
        for _ in 0..100 {
            one_step(&mut m);
        }
        assert_eq!(m.particles().positions(), start.positions());
        assert!(m.particles().velocities().iter().flatten().all(|&v| v == 0.0));
    }
}

#[test]
fn keyed_wind_is_interpolated_and_followed() {
    let keys = vec![
        WindKey { time: 0.5, velocity: [0.0, 0.0, 4.0] },
        WindKey { time: 1.5, velocity: [0.0, 0.0, 8.0] },
    ];
    assert_eq!(wind_at(&keys, 0.0), [0.0, 0.0, 4.0], "held before the first key");
    assert_eq!(wind_at(&keys, 1.0), [0.0, 0.0, 6.0]);
    assert_eq!(wind_at(&keys, 1.25), [0.0, 0.0, 7.0]);
    assert_eq!(wind_at(&keys, 3.0), [0.0, 0.0, 8.0], "held after the last key");
    // A triangle at rest facing the wind: drag grows with the square of the wind speed.
    let s = SimSettings { air_density: 1.2, wind: keys, ..SimSettings::default() };
    let aero = AeroModel::new(&[([0, 1, 2], [1.0, 0.0])], &s, 3);
    let x = [[0.0, 0.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]];
    let drag = |t: f64| 3.0 * weft_kernels::aero::forces(&aero, &x, &[[0.0; 4]; 3], t)[0][2];
    for (t, speed) in [(0.0, 4.0f32), (1.0, 6.0), (1.25, 7.0), (9.0, 8.0)] {
        let expected = 0.5 * 1.2 * 0.5 * speed * speed;
        assert!((drag(t) - expected).abs() <= 1e-5 * expected, "t = {t}: {} N, not {expected} N", drag(t));
    }
}

#[test]
fn forces_and_steps_are_the_same_bits_on_one_and_three_threads() {
    // 73 × 71 particles: two chunks of 4096 plus a partial one.
    let g = GridDesc { resolution: [73, 71], size: [2.0, 2.0], origin: [0.0; 3], plane: GridPlane::XZ };
    let mut cloth = g.generate(&Limits::default()).unwrap().into_cloth(
        "flag",
        MassSpec::Density(0.2),
        compliance(1e-6),
        compliance(1e-5),
    );
    cloth.pins = vec![0, 72];
    cloth.aero = Some(AeroDesc { drag: 1.1, lift: 0.4 });
    cloth.velocities = Some(
        (0..73 * 71).map(|i| [((i * 7) % 13) as f32 * 0.1, -0.5, ((i * 5) % 11) as f32 * 0.1]).collect(),
    );
    let mut s = settings(60.0, 2, 4, [0.0, -9.81, 0.0]);
    s.wind = vec![
        WindKey { time: 0.0, velocity: [3.0, 0.0, 1.0] },
        WindKey { time: 0.1, velocity: [-2.0, 1.0, 6.0] },
    ];
    let model = build(s, &cloth);
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut m = model.clone();
            let p = m.particles();
            let forces = weft_kernels::aero::forces(m.aero(), p.positions(), p.velocities(), 0.05);
            for _ in 0..10 {
                one_step(&mut m);
            }
            (forces, m.particles().clone())
        })
    };
    let (f1, p1) = run(1);
    let (f3, p3) = run(3);
    let bits = |f: &[[f32; 4]]| f.iter().flatten().map(|c| c.to_bits()).collect::<Vec<_>>();
    assert!(f1.iter().any(|f| f[0] != 0.0));
    assert!(bits(&f1) == bits(&f3), "forces differ between 1 and 3 threads");
    assert_eq!(p1, p3);
}

#[test]
fn aerodynamics_need_triangles_and_sane_coefficients() {
    let s = settings(60.0, 1, 1, [0.0; 3]);
    let (_, base) = sheet(3, 0.0);
    let fails = |cloth: ClothDesc| {
        let mut b = ModelBuilder::new(s.clone(), Limits::default()).unwrap();
        b.add_cloth(&cloth).unwrap_err()
    };
    let e = fails(ClothDesc {
        triangles: vec![],
        uvs: vec![],
        polygons: Default::default(),
        mass: MassSpec::ParticleMass(0.1),
        ..base.clone()
    });
    assert!(matches!(e.rule, Rule::MissingPrerequisite { feature: "drag and lift", .. }), "{e}");
    let e = fails(ClothDesc { aero: Some(AeroDesc { drag: -1.0, lift: 0.0 }), ..base.clone() });
    assert_eq!((e.location.field, e.rule), ("drag", Rule::Negative { value: -1.0 }));
    let e = fails(ClothDesc { aero: Some(AeroDesc { drag: 1.0, lift: f32::NAN }), ..base.clone() });
    assert_eq!(e.location.field, "lift");
    let mut flat = ClothDesc { mass: MassSpec::ParticleMass(0.1), ..base };
    flat.edge_sets.clear();
    flat.positions[1] = flat.positions[0];
    let e = fails(flat);
    assert!(matches!(e.rule, Rule::ZeroAreaTriangle { used_for: "drag and lift", .. }), "{e}");
}
