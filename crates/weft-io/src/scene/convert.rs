//! From the raw TOML structures to `weft-core`'s [`SimSettings`] and [`ClothDesc`]s.
//!
//! This step applies the rules that belong to the file format: numbers that must be finite and fit
//! their type, indices that must be whole numbers in `0..=u32::MAX`, keys that exclude each other,
//! keys that only a grid or a mesh may have, and material numbers through `weft-core`'s unit
//! types. It also reads the files a scene names (a `mesh`, a `pin_file`, relative to the scene's
//! folder), and derives what a grid or a mesh generates: triangles, UVs, stretch and shear edges
//! (split into warp, weft and bias when a warp or weft material is given), and pins from boxes.
//! Every other rule (indices in range, self edges, duplicates, lengths that pair up, masses,
//! counts, ...) is left to `weft-core`, whose errors [`super::Scene::build_model`] maps back to
//! lines with the spans and [`ClothSource`]s recorded here.

use std::path::{Path, PathBuf};

use toml::Spanned;
use weft_core::Rule;
use weft_core::aero::AeroDesc;
use weft_core::binding::RenderMeshDesc;
use weft_core::builder::{ClothDesc, EdgeSet, MassSpec, NonManifold};
use weft_core::follow::FollowDesc;
use weft_core::grid::{GridDesc, GridMesh, GridPlane};
use weft_core::kinds::{KindDescs, SceneKeys};
use weft_core::limits::{Limits, RAISE_HINT};
use weft_core::mesh::{Grain, ListedIndex, classify_grain, in_box, mesh_edges, parse_index_list};
use weft_core::self_collision::{SelfCollisionDesc, SelfCollisionMode};
use weft_core::settings::{SimSettings, StrainTolerance, WindKey};
use weft_core::units::UnitError;
use weft_core::units::{Compliance, Elasticity, Stiffness};
use weft_core::volume::VolumeDesc;

use super::MAX_SCENE_BYTES;
use super::error::{SceneError, SceneRule, SourcePos};
use super::raw::{
    Corner, Fixed, KindValue, NonManifoldPolicy, OneOrList, Plane, RawBox, RawCloth, RawFollow, RawGrid,
    RawScene, RawSelfCollision, RawSimulation, SpannedList, WindItem,
};
use super::sources::{ClothSource, MeshLines, PinRun};
use super::spans::{KeySpans, Source, one_line};
use crate::bounded::{Accept, read_bounded};
use crate::obj::{ObjError, ObjectSelection, read_obj_limited};

/// A scene converted: settings and cloths for `weft-core`, with the spans and sources to map its
/// errors back.
#[derive(Debug)]
pub(super) struct Converted {
    pub(super) settings: SimSettings,
    pub(super) simulation: KeySpans,
    pub(super) cloths: Vec<ClothDesc>,
    pub(super) cloth_spans: Vec<KeySpans>,
    pub(super) cloth_sources: Vec<ClothSource>,
    pub(super) colliders: super::collider::Colliders,
}

/// Converts a parsed scene, checking the format's own rules and reading the files it names.
pub(super) fn convert(raw: RawScene, source: &Source, limits: &Limits) -> Result<Converted, SceneError> {
    let (mut settings, simulation) = simulation(raw.simulation, source)?;
    let colliders = super::collider::convert(raw.collider, source, limits, settings.fps);
    let mut cloths = Vec::with_capacity(raw.cloth.len());
    let mut cloth_spans = Vec::with_capacity(raw.cloth.len());
    let mut cloth_sources = Vec::with_capacity(raw.cloth.len());
    let mut cloth_error = None;
    for cloth in raw.cloth {
        let table = cloth.span().start;
        match Cloth::convert(cloth, source, limits, settings.tolerance.as_ref()) {
            Ok((desc, spans, sources)) => {
                cloths.push(desc);
                cloth_spans.push(spans);
                cloth_sources.push(sources);
            }
            Err(e) => {
                cloth_error = Some((table, e));
                break;
            }
        }
    }
    // The first error in the file: the `[[cloth]]` and `[[collider]]` tables may come in any order.
    let colliders = match (colliders, cloth_error) {
        (Ok(colliders), None) => colliders,
        (Err((collider_at, e)), Some((cloth_at, _))) if collider_at < cloth_at => return Err(e),
        (_, Some((_, e))) | (Err((_, e)), None) => return Err(e),
    };
    let surface =
        |c: &ClothDesc| c.self_collision.is_some() && c.self_collision_mode == SelfCollisionMode::Triangles;
    if settings.tolerance.is_some() && !simulation.has("iterations") && cloths.iter().any(surface) {
        settings.iterations = StrainTolerance::SURFACE_ITERATIONS;
    }
    Ok(Converted { settings, simulation, cloths, cloth_spans, cloth_sources, colliders })
}

/// A number that must be finite (TOML allows `nan` and `inf`).
fn finite(v: f64) -> Result<f64, SceneRule> {
    if v.is_finite() { Ok(v) } else { Err(SceneRule::Model(Rule::NotFinite { value: v.to_string() })) }
}

/// A number that must be finite and fit an `f32`: not so large that it becomes infinite, nor so
/// small (and not 0) that it becomes 0.
fn to_f32(v: f64) -> Result<f32, SceneRule> {
    let v = finite(v)?;
    let f = v as f32;
    if f.is_finite() && (f != 0.0 || v == 0.0) { Ok(f) } else { Err(SceneRule::NotF32 { value: v }) }
}

/// A particle index: a whole number in `0..=u32::MAX` (whether it is in range for the cloth is
/// `weft-core`'s rule).
fn to_index(v: i64) -> Result<u32, SceneRule> {
    u32::try_from(v).map_err(|_| SceneRule::BadIndex { value: v })
}

/// A count: not negative and at most `u32::MAX` (whether it may be 0 is `weft-core`'s rule).
fn to_count(v: i64) -> Result<u32, SceneRule> {
    if v < 0 {
        Err(SceneRule::Model(Rule::Negative { value: v as f64 }))
    } else {
        u32::try_from(v).map_err(|_| SceneRule::CountTooLarge { value: v })
    }
}

/// A material number through `weft-core`'s unit rule.
fn unit<T>(value: f32, make: fn(f32) -> Result<T, UnitError>) -> Result<T, SceneRule> {
    make(value).map_err(|error| SceneRule::Model(Rule::Unit { value, error }))
}

