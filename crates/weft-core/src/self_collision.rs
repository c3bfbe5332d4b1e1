//! Self-collision: every particle of a cloth that asks for it keeps at least a thickness away
//! from every other such particle, except its mesh neighbours.
//!
//! A cloth with `self_collision` gives each of its particles a thickness `d` (m, `> 0`) and a
//! friction coefficient `μ` (dimensionless, `≥ 0`). Two taking part, `i` and `j`, are in contact
//! when `|x_i − x_j| < d_ij` with `d_ij = max(d_i, d_j)` and `μ_ij = max(μ_i, μ_j)`; particles of
//! different cloths collide too. A pair of one cloth whose **rest** distance (in the initial
//! positions, which are the rest shape) is already `≤ d` is excluded for good: mesh neighbours
//! that would otherwise push each other apart at rest. The exclusions are stored per particle as
//! sorted lists (compressed rows), found at build with a `weft_geometry::Grid` of cells a hair
//! over `d` (each particle against those of the 27 cells around its own).
//!
//! The solver (`weft-kernels`' `self_collision` module, and its twin in `weft-reference`) finds the
//! contacts of each time step and projects them; see there.

use std::sync::atomic::{AtomicU64, Ordering};

use weft_geometry::Grid;

use crate::digest::{Digest, digest_debug};
use crate::error::{BuildError, Rule, widen};
use crate::limits::RAISE_HINT;

/// What the output says of particle self-collision (a phased kind of the registry,
/// [`crate::kinds`]): its contacts have no residual, only degenerate projections (two particles
/// closer than 1 µm, with no normal).
pub const INFO: crate::kinds::KindInfo = crate::kinds::KindInfo {
    name: "self-collision",
    unit: "m",
    columns: &[],
    summary: crate::kinds::SummaryLine::None,
    example: &[],
};

/// Field naming the switch in errors and scenes.
pub const SWITCH_FIELD: &str = "self_collision";
/// Field naming the thickness in errors and scenes.
pub const THICKNESS_FIELD: &str = "self_thickness";
/// Field naming the friction in errors and scenes.
pub const FRICTION_FIELD: &str = "self_friction";

/// Contacts are searched once per time step, after the prediction, among pairs closer than
/// `SEARCH_SCALE × d_ij`: the margin covers the motion of the constraint iterations that follow.
/// A pair that closes more than `(SEARCH_SCALE − 1)·d` in one step from outside the search can
/// pass through; keep `|v|·h` below that with substeps.
pub const SEARCH_SCALE: f32 = 1.5;

/// Relaxation `ω` of the Jacobi contact projection: each particle moves by `ω/n ×` the sum of its
/// `n` active contacts' corrections (constraint averaging). `1` never overshoots a single contact
/// and makes the result independent of the order contacts are summed in, up to rounding; the
/// solvers sum them in ascending partner order, so it is deterministic too.
pub const RELAXATION: f32 = 1.0;

/// How a cloth's self-collision keeps its layers apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SelfCollisionMode {
    /// Particle against particle (this module): the thickness must reach across the gaps
    /// between particles (at least the vertex spacing), or layers pass through each other.
    #[default]
    Particles,
    /// Vertex against triangle and edge against edge, with a guard against any crossing (see
    /// [`crate::surface_collision`]): thin layers at any vertex spacing.
    Triangles,
}

/// Particle contacts too thin to keep a cloth's layers apart: its `self_thickness` is under the
/// distance `h/√2` at which a particle passes between the four vertices of a square of side `h`
/// (the cloth's mean edge), so a layer can slip through another between its vertices. Thin cloth
/// needs surface self-collision ([`SelfCollisionMode::Triangles`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThinParticleContacts {
    /// The cloth's thickness (m).
    pub thickness: f32,
    /// The cloth's vertex spacing, its triangles' mean edge (m; an edge between two triangles
    /// counted twice).
    pub spacing: f32,
}

