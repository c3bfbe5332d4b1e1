//! [`ModelBuilder`]: validates cloths against every rule of the bad-input policy and builds a
//! [`Model`].
//!
//! ```
//! use weft_core::builder::{ClothDesc, EdgeSet, MassSpec, ModelBuilder};
//! use weft_core::limits::Limits;
//! use weft_core::settings::SimSettings;
//! use weft_core::units::{Compliance, Elasticity};
//!
//! // The seed's worked example: one end pinned, 1 kg at 2 m, rest length 1 m.
//! let settings = SimSettings { fps: 10.0, substeps: 1, iterations: 1, gravity: [0.0; 3], ..Default::default() };
//! let mut builder = ModelBuilder::new(settings, Limits::default()).unwrap();
//! builder.add_cloth(&ClothDesc {
//!     name: "seed".into(),
//!     positions: vec![[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]],
//!     mass: MassSpec::ParticleMass(1.0),
//!     edge_sets: vec![EdgeSet {
//!         edges: vec![[0, 1]],
//!         rest_lengths: Some(vec![1.0]),
//!         elasticity: Elasticity::Compliance(Compliance::new(0.01).unwrap()),
//!         ..EdgeSet::stretch()
//!     }],
//!     pins: vec![0],
//!     ..ClothDesc::default()
//! }).unwrap();
//! let model = builder.build().unwrap();
//! assert_eq!(model.report().stretch, 1);
//! assert_eq!(model.particles().inv_mass(), &[0.0, 1.0]);
//! ```

use std::collections::HashMap;

use crate::aero::{AeroDesc, AeroModel};
use crate::batches::Packed;
use crate::bending::{BendingBatches, BendingDesc};
use crate::collider::{Collider, ColliderDesc};
use crate::distance::{DistanceBatches, DistanceConstraint, DistanceKind, MAX_LENGTH, MIN_LENGTH};
use crate::error::{BuildError, ClothRef, Location, Rule, widen};
use crate::follow::{FollowDesc, Followers, Leader};
use crate::limits::{Limits, RAISE_HINT};
use crate::mesh_collider::{MeshCollider, MeshColliderDesc};
use crate::model::{BuildReport, ClothInfo, Model, SetReport};
use crate::particles::Particles;
use crate::settings::SimSettings;
use crate::tether::{TetherBatches, TetherDesc};
use crate::topology::MeshTopology;
use crate::topology::{distance, triangle_area};
use crate::units::Elasticity;
use crate::volume::{VolumeConstraint, VolumeDesc};

/// How a cloth's particles get their mass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MassSpec {
    /// The same mass for every particle, in kg (`> 0`).
    ParticleMass(f32),
    /// Areal density in kg/m² (`> 0`): each triangle's mass is split equally among its corners.
    Density(f32),
}

impl Default for MassSpec {
    /// 1 kg per particle.
    fn default() -> Self {
        MassSpec::ParticleMass(1.0)
    }
}

/// A list of distance constraints of one kind sharing one material.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgeSet {
    /// Stretch or shear.
    pub kind: DistanceKind,
    /// The field naming this list in the scene (for error messages): `"edges"`, `"shear_edges"`.
    pub field: &'static str,
    /// The field naming the material (for error messages): `"stretch_compliance"`.
    pub elasticity_field: &'static str,
    /// The field naming the rest lengths (for error messages): `"rest_lengths"`.
    pub rest_field: &'static str,
    /// The field naming the damping (for error messages): `"stretch_damping"`.
    pub damping_field: &'static str,
    /// Particle pairs, indices local to the cloth.
    pub edges: Vec<[u32; 2]>,
    /// Rest lengths in m, one per edge; `None` takes the distance in the initial positions.
    pub rest_lengths: Option<Vec<f32>>,
    /// Compliance (m/N) or stiffness (N/m).
    pub elasticity: Elasticity,
    /// XPBD damping `β` in N·s/m (`≥ 0`).
    pub damping: f32,
}

impl EdgeSet {
    /// An empty, rigid, undamped stretch set named `edges` / `stretch_compliance`.
    pub fn stretch() -> Self {
        EdgeSet {
            kind: DistanceKind::Stretch,
            field: "edges",
            elasticity_field: "stretch_compliance",
            rest_field: "rest_lengths",
            damping_field: "stretch_damping",
            edges: Vec::new(),
            rest_lengths: None,
            elasticity: Elasticity::RIGID,
            damping: 0.0,
        }
    }

