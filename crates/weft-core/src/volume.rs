//! Volume (pressure): one global constraint per closed cloth, `C = V − p·V₀`, where `V` is the
//! enclosed volume (m³), `V₀` its rest value and `p` the pressure factor (1 keeps the volume, 2
//! inflates toward twice it).
//!
//! ```text
//! V     = (1/6) Σ_t (a − o) · ((b − o) × (c − o))     over the triangles [a, b, c] (m³);
//!                                                     o: any fixed point (its choice cancels)
//! ∇ᵢV   = (1/6) Σ_{t ∋ i} (x_j − xᵢ) × (x_k − xᵢ)     over the triangles [i, j, k] (rotated so i is
//!                                                     first): a third of their area vectors (m²)
//! C     = V − p·V₀
//! Δλ    = (−C − α̃λ) / (Σᵢ wᵢ|∇ᵢV|² + α̃),  α̃ = α/h²        xᵢ += wᵢ·∇ᵢV·Δλ
//! ```
//!
//! Units: compliance `α` in m⁶/J = m⁵/N (`C` is in m³), so `α̃` is in m⁴/kg like `w|∇V|²`; `λ`
//! is in kg/m, and `λ/h²` is the pressure the constraint applied during the step, in N/m² = Pa
//! (negative when it pulls the surface in).
//!
//! The surface must be closed (every edge shared by exactly two triangles) and consistently
//! oriented (each interior edge run in opposite directions by its two triangles), or the
//! "inside" is not defined: anything else is [`Rule::NotClosed`], naming the first open edge,
//! non-manifold edge or edge where the orientation flips. **Orientation:** `V` is positive when
//! the triangles wind counter-clockwise seen from outside (outward normals). A closed surface
//! whose rest volume comes out negative is wound the other way round: its triangles are flipped
//! (`[a, b, c]` stored as `[a, c, b]`) so the stored constraint always has outward normals and
//! `V₀ > 0`. A closed surface enclosing no volume is refused.
//!
//! Its gradient touches every particle of the cloth, so it is not batched: the kernels assemble
//! `V`, `∇V` and `Σ w|∇V|²` in parallel in chunks of [`CHUNK`] with a fixed reduction order
//! (deterministic for any thread count), then project once per iteration. [`VolumeWork`] is where
//! the threads of a step leave those partial results.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::cloth::ClothContext;
use crate::digest::{Digest, digest_debug};
use crate::error::{BuildError, Rule, widen};
use crate::kinds::{Column, Figure, KindInfo, Plot, SummaryLine};
use crate::units::Elasticity;

/// What the output says of the volume constraints (a phased kind of the registry,
/// [`crate::kinds`]): the largest `|V − p·V₀|/(p·V₀)` after a frame.
pub const INFO: KindInfo = KindInfo {
    name: "volume",
    unit: "m³",
    columns: &[Column {
        name: "volume_max_rel_error",
        value: Figure::MaxRel,
        plot: Some(Plot { title: "Volume: largest relative error", axis: "error (%)", scale: 100.0 }),
    }],
    summary: SummaryLine::RelativeError,
    example: &[],
};

/// Particles or triangles per work item of the volume kernels (fixed, so the reduction order
/// depends on the cloth, never on the thread count).
pub const CHUNK: usize = 4096;

/// Volume of a cloth, as a scene states it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VolumeDesc {
    /// Target volume as a multiple of the rest volume (`> 0`).
    pub pressure: f32,
    /// Compliance in m⁵/N, or stiffness in N/m⁵.
    pub elasticity: Elasticity,
}

/// One volume constraint of the model.
#[derive(Debug, Clone, PartialEq)]
pub struct VolumeConstraint {
    /// The cloth's particles in the model.
    pub particles: Range<usize>,
    /// The cloth's triangles, global indices, consistently oriented (outward normals).
    pub triangles: Vec<[u32; 3]>,
    /// For particle `particles.start + i`, its incident triangles are
    /// `incident[incident_start[i]..incident_start[i + 1]]` (`particles.len() + 1` entries).
    pub incident_start: Vec<u32>,
    /// For each incident triangle of a particle `i`, its other two corners `[j, k]` (global) in
    /// the triangle's winding order `i → j → k`; in triangle order.
    pub incident: Vec<[u32; 2]>,
    /// Volume of the rest shape in m³ (`> 0`).
    pub rest_volume: f64,
    /// Pressure factor `p`.
    pub pressure: f32,
    /// Compliance `α` in m⁵/N.
    pub compliance: f32,
    /// The multiplier `λ`, the kernels' scratch space and partial sums.
    pub work: VolumeWork,
}

