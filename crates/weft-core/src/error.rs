//! Typed build errors: where the problem is (cloth, field, index) and which rule it breaks.
//!
//! Every rule of the bad-input policy that the model can check is a [`Rule`]. A [`BuildError`]
//! pairs it with a [`Location`], so that a front end (the scene reader, the command line) can turn
//! `cloth #0, edges[3]` into `scene.toml:14` and still print the same rule text.

use std::fmt;

use crate::units::UnitError;

/// Which cloth of a scene an error belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClothRef {
    /// Position of the cloth in the scene (0-based), for mapping back to its source.
    pub ordinal: usize,
    /// The cloth's name.
    pub name: String,
}

/// Where a build error is: an optional cloth, a field name and an optional index into that field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// The cloth, or `None` for scene-wide settings.
    pub cloth: Option<ClothRef>,
    /// The field as a scene file spells it (`"edges"`, `"fps"`, `"stretch_compliance"`).
    pub field: &'static str,
    /// The element of a list field, if the problem is one element.
    pub index: Option<usize>,
}

impl Location {
    /// A scene-wide setting.
    pub fn setting(field: &'static str) -> Self {
        Location { cloth: None, field, index: None }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.cloth {
            Some(c) => write!(f, "cloth '{}': {}", c.name, self.field)?,
            None => write!(f, "simulation.{}", self.field)?,
        }
        if let Some(i) = self.index {
            write!(f, "[{i}]")?;
        }
        Ok(())
    }
}