/// The `[simulation]` table: defaults from [`SimSettings::default`] for the optional keys.
///
/// The substep count is chosen per frame to a strain tolerance ([`StrainTolerance`], its
/// defaults for the keys left out, and [`StrainTolerance::DEFAULT_ITERATIONS`] unless
/// `iterations` is given; [`convert`] raises that to [`StrainTolerance::SURFACE_ITERATIONS`]
/// for a scene with surface self-collision) when `max_strain`, `min_substeps` or `max_substeps`
/// is given, or when neither `substeps` nor `iterations` is; else every frame takes `substeps`
/// time steps.
fn simulation(raw: Spanned<RawSimulation>, source: &Source) -> Result<(SimSettings, KeySpans), SceneError> {
    let mut cx = Simulation { source, spans: KeySpans::new(raw.span()) };
    let raw = raw.into_inner();
    let mut settings = SimSettings::default();
    cx.spans.key("fps", raw.fps.span());
    settings.fps = finite(*raw.fps.get_ref()).map_err(|r| cx.fail("fps", raw.fps.span().start, r))?;
    let to_tolerance = cx.to_tolerance(&raw)?;
    let mut tolerance = StrainTolerance::default();
    if to_tolerance {
        settings.iterations = StrainTolerance::DEFAULT_ITERATIONS;
    }
    if let Some(m) = &raw.max_strain {
        cx.spans.key("max_strain", m.span());
        tolerance.max_strain = to_f32(*m.get_ref()).map_err(|r| cx.fail("max_strain", m.span().start, r))?;
    }
    let counts = [
        ("frames", Some(raw.frames.clone()), &mut settings.frames),
        ("substeps", raw.substeps.clone(), &mut settings.substeps),
        ("iterations", raw.iterations.clone(), &mut settings.iterations),
        ("min_substeps", raw.min_substeps.clone(), &mut tolerance.min_substeps),
        ("max_substeps", raw.max_substeps.clone(), &mut tolerance.max_substeps),
    ];
    for (key, value, slot) in counts {
        if let Some(v) = value {
            cx.spans.key(key, v.span());
            *slot = to_count(*v.get_ref()).map_err(|r| cx.fail(key, v.span().start, r))?;
        }
    }
    if to_tolerance {
        cx.check_substep_order(&raw, &tolerance)?;
        settings.substeps = tolerance.min_substeps;
        settings.tolerance = Some(tolerance);
    }
    cx.forces(raw, &mut settings)?;
    Ok((settings, cx.spans))
}

/// Converts the `[simulation]` table, recording its spans.
struct Simulation<'a> {
    source: &'a Source,
    spans: KeySpans,
}

impl Simulation<'_> {
    /// An error at byte `at`, in `simulation.KEY`.
    fn fail(&self, key: &str, at: usize, rule: SceneRule) -> SceneError {
        SceneError::Invalid {
            at: self.source.pos(at),
            place: format!("simulation.{key}"),
            rule: Box::new(rule),
        }
    }

    /// Whether the scene bakes to a strain tolerance (a tolerance key is given, or neither
    /// `substeps` nor `iterations`); a tolerance key beside `substeps` is refused.
    fn to_tolerance(&self, raw: &RawSimulation) -> Result<bool, SceneError> {
        let tolerance_keys = [
            ("max_strain", start(&raw.max_strain)),
            ("min_substeps", start(&raw.min_substeps)),
            ("max_substeps", start(&raw.max_substeps)),
        ];
        let named = tolerance_keys.iter().find_map(|&(key, at)| at.map(|at| (key, at)));
        if let (Some((key, at)), Some(_)) = (named, &raw.substeps) {
            return Err(self.fail(key, at, SceneRule::FixedAndTolerance { key }));
        }
        Ok(named.is_some() || (raw.substeps.is_none() && raw.iterations.is_none()))
    }

    /// `min_substeps ≤ max_substeps`, said at the key the scene gives (the other one may be a
    /// default); a 0 is left to `weft-core`'s "at least 1".
    fn check_substep_order(
        &self,
        raw: &RawSimulation,
        tolerance: &StrainTolerance,
    ) -> Result<(), SceneError> {
        if tolerance.min_substeps <= tolerance.max_substeps || tolerance.max_substeps == 0 {
            return Ok(());
        }
        let (key, at, relation, other, value, limit) = match (&raw.max_substeps, &raw.min_substeps) {
            (Some(max), _) => (
                "max_substeps",
                max.span().start,
                "less than",
                "min_substeps",
                tolerance.max_substeps,
                tolerance.min_substeps,
            ),
            (None, Some(min)) => (
                "min_substeps",
                min.span().start,
                "more than",
                "max_substeps",
                tolerance.min_substeps,
                tolerance.max_substeps,
            ),
            (None, None) => unreachable!("the defaults are in order"),
        };
        let rule = Rule::CountOrder { value: value as u64, relation, other, limit: limit as u64 };
        Err(self.fail(key, at, SceneRule::Model(rule)))
    }

    /// `gravity`, `velocity_damping`, `air_density` and `wind`.
    fn forces(&mut self, raw: RawSimulation, settings: &mut SimSettings) -> Result<(), SceneError> {
        if let Some(g) = raw.gravity {
            self.spans.key("gravity", g.span());
            settings.gravity = point(g.get_ref()).map_err(|r| self.fail("gravity", g.span().start, r))?;
        }
        if let Some(d) = raw.velocity_damping {
            self.spans.key("velocity_damping", d.span());
            settings.velocity_damping =
                to_f32(*d.get_ref()).map_err(|r| self.fail("velocity_damping", d.span().start, r))?;
        }
        if let Some(d) = raw.air_density {
            self.spans.key("air_density", d.span());
            settings.air_density =
                to_f32(*d.get_ref()).map_err(|r| self.fail("air_density", d.span().start, r))?;
        }
        if let Some(w) = raw.wind {
            settings.wind = self.wind(w)?;
        }
        Ok(())
    }

    /// `wind = [x, y, z]` (constant: one key at t = 0, held) or a list of keys.
    fn wind(&mut self, w: Spanned<Vec<Spanned<WindItem>>>) -> Result<Vec<WindKey>, SceneError> {
        let value = w.span();
        let items = w.into_inner();
        self.spans.list("wind", value.clone(), items.iter().map(|i| i.span().start));
        let numbers: Vec<f64> = items
            .iter()
            .filter_map(|i| if let WindItem::Number(n) = i.get_ref() { Some(*n) } else { None })
            .collect();
        if numbers.len() == items.len() {
            if numbers.len() != 3 {
                return Err(self.fail("wind", value.start, SceneRule::WindLength { len: numbers.len() }));
            }
            let mut velocity = [0.0f32; 3];
            for ((slot, &n), item) in velocity.iter_mut().zip(&numbers).zip(&items) {
                *slot = to_f32(n).map_err(|r| self.fail("wind", item.span().start, r))?;
            }
            return Ok(vec![WindKey { time: 0.0, velocity }]);
        }
        if !numbers.is_empty() {
            return Err(self.fail("wind", value.start, SceneRule::MixedWind));
        }
        let mut keys = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let WindItem::Key(key) = item.get_ref() else { continue };
            let at = |v: std::ops::Range<usize>, r| self.fail(&format!("wind[{i}]"), v.start, r);
            let time = to_f32(*key.time.get_ref()).map_err(|r| at(key.time.span(), r))?;
            let velocity = point(key.velocity.get_ref()).map_err(|r| at(key.velocity.span(), r))?;
            keys.push(WindKey { time, velocity });
        }
        Ok(keys)
    }
}