impl ThinParticleContacts {
    /// The cloth whose particles are at `position(i)` (m) with `triangles` and a particle
    /// self-collision `thickness` (m), if that thickness cannot hold its layers apart.
    pub fn check(position: impl Fn(u32) -> [f32; 3], triangles: &[[u32; 3]], thickness: f32) -> Option<Self> {
        let edges = triangles.iter().flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])]);
        let (sum, count) = edges.fold((0.0f64, 0u64), |(sum, n), (a, b)| {
            (sum + crate::topology::distance(position(a), position(b)) as f64, n + 1)
        });
        let spacing = if count == 0 { 0.0 } else { sum / count as f64 };
        let thin = thickness > 0.0 && (thickness as f64) < spacing / std::f64::consts::SQRT_2;
        thin.then_some(ThinParticleContacts { thickness, spacing: spacing as f32 })
    }

    /// [`ThinParticleContacts::check`] of each cloth of `model` with particle self-collision, at
    /// its rest positions and largest thickness: the name of each cloth too thin, with the check.
    pub fn of_model(model: &crate::Model) -> Vec<(&str, Self)> {
        let (sc, p) = (model.self_collision(), model.particles());
        if sc.is_empty() {
            return Vec::new();
        }
        let mut thin = Vec::new();
        for cloth in model.cloths() {
            let thickness = sc.thickness()[cloth.particles.clone()].iter().fold(0.0f32, |a, &t| a.max(t));
            let at = |i: u32| p.position(cloth.particles.start + i as usize);
            if let Some(check) = Self::check(at, &cloth.triangles, thickness) {
                thin.push((cloth.name.as_str(), check));
            }
        }
        thin
    }

    /// [`ThinParticleContacts::check`] of a cloth as a scene gives it: `None` unless it asks for
    /// particle self-collision.
    pub fn of_cloth(cloth: &crate::ClothDesc) -> Option<Self> {
        let desc =
            cloth.self_collision.filter(|_| cloth.self_collision_mode == SelfCollisionMode::Particles)?;
        let position = |i: u32| cloth.positions.get(i as usize).copied().unwrap_or([0.0; 3]);
        Self::check(position, &cloth.triangles, desc.thickness)
    }
}

/// The warning, without the cloth's name: thickness, spacing and what to use instead.
impl std::fmt::Display for ThinParticleContacts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let spacing = (self.spacing as f64 * 1e6).round() / 1e6;
        write!(
            f,
            "{THICKNESS_FIELD} {} m is under its vertex spacing ({spacing} m, the mean edge): particle \
             contacts cannot stop a layer passing between its vertices; thin cloth needs \
             {SWITCH_FIELD} = \"triangles\"",
            self.thickness
        )
    }
}

/// Self-collision of one cloth, as a scene gives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SelfCollisionDesc {
    /// Distance in m (`> 0`) that two particles keep between their centres.
    pub thickness: f32,
    /// Friction coefficient between layers (dimensionless, `≥ 0`): a sliding contact loses up to
    /// `μ ×` its penetration of tangential displacement per projection.
    pub friction: f32,
}

impl SelfCollisionDesc {
    /// Checks the thickness (finite, `> 0`) and the friction (finite, `≥ 0`), the rules of both
    /// modes; `err` makes an error at a field of the cloth.
    pub(crate) fn check(&self, err: impl Fn(&'static str, Rule) -> BuildError) -> Result<(), BuildError> {
        let (d, mu) = (self.thickness, self.friction);
        if !d.is_finite() {
            return Err(err(THICKNESS_FIELD, Rule::NotFinite { value: d.to_string() }));
        }
        if d <= 0.0 {
            return Err(err(THICKNESS_FIELD, Rule::NotPositive { value: widen(d) }));
        }
        if !mu.is_finite() {
            return Err(err(FRICTION_FIELD, Rule::NotFinite { value: mu.to_string() }));
        }
        if mu < 0.0 {
            return Err(err(FRICTION_FIELD, Rule::Negative { value: widen(mu) }));
        }
        Ok(())
    }
}

/// The self-collision data of a whole model: per particle thickness and friction (`0` thickness:
/// not taking part), the particles taking part, and each particle's excluded partners.
///
/// Equality and the `Debug` form cover the data, not the [`SelfCollision::key`] (which differs
/// between two builds of the same scene: a bake's fingerprint hashes the `Debug` form).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SelfCollision {
    thickness: Vec<f32>,
    friction: Vec<f32>,
    members: Vec<u32>,
    /// `excluded[excluded_start[i]..excluded_start[i + 1]]`: particle `i`'s excluded partners,
    /// ascending. `excluded_start` has one entry per particle plus one (or is empty).
    excluded_start: Vec<u32>,
    excluded: Vec<u32>,
    max_thickness: f32,
    min_thickness: f32,
    /// See [`SelfCollision::key`].
    key: DataKey,
}

/// The key of [`SelfCollision::key`] and `SurfaceCollision::key`, left out of equality and of the
/// `Debug` form: every value is equal to every other and prints as `_`.
#[derive(Clone, Copy, Default)]
pub(crate) struct DataKey(u64);

