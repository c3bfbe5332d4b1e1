//! [`ModelBuilder`]: validates cloths against every rule of the bad-input policy and builds a
//! [`Model`].
//!
//! Adding a cloth runs its checks by concern, each in its own module: the name, then the
//! particles, triangles and pins (`particles`), the masses (`masses`), the distance
//! constraints from the edge lists (`edges`), the other constraint kinds (each from its kind
//! module, given a `ClothContext`), the resource limits and self-collision; only when every
//! check has passed is anything added.
//!
//! ```
//! use weft_core::builder::{ClothDesc, EdgeSet, MassSpec, ModelBuilder};
//! use weft_core::limits::Limits;
//! use weft_core::settings::SimSettings;
//! use weft_core::units::{Compliance, Elasticity};
//!
//! // The worked example (docs/physics.md): one end pinned, 1 kg at 2 m, rest length 1 m.
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

mod edges;
mod masses;
mod particles;

use crate::aero::AeroModel;
use crate::binding::{BindError, Binding, PROXY_SUFFIX, RenderMesh, RenderMeshDesc};
use crate::cloth::{ClothContext, ClothErrors};
pub use crate::cloth::{ClothDesc, EdgeSet, MassSpec, NonManifold};
use crate::collider::{Collider, ColliderDesc};
use crate::colouring;
use crate::error::{BuildError, ClothRef, Location, Rule};
use crate::follow::{FollowDesc, Followers, Leader};
use crate::kinds::PackedSets;
use crate::kinds::distance::{DistanceConstraint, DistanceKind};
use crate::limits::{Limits, RAISE_HINT};
use crate::mesh_collider::{MeshCollider, MeshColliderDesc};
use crate::model::{BuildReport, ClothInfo, Model};
use crate::polygons::Polygons;
use crate::self_collision::SelfCollisionMode;
use crate::settings::SimSettings;
use crate::volume::VolumeConstraint;

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
    /// The batched constraints of the cloths added so far, one list per kind.
    sets: PackedSets,
    volumes: Vec<VolumeConstraint>,
    aero: Vec<crate::aero::AeroTriangle>,
    cloths: Vec<ClothInfo>,
    colliders: Vec<Collider>,
    meshes: Vec<MeshCollider>,
    /// Cloths whose pins follow something.
    follows: Vec<Follow>,
    self_collision: crate::self_collision::SelfCollision,
    surface_collision: crate::surface_collision::SurfaceCollision,
    dropped_pinned: usize,
}