/// Converts one `[[cloth]]`, recording its spans and sources as it goes.
struct Cloth<'a> {
    source: &'a Source,
    /// The name as shown in messages (control characters escaped).
    name: String,
    spans: KeySpans,
    origin: ClothSource,
}

/// How a cloth gets its particles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Shape {
    #[default]
    Explicit,
    Grid,
    Mesh,
}

/// What a grid or a mesh generates, for the later keys.
#[derive(Debug, Default)]
struct Derived {
    shape: Shape,
    /// Generated stretch edges (grid, mesh).
    stretch: Option<Vec<[u32; 2]>>,
    /// Mesh: the triangle each stretch edge was found in.
    stretch_source: Vec<u32>,
    /// Generated shear edges.
    shear: Vec<[u32; 2]>,
    /// Mesh: the triangle each shear edge was found in.
    shear_source: Vec<u32>,
    /// Grid: the grain of each stretch edge (its rows are warp, its columns weft).
    grid_grain: Vec<Grain>,
    /// Why the cloth has no UVs to sort edges into warp and weft by (when it has none).
    no_uvs: String,
    /// Grid: bottom-left, bottom-right, top-left, top-right.
    corners: Option<[u32; 4]>,
}

/// The start of an optional value, for keys that are refused whatever their value.
fn start<T>(v: &Option<Spanned<T>>) -> Option<usize> {
    v.as_ref().map(|v| v.span().start)
}

/// `name` (a path in the scene) resolved against the folder of the scene file.
pub(super) fn resolve(scene: &Path, name: &str) -> PathBuf {
    match scene.parent() {
        Some(dir) => dir.join(name),
        None => PathBuf::from(name),
    }
}