/// A rule of the bad-input policy (see docs/cli.md), with the values that broke it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Rule {
    /// A number is NaN or infinite.
    #[error("{value} is not a finite number")]
    NotFinite {
        /// The offending value, as text.
        value: String,
    },
    /// A material number breaks its unit's rule.
    #[error("{} {error}", number32(*value))]
    Unit {
        /// The offending value.
        value: f32,
        /// The unit rule.
        error: UnitError,
    },
    /// A quantity that must be positive is zero or negative.
    #[error("{} must be greater than zero", number(*value))]
    NotPositive {
        /// The offending value.
        value: f64,
    },
    /// A quantity that must not be negative is.
    #[error("{} must not be negative", number(*value))]
    Negative {
        /// The offending value.
        value: f64,
    },
    /// A count that must be at least one is zero.
    #[error("must be at least 1")]
    Zero,
    /// A count on the wrong side of another setting that bounds it.
    #[error("{value} is {relation} {other} = {limit}")]
    CountOrder {
        /// The offending value.
        value: u64,
        /// `"more than"` or `"less than"`.
        relation: &'static str,
        /// The setting that bounds it.
        other: &'static str,
        /// That setting's value.
        limit: u64,
    },
    /// A count outside the range other settings allow.
    #[error("{value} is outside {min}..={max}")]
    OutsideRange {
        /// The offending value.
        value: u64,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
    },
    /// An index points past the end of the list it refers to.
    #[error("index {index} is out of range: the cloth has {len} particles")]
    IndexOutOfRange {
        /// The offending index.
        index: u64,
        /// How many elements the indexed list has.
        len: usize,
    },
    /// An edge joins a particle to itself.
    #[error(
        "[{particle}, {particle}] joins particle {particle} to itself: an edge needs two different particles"
    )]
    SelfEdge {
        /// The particle.
        particle: u32,
    },
    /// The same pair of particles is constrained twice.
    #[error("[{a}, {b}] repeats {field}[{first}]: each pair of particles may be joined once")]
    DuplicateEdge {
        /// First particle.
        a: u32,
        /// Second particle.
        b: u32,
        /// The list holding the first occurrence.
        field: &'static str,
        /// Index of the first occurrence.
        first: usize,
    },
    /// A list's length does not match the list it pairs with.
    #[error("has length {len} but {partner} has length {expected}: the two lists pair up one to one")]
    LengthMismatch {
        /// This list's length.
        len: usize,
        /// The partner list's length.
        expected: usize,
        /// The partner list.
        partner: &'static str,
    },
    /// A face list that breaks a rule of [`crate::polygons::Polygons`].
    #[error("{0}")]
    BadPolygons(crate::polygons::PolygonError),
    /// A cloth without particles.
    #[error("the cloth has no particles")]
    NoParticles,
    /// Two particles joined by a constraint start at (nearly) the same point, so the constraint's
    /// direction is undefined.
    #[error(
        "joins particles {a} and {b}, which are {} m apart in the rest shape: below the {} m a \
         constraint direction can be computed from", number32(*distance), number32(*min)
    )]
    CoincidentParticles {
        /// First particle.
        a: u32,
        /// Second particle.
        b: u32,
        /// Their distance in m.
        distance: f32,
        /// The shortest distance a kernel normalises, in m.
        min: f32,
    },
    /// A triangle whose corners are colinear or coincident in the rest shape, used by a constraint
    /// or for mass lumping.
    #[error("[{a}, {b}, {c}] has zero area in the rest shape ({area} m²) but is used for {used_for}")]
    ZeroAreaTriangle {
        /// Corner.
        a: u32,
        /// Corner.
        b: u32,
        /// Corner.
        c: u32,
        /// Its area in m².
        area: f32,
        /// What needs the triangle.
        used_for: &'static str,
    },
    /// A density was given but the cloth has no triangles to lump it from.
    #[error("a density (kg/m²) needs triangles to lump mass from; give particle_mass instead")]
    DensityWithoutTriangles,
    /// A free particle ended up without mass (density given, but the particle is in no triangle).
    #[error(
        "particle {particle} is in no triangle, so a density gives it no mass: pin it, or give particle_mass"
    )]
    MasslessParticle {
        /// The particle.
        particle: u32,
    },
    /// A compliance or damping too large for the time step: `α/h²` or `α·β/h` overflows `f32`.
    #[error("{value:?} is too large for the time step h = {h:?} s: {what} is not a finite f32")]
    TooLargeForTimeStep {
        /// The value.
        value: f32,
        /// The time step in s.
        h: f64,
        /// The derived quantity that overflows.
        what: &'static str,
    },
    /// Two cloths share a name (cache files are named after cloths).
    #[error("the name '{name}' is used by cloth #{first} too: cache files are named after cloths")]
    DuplicateName {
        /// The name.
        name: String,
        /// The earlier cloth's position.
        first: usize,
    },
    /// A cloth named as another cloth's proxy cache (`NAME_proxy`, see [`crate::binding`]).
    #[error("the name '{name}' is taken by the proxy cache of cloth #{cloth} (its cache_proxy)")]
    ProxyName {
        /// The name.
        name: String,
        /// The cloth whose proxy cache has it.
        cloth: usize,
    },
    /// A render mesh that cannot be bound to its cloth.
    #[error("{0}")]
    Binding(crate::binding::BindError),
    /// A name that cannot be a file name.
    #[error("'{name}' cannot name a cache file: use letters, digits, '-', '_' or '.', not starting with '.'")]
    BadName {
        /// The name.
        name: String,
    },
    /// A request beyond a resource limit.
    #[error("{requested} {what}: more than the limit of {limit} ({hint})")]
    TooLarge {
        /// What is counted.
        what: &'static str,
        /// How many were asked for.
        requested: u64,
        /// The limit.
        limit: u64,
        /// How to raise the limit.
        hint: &'static str,
    },
    /// A grid needs at least two particles per side.
    #[error("{value} particles per side: a grid needs at least 2")]
    GridTooSmall {
        /// The offending resolution.
        value: u32,
    },
    /// `fps·substeps` gives a time step `h` (or `1/h²`) that `f32` cannot hold.
    #[error(
        "{fps:?} fps × {substeps} substeps gives h = {h:?} s, outside what the solver can represent (h and 1/h² must be finite and positive in f32)"
    )]
    TimeStepOutOfRange {
        /// Frames per second.
        fps: f64,
        /// Substeps per frame.
        substeps: u32,
        /// The resulting step in s.
        h: f64,
    },
    /// Two particles joined by a constraint start farther apart than a kernel projects.
    #[error(
        "joins particles {a} and {b}, which are {distance:?} m apart: more than the {max:?} m a constraint projects"
    )]
    TooFarApart {
        /// First particle.
        a: u32,
        /// Second particle.
        b: u32,
        /// Their distance in m.
        distance: f32,
        /// The longest distance a kernel projects, in m.
        max: f32,
    },
    /// Keyframes whose times do not increase.
    #[error("key at {} s does not come after the previous key at {} s: keys must be in increasing time", number32(*time), number32(*previous))]
    KeysOutOfOrder {
        /// This key's time in s.
        time: f32,
        /// The previous key's time in s.
        previous: f32,
    },
    /// A triangle with a repeated corner.
    #[error("[{a}, {b}, {c}] repeats a corner: a triangle needs three different particles")]
    DegenerateTriangle {
        /// Corner.
        a: u32,
        /// Corner.
        b: u32,
        /// Corner.
        c: u32,
    },
    /// An edge shared by more than two triangles.
    #[error(
        "edge [{a}, {b}] is shared by {count} triangles (triangles {triangles}): the mesh is not a \
         manifold there; fix the mesh, or set non_manifold = \"skip\" to leave such edges out of \
         bending and shear"
    )]
    NonManifoldEdge {
        /// First particle of the edge.
        a: u32,
        /// Second particle of the edge.
        b: u32,
        /// How many triangles share it.
        count: usize,
        /// The triangles, as text.
        triangles: String,
    },
    /// A constraint that needs a closed surface on an open one.
    #[error("needs a closed, consistently oriented surface: {problem}")]
    NotClosed {
        /// What is wrong with the surface.
        problem: String,
    },
    /// A scene without any cloth.
    #[error("the scene has no cloth")]
    NoCloth,
    /// A number below the least value its setting allows (a tether scale under 1, say).
    #[error("{} must be at least {}: {why}", number(*value), number(*min))]
    BelowMinimum {
        /// The offending value.
        value: f64,
        /// The least value allowed.
        min: f64,
        /// Why that is the least.
        why: &'static str,
    },
    /// A number above the largest value its setting allows (a self thickness of more than half
    /// the shortest edge, say).
    #[error("{} must be at most {}: {why}", number(*value), number(*max))]
    AboveMaximum {
        /// The offending value.
        value: f64,
        /// The largest value allowed.
        max: f64,
        /// Why that is the largest.
        why: &'static str,
    },
    /// A feature asked of a cloth that lacks what it works on (tethers without pins, drag and
    /// lift without triangles).
    #[error("{feature} needs {needs}, and the cloth has none")]
    MissingPrerequisite {
        /// What was asked for.
        feature: &'static str,
        /// What it needs.
        needs: &'static str,
    },
    /// A name that refers to no collider of the scene.
    #[error("'{name}' is not the name of a collider of the scene")]
    UnknownCollider {
        /// The name given.
        name: String,
    },
    /// A vector that must give a direction (a plane's normal, a rotation quaternion) is zero.
    #[error("is zero: a {what} needs a non-zero length")]
    ZeroVector {
        /// What the vector is.
        what: &'static str,
    },
}