impl ModelBuilder {
    /// A builder for a scene with these settings (validated here) and resource limits.
    pub fn new(settings: SimSettings, limits: Limits) -> Result<Self, BuildError> {
        settings.validate()?;
        // With a strain tolerance, a frame may take up to `max_substeps` steps.
        let steps = settings.frames as u64 * settings.most_substeps() as u64;
        if steps > limits.max_steps {
            return Err(BuildError::new(
                Location::setting("frames"),
                Rule::TooLarge {
                    what: if settings.tolerance.is_some() {
                        "frames × max_substeps time steps"
                    } else {
                        "frames × substeps time steps"
                    },
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
            sets: PackedSets::default(),
            volumes: Vec::new(),
            aero: Vec::new(),
            cloths: Vec::new(),
            colliders: Vec::new(),
            meshes: Vec::new(),
            follows: Vec::new(),
            self_collision: Default::default(),
            surface_collision: Default::default(),
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

    /// Validates `desc` and adds it to the model. On error nothing is added.
    pub fn add_cloth(&mut self, desc: &ClothDesc) -> Result<&mut Self, BuildError> {
        let ordinal = self.cloths.len();
        let e = ClothErrors { ordinal, name: &desc.name };
        self.check_name(desc, e)?;
        let offset = self.positions.len() as u32;
        let time_step = self.settings.time_step();
        // The particle checks (with the topology) and the distance constraints are independent
        // passes over the cloth: both at once on the current rayon pool. The constraints take the
        // pins as given; the checks' errors come first, and once they pass, those pins are valid.
        let (checked, distance) = rayon::join(
            || particles::check(desc, self.positions.len(), &self.limits, e),
            || {
                let pinned = particles::pins_in_range(desc);
                edges::distance_constraints(desc, &pinned, offset, &time_step, e)
            },
        );
        let particles::Particles { velocities, topology, pinned, polygons } = checked?;
        let n = desc.positions.len();
        let inv_mass = masses::inverse_masses(desc, &pinned, e)?;
        let (constraints, dropped) = distance?;
        self.check_constraint_total(self.sets.distance.len() as u64 + constraints.len() as u64, e)?;

        // Every batched kind, from the registry: distance from the checked edge sets (made local
        // in place, so that the cloth's constraints are never held twice), the others from their
        // descriptions.
        let local: Vec<DistanceConstraint> = constraints
            .into_iter()
            .map(|c| DistanceConstraint { particles: c.particles.map(|p| p - offset), ..c })
            .collect();
        let ctx = ClothContext {
            desc,
            ordinal,
            offset,
            pinned: &pinned,
            time_step,
            topology: &topology,
            distance: &local,
        };
        let sets = PackedSets::build(&desc.kinds, &ctx)?;
        let volume = crate::volume::build(&ctx)?;
        let aero = crate::aero::build(&ctx)?;
        self.check_constraint_total(self.sets.len() as u64 + sets.len() as u64, e)?;

        let (particle_sc, surface_sc) = match desc.self_collision_mode {
            SelfCollisionMode::Particles => (desc.self_collision.as_ref(), None),
            SelfCollisionMode::Triangles => (None, desc.self_collision.as_ref()),
        };
        let self_collision = self.self_collision.prepare(
            &desc.positions,
            particle_sc,
            self.limits.max_constraints,
            |field, rule| e.at(field, None, rule),
        )?;
        let surface_collision = self.surface_collision.prepare(
            &desc.positions,
            &desc.triangles,
            &topology.edges,
            surface_sc,
            |field, rule| e.at(field, None, rule),
        )?;

        let render = desc.render_mesh.as_ref().map(|r| bind_render(desc, &polygons, r, e)).transpose()?;

        // What the constraints were built from goes before the commit moves the rest in.
        drop((local, topology));
        // Everything holds: commit.
        self.self_collision.commit(self_collision);
        self.surface_collision.commit(surface_collision);
        self.sets.append(sets);
        self.volumes.extend(volume);
        self.aero.extend(aero);
        let start = self.positions.len();
        self.positions.extend_from_slice(&desc.positions);
        self.velocities.extend_from_slice(&velocities);
        self.inv_mass.extend_from_slice(&inv_mass);
        self.dropped_pinned += dropped;
        if let Some(follow) = &desc.follow {
            let pins: Vec<(u32, [f32; 3])> =
                (0..n).filter(|&i| pinned[i]).map(|i| ((start + i) as u32, desc.positions[i])).collect();
            self.follows.push(Follow { ordinal, name: desc.name.clone(), pins, what: follow.clone() });
        }
        self.cloths.push(ClothInfo {
            name: desc.name.clone(),
            particles: start..start + n,
            triangles: desc.triangles.clone(),
            polygons,
            render,
        });
        Ok(self)
    }

    /// A cloth's name: letters, digits, `-`, `_`, `.`, not starting with `.`, unique in the
    /// scene (cache files are named after it).
    fn check_name(&self, desc: &ClothDesc, e: ClothErrors<'_>) -> Result<(), BuildError> {
        let name = &desc.name;
        let name_ok = !name.is_empty()
            && !name.starts_with('.')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
        if !name_ok {
            return Err(e.at("name", None, Rule::BadName { name: name.clone() }));
        }
        if let Some(first) = self.cloths.iter().position(|c| &c.name == name) {
            return Err(e.at("name", None, Rule::DuplicateName { name: name.clone(), first }));
        }
        let proxy_of = |c: &ClothInfo| {
            c.render.as_ref().is_some_and(|r| r.cache_proxy).then(|| c.name.clone() + PROXY_SUFFIX)
        };
        if let Some(cloth) = self.cloths.iter().position(|c| proxy_of(c).as_ref() == Some(name)) {
            return Err(e.at("name", None, Rule::ProxyName { name: name.clone(), cloth }));
        }
        if desc.render_mesh.as_ref().is_some_and(|r| r.cache_proxy) {
            let proxy = name.clone() + PROXY_SUFFIX;
            if let Some(first) =
                self.cloths.iter().position(|c| c.name == proxy || proxy_of(c) == Some(proxy.clone()))
            {
                return Err(e.at("cache_proxy", None, Rule::DuplicateName { name: proxy, first }));
            }
        }
        Ok(())
    }

    /// `Ok` if a scene of `requested` constraints is within the limits.
    fn check_constraint_total(&self, requested: u64, e: ClothErrors<'_>) -> Result<(), BuildError> {
        if requested > self.limits.max_constraints {
            return Err(e.at(
                "edges",
                None,
                Rule::TooLarge {
                    what: "constraints in the scene",
                    requested,
                    limit: self.limits.max_constraints,
                    hint: RAISE_HINT,
                },
            ));
        }
        Ok(())
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
        let particles = crate::particles::Particles::new(&self.positions, &self.velocities, &self.inv_mass);
        let count = |kind: DistanceKind| self.sets.distance.iter().filter(|c| c.tag == kind as u8).count();
        let (stretch, shear) = (count(DistanceKind::Stretch), count(DistanceKind::Shear));
        let (particle_contacts, surface_contacts) =
            (!self.self_collision.is_empty(), !self.surface_collision.is_empty());
        let shared = colouring::shares_contacts(free.len(), particle_contacts, surface_contacts);
        let sets = self.sets.into_sets(&free, colouring::block_particles(free.len(), shared));
        let aero = AeroModel::new(&self.aero, &self.settings, particles.len());
        let report = BuildReport {
            particles: particles.len(),
            pinned: free.iter().filter(|&&f| !f).count(),
            stretch,
            shear,
            dropped_pinned: self.dropped_pinned,
            sets: sets.reports(),
            volumes: self.volumes.len(),
            aero_triangles: aero.triangles.len(),
            colliders: self.colliders.len(),
            mesh_colliders: self.meshes.len(),
            following_pins: followers.len(),
        };
        Ok(Model {
            settings: self.settings,
            particles,
            sets,
            volumes: self.volumes,
            aero,
            colliders: self.colliders,
            meshes: self.meshes,
            followers,
            self_collision: self.self_collision,
            surface_collision: self.surface_collision,
            cloths: self.cloths,
            report,
            time: 0.0,
        })
    }
}

/// Binds a cloth's render mesh to its triangles at rest, with normals over its faces `polygons`
/// (see [`crate::binding`]).
fn bind_render(
    desc: &ClothDesc,
    polygons: &Polygons,
    render: &RenderMeshDesc,
    e: ClothErrors<'_>,
) -> Result<RenderMesh, BuildError> {
    let points = render.positions.len();
    if render.polygons.points_needed() > points {
        let index = render.polygons.points_needed() as u64 - 1;
        return Err(e.at("render_mesh", None, Rule::IndexOutOfRange { index, len: points }));
    }
    let binding =
        Binding::bind(&desc.positions, &desc.triangles, polygons, &render.positions).map_err(|b| {
            let vertex = match b {
                BindError::NoTriangles => None,
                BindError::NoneNear { vertex, .. }
                | BindError::TooFar { vertex, .. }
                | BindError::NotFinite { vertex } => Some(vertex),
            };
            e.at("render_mesh", vertex, Rule::Binding(b))
        })?;
    Ok(RenderMesh { binding, polygons: render.polygons.clone(), cache_proxy: render.cache_proxy })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Compliance, Elasticity, Stiffness};

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
        // Across sets, the first repeat in order names the first edge it repeats; an edge out of
        // range before any repeat is reported first.
        let mut d = two();
        d.edge_sets[0].edges = vec![[0, 1], [1, 2]];
        d.edge_sets.push(EdgeSet { edges: vec![[0, 2], [2, 1], [1, 0]], ..EdgeSet::shear() });
        let e = fails(d.clone());
        assert_eq!((e.location.field, e.location.index), ("shear_edges", Some(1)));
        assert_eq!(e.rule, Rule::DuplicateEdge { a: 2, b: 1, field: "edges", first: 1 });
        d.edge_sets[1].edges[0] = [0, 9];
        assert_eq!(fails(d).rule, Rule::IndexOutOfRange { index: 9, len: 3 });
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