    /// An empty, rigid, undamped shear set named `shear_edges` / `shear_compliance`.
    pub fn shear() -> Self {
        EdgeSet {
            kind: DistanceKind::Shear,
            field: "shear_edges",
            elasticity_field: "shear_compliance",
            rest_field: "shear_rest_lengths",
            damping_field: "shear_damping",
            ..EdgeSet::stretch()
        }
    }
}

/// One cloth as a scene describes it; indices are local to the cloth.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ClothDesc {
    /// Name (cache files are named after it): letters, digits, `-`, `_`, `.`.
    pub name: String,
    /// Initial (and rest) positions in m.
    pub positions: Vec<[f32; 3]>,
    /// Initial velocities in m/s, one per particle; `None` = at rest.
    pub velocities: Option<Vec<[f32; 3]>>,
    /// Mass of the particles.
    pub mass: MassSpec,
    /// Triangles (for density lumping and mesh output).
    pub triangles: Vec<[u32; 3]>,
    /// Texture coordinates of each triangle's corners, carried to mesh caches: empty (none), or
    /// one `[[u, v]; 3]` per triangle, in the order of its corners.
    pub uvs: Vec<[[f32; 2]; 3]>,
    /// Distance constraint lists.
    pub edge_sets: Vec<EdgeSet>,
    /// Pinned particles (inverse mass 0). Repeats are allowed.
    pub pins: Vec<u32>,
    /// Bending between the triangles of each interior edge (needs triangles).
    pub bending: Option<BendingDesc>,
    /// Tethers from every free particle to its nearest pin (needs pins and edges).
    pub tethers: Option<TetherDesc>,
    /// A volume (pressure) constraint (needs a closed, consistently oriented surface).
    pub volume: Option<VolumeDesc>,
    /// Drag and lift of the triangles in the wind (needs triangles).
    pub aero: Option<AeroDesc>,
    /// What to do with an edge shared by more than two triangles.
    pub non_manifold: NonManifold,
    /// Self-collision with a thickness and friction (see [`crate::self_collision`]); `None`: off.
    pub self_collision: Option<crate::self_collision::SelfCollisionDesc>,
    /// What the pins follow (see [`crate::follow`]); `None`: they stay where they are.
    pub follow: Option<crate::follow::FollowDesc>,
}

/// What the builder does with a non-manifold edge (shared by more than two triangles).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NonManifold {
    /// Refuse the mesh, naming the edge and its triangles.
    #[default]
    Error,
    /// Accept it, and leave such edges out of bending and shear.
    Skip,
}

/// What a constraint kind's builder gets to see of a cloth being added. Indices in `desc` are
/// local to the cloth; the kinds return global ones (`offset +` local).
#[allow(dead_code)] // fields read by the constraint kinds as they are written (issue 3)
pub(crate) struct ClothContext<'a> {
    /// The cloth.
    pub(crate) desc: &'a ClothDesc,
    /// Its position in the scene.
    pub(crate) ordinal: usize,
    /// Global index of its particle 0.
    pub(crate) offset: u32,
    /// Which of its particles are pinned.
    pub(crate) pinned: &'a [bool],
    /// Inverse masses of its particles in 1/kg.
    pub(crate) inv_mass: &'a [f32],
    /// The model's time step.
    pub(crate) time_step: crate::settings::TimeStep,
    /// Topology of its triangles (empty when it has none).
    pub(crate) topology: &'a MeshTopology,
    /// Its stretch and shear constraints, local indices.
    pub(crate) distance: &'a [DistanceConstraint],
}

#[allow(dead_code)]
impl ClothContext<'_> {
    /// An error at `field[index]` of this cloth.
    pub(crate) fn error(&self, field: &'static str, index: Option<usize>, rule: Rule) -> BuildError {
        BuildError::new(
            Location {
                cloth: Some(ClothRef { ordinal: self.ordinal, name: self.desc.name.clone() }),
                field,
                index,
            },
            rule,
        )
    }
}

