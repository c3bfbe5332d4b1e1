//! A cloth's distance constraints (stretch and shear) from its edge lists: each edge checked
//! (in range, not a self-edge, not repeated, particles apart), its rest length taken or checked,
//! its material checked against the time step; edges whose both particles are pinned are left
//! out and counted.

use std::collections::HashMap;

use super::particles::check_index;
use crate::cloth::{ClothDesc, ClothErrors, EdgeSet};
use crate::error::{BuildError, Rule, widen};
use crate::kinds::distance::{DistanceConstraint, MAX_LENGTH, MIN_LENGTH};
use crate::settings::TimeStep;
use crate::topology::distance;

/// The distance constraints of `desc` (particle indices global: local `+ offset`) and how many
/// were left out because both their particles are pinned.
pub(super) fn distance_constraints(
    desc: &ClothDesc,
    pinned: &[bool],
    offset: u32,
    time_step: &TimeStep,
    e: ClothErrors<'_>,
) -> Result<(Vec<DistanceConstraint>, usize), BuildError> {
    let mut seen: HashMap<[u32; 2], (&'static str, usize)> = HashMap::new();
    let mut constraints = Vec::new();
    let mut dropped = 0;
    for set in &desc.edge_sets {
        check_material(set, time_step, e)?;
        for (i, &[a, b]) in set.edges.iter().enumerate() {
            let rest = check_edge(desc, set, i, &mut seen, e)?;
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

/// Edge `i` of `set`: in range, two different particles apart, not a repeat of an edge `seen`
/// before (recorded); its rest length (m), given or the initial distance.
fn check_edge(
    desc: &ClothDesc,
    set: &EdgeSet,
    i: usize,
    seen: &mut HashMap<[u32; 2], (&'static str, usize)>,
    e: ClothErrors<'_>,
) -> Result<f32, BuildError> {
    let n = desc.positions.len();
    let [a, b] = set.edges[i];
    check_index(e, n, set.field, i, a)?;
    check_index(e, n, set.field, i, b)?;
    if a == b {
        return Err(e.at(set.field, Some(i), Rule::SelfEdge { particle: a }));
    }
    if let Some(&(field, first)) = seen.get(&[a.min(b), a.max(b)]) {
        return Err(e.at(set.field, Some(i), Rule::DuplicateEdge { a, b, field, first }));
    }
    seen.insert([a.min(b), a.max(b)], (set.field, i));
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