impl Digest for VolumeConstraint {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let VolumeConstraint {
            particles,
            triangles,
            incident_start,
            incident,
            rest_volume,
            pressure,
            compliance,
            work,
        } = self;
        particles.digest(h);
        triangles.digest(h);
        incident_start.digest(h);
        incident.digest(h);
        rest_volume.digest(h);
        pressure.digest(h);
        compliance.digest(h);
        digest_debug(work, h);
    }
}

impl VolumeConstraint {
    /// The target volume `p·V₀` in m³.
    pub fn target(&self) -> f64 {
        self.pressure as f64 * self.rest_volume
    }

    /// The multiplier `λ` in kg/m, as the last iteration left it (reset each step).
    pub fn lambda(&self) -> f64 {
        self.work.lambda.get()
    }

    /// Enclosed volume in m³ of the triangles at `positions` (records `[x, y, z, …]`), summed in
    /// `f64` in triangle order, relative to the cloth's first particle.
    pub fn volume_of(&self, positions: &[[f32; 4]]) -> f64 {
        let o = positions[self.particles.start];
        let rel = |p: u32| {
            let x = positions[p as usize];
            [0, 1, 2].map(|k| x[k] as f64 - o[k] as f64)
        };
        self.triangles.iter().map(|t| triple(rel(t[0]), rel(t[1]), rel(t[2]))).sum::<f64>() / 6.0
    }
}

/// `a · (b × c)`.
fn triple(a: [f64; 3], b: [f64; 3], c: [f64; 3]) -> f64 {
    a[0] * (b[1] * c[2] - b[2] * c[1])
        + a[1] * (b[2] * c[0] - b[0] * c[2])
        + a[2] * (b[0] * c[1] - b[1] * c[0])
}

/// An `f64` that the threads of a step write and read through a shared reference: each slot is
/// written by one work item in a phase and read by others only after the phase's barrier. Relaxed
/// atomic loads and stores compile to plain ones; they keep the kernels free of `unsafe` here.
#[derive(Debug, Default)]
pub struct SharedF64(AtomicU64);

impl SharedF64 {
    /// A slot holding `v`.
    pub fn new(v: f64) -> Self {
        SharedF64(AtomicU64::new(v.to_bits()))
    }

    /// The value.
    #[inline]
    pub fn get(&self) -> f64 {
        f64::from_bits(self.0.load(Ordering::Relaxed))
    }

    /// Overwrites the value.
    #[inline]
    pub fn set(&self, v: f64) {
        self.0.store(v.to_bits(), Ordering::Relaxed)
    }
}

impl Clone for SharedF64 {
    fn clone(&self) -> Self {
        SharedF64::new(self.get())
    }
}

impl PartialEq for SharedF64 {
    /// Equal bits.
    fn eq(&self, other: &Self) -> bool {
        self.get().to_bits() == other.get().to_bits()
    }
}

/// The mutable part of a [`VolumeConstraint`]: `λ`, and where the kernels leave each particle's
/// gradient and each work item's partial sums between the phases of an iteration. Between steps
/// only `λ` has a meaning.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VolumeWork {
    /// `λ` in kg/m.
    pub lambda: SharedF64,
    /// `∇ᵢV` (m²) of each particle of the cloth, `[x, y, z]`.
    pub gradient: Vec<[SharedF64; 3]>,
    /// `6·V` (m³) of each chunk of [`CHUNK`] triangles.
    pub volume_parts: Vec<SharedF64>,
    /// `Σ wᵢ|∇ᵢV|²` (m⁴/kg) and `max wᵢ|∇ᵢV|` (m²/kg) of each chunk of [`CHUNK`] particles.
    pub mass_parts: Vec<[SharedF64; 2]>,
}

impl VolumeWork {
    /// Work space for `particles` particles and `triangles` triangles, `λ = 0`.
    pub fn new(particles: usize, triangles: usize) -> Self {
        VolumeWork {
            lambda: SharedF64::new(0.0),
            gradient: (0..particles).map(|_| Default::default()).collect(),
            volume_parts: (0..triangles.div_ceil(CHUNK)).map(|_| SharedF64::default()).collect(),
            mass_parts: (0..particles.div_ceil(CHUNK)).map(|_| Default::default()).collect(),
        }
    }
}