/// A cloth whose pins follow something, until [`ModelBuilder::build`] resolves it.
#[derive(Debug, Clone)]
struct Follow {
    /// The cloth's position in the scene.
    ordinal: usize,
    /// The cloth's name.
    name: String,
    /// Its pins: global particle index, rest position in m.
    pins: Vec<(u32, [f32; 3])>,
    /// What they follow.
    what: FollowDesc,
}

/// Builds a [`Model`] from cloths, checking every rule on the way in.
#[derive(Debug, Clone)]
pub struct ModelBuilder {
    settings: SimSettings,
    limits: Limits,
    positions: Vec<[f32; 3]>,
    velocities: Vec<[f32; 3]>,
    inv_mass: Vec<f32>,
    constraints: Vec<DistanceConstraint>,
    bending: Vec<Packed<4, 3>>,
    tethers: Vec<Packed<2, 2>>,
    volumes: Vec<VolumeConstraint>,
    aero: Vec<crate::aero::AeroTriangle>,
    cloths: Vec<ClothInfo>,
    colliders: Vec<Collider>,
    meshes: Vec<MeshCollider>,
    /// Cloths whose pins follow something.
    follows: Vec<Follow>,
    self_collision: crate::self_collision::SelfCollision,
    dropped_pinned: usize,
}

impl ModelBuilder {
    /// A builder for a scene with these settings (validated here) and resource limits.
    pub fn new(settings: SimSettings, limits: Limits) -> Result<Self, BuildError> {
        settings.validate()?;
        let steps = settings.frames as u64 * settings.substeps as u64;
        if steps > limits.max_steps {
            return Err(BuildError::new(
                Location::setting("frames"),
                Rule::TooLarge {
                    what: "frames × substeps time steps",
                    requested: steps,
                    limit: limits.max_steps,
                    hint: RAISE_HINT,
                },
            ));
        }
        Ok(ModelBuilder {
            settings,
            limits,
            positions: Vec::new(),
            velocities: Vec::new(),
            inv_mass: Vec::new(),
            constraints: Vec::new(),
            bending: Vec::new(),
            tethers: Vec::new(),
            volumes: Vec::new(),
            aero: Vec::new(),
            cloths: Vec::new(),
            colliders: Vec::new(),
            meshes: Vec::new(),
            follows: Vec::new(),
            self_collision: Default::default(),
            dropped_pinned: 0,
        })
    }

