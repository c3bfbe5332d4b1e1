//! Model builders and state comparisons shared by the tests: settings, the worked two-particle
//! example, grid cloths, positions and bit patterns of a model's state, tolerances.

use weft_core::batches::Batches;
use weft_core::grid::{GridDesc, GridPlane};
use weft_core::kinds::{BatchedKind, SetVisitor};
use weft_core::limits::Limits;
use weft_core::units::{Compliance, Elasticity};
use weft_core::{ClothDesc, EdgeSet, MassSpec, Model, ModelBuilder, SimSettings};
use weft_kernels::{KernelPath, StepOptions, StepStats};

/// Settings with `h = 1/(fps·substeps)`, the given iterations and gravity.
pub fn settings(fps: f64, substeps: u32, iterations: u32, gravity: [f32; 3]) -> SimSettings {
    SimSettings {
        fps,
        frames: 1,
        substeps,
        iterations,
        gravity,
        velocity_damping: 0.0,
        ..SimSettings::default()
    }
}

/// The worked example of docs/physics.md: particle 0 pinned at the origin, particle 1 (1 kg) at x =
/// 2 m, rest length 1 m, `h = 0.1 s`, no gravity.
pub fn seed_model(compliance: f32, iterations: u32) -> Model {
    let mut b = ModelBuilder::new(settings(10.0, 1, iterations, [0.0; 3]), Limits::default()).unwrap();
    b.add_cloth(&ClothDesc {
        name: "seed".into(),
        positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
        mass: MassSpec::ParticleMass(1.0),
        edge_sets: vec![EdgeSet {
            edges: vec![[0, 1]],
            rest_lengths: Some(vec![1.0]),
            elasticity: Elasticity::Compliance(Compliance::new(compliance).unwrap()),
            ..EdgeSet::stretch()
        }],
        pins: vec![0],
        ..ClothDesc::default()
    })
    .unwrap();
    b.build().unwrap()
}

/// A grid cloth description.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Particles along u (x).
    pub nu: u32,
    /// Particles along v (y).
    pub nv: u32,
    /// Stretch compliance, m/N.
    pub stretch: f32,
    /// Shear compliance, m/N.
    pub shear: f32,
    /// XPBD damping `β` of the stretch and shear constraints, N·s/m.
    pub damping: f32,
    /// Pinned particles.
    pub pins: Vec<u32>,
    /// Initial velocities (m/s), one per particle; `None`: at rest.
    pub velocities: Option<Vec<[f32; 3]>>,
    /// Renumber the particles with this seed (a scrambled order puts most constraints on block
    /// boundaries).
    pub shuffle: Option<u64>,
}

impl Grid {
    /// A `nu × nv` grid, 1 m × 1 m in the xy plane, pinned at its two top corners, rigid.
    pub fn new(nu: u32, nv: u32) -> Grid {
        Grid {
            nu,
            nv,
            stretch: 0.0,
            shear: 0.0,
            damping: 0.0,
            pins: vec![nu * (nv - 1), nu * nv - 1],
            velocities: None,
            shuffle: None,
        }
    }

    /// The cloth.
    pub fn cloth(&self) -> ClothDesc {
        let g = GridDesc {
            resolution: [self.nu, self.nv],
            size: [1.0, 1.0],
            origin: [0.0; 3],
            plane: GridPlane::XY,
        };
        let c = |v: f32| Elasticity::Compliance(Compliance::new(v).unwrap());
        let mut cloth = g.generate(&Limits::default()).unwrap().into_cloth(
            "grid",
            MassSpec::Density(0.2),
            c(self.stretch),
            c(self.shear),
        );
        for set in &mut cloth.edge_sets {
            set.damping = self.damping;
        }
        cloth.velocities = self.velocities.clone();
        cloth.pins = self.pins.clone();
        if let Some(seed) = self.shuffle {
            renumber(&mut cloth, seed);
        }
        cloth
    }

    /// The model under `settings`.
    pub fn model(&self, settings: SimSettings) -> Model {
        let mut b = ModelBuilder::new(settings, Limits::default()).unwrap();
        b.add_cloth(&self.cloth()).unwrap();
        b.build().unwrap()
    }
}