/// Why a triangle list is not a closed, consistently oriented surface (local indices), or `None`.
fn not_closed(ctx: &ClothContext<'_>) -> Option<String> {
    let triangles = &ctx.desc.triangles;
    let topology = ctx.topology;
    if triangles.is_empty() {
        return Some("the cloth has no triangles".into());
    }
    if let Some(e) = topology.non_manifold.first() {
        return Some(format!(
            "edge [{}, {}] is shared by {} triangles (a closed surface has exactly two at every edge)",
            e.edge[0],
            e.edge[1],
            e.triangles.len()
        ));
    }
    if let Some([a, b]) = topology.boundary.first() {
        return Some(format!("open boundary edge [{a}, {b}] belongs to one triangle only"));
    }
    if !topology.consistently_oriented {
        // Two triangles that run their shared edge the same way round.
        let runs = |t: &[u32; 3], a: u32, b: u32| (0..3).any(|k| t[k] == a && t[(k + 1) % 3] == b);
        for e in &topology.interior {
            let [a, b] = e.edge;
            let [t0, t1] = e.triangles.map(|t| &triangles[t as usize]);
            if runs(t0, a, b) == runs(t1, a, b) {
                return Some(format!(
                    "inconsistent orientation at edge [{a}, {b}]: triangles {} and {} both run it the same way round",
                    e.triangles[0], e.triangles[1]
                ));
            }
        }
    }
    None
}

/// The volume constraint of one cloth, if it asks for one, or the rule it breaks. `None` too for
/// a cloth whose particles are all pinned (it can never move).
pub(crate) fn build(ctx: &ClothContext<'_>) -> Result<Option<VolumeConstraint>, BuildError> {
    let Some(desc) = ctx.desc.volume else { return Ok(None) };
    let p = desc.pressure;
    if !p.is_finite() {
        return Err(ctx.error("pressure", None, Rule::NotFinite { value: p.to_string() }));
    }
    if p <= 0.0 {
        return Err(ctx.error("pressure", None, Rule::NotPositive { value: widen(p) }));
    }
    let compliance = desc.elasticity.compliance().get();
    if !(compliance * ctx.time_step.inv_h2).is_finite() {
        return Err(ctx.error(
            "volume_compliance",
            None,
            Rule::TooLargeForTimeStep { value: compliance, h: ctx.time_step.h64, what: "α/h²" },
        ));
    }
    if let Some(problem) = not_closed(ctx) {
        return Err(ctx.error("triangles", None, Rule::NotClosed { problem }));
    }
    let positions = &ctx.desc.positions;
    let o = positions[0];
    let rel = |p: u32| [0, 1, 2].map(|k| positions[p as usize][k] as f64 - o[k] as f64);
    let mut triangles = ctx.desc.triangles.clone();
    let mut rest_volume =
        triangles.iter().map(|t| triple(rel(t[0]), rel(t[1]), rel(t[2]))).sum::<f64>() / 6.0;
    if rest_volume < 0.0 {
        // Wound clockwise seen from outside: flip to outward normals.
        for t in &mut triangles {
            t.swap(1, 2);
        }
        rest_volume = -rest_volume;
    }
    if rest_volume <= 0.0 {
        return Err(ctx.error(
            "triangles",
            None,
            Rule::NotClosed {
                problem: format!("the surface encloses no volume in the rest shape ({rest_volume} m³)"),
            },
        ));
    }
    if !ctx.pinned.contains(&false) {
        return Ok(None);
    }
    let n = positions.len();
    let mut incident_start = vec![0u32; n + 1];
    for t in &triangles {
        for &i in t {
            incident_start[i as usize + 1] += 1;
        }
    }
    for i in 0..n {
        incident_start[i + 1] += incident_start[i];
    }
    let mut fill: Vec<u32> = incident_start.clone();
    let mut incident = vec![[0u32; 2]; incident_start[n] as usize];
    let offset = ctx.offset;
    for t in &triangles {
        for k in 0..3 {
            let i = t[k] as usize;
            incident[fill[i] as usize] = [t[(k + 1) % 3] + offset, t[(k + 2) % 3] + offset];
            fill[i] += 1;
        }
    }
    let start = offset as usize;
    Ok(Some(VolumeConstraint {
        particles: start..start + n,
        triangles: triangles.iter().map(|t| t.map(|p| p + offset)).collect(),
        incident_start,
        incident,
        rest_volume,
        pressure: p,
        compliance,
        work: VolumeWork::new(n, triangles.len()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_slots_clone_and_compare_by_bits() {
        let a = SharedF64::new(1.5);
        let b = a.clone();
        b.set(-0.0);
        assert_eq!(a.get(), 1.5);
        assert_ne!(b, SharedF64::new(0.0), "bits, not values: -0 is not +0");
        assert_eq!(VolumeWork::new(5000, 10).mass_parts.len(), 2);
    }
}