/// Reads a small text file the scene names (a pin file): regular, at most `limit` bytes (see
/// [`read_bounded`]), UTF-8. On error: the line, if the problem is on one, and the problem.
fn read_text(path: &Path, limit: u64) -> Result<String, (Option<usize>, String)> {
    let bytes = read_bounded(path, limit, Accept::RegularFiles).map_err(|e| (None, e.problem.to_string()))?;
    String::from_utf8(bytes).map_err(|e| {
        let bytes = e.as_bytes();
        let line = bytes[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count() + 1;
        (Some(line), "the file is not UTF-8 text".to_string())
    })
}

impl<'a> Cloth<'a> {
    fn convert(
        raw: Spanned<RawCloth>,
        source: &'a Source,
        limits: &Limits,
        tolerance: Option<&StrainTolerance>,
    ) -> Result<(ClothDesc, KeySpans, ClothSource), SceneError> {
        let mut cx = Cloth {
            source,
            name: one_line(raw.get_ref().name.get_ref()),
            spans: KeySpans::new(raw.span()),
            origin: ClothSource::default(),
        };
        let mut raw = raw.into_inner();
        cx.spans.key("name", raw.name.span());
        let mut desc = ClothDesc { name: std::mem::take(raw.name.get_mut()), ..ClothDesc::default() };
        let mut derived = cx.shape(&mut raw, &mut desc, limits)?;
        if let Some(v) = raw.velocities.take() {
            desc.velocities = Some(cx.list("velocities", v, point)?);
        }
        cx.mass(&raw, &mut desc)?;
        cx.edge_sets(&mut raw, &mut desc, &mut derived)?;
        cx.pins(&mut raw, &mut desc, derived.corners)?;
        cx.kinds(&mut raw, &mut desc, tolerance)?;
        cx.follow(&mut raw, &mut desc)?;
        cx.render_mesh(&mut raw, &mut desc, limits)?;
        Ok((desc, cx.spans, cx.origin))
    }

    /// An error at byte `at`, in `cloth 'NAME': place` (or just the cloth if `place` is empty).
    fn fail(&self, place: &str, at: usize, rule: SceneRule) -> SceneError {
        let sep = if place.is_empty() { "" } else { ": " };
        SceneError::Invalid {
            at: self.source.pos(at),
            place: format!("cloth '{}'{sep}{place}", self.name),
            rule: Box::new(rule),
        }
    }

    /// An error on line `line` of another file (a mesh, a pin file).
    fn fail_in(&self, file: &str, line: usize, place: &str, rule: SceneRule) -> SceneError {
        SceneError::Invalid {
            at: SourcePos { file: file.to_string(), line, column: 1 },
            place: format!("cloth '{}': {place}", self.name),
            rule: Box::new(rule),
        }
    }

    /// Refuses two exclusive keys, pointing at whichever comes later in the file.
    fn exclusive<A, B>(
        &self,
        first: (&'static str, &Option<Spanned<A>>),
        second: (&'static str, &Option<Spanned<B>>),
    ) -> Result<(), SceneError> {
        if let (Some(a), Some(b)) = (first.1, second.1) {
            let (key, at) = if a.span().start > b.span().start {
                (first.0, a.span().start)
            } else {
                (second.0, b.span().start)
            };
            let rule = SceneRule::Conflict { first: first.0, second: second.0 };
            return Err(self.fail(key, at, rule));
        }
        Ok(())
    }

    /// Refuses the first of `keys` that is present, with `rule(key)`.
    fn refuse(
        &self,
        keys: &[(&'static str, Option<usize>)],
        rule: fn(&'static str) -> SceneRule,
    ) -> Result<(), SceneError> {
        match keys.iter().find_map(|&(key, at)| Some((key, at?))) {
            Some((key, at)) => Err(self.fail(key, at, rule(key))),
            None => Ok(()),
        }
    }

    /// Converts a list element by element, recording the span of each.
    fn list<T, U>(
        &mut self,
        key: &'static str,
        list: SpannedList<T>,
        convert: impl Fn(&T) -> Result<U, SceneRule>,
    ) -> Result<Vec<U>, SceneError> {
        let value = list.span();
        let items = list.into_inner();
        self.spans.list(key, value, items.iter().map(|p| p.span().start));
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                convert(item.get_ref()).map_err(|r| self.fail(&format!("{key}[{i}]"), item.span().start, r))
            })
            .collect()
    }

    /// A single `f32` key.
    fn scalar(&mut self, key: &'static str, v: &Spanned<f64>) -> Result<f32, SceneError> {
        self.spans.key(key, v.span());
        to_f32(*v.get_ref()).map_err(|r| self.fail(key, v.span().start, r))
    }

    /// An optional `f32` key.
    fn optional(&mut self, key: &'static str, v: &Option<Spanned<f64>>) -> Result<Option<f32>, SceneError> {
        v.as_ref().map(|v| self.scalar(key, v)).transpose()
    }

    /// Particles: explicit `positions` (and `triangles`), a `grid`, or a `mesh`; a grid or a mesh
    /// also makes triangles, UVs, stretch and shear edges.
    fn shape(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        limits: &Limits,
    ) -> Result<Derived, SceneError> {
        self.exclusive(("positions", &raw.positions), ("grid", &raw.grid))?;
        self.exclusive(("positions", &raw.positions), ("mesh", &raw.mesh))?;
        self.exclusive(("grid", &raw.grid), ("mesh", &raw.mesh))?;
        if raw.mesh.is_none() {
            self.refuse(&[("object", start(&raw.object))], |key| SceneRule::NeedsMesh { key })?;
        }
        if raw.grid.is_none() {
            self.refuse(&[("pin_corners", start(&raw.pin_corners))], |key| SceneRule::NeedsGrid { key })?;
        }
        let generated = [
            ("triangles", start(&raw.triangles)),
            ("edges", start(&raw.edges)),
            ("rest_lengths", start(&raw.rest_lengths)),
            ("shear_edges", start(&raw.shear_edges)),
        ];
        if let Some(grid) = raw.grid.take() {
            self.refuse(&generated, |key| SceneRule::GeneratedByGrid { key })?;
            return self.grid(grid, raw, desc, limits);
        }
        if let Some(mesh) = raw.mesh.take() {
            self.refuse(&generated, |key| SceneRule::GeneratedByMesh { key })?;
            return self.mesh(mesh, raw, desc, limits);
        }
        self.refuse(&[("shear", start(&raw.shear))], |key| SceneRule::NeedsGridOrMesh { key })?;
        let Some(positions) = raw.positions.take() else {
            return Err(self.fail("", self.spans.table(), SceneRule::NoShape));
        };
        desc.positions = self.list("positions", positions, point)?;
        if let Some(t) = raw.triangles.take() {
            desc.triangles = self.list("triangles", t, indices)?;
        }
        let no_uvs = "an explicit cloth has none (a `grid`, or a `mesh` with texture coordinates, has)";
        Ok(Derived { no_uvs: no_uvs.to_string(), ..Derived::default() })
    }

    /// `shear = true | false` (grid and mesh cloths), default true.
    fn shear_flag(&mut self, raw: &RawCloth) -> bool {
        match &raw.shear {
            Some(s) => {
                self.spans.key("shear", s.span());
                *s.get_ref()
            }
            None => true,
        }
    }

    /// A grid cloth: generated (checked against `limits` before anything is allocated), with the
    /// UVs and quads of [`GridMesh`], and its rows as warp, its columns as weft.
    fn grid(
        &mut self,
        grid: Spanned<RawGrid>,
        raw: &RawCloth,
        desc: &mut ClothDesc,
        limits: &Limits,
    ) -> Result<Derived, SceneError> {
        self.spans.key("grid", grid.span());
        let raw_grid = grid.into_inner();
        let place = |key: &str| format!("grid.{key}");
        let res = &raw_grid.resolution;
        let mut resolution = [0u32; 2];
        for (slot, &v) in resolution.iter_mut().zip(&res.get_ref().0) {
            *slot = to_count(v).map_err(|r| self.fail(&place("resolution"), res.span().start, r))?;
        }
        let mut size = [0.0f32; 2];
        for (slot, &v) in size.iter_mut().zip(&raw_grid.size.get_ref().0) {
            *slot = to_f32(v).map_err(|r| self.fail(&place("size"), raw_grid.size.span().start, r))?;
        }
        let mut origin = [0.0f32; 3];
        if let Some(o) = &raw_grid.origin {
            origin = point(o.get_ref()).map_err(|r| self.fail(&place("origin"), o.span().start, r))?;
        }
        let plane = match raw_grid.plane.as_ref().map(|p| *p.get_ref()) {
            None | Some(Plane::Xy) => GridPlane::XY,
            Some(Plane::Xz) => GridPlane::XZ,
            Some(Plane::Yz) => GridPlane::YZ,
        };
        let grid = GridDesc { resolution, size, origin, plane };
        let mesh: GridMesh = grid.generate(limits).map_err(|(field, rule)| {
            let at = match (field, &raw_grid.origin) {
                ("size", _) => raw_grid.size.span().start,
                ("origin", Some(o)) => o.span().start,
                _ => res.span().start,
            };
            self.fail(&place(field), at, SceneRule::Model(rule))
        })?;
        let [nu, nv] = resolution;
        desc.uvs = mesh.uvs;
        desc.polygons = mesh.polygons;
        desc.positions = mesh.positions;
        desc.triangles = mesh.triangles;
        // `GridMesh::structural` lists the edges along U (rows) first, then those along V.
        let along_u = (nu as usize - 1) * nv as usize;
        let grid_grain =
            (0..mesh.structural.len()).map(|i| if i < along_u { Grain::Warp } else { Grain::Weft }).collect();
        let shear = if self.shear_flag(raw) { mesh.shear } else { Vec::new() };
        Ok(Derived {
            shape: Shape::Grid,
            stretch: Some(mesh.structural),
            shear,
            grid_grain,
            corners: Some(grid.corners()),
            ..Derived::default()
        })
    }

    /// A mesh cloth: the OBJ file named by `mesh` (relative to the scene's folder), the objects
    /// named by `object`, its edges from [`mesh_edges`].
    fn mesh(
        &mut self,
        mesh: Spanned<String>,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        limits: &Limits,
    ) -> Result<Derived, SceneError> {
        self.spans.key("mesh", mesh.span());
        let mesh_at = mesh.span().start;
        let (selection, object_at) = match raw.object.take() {
            None => (ObjectSelection::Only, mesh_at),
            Some(o) => {
                self.spans.key("object", o.span());
                let at = o.span().start;
                let names = match o.into_inner() {
                    OneOrList::One(name) => vec![name],
                    OneOrList::List(names) => names.into_iter().map(Spanned::into_inner).collect(),
                };
                if names.is_empty() {
                    return Err(self.fail("object", at, SceneRule::EmptyList { key: "object" }));
                }
                (ObjectSelection::Named(names), at)
            }
        };
        let path = resolve(self.source.path(), mesh.get_ref());
        let file = one_line(&path.display().to_string());
        let obj =
            read_obj_limited(&path, &selection, limits).map_err(|ObjError { line, problem }| match line {
                Some(line) => self.fail_in(&file, line, "mesh", SceneRule::Obj(problem)),
                None => {
                    let (key, at) = match problem {
                        crate::obj::ObjProblem::NoSuchObject { .. } => ("object", object_at),
                        _ => ("mesh", mesh_at),
                    };
                    self.fail(key, at, SceneRule::ObjFile { file: file.clone(), problem })
                }
            })?;
        let limit = limits.max_particles.min(u32::MAX as u64);
        if obj.positions.len() as u64 > limit {
            let rule = Rule::TooLarge {
                what: "particles in the mesh",
                requested: obj.positions.len() as u64,
                limit,
                hint: RAISE_HINT,
            };
            return Err(self.fail("mesh", mesh_at, SceneRule::Model(rule)));
        }
        let edges = mesh_edges(&obj.triangles, &obj.quads, self.shear_flag(raw));
        let no_uvs = match obj.first_face_without_uv {
            Some(line) => format!("the face on line {line} of {file} has no texture coordinates (vt)"),
            None => String::new(),
        };
        self.origin.mesh = Some(MeshLines {
            file,
            vertex_numbers: obj.vertex_numbers,
            vertex_lines: obj.vertex_lines,
            triangle_lines: obj.triangle_lines,
            edge_lines: Vec::new(),
        });
        desc.positions = obj.positions;
        desc.triangles = obj.triangles;
        desc.uvs = obj.uvs;
        desc.polygons = obj.polygons;
        Ok(Derived {
            shape: Shape::Mesh,
            stretch: Some(edges.stretch),
            stretch_source: edges.stretch_source,
            shear: edges.shear,
            shear_source: edges.shear_source,
            no_uvs,
            ..Derived::default()
        })
    }

    /// `particle_mass` (kg) or `density` (kg/m²); 1 kg per particle if neither.
    fn mass(&mut self, raw: &RawCloth, desc: &mut ClothDesc) -> Result<(), SceneError> {
        self.exclusive(("particle_mass", &raw.particle_mass), ("density", &raw.density))?;
        if let Some(m) = &raw.particle_mass {
            desc.mass = MassSpec::ParticleMass(self.scalar("particle_mass", m)?);
        } else if let Some(d) = &raw.density {
            desc.mass = MassSpec::Density(self.scalar("density", d)?);
        }
        Ok(())
    }

    /// A material given as `X_compliance` or `X_stiffness`, if either is.
    fn material(
        &mut self,
        compliance: (&'static str, Option<Spanned<f64>>),
        stiffness: (&'static str, Option<Spanned<f64>>),
    ) -> Result<Option<Elasticity>, SceneError> {
        self.exclusive((compliance.0, &compliance.1), (stiffness.0, &stiffness.1))?;
        if let (key, Some(c)) = compliance {
            let v = self.scalar(key, &c)?;
            let c = unit(v, Compliance::new).map_err(|r| self.fail(key, c.span().start, r))?;
            return Ok(Some(Elasticity::Compliance(c)));
        }
        if let (key, Some(k)) = stiffness {
            let v = self.scalar(key, &k)?;
            let k = unit(v, Stiffness::new).map_err(|r| self.fail(key, k.span().start, r))?;
            return Ok(Some(Elasticity::Stiffness(k)));
        }
        Ok(None)
    }

    /// The stretch edges (explicit `edges` and `rest_lengths`, or a grid's or mesh's, split into
    /// warp, weft and bias when `warp_*` or `weft_*` is given) and the shear edges (explicit
    /// `shear_edges`, or generated), with their materials.
    fn edge_sets(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        derived: &mut Derived,
    ) -> Result<(), SceneError> {
        let mut stretch = self.stretch_set(raw, derived)?;
        let triangle_lines = self.origin.mesh.as_ref().map(|m| m.triangle_lines.clone()).unwrap_or_default();
        let lines_of = |sources: &[u32]| -> Vec<u32> {
            sources.iter().map(|&t| triangle_lines.get(t as usize).copied().unwrap_or(0)).collect()
        };
        let mut stretch_lines = lines_of(&derived.stretch_source);
        let threads = self.threads(raw, desc, derived, &mut stretch, &mut stretch_lines)?;
        let shear = self.shear_set(raw, derived)?;
        let shear_lines = lines_of(&derived.shear_source);

        let mut edge_lines = vec![("edges", stretch_lines)];
        desc.edge_sets = vec![stretch];
        for (set, lines) in threads {
            edge_lines.push((set.field, lines));
            desc.edge_sets.push(set);
        }
        edge_lines.push(("shear_edges", shear_lines));
        desc.edge_sets.push(shear);
        if let Some(mesh) = &mut self.origin.mesh {
            mesh.edge_lines = edge_lines;
        }
        Ok(())
    }

    /// The stretch edges (generated, or `edges` and `rest_lengths`) with their material.
    fn stretch_set(&mut self, raw: &mut RawCloth, derived: &mut Derived) -> Result<EdgeSet, SceneError> {
        let mut stretch = EdgeSet::stretch();
        match derived.stretch.take() {
            Some(edges) => stretch.edges = edges,
            None => {
                if let Some(e) = raw.edges.take() {
                    stretch.edges = self.list("edges", e, indices)?;
                }
                if let Some(r) = raw.rest_lengths.take() {
                    stretch.rest_lengths = Some(self.list("rest_lengths", r, |&v| to_f32(v))?);
                }
            }
        }
        stretch.elasticity = self
            .material(
                ("stretch_compliance", raw.stretch_compliance.take()),
                ("stretch_stiffness", raw.stretch_stiffness.take()),
            )?
            .unwrap_or(Elasticity::RIGID);
        if let Some(d) = &raw.stretch_damping {
            stretch.damping = self.scalar("stretch_damping", d)?;
        }
        Ok(stretch)
    }

    /// Warp and weft: the stretch edges along U and along V taken out of `stretch` (with their
    /// lines) into sets of their own material, when `warp_*` or `weft_*` is given.
    fn threads(
        &mut self,
        raw: &mut RawCloth,
        desc: &ClothDesc,
        derived: &mut Derived,
        stretch: &mut EdgeSet,
        stretch_lines: &mut Vec<u32>,
    ) -> Result<Vec<(EdgeSet, Vec<u32>)>, SceneError> {
        let grain_key = [
            ("warp_compliance", start(&raw.warp_compliance)),
            ("warp_stiffness", start(&raw.warp_stiffness)),
            ("weft_compliance", start(&raw.weft_compliance)),
            ("weft_stiffness", start(&raw.weft_stiffness)),
        ]
        .into_iter()
        .filter_map(|(key, at)| Some((key, at?)))
        .min_by_key(|&(_, at)| at);
        let warp = self.material(
            ("warp_compliance", raw.warp_compliance.take()),
            ("warp_stiffness", raw.warp_stiffness.take()),
        )?;
        let weft = self.material(
            ("weft_compliance", raw.weft_compliance.take()),
            ("weft_stiffness", raw.weft_stiffness.take()),
        )?;
        let Some((key, at)) = grain_key else { return Ok(Vec::new()) };
        let grain = match derived.shape {
            Shape::Grid => std::mem::take(&mut derived.grid_grain),
            Shape::Mesh if !desc.uvs.is_empty() => {
                classify_grain(&stretch.edges, &derived.stretch_source, &desc.triangles, &desc.uvs)
            }
            _ => return Err(self.fail(key, at, SceneRule::NeedsUvs { key, why: derived.no_uvs.clone() })),
        };
        let thread_set = |field, elasticity_field, rest_field, elasticity| EdgeSet {
            field,
            elasticity_field,
            rest_field,
            elasticity,
            damping: stretch.damping,
            edges: Vec::new(),
            ..EdgeSet::stretch()
        };
        let mut sets = [
            (None, Vec::new(), Vec::new()),
            (
                warp.map(|e| thread_set("warp_edges", "warp_compliance", "warp_rest_lengths", e)),
                Vec::new(),
                Vec::new(),
            ),
            (
                weft.map(|e| thread_set("weft_edges", "weft_compliance", "weft_rest_lengths", e)),
                Vec::new(),
                Vec::new(),
            ),
        ];
        for (i, (&edge, grain)) in stretch.edges.iter().zip(&grain).enumerate() {
            let class = match grain {
                Grain::Warp if warp.is_some() => 1,
                Grain::Weft if weft.is_some() => 2,
                _ => 0,
            };
            sets[class].1.push(edge);
            if let Some(&line) = stretch_lines.get(i) {
                sets[class].2.push(line);
            }
        }
        let [(_, bias, bias_lines), rest @ ..] = sets;
        stretch.edges = bias;
        *stretch_lines = bias_lines;
        Ok(rest
            .into_iter()
            .filter_map(|(set, edges, lines)| Some((EdgeSet { edges, ..set? }, lines)))
            .collect())
    }

    /// The shear edges (`shear_edges`, or generated) with their material.
    fn shear_set(&mut self, raw: &mut RawCloth, derived: &mut Derived) -> Result<EdgeSet, SceneError> {
        let mut shear = EdgeSet::shear();
        shear.edges = match raw.shear_edges.take() {
            Some(e) => self.list("shear_edges", e, indices)?,
            None => std::mem::take(&mut derived.shear),
        };
        shear.elasticity = self
            .material(
                ("shear_compliance", raw.shear_compliance.take()),
                ("shear_stiffness", raw.shear_stiffness.take()),
            )?
            .unwrap_or(Elasticity::RIGID);
        if let Some(d) = &raw.shear_damping {
            shear.damping = self.scalar("shear_damping", d)?;
        }
        Ok(shear)
    }

    /// Pins: explicit `pins`, then the grid corners named in `pin_corners`, then the particles in
    /// each `pin_box`, then the indices listed in `pin_file`.
    fn pins(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        corners: Option<[u32; 4]>,
    ) -> Result<(), SceneError> {
        let mut runs = Vec::new();
        let mut run = |desc: &ClothDesc, start: usize, file| {
            runs.push(PinRun { start, end: desc.pins.len(), file });
        };
        if let Some(p) = raw.pins.take() {
            desc.pins = self.list("pins", p, |&i| to_index(i))?;
            run(desc, 0, None);
        }
        if let (Some(c), Some(corners)) = (raw.pin_corners.take(), corners) {
            let [bottom_left, bottom_right, top_left, top_right] = corners;
            let named = self.list("pin_corners", c, |corner| {
                Ok(match corner {
                    Corner::BottomLeft => bottom_left,
                    Corner::BottomRight => bottom_right,
                    Corner::TopLeft => top_left,
                    Corner::TopRight => top_right,
                })
            })?;
            let start = desc.pins.len();
            desc.pins.extend(named);
            run(desc, start, None);
        }
        if let Some(b) = raw.pin_box.take() {
            let start = desc.pins.len();
            let inside = self.pin_boxes(b, &desc.positions)?;
            desc.pins.extend(inside);
            run(desc, start, None);
        }
        if let Some(f) = raw.pin_file.take() {
            let (file, listed) = self.pin_file(f)?;
            let start = desc.pins.len();
            desc.pins.extend(listed.iter().map(|l| l.index));
            run(desc, start, Some((file, listed.iter().map(|l| l.line as u32).collect())));
        }
        self.origin.pins = runs;
        Ok(())
    }

    /// The particles inside the boxes of `pin_box` (one box or a list), box by box.
    fn pin_boxes(
        &mut self,
        b: Spanned<OneOrList<RawBox>>,
        positions: &[[f32; 3]],
    ) -> Result<Vec<u32>, SceneError> {
        let value = b.span();
        let boxes: Vec<(String, usize, RawBox)> = match b.into_inner() {
            OneOrList::One(one) => {
                self.spans.key("pin_box", value.clone());
                vec![("pin_box".to_string(), value.start, one)]
            }
            OneOrList::List(list) => {
                self.spans.list("pin_box", value.clone(), list.iter().map(|b| b.span().start));
                if list.is_empty() {
                    return Err(self.fail("pin_box", value.start, SceneRule::EmptyList { key: "pin_box" }));
                }
                list.into_iter()
                    .enumerate()
                    .map(|(i, b)| (format!("pin_box[{i}]"), b.span().start, b.into_inner()))
                    .collect()
            }
        };
        let mut pins = Vec::new();
        for (place, at, b) in boxes {
            let corner = |v: &Spanned<Fixed<f64, 3>>, key: &str| {
                point(v.get_ref()).map_err(|r| self.fail(&format!("{place}.{key}"), v.span().start, r))
            };
            let (min, max) = (corner(&b.min, "min")?, corner(&b.max, "max")?);
            if let Some(a) = (0..3).find(|&a| min[a] > max[a]) {
                let rule = SceneRule::BoxInverted { axis: ['x', 'y', 'z'][a], min: min[a], max: max[a] };
                return Err(self.fail(&place, at, rule));
            }
            let inside = in_box(positions, min, max);
            if inside.is_empty() {
                let (mut lo, mut hi) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
                for p in positions {
                    for a in 0..3 {
                        lo[a] = lo[a].min(p[a]);
                        hi[a] = hi[a].max(p[a]);
                    }
                }
                return Err(self.fail(&place, at, SceneRule::EmptyBox { min, max, lo, hi }));
            }
            pins.extend(inside);
        }
        Ok(pins)
    }

    /// The indices `pin_file` lists (the file as shown in messages, and each index with its line).
    fn pin_file(&mut self, f: Spanned<String>) -> Result<(String, Vec<ListedIndex>), SceneError> {
        self.spans.key("pin_file", f.span());
        let at = f.span().start;
        let path = resolve(self.source.path(), f.get_ref());
        let file = one_line(&path.display().to_string());
        let text = read_text(&path, MAX_SCENE_BYTES).map_err(|(line, problem)| match line {
            Some(line) => self.fail_in(&file, line, "pin_file", SceneRule::PinFileLine(problem)),
            None => self.fail("pin_file", at, SceneRule::PinFile { file: file.clone(), problem }),
        })?;
        let listed = parse_index_list(&text)
            .map_err(|e| self.fail_in(&file, e.line, "pin_file", SceneRule::PinFileLine(e.problem)))?;
        if listed.is_empty() {
            let problem = "the file lists no particle index (one index per line, # for comments)".to_string();
            return Err(self.fail("pin_file", at, SceneRule::PinFile { file, problem }));
        }
        Ok((file, listed))
    }

    /// `non_manifold`, and the constraint kinds beyond distance: the batched kinds of the registry
    /// (bending, tethers: each kind says what its keys mean, see `weft_core::kinds`), volume,
    /// drag and lift, self-collision. A kind is on when any of its keys is given; its other keys
    /// take their defaults.
    fn kinds(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        tolerance: Option<&StrainTolerance>,
    ) -> Result<(), SceneError> {
        if let Some(p) = &raw.non_manifold {
            self.spans.key("non_manifold", p.span());
            desc.non_manifold = match p.get_ref() {
                NonManifoldPolicy::Error => NonManifold::Error,
                NonManifoldPolicy::Skip => NonManifold::Skip,
            };
        }

        let has_pins = !desc.pins.is_empty();
        desc.kinds = KindDescs::describe(&mut KindKeys { cx: self, raw, tolerance, has_pins })?;

        let pressure = self.optional("pressure", &raw.pressure)?;
        let volume = self.material(
            ("volume_compliance", raw.volume_compliance.take()),
            ("volume_stiffness", raw.volume_stiffness.take()),
        )?;
        if pressure.is_some() || volume.is_some() {
            desc.volume = Some(VolumeDesc {
                pressure: pressure.unwrap_or(1.0),
                elasticity: volume.unwrap_or(Elasticity::RIGID),
            });
        }

        let drag = self.optional("drag", &raw.drag)?;
        let lift = self.optional("lift", &raw.lift)?;
        if drag.is_some() || lift.is_some() {
            desc.aero = Some(AeroDesc { drag: drag.unwrap_or(0.0), lift: lift.unwrap_or(0.0) });
        }

        // Self-collision: `self_collision = true | "particles" | "triangles"` with a
        // `self_thickness`; `self_friction` optional.
        let on = raw.self_collision.as_ref().map(|s| {
            self.spans.key("self_collision", s.span());
            let mode = match s.get_ref() {
                RawSelfCollision::Off => None,
                RawSelfCollision::Particles => Some(SelfCollisionMode::Particles),
                RawSelfCollision::Triangles => Some(SelfCollisionMode::Triangles),
            };
            desc.self_collision_mode = mode.unwrap_or_default();
            (mode.is_some(), s.span().start)
        });
        let thickness = self.optional("self_thickness", &raw.self_thickness)?;
        let friction = self.optional("self_friction", &raw.self_friction)?;
        match (on, thickness) {
            (Some((true, _)), Some(thickness)) => {
                desc.self_collision =
                    Some(SelfCollisionDesc { thickness, friction: friction.unwrap_or(0.0) });
            }
            (Some((true, at)), None) => {
                let needs = "`self_thickness` (m): the distance the layers keep from each other";
                return Err(self.fail(
                    "self_collision",
                    at,
                    SceneRule::Needs { key: "self_collision", needs },
                ));
            }
            _ => {
                for (key, v) in
                    [("self_thickness", &raw.self_thickness), ("self_friction", &raw.self_friction)]
                {
                    if let Some(v) = v {
                        let needs = "`self_collision = \"triangles\"` (or `true`)";
                        return Err(self.fail(key, v.span().start, SceneRule::Needs { key, needs }));
                    }
                }
            }
        }
        Ok(())
    }
}

impl Cloth<'_> {
    /// `follow`: the name of a collider, or the keys of a rigid path, that the pins follow.
    fn follow(&mut self, raw: &mut RawCloth, desc: &mut ClothDesc) -> Result<(), SceneError> {
        let Some(f) = raw.follow.take() else { return Ok(()) };
        self.spans.key("follow", f.span());
        let at = f.span().start;
        desc.follow = Some(match f.into_inner() {
            RawFollow::Collider(name) => FollowDesc::Collider(name),
            RawFollow::Keys(list) => {
                let fail = |place: &str, at: usize, rule: SceneRule| self.fail(place, at, rule);
                FollowDesc::Keys(super::collider::follow_keys(&list, at, &fail)?)
            }
        });
        Ok(())
    }
}

impl Cloth<'_> {
    /// `render_mesh` (an OBJ file rendered in place of the cloth, see `weft_core::binding`) and
    /// `cache_proxy`.
    fn render_mesh(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        limits: &Limits,
    ) -> Result<(), SceneError> {
        let cache_proxy = raw.cache_proxy.take();
        if let Some(c) = &cache_proxy {
            self.spans.key("cache_proxy", c.span());
        }
        let Some(mesh) = raw.render_mesh.take() else {
            return match cache_proxy {
                Some(c) => Err(self.fail(
                    "cache_proxy",
                    c.span().start,
                    SceneRule::Needs { key: "cache_proxy", needs: "a `render_mesh`" },
                )),
                None => Ok(()),
            };
        };
        self.spans.key("render_mesh", mesh.span());
        let at = mesh.span().start;
        let path = resolve(self.source.path(), mesh.get_ref());
        let file = one_line(&path.display().to_string());
        let obj = read_obj_limited(&path, &ObjectSelection::Only, limits).map_err(
            |ObjError { line, problem }| match line {
                Some(line) => self.fail_in(&file, line, "render_mesh", SceneRule::Obj(problem)),
                None => self.fail("render_mesh", at, SceneRule::ObjFile { file: file.clone(), problem }),
            },
        )?;
        self.origin.render = Some(MeshLines {
            file,
            vertex_numbers: obj.vertex_numbers,
            vertex_lines: obj.vertex_lines,
            ..MeshLines::default()
        });
        desc.render_mesh = Some(RenderMeshDesc {
            positions: obj.positions,
            polygons: obj.polygons,
            cache_proxy: cache_proxy.is_some_and(|c| c.into_inner()),
        });
        Ok(())
    }
}

/// A cloth's keys of the batched constraint kinds, as their descriptions read them (see
/// [`SceneKeys`]).
struct KindKeys<'c, 'a> {
    cx: &'c mut Cloth<'a>,
    raw: &'c mut RawCloth,
    tolerance: Option<&'c StrainTolerance>,
    has_pins: bool,
}

impl KindKeys<'_, '_> {
    /// The number `key`, taken out of the table.
    fn take_number(&mut self, key: &'static str) -> Option<Spanned<f64>> {
        match self.raw.take_kind_key(key) {
            None => None,
            Some(KindValue::Number(v)) => Some(v),
            Some(_) => panic!("`{key}` is not a number in the registry, read as one"),
        }
    }

    /// Where `key` (read already) is in the file.
    fn at(&self, key: &'static str) -> usize {
        self.cx.spans.locate(key, None).0
    }
}

impl SceneKeys for KindKeys<'_, '_> {
    type Error = SceneError;

    fn given(&self, key: &'static str) -> bool {
        self.raw.has_kind_key(key)
    }

    fn number(&mut self, key: &'static str) -> Result<Option<f32>, SceneError> {
        match self.take_number(key) {
            Some(v) => self.cx.scalar(key, &v).map(Some),
            None => Ok(None),
        }
    }

    fn switch(&mut self, key: &'static str) -> Option<bool> {
        match self.raw.take_kind_key(key)? {
            KindValue::Switch(v) => {
                self.cx.spans.key(key, v.span());
                Some(*v.get_ref())
            }
            _ => panic!("`{key}` is not a switch in the registry, read as one"),
        }
    }

    fn pairs(&mut self, key: &'static str) -> Result<Option<Vec<[u32; 2]>>, SceneError> {
        match self.raw.take_kind_key(key) {
            None => Ok(None),
            Some(KindValue::Pairs(list)) => self.cx.list(key, list, indices).map(Some),
            Some(_) => panic!("`{key}` is not a list of pairs in the registry, read as one"),
        }
    }

    fn material(
        &mut self,
        compliance: &'static str,
        stiffness: &'static str,
    ) -> Result<Option<Elasticity>, SceneError> {
        let (c, k) = (self.take_number(compliance), self.take_number(stiffness));
        self.cx.material((compliance, c), (stiffness, k))
    }

    fn needs(&self, key: &'static str, needs: &'static str) -> SceneError {
        self.cx.fail(key, self.at(key), SceneRule::Needs { key, needs })
    }

    fn conflict(&self, key: &'static str, first: &'static str, second: &'static str) -> SceneError {
        self.cx.fail(key, self.at(key), SceneRule::Conflict { first, second })
    }

    fn tolerance(&self) -> Option<&StrainTolerance> {
        self.tolerance
    }

    fn has_pins(&self) -> bool {
        self.has_pins
    }
}

/// A point in m (or m/s) of finite `f32`s.
fn point(p: &Fixed<f64, 3>) -> Result<[f32; 3], SceneRule> {
    let Fixed([x, y, z]) = *p;
    Ok([to_f32(x)?, to_f32(y)?, to_f32(z)?])
}

/// A tuple of particle indices.
fn indices<const N: usize>(t: &Fixed<i64, N>) -> Result<[u32; N], SceneRule> {
    let mut out = [0u32; N];
    for (slot, &v) in out.iter_mut().zip(&t.0) {
        *slot = to_index(v)?;
    }
    Ok(out)
}
