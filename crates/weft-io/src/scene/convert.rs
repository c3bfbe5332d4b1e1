//! From the raw TOML structures to `weft-core`'s [`SimSettings`] and [`ClothDesc`]s.
//!
//! This step applies the rules that belong to the file format: numbers that must be finite and fit
//! their type, indices that must be whole numbers in `0..=u32::MAX`, keys that exclude each other,
//! keys that only a grid may have, and material numbers through `weft-core`'s unit types. Every
//! other rule (indices in range, self edges, duplicates, lengths that pair up, masses, counts, ...)
//! is left to `weft-core`, whose errors [`super::Scene::build_model`] maps back to lines with the
//! spans recorded here.

use toml::Spanned;
use weft_core::Rule;
use weft_core::builder::{ClothDesc, EdgeSet, MassSpec};
use weft_core::grid::{GridDesc, GridMesh, GridPlane};
use weft_core::limits::Limits;
use weft_core::settings::SimSettings;
use weft_core::units::UnitError;
use weft_core::units::{Compliance, Elasticity, Stiffness};

use super::error::{SceneError, SceneRule};
use super::raw::{Corner, Fixed, Plane, RawCloth, RawGrid, RawScene, RawSimulation, SpannedList};
use super::spans::{KeySpans, Source, one_line};

/// A scene converted: settings and cloths for `weft-core`, with the spans to map its errors back.
#[derive(Debug)]
pub(super) struct Converted {
    pub(super) settings: SimSettings,
    pub(super) simulation: KeySpans,
    pub(super) cloths: Vec<ClothDesc>,
    pub(super) cloth_spans: Vec<KeySpans>,
}

/// Converts a parsed scene, checking the format's own rules.
pub(super) fn convert(raw: RawScene, source: &Source, limits: &Limits) -> Result<Converted, SceneError> {
    let (settings, simulation) = simulation(raw.simulation, source)?;
    let mut cloths = Vec::with_capacity(raw.cloth.len());
    let mut cloth_spans = Vec::with_capacity(raw.cloth.len());
    for cloth in raw.cloth {
        let (desc, spans) = Cloth::convert(cloth, source, limits)?;
        cloths.push(desc);
        cloth_spans.push(spans);
    }
    Ok(Converted { settings, simulation, cloths, cloth_spans })
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
fn simulation(raw: Spanned<RawSimulation>, source: &Source) -> Result<(SimSettings, KeySpans), SceneError> {
    let mut spans = KeySpans::new(raw.span());
    let raw = raw.into_inner();
    let fail = |key: &str, at: usize, rule: SceneRule| SceneError::Invalid {
        at: source.pos(at),
        place: format!("simulation.{key}"),
        rule,
    };
    let mut settings = SimSettings::default();

    spans.key("fps", raw.fps.span());
    settings.fps = finite(*raw.fps.get_ref()).map_err(|r| fail("fps", raw.fps.span().start, r))?;

    let counts = [
        ("frames", Some(raw.frames), &mut settings.frames),
        ("substeps", raw.substeps, &mut settings.substeps),
        ("iterations", raw.iterations, &mut settings.iterations),
    ];
    for (key, value, slot) in counts {
        if let Some(v) = value {
            spans.key(key, v.span());
            *slot = to_count(*v.get_ref()).map_err(|r| fail(key, v.span().start, r))?;
        }
    }
    if let Some(g) = raw.gravity {
        spans.key("gravity", g.span());
        settings.gravity = point(g.get_ref()).map_err(|r| fail("gravity", g.span().start, r))?;
    }
    if let Some(d) = raw.velocity_damping {
        spans.key("velocity_damping", d.span());
        settings.velocity_damping =
            to_f32(*d.get_ref()).map_err(|r| fail("velocity_damping", d.span().start, r))?;
    }
    Ok((settings, spans))
}

/// Converts one `[[cloth]]`, recording its spans as it goes.
struct Cloth<'a> {
    source: &'a Source,
    /// The name as shown in messages (control characters escaped).
    name: String,
    spans: KeySpans,
}

/// What a grid leaves for the later keys: shear diagonals and named corners.
#[derive(Default)]
struct GridParts {
    shear: Vec<[u32; 2]>,
    /// Bottom-left, bottom-right, top-left, top-right.
    corners: [u32; 4],
}

