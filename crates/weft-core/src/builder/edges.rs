//! A cloth's distance constraints (stretch and shear) from its edge lists: each edge checked
//! (in range, not a self-edge, not repeated, particles apart), its rest length taken or checked,
//! its material checked against the time step; edges whose both particles are pinned are left
//! out and counted.

use super::particles::check_index;
use crate::cloth::{ClothDesc, ClothErrors, EdgeSet};
use crate::error::{BuildError, Rule, widen};
use crate::kinds::distance::{DistanceConstraint, MAX_LENGTH, MIN_LENGTH};
use crate::settings::TimeStep;
use crate::topology::{distance, group_by_vertex};

/// The distance constraints of `desc` (particle indices global: local `+ offset`) and how many
/// were left out because both their particles are pinned.
pub(super) fn distance_constraints(
    desc: &ClothDesc,
    pinned: &[bool],
    offset: u32,
    time_step: &TimeStep,
    e: ClothErrors<'_>,
) -> Result<(Vec<DistanceConstraint>, usize), BuildError> {
    let earlier = earlier_edges(desc);
    let total: usize = desc.edge_sets.iter().map(|s| s.edges.len()).sum();
    let mut constraints = Vec::with_capacity(total);
    let mut dropped = 0;
    let mut g = 0;
    for set in &desc.edge_sets {
        check_material(set, time_step, e)?;
        for (i, &[a, b]) in set.edges.iter().enumerate() {
            let repeated = (earlier[g] != NONE).then(|| edge_place(desc, earlier[g] as usize));
            g += 1;
            let rest = check_edge(desc, set, i, repeated, e)?;
            if pinned[a as usize] && pinned[b as usize] {
                dropped += 1;
                continue;
            }
            constraints.push(DistanceConstraint {
                particles: [a + offset, b + offset],
                rest_length: rest,
                compliance: set.elasticity.compliance(),
                damping: set.damping,
                kind: set.kind,
            });
        }
    }
    Ok((constraints, dropped))
}

/// No earlier edge (see [`earlier_edges`]).
const NONE: u32 = u32::MAX;

/// For every edge of `desc`'s sets (the sets one after another), the index in that order of
/// the first edge before it joining the same two particles, or [`NONE`]; edges with a particle
/// out of range, or twice the same, are neither looked up nor found (their own checks fail
/// first). One counting pass over the edges' lower particles, no hashing.
fn earlier_edges(desc: &ClothDesc) -> Vec<u32> {
    let n = desc.positions.len() as u32;
    let edges = || desc.edge_sets.iter().flat_map(|s| s.edges.iter());
    // Edges that are not valid are grouped under particle `n`, and left there.
    let low = edges().map(|&[a, b]| if a < n && b < n && a != b { a.min(b) } else { n });
    let (starts, mut items) = group_by_vertex(n as usize + 1, low);
    let high: Vec<u32> = edges().map(|&[a, b]| a.max(b)).collect();
    let mut earlier = vec![NONE; high.len()];
    for w in starts.windows(2).take(n as usize) {
        let group = &mut items[w[0] as usize..w[1] as usize];
        // Stable: the edges joining the same two particles stay in order.
        group.sort_by_key(|&g| high[g as usize]);
        for same in group.chunk_by(|&x, &y| high[x as usize] == high[y as usize]) {
            for &g in &same[1..] {
                earlier[g as usize] = same[0];
            }
        }
    }
    earlier
}

/// The field and index within its set of edge `g` of `desc`'s sets, taken one after another.
fn edge_place(desc: &ClothDesc, mut g: usize) -> (&'static str, usize) {
    for set in &desc.edge_sets {
        if g < set.edges.len() {
            return (set.field, g);
        }
        g -= set.edges.len();
    }
    unreachable!("an edge index from `earlier_edges` is below the edge count")
}

/// The rest lengths pair up with the edges, and the material and damping of `set` hold for the
/// time step.
fn check_material(set: &EdgeSet, time_step: &TimeStep, e: ClothErrors<'_>) -> Result<(), BuildError> {
    if let Some(r) = &set.rest_lengths
        && r.len() != set.edges.len()
    {
        return Err(e.at(
            set.rest_field,
            None,
            Rule::LengthMismatch { len: r.len(), expected: set.edges.len(), partner: set.field },
        ));
    }
    let alpha = set.elasticity.compliance().get();
    if !(alpha * time_step.inv_h2).is_finite() {
        return Err(e.at(
            set.elasticity_field,
            None,
            Rule::TooLargeForTimeStep { value: alpha, h: time_step.h64, what: "α/h²" },
        ));
    }
    let damping_field = set.damping_field;
    if !set.damping.is_finite() {
        return Err(e.at(damping_field, None, Rule::NotFinite { value: set.damping.to_string() }));
    }
    if set.damping < 0.0 {
        return Err(e.at(damping_field, None, Rule::Negative { value: widen(set.damping) }));
    }
    if !(alpha * set.damping * time_step.inv_h).is_finite() {
        return Err(e.at(
            damping_field,
            None,
            Rule::TooLargeForTimeStep { value: set.damping, h: time_step.h64, what: "α·β/h" },
        ));
    }
    Ok(())
}

/// Edge `i` of `set`: in range, two different particles apart, not a `repeated` edge (the field
/// and index of the edge before it joining the same particles); its rest length (m), given or
/// the initial distance.
fn check_edge(
    desc: &ClothDesc,
    set: &EdgeSet,
    i: usize,
    repeated: Option<(&'static str, usize)>,
    e: ClothErrors<'_>,
) -> Result<f32, BuildError> {
    let n = desc.positions.len();
    let [a, b] = set.edges[i];
    check_index(e, n, set.field, i, a)?;
    check_index(e, n, set.field, i, b)?;
    if a == b {
        return Err(e.at(set.field, Some(i), Rule::SelfEdge { particle: a }));
    }
    if let Some((field, first)) = repeated {
        return Err(e.at(set.field, Some(i), Rule::DuplicateEdge { a, b, field, first }));
    }
    let initial = distance(desc.positions[a as usize], desc.positions[b as usize]);
    if initial.partial_cmp(&MIN_LENGTH) != Some(std::cmp::Ordering::Greater) {
        return Err(e.at(
            set.field,
            Some(i),
            Rule::CoincidentParticles { a, b, distance: initial, min: MIN_LENGTH },
        ));
    }
    if initial > MAX_LENGTH {
        return Err(e.at(set.field, Some(i), Rule::TooFarApart { a, b, distance: initial, max: MAX_LENGTH }));
    }
    let Some(r) = &set.rest_lengths else { return Ok(initial) };
    let r = r[i];
    if !r.is_finite() {
        return Err(e.at(set.rest_field, Some(i), Rule::NotFinite { value: r.to_string() }));
    }
    if r <= 0.0 {
        return Err(e.at(set.rest_field, Some(i), Rule::NotPositive { value: widen(r) }));
    }
    Ok(r)
}