/// A number as a message shows it: whole numbers without a fraction, others in the shortest form
/// that reads back exactly (`1e37`, not 38 digits).
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value:?}")
    }
}

/// An `f32` widened to the `f64` nearest its shortest decimal form, so that a message shows
/// `-0.2` and not `-0.20000000298023224`.
pub(crate) fn widen(value: f32) -> f64 {
    format!("{value:?}").parse().unwrap_or(value as f64)
}

/// [`number`] for an `f32`.
fn number32(value: f32) -> String {
    if value.fract() == 0.0 && value.abs() < 1e7 { format!("{}", value as i64) } else { format!("{value:?}") }
}

/// A model that cannot be built: where, and which rule.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{location}: {rule}")]
pub struct BuildError {
    /// Where the problem is.
    pub location: Location,
    /// The rule it breaks.
    pub rule: Rule,
}

impl BuildError {
    /// A new error at `location`.
    pub fn new(location: Location, rule: Rule) -> Self {
        BuildError { location, rule }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_cloth_field_index_and_rule() {
        let e = BuildError::new(
            Location {
                cloth: Some(ClothRef { ordinal: 0, name: "seed".into() }),
                field: "edges",
                index: Some(3),
            },
            Rule::SelfEdge { particle: 1 },
        );
        assert_eq!(
            e.to_string(),
            "cloth 'seed': edges[3]: [1, 1] joins particle 1 to itself: an edge needs two different particles"
        );
        let s = BuildError::new(Location::setting("substeps"), Rule::Zero);
        assert_eq!(s.to_string(), "simulation.substeps: must be at least 1");
    }
}