    /// The settings the model will have.
    pub fn settings(&self) -> &SimSettings {
        &self.settings
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// A location in cloth number `ordinal` named `name`.
    fn at(ordinal: usize, name: &str, field: &'static str, index: Option<usize>) -> Location {
        Location { cloth: Some(ClothRef { ordinal, name: name.to_string() }), field, index }
    }

    /// Validates `desc` and adds it to the model. On error nothing is added.
    pub fn add_cloth(&mut self, desc: &ClothDesc) -> Result<&mut Self, BuildError> {
        let ordinal = self.cloths.len();
        let name = desc.name.clone();
        let err = |field, index, rule| BuildError::new(Self::at(ordinal, &name, field, index), rule);

        // Name.
        let name_ok = !name.is_empty()
            && !name.starts_with('.')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok {
            return Err(err("name", None, Rule::BadName { name: name.clone() }));
        }
        if let Some(first) = self.cloths.iter().position(|c| c.name == name) {
            return Err(err("name", None, Rule::DuplicateName { name: name.clone(), first }));
        }

        // Particles.
        let n = desc.positions.len();
        if n == 0 {
            return Err(err("positions", None, Rule::NoParticles));
        }
        let total = self.positions.len() as u64 + n as u64;
        let particle_limit = self.limits.max_particles.min(u32::MAX as u64);
        if total > particle_limit {
            return Err(err(
                "positions",
                None,
                Rule::TooLarge {
                    what: "particles in the scene",
                    requested: total,
                    limit: particle_limit,
                    hint: RAISE_HINT,
                },
            ));
        }
        let not_finite = |v: &[f32; 3]| v.iter().find(|c| !c.is_finite()).map(|c| c.to_string());
        for (i, p) in desc.positions.iter().enumerate() {
            if let Some(value) = not_finite(p) {
                return Err(err("positions", Some(i), Rule::NotFinite { value }));
            }
        }
        let velocities = match &desc.velocities {
            Some(v) if v.len() != n => {
                return Err(err(
                    "velocities",
                    None,
                    Rule::LengthMismatch { len: v.len(), expected: n, partner: "positions" },
                ));
            }
            Some(v) => {
                for (i, p) in v.iter().enumerate() {
                    if let Some(value) = not_finite(p) {
                        return Err(err("velocities", Some(i), Rule::NotFinite { value }));
                    }
                }
                v.clone()
            }
            None => vec![[0.0; 3]; n],
        };
        let check_index = |field, i, p: u32| {
            if (p as usize) < n {
                Ok(())
            } else {
                Err(err(field, Some(i), Rule::IndexOutOfRange { index: p as u64, len: n }))
            }
        };
        for (i, t) in desc.triangles.iter().enumerate() {
            for &p in t {
                check_index("triangles", i, p)?;
            }
            let [a, b, c] = *t;
            if a == b || b == c || a == c {
                return Err(err("triangles", Some(i), Rule::DegenerateTriangle { a, b, c }));
            }
        }
        if !desc.uvs.is_empty() && desc.uvs.len() != desc.triangles.len() {
            let rule = Rule::LengthMismatch {
                len: desc.uvs.len(),
                expected: desc.triangles.len(),
                partner: "triangles",
            };
            return Err(err("uvs", None, rule));
        }
        if let Some((i, v)) = desc
            .uvs
            .iter()
            .enumerate()
            .find_map(|(i, t)| t.iter().flatten().find(|v| !v.is_finite()).map(|v| (i, v.to_string())))
        {
            return Err(err("uvs", Some(i), Rule::NotFinite { value: v }));
        }
        let topology = MeshTopology::new(&desc.triangles);
        if let (NonManifold::Error, Some(e)) = (desc.non_manifold, topology.non_manifold.first()) {
            let list: Vec<String> = e.triangles.iter().map(|t| t.to_string()).collect();
            return Err(err(
                "triangles",
                Some(e.triangles[0] as usize),
                Rule::NonManifoldEdge {
                    a: e.edge[0],
                    b: e.edge[1],
                    count: e.triangles.len(),
                    triangles: list.join(", "),
                },
            ));
        }
        let mut pinned = vec![false; n];
        for (i, &p) in desc.pins.iter().enumerate() {
            check_index("pins", i, p)?;
            pinned[p as usize] = true;
        }
        if desc.follow.is_some() && desc.pins.is_empty() {
            return Err(err(
                "follow",
                None,
                Rule::MissingPrerequisite { feature: "follow (pins that follow animation)", needs: "pins" },
            ));
        }

        // Masses.
        let mut inv_mass = vec![0.0f32; n];
        match desc.mass {
            MassSpec::ParticleMass(m) => {
                let field = "particle_mass";
                if !m.is_finite() {
                    return Err(err(field, None, Rule::NotFinite { value: m.to_string() }));
                }
                if m <= 0.0 {
                    return Err(err(field, None, Rule::NotPositive { value: widen(m) }));
                }
                inv_mass.fill(1.0 / m);
            }
            MassSpec::Density(rho) => {
                let field = "density";
                if !rho.is_finite() {
                    return Err(err(field, None, Rule::NotFinite { value: rho.to_string() }));
                }
                if rho <= 0.0 {
                    return Err(err(field, None, Rule::NotPositive { value: widen(rho) }));
                }
                if desc.triangles.is_empty() {
                    return Err(err(field, None, Rule::DensityWithoutTriangles));
                }
                let mut mass = vec![0.0f64; n];
                let area: Vec<f64> = desc
                    .triangles
                    .iter()
                    .map(|t| {
                        let [a, b, c] = t.map(|p| desc.positions[p as usize]);
                        triangle_area(a, b, c)
                    })
                    .collect();
                for (t, &area) in desc.triangles.iter().zip(&area) {
                    let share = area * rho as f64 / 3.0;
                    for &p in t {
                        mass[p as usize] += share;
                    }
                }
                for (i, &m) in mass.iter().enumerate() {
                    let w = (1.0 / m) as f32;
                    let has_mass = m > 0.0 && w.is_finite() && w > 0.0;
                    if !pinned[i] && !has_mass {
                        // In a triangle, but only zero-area ones: name the first such triangle.
                        let zero = desc.triangles.iter().enumerate().find(|(_, t)| t.contains(&(i as u32)));
                        return Err(match zero {
                            Some((k, &[a, b, c])) => err(
                                "triangles",
                                Some(k),
                                Rule::ZeroAreaTriangle {
                                    a,
                                    b,
                                    c,
                                    area: area[k] as f32,
                                    used_for: "lumping the density into masses",
                                },
                            ),
                            None => err(field, None, Rule::MasslessParticle { particle: i as u32 }),
                        });
                    }
                    inv_mass[i] = w;
                }
            }
        }
        for (w, &p) in inv_mass.iter_mut().zip(&pinned) {
            if p {
                *w = 0.0;
            }
        }

        // Distance constraints.
        let offset = self.positions.len() as u32;
        let time_step = self.settings.time_step();
        let mut seen: HashMap<[u32; 2], (&'static str, usize)> = HashMap::new();
        let mut constraints = Vec::new();
        let mut dropped = 0;
        for set in &desc.edge_sets {
            if let Some(r) = &set.rest_lengths
                && r.len() != set.edges.len()
            {
                return Err(err(
                    set.rest_field,
                    None,
                    Rule::LengthMismatch { len: r.len(), expected: set.edges.len(), partner: set.field },
                ));
            }
            let compliance = set.elasticity.compliance();
            let alpha = compliance.get();
            if !(alpha * time_step.inv_h2).is_finite() {
                return Err(err(
                    set.elasticity_field,
                    None,
                    Rule::TooLargeForTimeStep { value: alpha, h: time_step.h64, what: "α/h²" },
                ));
            }
            let damping_field = set.damping_field;
            if !set.damping.is_finite() {
                return Err(err(damping_field, None, Rule::NotFinite { value: set.damping.to_string() }));
            }
            if set.damping < 0.0 {
                return Err(err(damping_field, None, Rule::Negative { value: widen(set.damping) }));
            }
            if !(alpha * set.damping * time_step.inv_h).is_finite() {
                return Err(err(
                    damping_field,
                    None,
                    Rule::TooLargeForTimeStep { value: set.damping, h: time_step.h64, what: "α·β/h" },
                ));
            }
            for (i, &[a, b]) in set.edges.iter().enumerate() {
                check_index(set.field, i, a)?;
                check_index(set.field, i, b)?;
                if a == b {
                    return Err(err(set.field, Some(i), Rule::SelfEdge { particle: a }));
                }
                if let Some(&(field, first)) = seen.get(&[a.min(b), a.max(b)]) {
                    return Err(err(set.field, Some(i), Rule::DuplicateEdge { a, b, field, first }));
                }
                seen.insert([a.min(b), a.max(b)], (set.field, i));
                let initial = distance(desc.positions[a as usize], desc.positions[b as usize]);
                if initial.partial_cmp(&MIN_LENGTH) != Some(std::cmp::Ordering::Greater) {
                    return Err(err(
                        set.field,
                        Some(i),
                        Rule::CoincidentParticles { a, b, distance: initial, min: MIN_LENGTH },
                    ));
                }
                if initial > MAX_LENGTH {
                    return Err(err(
                        set.field,
                        Some(i),
                        Rule::TooFarApart { a, b, distance: initial, max: MAX_LENGTH },
                    ));
                }
                let rest = match &set.rest_lengths {
                    Some(r) => {
                        let r = r[i];
                        if !r.is_finite() {
                            return Err(err(
                                set.rest_field,
                                Some(i),
                                Rule::NotFinite { value: r.to_string() },
                            ));
                        }
                        if r <= 0.0 {
                            return Err(err(set.rest_field, Some(i), Rule::NotPositive { value: widen(r) }));
                        }
                        r
                    }
                    None => initial,
                };
                if pinned[a as usize] && pinned[b as usize] {
                    dropped += 1;
                    continue;
                }
                constraints.push(DistanceConstraint {
                    particles: [a + offset, b + offset],
                    rest_length: rest,
                    compliance,
                    damping: set.damping,
                    kind: set.kind,
                });
            }
        }
        let total_constraints = self.constraints.len() as u64 + constraints.len() as u64;
        if total_constraints > self.limits.max_constraints {
            return Err(err(
                "edges",
                None,
                Rule::TooLarge {
                    what: "constraints in the scene",
                    requested: total_constraints,
                    limit: self.limits.max_constraints,
                    hint: RAISE_HINT,
                },
            ));
        }

        // The other constraint kinds, each from its own module.
        let local: Vec<DistanceConstraint> = constraints
            .iter()
            .map(|c| DistanceConstraint { particles: c.particles.map(|p| p - offset), ..*c })
            .collect();
        let ctx = ClothContext {
            desc,
            ordinal,
            offset,
            pinned: &pinned,
            inv_mass: &inv_mass,
            time_step,
            topology: &topology,
            distance: &local,
        };
        let bending = crate::bending::build(&ctx)?;
        let tethers = crate::tether::build(&ctx)?;
        let volume = crate::volume::build(&ctx)?;
        let aero = crate::aero::build(&ctx)?;
        let total = self.constraints.len() as u64
            + constraints.len() as u64
            + (self.bending.len() + bending.len() + self.tethers.len() + tethers.len()) as u64;
        if total > self.limits.max_constraints {
            return Err(err(
                "edges",
                None,
                Rule::TooLarge {
                    what: "constraints in the scene",
                    requested: total,
                    limit: self.limits.max_constraints,
                    hint: RAISE_HINT,
                },
            ));
        }

        let self_collision = self.self_collision.prepare(
            &desc.positions,
            desc.self_collision.as_ref(),
            self.limits.max_constraints,
            |field, rule| err(field, None, rule),
        )?;

        // Everything holds: commit.
        self.self_collision.commit(self_collision);
        self.bending.extend(bending);
        self.tethers.extend(tethers);
        self.volumes.extend(volume);
        self.aero.extend(aero);
        let start = self.positions.len();
        self.positions.extend_from_slice(&desc.positions);
        self.velocities.extend_from_slice(&velocities);
        self.inv_mass.extend_from_slice(&inv_mass);
        self.constraints.extend(constraints);
        self.dropped_pinned += dropped;
        if let Some(follow) = &desc.follow {
            let pins: Vec<(u32, [f32; 3])> =
                (0..n).filter(|&i| pinned[i]).map(|i| ((start + i) as u32, desc.positions[i])).collect();
            self.follows.push(Follow { ordinal, name: desc.name.clone(), pins, what: follow.clone() });
        }
        self.cloths.push(ClothInfo {
            name,
            particles: start..start + n,
            triangles: desc.triangles.clone(),
            uvs: desc.uvs.clone(),
        });
        Ok(self)
    }

    /// Validates a collider and adds it to the model. An error names the collider by its position
    /// (`collider[N]`) and the rule; a scene reader checks [`ColliderDesc::validate`] first to name
    /// the key.
    pub fn add_collider(&mut self, desc: &ColliderDesc) -> Result<&mut Self, BuildError> {
        let collider =
            Collider::new(desc).map_err(|e| crate::collider::build_error(self.colliders.len(), e))?;
        self.colliders.push(collider);
        Ok(self)
    }

    /// Validates a triangle-mesh collider and adds it to the model (after the analytic ones in
    /// contact order). An error names it by its position (`mesh_collider[N]`) and the rule.
    pub fn add_mesh_collider(&mut self, desc: &MeshColliderDesc) -> Result<&mut Self, BuildError> {
        let mesh = MeshCollider::new(desc).map_err(|e| {
            BuildError::new(
                Location { cloth: None, field: "mesh_collider", index: Some(self.meshes.len()) },
                e.rule,
            )
        })?;
        self.meshes.push(mesh);
        Ok(self)
    }

    /// The following pins of every cloth whose `follow` is set, resolved against the colliders.
    fn followers(&self) -> Result<Followers, BuildError> {
        let mut followers = Followers::default();
        for Follow { ordinal, name, pins, what: follow } in &self.follows {
            let error = |rule| {
                BuildError::new(
                    Location {
                        cloth: Some(ClothRef { ordinal: *ordinal, name: name.clone() }),
                        field: "follow",
                        index: None,
                    },
                    rule,
                )
            };
            let keys;
            let leader = match follow {
                FollowDesc::Keys(k) => {
                    crate::collider::validate_keys(k).map_err(|e| error(e.rule))?;
                    keys = crate::collider::normalised_keys(k);
                    Leader::Keys(&keys)
                }
                FollowDesc::Collider(target) => {
                    if let Some(c) = self.colliders.iter().find(|c| &c.name == target) {
                        Leader::Keys(&c.keys)
                    } else if let Some(i) = self.meshes.iter().position(|m| &m.name == target) {
                        Leader::Mesh(i, &self.meshes[i])
                    } else {
                        return Err(error(Rule::UnknownCollider { name: target.clone() }));
                    }
                }
            };
            if !followers.add(pins, leader) {
                return Err(error(Rule::MissingPrerequisite {
                    feature: "following a mesh",
                    needs: "a triangle of non-zero area",
                }));
            }
        }
        Ok(followers)
    }

    /// Colours the constraints and builds the model. Fails if no cloth was added, or if a cloth's
    /// pins follow a collider that is not there.
    pub fn build(self) -> Result<Model, BuildError> {
        if self.cloths.is_empty() {
            return Err(BuildError::new(Location::setting("cloth"), Rule::NoCloth));
        }
        let followers = self.followers()?;
        let free: Vec<bool> = self.inv_mass.iter().map(|&w| w > 0.0).collect();
        let particles = Particles::new(&self.positions, &self.velocities, &self.inv_mass);
        let packed: Vec<_> = self.constraints.iter().map(DistanceConstraint::packed).collect();
        let distance = DistanceBatches::new(&packed, &free);
        let bending = BendingBatches::new(&self.bending, &free);
        let tethers = TetherBatches::new(&self.tethers, &free);
        let aero = AeroModel::new(&self.aero, &self.settings, particles.len());
        let count = |k| self.constraints.iter().filter(|c| c.kind == k).count();
        let report = BuildReport {
            particles: particles.len(),
            pinned: free.iter().filter(|&&f| !f).count(),
            stretch: count(DistanceKind::Stretch),
            shear: count(DistanceKind::Shear),
            dropped_pinned: self.dropped_pinned,
            distance: SetReport::of(&distance),
            bending: SetReport::of(&bending),
            tethers: SetReport::of(&tethers),
            volumes: self.volumes.len(),
            aero_triangles: aero.triangles.len(),
            colliders: self.colliders.len(),
            mesh_colliders: self.meshes.len(),
            following_pins: followers.len(),
        };
        Ok(Model {
            settings: self.settings,
            particles,
            distance,
            bending,
            tethers,
            volumes: self.volumes,
            aero,
            colliders: self.colliders,
            meshes: self.meshes,
            followers,
            self_collision: self.self_collision,
            cloths: self.cloths,
            report,
            time: 0.0,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Compliance, Stiffness};

    fn settings() -> SimSettings {
        SimSettings { fps: 10.0, substeps: 1, iterations: 1, gravity: [0.0; 3], ..Default::default() }
    }

    fn two() -> ClothDesc {
        ClothDesc {
            name: "c".into(),
            positions: vec![[0.0; 3], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]],
            edge_sets: vec![EdgeSet { edges: vec![[0, 1]], ..EdgeSet::stretch() }],
            ..ClothDesc::default()
        }
    }

    fn fails(desc: ClothDesc) -> BuildError {
        let mut b = ModelBuilder::new(settings(), Limits::default()).unwrap();
        b.add_cloth(&desc).unwrap_err()
    }

    #[test]
    fn each_rule_names_its_place() {
        let e = fails(ClothDesc { positions: vec![], ..two() });
        assert_eq!(e.rule, Rule::NoParticles);
        let e = fails(ClothDesc { positions: vec![[0.0; 3], [f32::NAN, 0.0, 0.0]], ..two() });
        assert_eq!((e.location.field, e.location.index), ("positions", Some(1)));
        let e = fails(ClothDesc { pins: vec![7], ..two() });
        assert_eq!(e.rule, Rule::IndexOutOfRange { index: 7, len: 3 });
        let e = fails(ClothDesc { mass: MassSpec::ParticleMass(-1.0), ..two() });
        assert_eq!(e.location.field, "particle_mass");
        let e = fails(ClothDesc { mass: MassSpec::Density(1.0), ..two() });
        assert_eq!(e.rule, Rule::DensityWithoutTriangles);
        let mut d = two();
        d.edge_sets[0].edges = vec![[0, 1], [2, 2]];
        assert_eq!(fails(d).rule, Rule::SelfEdge { particle: 2 });
        let mut d = two();
        d.edge_sets[0].edges = vec![[0, 1], [1, 0]];
        assert!(matches!(fails(d).rule, Rule::DuplicateEdge { first: 0, .. }));
        let mut d = two();
        d.edge_sets[0].rest_lengths = Some(vec![1.0, 2.0]);
        assert!(matches!(fails(d).rule, Rule::LengthMismatch { len: 2, expected: 1, .. }));
        let mut d = two();
        d.edge_sets[0].rest_lengths = Some(vec![0.0]);
        assert!(matches!(fails(d).rule, Rule::NotPositive { .. }));
        let mut d = two();
        d.positions[1] = [0.0; 3];
        assert!(matches!(fails(d).rule, Rule::CoincidentParticles { a: 0, b: 1, .. }));
        let mut d = two();
        d.edge_sets[0].damping = -1.0;
        assert_eq!(fails(d).location.field, "stretch_damping");
        let mut d = two();
        d.edge_sets[0].elasticity = Elasticity::Compliance(Compliance::new(f32::MAX).unwrap());
        assert!(matches!(fails(d).rule, Rule::TooLargeForTimeStep { .. }));
        assert!(matches!(fails(ClothDesc { name: "a/b".into(), ..two() }).rule, Rule::BadName { .. }));
    }

    #[test]
    fn zero_area_triangles_are_named_when_they_leave_a_particle_without_mass() {
        let mut d = ClothDesc { mass: MassSpec::Density(1.0), triangles: vec![[0, 1, 2]], ..two() };
        d.positions[2] = [2.0, 0.0, 0.0];
        let e = fails(d);
        assert_eq!((e.location.field, e.location.index), ("triangles", Some(0)));
        assert!(matches!(e.rule, Rule::ZeroAreaTriangle { a: 0, b: 1, c: 2, .. }), "{e}");
        let e = fails(ClothDesc { mass: MassSpec::Density(-0.2), triangles: vec![[0, 1, 2]], ..two() });
        assert_eq!(e.to_string(), "cloth 'c': density: -0.2 must be greater than zero");
    }

    #[test]
    fn density_lumps_triangle_mass() {
        let mut b = ModelBuilder::new(settings(), Limits::default()).unwrap();
        b.add_cloth(&ClothDesc { mass: MassSpec::Density(3.0), triangles: vec![[0, 1, 2]], ..two() })
            .unwrap();
        let m = b.build().unwrap();
        // Area 0.5 m² × 3 kg/m² = 1.5 kg, 0.5 kg per corner.
        assert_eq!(m.particles().inv_mass(), &[2.0, 2.0, 2.0]);
    }

    #[test]
    fn pinned_pairs_are_dropped_and_counted() {
        let mut b = ModelBuilder::new(settings(), Limits::default()).unwrap();
        let mut d = two();
        d.edge_sets[0].edges = vec![[0, 1], [1, 2]];
        d.edge_sets[0].elasticity = Elasticity::Stiffness(Stiffness::new(50.0).unwrap());
        d.pins = vec![0, 1, 1];
        b.add_cloth(&d).unwrap();
        let m = b.build().unwrap();
        assert_eq!(m.report().dropped_pinned, 1);
        assert_eq!(m.report().stretch, 1);
        assert_eq!(m.report().pinned, 2);
    }

    #[test]
    fn duplicate_names_and_empty_scenes() {
        let mut b = ModelBuilder::new(settings(), Limits::default()).unwrap();
        b.add_cloth(&two()).unwrap();
        assert!(matches!(b.add_cloth(&two()).unwrap_err().rule, Rule::DuplicateName { first: 0, .. }));
        let empty = ModelBuilder::new(settings(), Limits::default()).unwrap();
        assert_eq!(empty.build().unwrap_err().rule, Rule::NoCloth);
    }

    #[test]
    fn limits_refuse_big_requests() {
        let limits = Limits { max_particles: 2, ..Limits::default() };
        let mut b = ModelBuilder::new(settings(), limits).unwrap();
        assert!(matches!(b.add_cloth(&two()).unwrap_err().rule, Rule::TooLarge { .. }));
        let limits = Limits { max_steps: 5, ..Limits::default() };
        let s = SimSettings { frames: 10, ..settings() };
        assert!(matches!(ModelBuilder::new(s, limits).unwrap_err().rule, Rule::TooLarge { .. }));
    }
}