/// Renumbers the particles of `cloth` by a seeded permutation (xorshift, Fisher-Yates).
pub fn renumber(cloth: &mut ClothDesc, seed: u64) {
    let n = cloth.positions.len();
    let mut order: Vec<u32> = (0..n as u32).collect();
    let mut x = seed | 1;
    for i in (1..n).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % (i as u64 + 1)) as usize);
    }
    // order[new] = old; new_of[old] = new
    let mut new_of = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        new_of[old as usize] = new as u32;
    }
    let map = |p: &mut u32| *p = new_of[*p as usize];
    cloth.positions = order.iter().map(|&o| cloth.positions[o as usize]).collect();
    if let Some(v) = &mut cloth.velocities {
        *v = order.iter().map(|&o| v[o as usize]).collect();
    }
    cloth.triangles.iter_mut().flatten().for_each(map);
    let p = &cloth.polygons;
    cloth.polygons = weft_core::polygons::Polygons::new(
        p.sizes().to_vec(),
        p.corners().iter().map(|&c| new_of[c as usize]).collect(),
        p.uvs().to_vec(),
    )
    .expect("a renumbering keeps the faces valid");
    cloth.edge_sets.iter_mut().flat_map(|s| s.edges.iter_mut().flatten()).for_each(map);
    cloth.pins.iter_mut().for_each(map);
}

/// Positions `[x, y, z]` of a model.
pub fn positions(model: &Model) -> Vec<[f32; 3]> {
    model.particles().positions().iter().map(|p| [p[0], p[1], p[2]]).collect()
}

/// Runs `steps` time steps on `path`, returning the accumulated statistics.
pub fn run(model: &mut Model, steps: usize, path: KernelPath) -> StepStats {
    let mut total = StepStats::default();
    for _ in 0..steps {
        let s = weft_kernels::step(model, &StepOptions { path, residual: true });
        total.accumulate(&s);
    }
    total
}

/// Largest component-wise distance between two position lists, in m.
pub fn max_diff(a: &[[f32; 3]], b: &[[f32; 3]]) -> f32 {
    a.iter().zip(b).flat_map(|(p, q)| (0..3).map(move |i| (p[i] - q[i]).abs())).fold(0.0, f32::max)
}

/// Bit patterns of every position, velocity and `λ` (of every batched kind) of a model, for exact
/// comparisons. Only real constraints count: padding lanes hold no meaning.
pub fn state_bits(model: &Model) -> Vec<u32> {
    let p = model.particles();
    let mut bits: Vec<u32> = p
        .positions()
        .iter()
        .chain(p.prev_positions())
        .chain(p.velocities())
        .flat_map(|r| r.map(f32::to_bits))
        .collect();
    model.sets().visit(&mut LambdaBits(&mut bits));
    bits
}

/// Appends the bits of every `λ` of each set it visits.
struct LambdaBits<'b>(&'b mut Vec<u32>);

impl SetVisitor<'_> for LambdaBits<'_> {
    fn visit<T: BatchedKind<K, P>, const K: usize, const P: usize>(&mut self, _kind: T, set: &Batches<K, P>) {
        self.0.extend(set.solve_order().map(|(_, lambda)| lambda.to_bits()));
    }
}

/// The model with every coordinate one ulp off (alternately up and down): run by the reference
/// beside the unmoved model, it shows how far one ulp carries (the sensitivity that the
/// `*_matches_reference` tolerances scale).
pub fn nudged(model: &Model) -> Model {
    let mut m = model.clone();
    for (i, r) in m.parts_mut().particles.positions.iter_mut().enumerate() {
        for (k, c) in r.iter_mut().take(3).enumerate() {
            *c = if (i * 3 + k) % 2 == 0 { c.next_up() } else { c.next_down() };
        }
    }
    m
}

/// The gap allowed between the kernels and the reference after `step` steps (1-based), in m: 16
/// times the one-ulp `sensitivity`, with a floor of 1e-5 m on the first step and 2e-5 m added
/// after it (contacts switching on a rounding difference).
pub fn contact_tolerance(step: usize, sensitivity: f32) -> f32 {
    if step == 1 { (16.0 * sensitivity).max(1e-5) } else { 2e-5 + 16.0 * sensitivity }
}

/// [`state_bits`] after `steps` steps of a fresh `build()` on `path` and `threads` threads.
pub fn bits_after(build: impl Fn() -> Model, steps: usize, path: KernelPath, threads: usize) -> Vec<u32> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    let mut model = build();
    pool.install(|| run(&mut model, steps, path));
    state_bits(&model)
}

/// Kinetic energy ½·Σ m·|v|² of the free particles, in J.
pub fn kinetic_energy(model: &Model) -> f64 {
    let p = model.particles();
    p.velocities()
        .iter()
        .zip(p.inv_mass())
        .filter(|(_, w)| **w > 0.0)
        .map(|(v, w)| 0.5 / *w as f64 * (0..3).map(|k| v[k] as f64 * v[k] as f64).sum::<f64>())
        .sum()
}