impl DataKey {
    /// A key no other data of this process had.
    pub(crate) fn fresh() -> Self {
        DataKey(LAST_KEY.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Its number.
    pub(crate) fn get(self) -> u64 {
        self.0
    }
}

impl PartialEq for DataKey {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for DataKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("_")
    }
}

/// The last key handed out by [`DataKey::fresh`].
static LAST_KEY: AtomicU64 = AtomicU64::new(0);

impl Digest for SelfCollision {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let SelfCollision {
            thickness,
            friction,
            members,
            excluded_start,
            excluded,
            max_thickness,
            min_thickness,
            key,
        } = self;
        thickness.digest(h);
        friction.digest(h);
        members.digest(h);
        excluded_start.digest(h);
        excluded.digest(h);
        max_thickness.digest(h);
        min_thickness.digest(h);
        digest_debug(key, h);
    }
}

impl SelfCollision {
    /// A number that names this data: every change (each cloth appended while a model is built)
    /// takes a key no other data of this process had, and a clone keeps it, so two values with the
    /// same key hold the same data. `0` for the empty default. The solver keeps its neighbour
    /// lists between steps while the key stays the same.
    pub fn key(&self) -> u64 {
        self.key.0
    }

    /// True when no particle takes part.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Thickness of each particle in m (`0`: not taking part).
    pub fn thickness(&self) -> &[f32] {
        &self.thickness
    }

    /// Friction coefficient of each particle (dimensionless).
    pub fn friction(&self) -> &[f32] {
        &self.friction
    }

    /// The particles taking part, ascending.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    /// The largest thickness in m (`0` when empty).
    pub fn max_thickness(&self) -> f32 {
        self.max_thickness
    }

    /// The smallest thickness of a particle taking part in m (`0` when empty).
    pub fn min_thickness(&self) -> f32 {
        self.min_thickness
    }

    /// Particle `i`'s excluded partners, ascending.
    pub fn excluded(&self, i: usize) -> &[u32] {
        match (self.excluded_start.get(i), self.excluded_start.get(i + 1)) {
            (Some(&a), Some(&b)) => &self.excluded[a as usize..b as usize],
            _ => &[],
        }
    }

    /// Whether the pair `(i, j)` is excluded.
    pub fn is_excluded(&self, i: usize, j: u32) -> bool {
        self.excluded(i).binary_search(&j).is_ok()
    }

    /// Total excluded pairs, each counted from both ends.
    pub fn excluded_len(&self) -> usize {
        self.excluded.len()
    }

    /// Checks a cloth's self-collision and finds its excluded pairs; [`SelfCollision::commit`]
    /// appends the result. `positions` are the cloth's (finite) rest positions in m, its particle
    /// 0 becoming particle `self.thickness().len()` of the model; `err` makes an error at a field
    /// of this cloth; `max_pairs` bounds the excluded pairs of the whole model.
    pub(crate) fn prepare(
        &self,
        positions: &[[f32; 3]],
        desc: Option<&SelfCollisionDesc>,
        max_pairs: u64,
        err: impl Fn(&'static str, Rule) -> BuildError,
    ) -> Result<PendingCloth, BuildError> {
        let n = positions.len();
        let offset = self.thickness.len() as u32;
        let Some(desc) = desc else {
            return Ok(PendingCloth { n, desc: None, starts: Vec::new(), lists: Vec::new() });
        };
        desc.check(&err)?;
        let d = desc.thickness;
        // Rest neighbours within d, through a grid of cells a hair over d (module docs of
        // `weft_geometry::grid`: the 27 cells around a point hold every point that close).
        let mut grid = Grid::default();
        grid.build_points(d as f64 * (1.0 + 1e-5), n, |i| positions[i]);
        let limit = max_pairs.min(u32::MAX as u64);
        let base = self.excluded.len() as u64;
        let mut lists: Vec<u32> = Vec::new();
        let mut starts: Vec<u32> = Vec::with_capacity(n);
        let mut near: Vec<u32> = Vec::new();
        for (i, &p) in positions.iter().enumerate() {
            near.clear();
            grid.near(grid.cell_of(p), |place| {
                let j = grid.entry_at(place);
                if j as usize != i && crate::topology::distance(p, positions[j as usize]) <= d {
                    near.push(j + offset);
                }
            });
            near.sort_unstable();
            let total = base + lists.len() as u64 + near.len() as u64;
            if total > limit {
                return Err(err(
                    THICKNESS_FIELD,
                    Rule::TooLarge {
                        what: "self-collision pairs excluded at rest (a thickness large for the mesh)",
                        requested: total,
                        limit,
                        hint: RAISE_HINT,
                    },
                ));
            }
            lists.extend_from_slice(&near);
            starts.push(total as u32);
        }
        Ok(PendingCloth { n, desc: Some(*desc), starts, lists })
    }

    /// Appends a cloth prepared by [`SelfCollision::prepare`] (with nothing appended since).
    pub(crate) fn commit(&mut self, pending: PendingCloth) {
        let PendingCloth { n, desc, starts, lists } = pending;
        self.key = DataKey::fresh();
        let offset = self.thickness.len() as u32;
        if self.excluded_start.is_empty() {
            self.excluded_start.push(0);
        }
        let Some(desc) = desc else {
            self.thickness.extend(std::iter::repeat_n(0.0, n));
            self.friction.extend(std::iter::repeat_n(0.0, n));
            let end = *self.excluded_start.last().unwrap_or(&0);
            self.excluded_start.extend(std::iter::repeat_n(end, n));
            return;
        };
        self.excluded.extend(lists);
        self.excluded_start.extend(starts);
        self.thickness.extend(std::iter::repeat_n(desc.thickness, n));
        self.friction.extend(std::iter::repeat_n(desc.friction, n));
        self.min_thickness =
            if self.members.is_empty() { desc.thickness } else { self.min_thickness.min(desc.thickness) };
        self.members.extend(offset..offset + n as u32);
        self.max_thickness = self.max_thickness.max(desc.thickness);
    }
}

/// A cloth's self-collision, checked and with its exclusions found, not yet appended.
#[derive(Debug)]
pub(crate) struct PendingCloth {
    n: usize,
    desc: Option<SelfCollisionDesc>,
    starts: Vec<u32>,
    lists: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Location;