/// The start of an optional value, for keys that are refused whatever their value.
fn start<T>(v: &Option<Spanned<T>>) -> Option<usize> {
    v.as_ref().map(|v| v.span().start)
}

impl<'a> Cloth<'a> {
    fn convert(
        raw: Spanned<RawCloth>,
        source: &'a Source,
        limits: &Limits,
    ) -> Result<(ClothDesc, KeySpans), SceneError> {
        let mut cx =
            Cloth { source, name: one_line(raw.get_ref().name.get_ref()), spans: KeySpans::new(raw.span()) };
        let mut raw = raw.into_inner();
        cx.spans.key("name", raw.name.span());
        let mut desc = ClothDesc { name: std::mem::take(raw.name.get_mut()), ..ClothDesc::default() };
        let grid = cx.shape(&mut raw, &mut desc, limits)?;
        if let Some(v) = raw.velocities.take() {
            desc.velocities = Some(cx.list("velocities", v, point)?);
        }
        cx.mass(&raw, &mut desc)?;
        cx.edge_sets(&mut raw, &mut desc, grid.shear)?;
        cx.pins(&mut raw, &mut desc, grid.corners)?;
        Ok((desc, cx.spans))
    }

    /// An error at byte `at`, in `cloth 'NAME': place` (or just the cloth if `place` is empty).
    fn fail(&self, place: &str, at: usize, rule: SceneRule) -> SceneError {
        let sep = if place.is_empty() { "" } else { ": " };
        SceneError::Invalid {
            at: self.source.pos(at),
            place: format!("cloth '{}'{sep}{place}", self.name),
            rule,
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

    /// Particles: explicit `positions` (and `triangles`) or a `grid` (which makes its own
    /// triangles and stretch edges, pushed here as the first edge set).
    fn shape(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        limits: &Limits,
    ) -> Result<GridParts, SceneError> {
        self.exclusive(("positions", &raw.positions), ("grid", &raw.grid))?;
        let Some(grid) = raw.grid.take() else {
            self.refuse(&[("shear", start(&raw.shear)), ("pin_corners", start(&raw.pin_corners))], |key| {
                SceneRule::NeedsGrid { key }
            })?;
            let Some(positions) = raw.positions.take() else {
                return Err(self.fail("", self.spans.table(), SceneRule::NoShape));
            };
            desc.positions = self.list("positions", positions, point)?;
            if let Some(t) = raw.triangles.take() {
                desc.triangles = self.list("triangles", t, indices)?;
            }
            return Ok(GridParts::default());
        };
        self.refuse(
            &[
                ("triangles", start(&raw.triangles)),
                ("edges", start(&raw.edges)),
                ("rest_lengths", start(&raw.rest_lengths)),
                ("shear_edges", start(&raw.shear_edges)),
            ],
            |key| SceneRule::GeneratedByGrid { key },
        )?;
        self.spans.key("grid", grid.span());
        let (mesh, corners) = self.grid(grid, limits)?;
        desc.positions = mesh.positions;
        desc.triangles = mesh.triangles;
        desc.edge_sets.push(EdgeSet { edges: mesh.structural, ..EdgeSet::stretch() });
        let mut shear = mesh.shear;
        if let Some(s) = &raw.shear {
            self.spans.key("shear", s.span());
            if !*s.get_ref() {
                shear.clear();
            }
        }
        Ok(GridParts { shear, corners })
    }

    /// Generates the grid (checked against `limits` before anything is allocated); returns the
    /// mesh and the corners bottom-left, bottom-right, top-left, top-right.
    fn grid(&mut self, grid: Spanned<RawGrid>, limits: &Limits) -> Result<(GridMesh, [u32; 4]), SceneError> {
        let raw = grid.into_inner();
        let place = |key: &str| format!("grid.{key}");
        let res = &raw.resolution;
        let mut resolution = [0u32; 2];
        for (slot, &v) in resolution.iter_mut().zip(&res.get_ref().0) {
            *slot = to_count(v).map_err(|r| self.fail(&place("resolution"), res.span().start, r))?;
        }
        let mut size = [0.0f32; 2];
        for (slot, &v) in size.iter_mut().zip(&raw.size.get_ref().0) {
            *slot = to_f32(v).map_err(|r| self.fail(&place("size"), raw.size.span().start, r))?;
        }
        let mut origin = [0.0f32; 3];
        if let Some(o) = &raw.origin {
            origin = point(o.get_ref()).map_err(|r| self.fail(&place("origin"), o.span().start, r))?;
        }
        let plane = match raw.plane.as_ref().map(|p| *p.get_ref()) {
            None | Some(Plane::Xy) => GridPlane::XY,
            Some(Plane::Xz) => GridPlane::XZ,
            Some(Plane::Yz) => GridPlane::YZ,
        };
        let desc = GridDesc { resolution, size, origin, plane };
        let mesh = desc.generate(limits).map_err(|(field, rule)| {
            let at = match (field, &raw.origin) {
                ("size", _) => raw.size.span().start,
                ("origin", Some(o)) => o.span().start,
                _ => res.span().start,
            };
            self.fail(&place(field), at, SceneRule::Model(rule))
        })?;
        Ok((mesh, desc.corners()))
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

    /// A material given as `X_compliance` (m/N) or `X_stiffness` (N/m), rigid if neither.
    fn elasticity(
        &mut self,
        compliance: (&'static str, Option<Spanned<f64>>),
        stiffness: (&'static str, Option<Spanned<f64>>),
    ) -> Result<Elasticity, SceneError> {
        self.exclusive((compliance.0, &compliance.1), (stiffness.0, &stiffness.1))?;
        if let (key, Some(c)) = compliance {
            let v = self.scalar(key, &c)?;
            let c = unit(v, Compliance::new).map_err(|r| self.fail(key, c.span().start, r))?;
            return Ok(Elasticity::Compliance(c));
        }
        if let (key, Some(k)) = stiffness {
            let v = self.scalar(key, &k)?;
            let k = unit(v, Stiffness::new).map_err(|r| self.fail(key, k.span().start, r))?;
            return Ok(Elasticity::Stiffness(k));
        }
        Ok(Elasticity::RIGID)
    }

    /// The stretch set (the grid's, already pushed, or the explicit `edges` and `rest_lengths`)
    /// and the shear set (`grid_shear` or the explicit `shear_edges`), with their materials.
    fn edge_sets(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        grid_shear: Vec<[u32; 2]>,
    ) -> Result<(), SceneError> {
        let mut stretch = match desc.edge_sets.pop() {
            Some(grid_set) => grid_set,
            None => {
                let mut set = EdgeSet::stretch();
                if let Some(e) = raw.edges.take() {
                    set.edges = self.list("edges", e, indices)?;
                }
                if let Some(r) = raw.rest_lengths.take() {
                    set.rest_lengths = Some(self.list("rest_lengths", r, |&v| to_f32(v))?);
                }
                set
            }
        };
        stretch.elasticity = self.elasticity(
            ("stretch_compliance", raw.stretch_compliance.take()),
            ("stretch_stiffness", raw.stretch_stiffness.take()),
        )?;
        if let Some(d) = &raw.stretch_damping {
            stretch.damping = self.scalar("stretch_damping", d)?;
        }

        let mut shear = EdgeSet::shear();
        shear.edges = match raw.shear_edges.take() {
            Some(e) => self.list("shear_edges", e, indices)?,
            None => grid_shear,
        };
        shear.elasticity = self.elasticity(
            ("shear_compliance", raw.shear_compliance.take()),
            ("shear_stiffness", raw.shear_stiffness.take()),
        )?;
        if let Some(d) = &raw.shear_damping {
            shear.damping = self.scalar("shear_damping", d)?;
        }
        desc.edge_sets = vec![stretch, shear];
        Ok(())
    }

    /// Explicit `pins`, then the grid corners named in `pin_corners`.
    fn pins(
        &mut self,
        raw: &mut RawCloth,
        desc: &mut ClothDesc,
        corners: [u32; 4],
    ) -> Result<(), SceneError> {
        if let Some(p) = raw.pins.take() {
            desc.pins = self.list("pins", p, |&i| to_index(i))?;
        }
        if let Some(c) = raw.pin_corners.take() {
            let [bottom_left, bottom_right, top_left, top_right] = corners;
            let named = self.list("pin_corners", c, |corner| {
                Ok(match corner {
                    Corner::BottomLeft => bottom_left,
                    Corner::BottomRight => bottom_right,
                    Corner::TopLeft => top_left,
                    Corner::TopRight => top_right,
                })
            })?;
            desc.pins.extend(named);
        }
        Ok(())
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
