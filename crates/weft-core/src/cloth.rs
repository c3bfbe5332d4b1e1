//! A cloth as a scene describes it ([`ClothDesc`], its masses and distance constraint lists), and
//! what each constraint kind's builder gets to see of it while it is added
//! (`ClothContext`). The kind modules and the [`builder`](crate::builder) both depend on this
//! module; it depends on neither.

use crate::aero::AeroDesc;
use crate::error::{BuildError, ClothRef, Location, Rule};
use crate::kinds::KindDescs;
use crate::kinds::distance::{DistanceConstraint, DistanceKind};
use crate::topology::MeshTopology;
use crate::units::Elasticity;
use crate::volume::VolumeDesc;

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
    /// one `[[u, v]; 3]` per triangle, in the order of its corners (also what sorts a mesh's
    /// edges into warp and weft).
    pub uvs: Vec<[[f32; 2]; 3]>,
    /// The faces as given (a mesh's quads and larger polygons, a grid's cells), with their UVs,
    /// written to the mesh caches; the simulation uses [`ClothDesc::triangles`]. Empty: the
    /// triangles (with [`ClothDesc::uvs`]) are the faces.
    pub polygons: crate::polygons::Polygons,
    /// Distance constraint lists.
    pub edge_sets: Vec<EdgeSet>,
    /// Pinned particles (inverse mass 0). Repeats are allowed.
    pub pins: Vec<u32>,
    /// The batched constraint kinds beyond its edge sets, one field per kind of the registry
    /// ([`crate::kinds`]): bending between the triangles of each interior edge (needs
    /// triangles), tethers from every free particle to its nearest pin (needs pins and edges).
    pub kinds: KindDescs,
    /// A volume (pressure) constraint (needs a closed, consistently oriented surface).
    pub volume: Option<VolumeDesc>,
    /// Drag and lift of the triangles in the wind (needs triangles).
    pub aero: Option<AeroDesc>,
    /// What to do with an edge shared by more than two triangles.
    pub non_manifold: NonManifold,
    /// Self-collision with a thickness and friction (see [`crate::self_collision`]); `None`: off.
    pub self_collision: Option<crate::self_collision::SelfCollisionDesc>,
    /// Which self-collision [`ClothDesc::self_collision`] asks for.
    pub self_collision_mode: crate::self_collision::SelfCollisionMode,
    /// What the pins follow (see [`crate::follow`]); `None`: they stay where they are.
    pub follow: Option<crate::follow::FollowDesc>,
    /// A finer mesh written to the caches in place of the particles, bound to the cloth's
    /// triangles at rest (see [`crate::binding`]); `None`: the caches hold the particles.
    pub render_mesh: Option<crate::binding::RenderMeshDesc>,
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
#[derive(Debug, Clone, Copy)]
pub struct ClothContext<'a> {
    /// The cloth.
    pub desc: &'a ClothDesc,
    /// Its position in the scene.
    pub ordinal: usize,
    /// Global index of its particle 0.
    pub offset: u32,
    /// Which of its particles are pinned.
    pub pinned: &'a [bool],
    /// The model's time step.
    pub time_step: crate::settings::TimeStep,
    /// Topology of its triangles (empty when it has none).
    pub topology: &'a MeshTopology,
    /// Its stretch and shear constraints, as the builder checked them, local indices.
    pub distance: &'a [DistanceConstraint],
}

impl ClothContext<'_> {
    /// An error at `field[index]` of this cloth.
    pub fn error(&self, field: &'static str, index: Option<usize>, rule: Rule) -> BuildError {
        ClothErrors { ordinal: self.ordinal, name: &self.desc.name }.at(field, index, rule)
    }
}

/// Builds the errors of one cloth: its position in the scene and its name.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ClothErrors<'a> {
    /// The cloth's position in the scene.
    pub(crate) ordinal: usize,
    /// The cloth's name.
    pub(crate) name: &'a str,
}

impl ClothErrors<'_> {
    /// An error at `field[index]` of the cloth.
    pub(crate) fn at(&self, field: &'static str, index: Option<usize>, rule: Rule) -> BuildError {
        BuildError::new(
            Location {
                cloth: Some(ClothRef { ordinal: self.ordinal, name: self.name.to_string() }),
                field,
                index,
            },
            rule,
        )
    }
}