    fn err(field: &'static str, rule: Rule) -> BuildError {
        BuildError::new(Location::setting(field), rule)
    }

    #[test]
    fn rest_neighbours_within_the_thickness_are_excluded() {
        let mut s = SelfCollision::default();
        let p = s.prepare(&[[0.0; 3]; 2], None, 100, err).unwrap();
        s.commit(p);
        let row: Vec<[f32; 3]> = (0..5).map(|i| [i as f32 * 0.1, 0.0, 0.0]).collect();
        let desc = SelfCollisionDesc { thickness: 0.15, friction: 0.2 };
        let p = s.prepare(&row, Some(&desc), 100, err).unwrap();
        s.commit(p);
        assert_eq!(s.members(), &[2, 3, 4, 5, 6]);
        assert_eq!(s.excluded(0), &[] as &[u32]);
        assert_eq!(s.excluded(2), &[3]);
        assert_eq!(s.excluded(4), &[3, 5]);
        assert!(s.is_excluded(6, 5) && !s.is_excluded(6, 4));
        assert_eq!(s.thickness()[..3], [0.0, 0.0, 0.15]);
        assert_eq!(s.max_thickness(), 0.15);
        assert_eq!(s.excluded(7), &[] as &[u32], "past the end: empty, not a panic");
        let thin = SelfCollisionDesc { thickness: 0.05, friction: 0.0 };
        let key = s.key();
        let p = s.prepare(&row, Some(&thin), 100, err).unwrap();
        let before = s.clone();
        s.commit(p);
        assert_eq!((s.min_thickness(), s.max_thickness()), (0.05, 0.15));
        assert!(s.key() != key && s.key() != 0, "a change takes a new key");
        assert!(before.key() == key && before != s);
        let copy = s.clone();
        assert!(copy.key() == s.key() && copy == s, "a clone keeps the key");
        // Built twice, the same data has other keys but the same `Debug` form.
        let mut again = SelfCollision::default();
        again.commit(again.prepare(&[[0.0; 3]; 2], None, 100, err).unwrap());
        again.commit(again.prepare(&row, Some(&desc), 100, err).unwrap());
        again.commit(again.prepare(&row, Some(&thin), 100, err).unwrap());
        assert!(again.key() != s.key() && again == s);
        assert_eq!(format!("{again:?}"), format!("{s:?}"));
    }

    #[test]
    fn bad_values_are_named() {
        let s = SelfCollision::default();
        let p = [[0.0; 3]];
        for (d, mu, field) in [
            (0.0, 0.0, THICKNESS_FIELD),
            (-1.0, 0.0, THICKNESS_FIELD),
            (f32::NAN, 0.0, THICKNESS_FIELD),
            (0.1, -0.5, FRICTION_FIELD),
            (0.1, f32::INFINITY, FRICTION_FIELD),
        ] {
            let e = s.prepare(&p, Some(&SelfCollisionDesc { thickness: d, friction: mu }), 10, err);
            assert_eq!(e.unwrap_err().location.field, field);
        }
        // Too many exclusions for the limit.
        let dense: Vec<[f32; 3]> = (0..10).map(|i| [i as f32 * 0.01, 0.0, 0.0]).collect();
        let e = s.prepare(&dense, Some(&SelfCollisionDesc { thickness: 1.0, friction: 0.0 }), 10, err);
        assert!(matches!(e.unwrap_err().rule, Rule::TooLarge { .. }));
    }
}
