//! The checks of a cloth's particles: positions, velocities, triangles and their texture
//! coordinates, the topology of the triangles, and the pins.

use crate::cloth::{ClothDesc, ClothErrors, NonManifold};
use crate::error::{BuildError, Rule};
use crate::limits::{Limits, RAISE_HINT};
use crate::polygons::Polygons;
use crate::topology::MeshTopology;

/// What the checks of a cloth's particles found.
pub(super) struct Particles {
    /// Initial velocities in m/s, one per particle.
    pub(super) velocities: Vec<[f32; 3]>,
    /// The topology of the cloth's triangles.
    pub(super) topology: MeshTopology,
    /// Which particles are pinned.
    pub(super) pinned: Vec<bool>,
    /// The faces for the caches: the cloth's polygons, or else its triangles.
    pub(super) polygons: Polygons,
}

/// `Ok` if particle `p`, named at `field[i]`, is one of the cloth's `n`.
pub(super) fn check_index(
    e: ClothErrors<'_>,
    n: usize,
    field: &'static str,
    i: usize,
    p: u32,
) -> Result<(), BuildError> {
    if (p as usize) < n {
        Ok(())
    } else {
        Err(e.at(field, Some(i), Rule::IndexOutOfRange { index: p as u64, len: n }))
    }
}

/// Checks `desc`'s particles, triangles and pins, for a model that already holds `existing`
/// particles under `limits`.
pub(super) fn check(
    desc: &ClothDesc,
    existing: usize,
    limits: &Limits,
    e: ClothErrors<'_>,
) -> Result<Particles, BuildError> {
    let velocities = positions_and_velocities(desc, existing, limits, e)?;
    let n = desc.positions.len();
    let polygons = faces(desc, e)?;
    let topology = MeshTopology::new(&desc.triangles);
    if let (NonManifold::Error, Some(edge)) = (desc.non_manifold, topology.non_manifold.first()) {
        let list: Vec<String> = edge.triangles.iter().map(|t| t.to_string()).collect();
        return Err(e.at(
            "triangles",
            Some(edge.triangles[0] as usize),
            Rule::NonManifoldEdge {
                a: edge.edge[0],
                b: edge.edge[1],
                count: edge.triangles.len(),
                triangles: list.join(", "),
            },
        ));
    }
    let mut pinned = vec![false; n];
    for (i, &p) in desc.pins.iter().enumerate() {
        check_index(e, n, "pins", i, p)?;
        pinned[p as usize] = true;
    }
    if desc.follow.is_some() && desc.pins.is_empty() {
        return Err(e.at(
            "follow",
            None,
            Rule::MissingPrerequisite { feature: "follow (pins that follow animation)", needs: "pins" },
        ));
    }
    Ok(Particles { velocities, topology, pinned, polygons })
}

/// Which particles `desc` pins, leaving out pins out of range (which [`check`] refuses).
pub(super) fn pins_in_range(desc: &ClothDesc) -> Vec<bool> {
    let mut pinned = vec![false; desc.positions.len()];
    for &p in &desc.pins {
        if let Some(pin) = pinned.get_mut(p as usize) {
            *pin = true;
        }
    }
    pinned
}

/// The particle count within the limits, finite positions, and the initial velocities (finite,
/// one per particle; at rest when none are given).
fn positions_and_velocities(
    desc: &ClothDesc,
    existing: usize,
    limits: &Limits,
    e: ClothErrors<'_>,
) -> Result<Vec<[f32; 3]>, BuildError> {
    let n = desc.positions.len();
    if n == 0 {
        return Err(e.at("positions", None, Rule::NoParticles));
    }
    let total = existing as u64 + n as u64;
    let particle_limit = limits.max_particles.min(u32::MAX as u64);
    if total > particle_limit {
        return Err(e.at(
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
            return Err(e.at("positions", Some(i), Rule::NotFinite { value }));
        }
    }
    match &desc.velocities {
        Some(v) if v.len() != n => Err(e.at(
            "velocities",
            None,
            Rule::LengthMismatch { len: v.len(), expected: n, partner: "positions" },
        )),
        Some(v) => {
            for (i, p) in v.iter().enumerate() {
                if let Some(value) = not_finite(p) {
                    return Err(e.at("velocities", Some(i), Rule::NotFinite { value }));
                }
            }
            Ok(v.clone())
        }
        None => Ok(vec![[0.0; 3]; n]),
    }
}

/// The triangles (in range, three different corners), their UVs, and the faces as given (the
/// scene's polygons, else the triangles) with every corner in range.
fn faces(desc: &ClothDesc, e: ClothErrors<'_>) -> Result<Polygons, BuildError> {
    let n = desc.positions.len();
    for (i, t) in desc.triangles.iter().enumerate() {
        for &p in t {
            check_index(e, n, "triangles", i, p)?;
        }
        let [a, b, c] = *t;
        if a == b || b == c || a == c {
            return Err(e.at("triangles", Some(i), Rule::DegenerateTriangle { a, b, c }));
        }
    }
    if !desc.uvs.is_empty() && desc.uvs.len() != desc.triangles.len() {
        let rule = Rule::LengthMismatch {
            len: desc.uvs.len(),
            expected: desc.triangles.len(),
            partner: "triangles",
        };
        return Err(e.at("uvs", None, rule));
    }
    if let Some((i, v)) = desc
        .uvs
        .iter()
        .enumerate()
        .find_map(|(i, t)| t.iter().flatten().find(|v| !v.is_finite()).map(|v| (i, v.to_string())))
    {
        return Err(e.at("uvs", Some(i), Rule::NotFinite { value: v }));
    }
    let polygons = if desc.polygons.is_empty() {
        Polygons::from_triangles(&desc.triangles, &desc.uvs)
            .map_err(|p| e.at("triangles", None, Rule::BadPolygons(p)))?
    } else {
        desc.polygons.clone()
    };
    if polygons.points_needed() > n {
        let (face, p) = polygons
            .faces()
            .enumerate()
            .find_map(|(f, c)| c.iter().find(|&&p| p as usize >= n).map(|&p| (f, p)))
            .unwrap_or((0, polygons.points_needed() as u32 - 1));
        return Err(e.at("polygons", Some(face), Rule::IndexOutOfRange { index: p as u64, len: n }));
    }
    Ok(polygons)
}
