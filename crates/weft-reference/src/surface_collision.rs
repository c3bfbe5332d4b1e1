//! Surface self-collision, plainly (see `weft_core::surface_collision` for the model): every
//! vertex–triangle and edge–edge pair is tested, in order, for the contacts and for the guard.
//!
//! After the prediction, each pair whose boxes meet (`SurfaceCollision::boxes_meet`, the step's
//! mean motion taken out, the first feature's box grown by the search pad) and that can come
//! near gives a contact (`vertex_triangle_contact`, `edge_edge_contact`): vertex–triangle pairs
//! by vertex then triangle, then edge–edge pairs `(e, f)`, `e < f`. Each iteration projects them
//! one after another:
//!
//! ```text
//! g   = Σ_k w_k (x_k − x_0),   C = n·g − h        (skip when C ≥ 0)
//! Δλ  = −C / Σ_k w_k² w_inv,k,  x_k += w_k w_inv,k Δλ n
//! u   = Σ_k w_k d_k,  u_t = u − (n·u) n            (the slip in the step)
//! x_k −= w_k w_inv,k · min(1, μ·(−C)/|u_t|) / Σ_k w_k² w_inv,k · u_t
//! ```
//!
//! After everything else, the guard tests every pair whose boxes meet with the guard's gap for a
//! possible touch over the step (`SurfaceCollision::may_touch`), moves the free particles that
//! moved of each such pair back to the start of the step (`d = 0`), and tests again, until no
//! pair may touch (after `MAX_GUARD_ROUNDS` rounds every moving free particle goes back).

use glam::Vec3;
use weft_core::Model;
use weft_core::surface_collision::{
    Contact, MAX_GUARD_ROUNDS, Record, SurfaceCollision, capped_push, common_shift,
};
use weft_geometry::proximity::PairKind;

use crate::particle::Particle;

/// The contacts of a step of `sc` from `prev` to the prediction `now` (records `[x, y, z, w]`,
/// m and 1/kg), every pair tested, in order.
pub fn contacts(sc: &SurfaceCollision, prev: &[Record], now: &[Record]) -> Vec<Contact> {
    let mut set = Set { data: sc.clone(), ..Set::default() };
    set.find_contacts(&particles(prev, now, &vec![[0.0; 4]; now.len()]));
    set.contacts
}

/// One projection of `contacts` over `positions` and `displacement` (m), in order.
pub fn project(contacts: &[Contact], positions: &mut [Record], displacement: &mut [Record]) {
    let set = Set { contacts: contacts.to_vec(), ..Set::default() };
    let mut p = particles(positions, positions, displacement);
    set.project_all(&mut p);
    write_back(&p, positions, displacement);
}

/// The guard of a step of `sc` from `prev` to `positions`, the boxes less `shift` (m); returns
/// the particles moved back.
pub fn guard(
    sc: &SurfaceCollision,
    prev: &[Record],
    positions: &mut [Record],
    displacement: &mut [Record],
    shift: [f32; 3],
) -> u64 {
    let set = Set { data: sc.clone(), shift, ..Set::default() };
    let mut p = particles(prev, positions, displacement);
    let reverted = set.guard(&mut p);
    write_back(&p, positions, displacement);
    reverted
}

fn particles(prev: &[Record], now: &[Record], displacement: &[Record]) -> Vec<Particle> {
    (0..now.len())
        .map(|i| Particle {
            position: Vec3::new(now[i][0], now[i][1], now[i][2]),
            prev_position: Vec3::new(prev[i][0], prev[i][1], prev[i][2]),
            velocity: Vec3::ZERO,
            displacement: Vec3::new(displacement[i][0], displacement[i][1], displacement[i][2]),
            inv_mass: now[i][3],
        })
        .collect()
}

fn write_back(p: &[Particle], positions: &mut [Record], displacement: &mut [Record]) {
    for (i, q) in p.iter().enumerate() {
        positions[i] = [q.position.x, q.position.y, q.position.z, q.inv_mass];
        displacement[i] = [q.displacement.x, q.displacement.y, q.displacement.z, 0.0];
    }
}

/// The model's surface self-collision and this step's contacts.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    data: SurfaceCollision,
    contacts: Vec<Contact>,
    shift: [f32; 3],
}

fn records(particles: &[Particle], prev: bool) -> Vec<Record> {
    particles
        .iter()
        .map(|p| {
            let x = if prev { p.prev_position } else { p.position };
            [x.x, x.y, x.z, p.inv_mass]
        })
        .collect()
}

impl Set {
    /// Copies the model's surface self-collision data.
    pub(crate) fn from_model(model: &Model) -> Self {
        Set { data: model.surface_collision().clone(), ..Set::default() }
    }

    /// Whether no particle takes part.
    pub(crate) fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Every pair whose boxes meet with `pad`, in order.
    fn pairs(&self, prev: &[Record], now: &[Record], pad: f32) -> Vec<(PairKind, [u32; 4])> {
        let sc = &self.data;
        let mut out = Vec::new();
        for &v in sc.vertices() {
            for t in sc.triangles() {
                let p = [v, t[0], t[1], t[2]];
                if !t.contains(&v)
                    && SurfaceCollision::boxes_meet(PairKind::VertexTriangle, p, prev, now, self.shift, pad)
                {
                    out.push((PairKind::VertexTriangle, p));
                }
            }
        }
        let edges = sc.edges();
        for (e, a) in edges.iter().enumerate() {
            for b in &edges[e + 1..] {
                let p = [a[0], a[1], b[0], b[1]];
                let shared = a.contains(&b[0]) || a.contains(&b[1]);
                if !shared && SurfaceCollision::boxes_meet(PairKind::EdgeEdge, p, prev, now, self.shift, pad)
                {
                    out.push((PairKind::EdgeEdge, p));
                }
            }
        }
        out
    }

    /// The step's contacts, at the prediction.
    pub(crate) fn find_contacts(&mut self, particles: &[Particle]) {
        let (prev, now) = (records(particles, true), records(particles, false));
        self.shift = common_shift(self.data.vertices(), &prev, &now);
        let sc = &self.data;
        self.contacts = self
            .pairs(&prev, &now, sc.search_pad())
            .into_iter()
            .filter_map(|(kind, p)| match kind {
                PairKind::VertexTriangle => sc.vertex_triangle_contact(p[0], [p[1], p[2], p[3]], &prev, &now),
                PairKind::EdgeEdge => sc.edge_edge_contact([p[0], p[1]], [p[2], p[3]], &prev, &now),
            })
            .collect();
    }

    /// One projection of every contact, in order.
    pub(crate) fn project_all(&self, particles: &mut [Particle]) {
        for c in &self.contacts {
            let p = c.particles.map(|i| i as usize);
            let w = c.weights;
            let x0 = particles[p[0]].position;
            let mut g = Vec3::ZERO;
            for k in 1..4 {
                g += w[k] * (particles[p[k]].position - x0);
            }
            let n = Vec3::from_array(c.normal);
            let gap = n.dot(g) - c.thickness;
            if !(gap < 0.0 && gap.is_finite()) {
                continue;
            }
            let inv = p.map(|i| particles[i].inv_mass);
            let denom =
                w[0] * w[0] * inv[0] + w[1] * w[1] * inv[1] + w[2] * w[2] * inv[2] + w[3] * w[3] * inv[3];
            if denom <= 0.0 {
                continue;
            }
            // No particle moved farther than MAX_PUSH times the gap.
            let mut scale: [f32; 4] = std::array::from_fn(|k| w[k] * inv[k]);
            let (push, cut) = capped_push(&mut scale, gap, denom);
            for k in 0..4 {
                particles[p[k]].shift(scale[k] * push * n);
            }
            if c.friction <= 0.0 {
                continue;
            }
            let mut u = Vec3::ZERO;
            for k in 0..4 {
                u += w[k] * particles[p[k]].displacement;
            }
            let slip = u - n.dot(u) * n;
            let length = slip.length();
            if length <= 0.0 {
                continue;
            }
            let cut = cut.of((c.friction * -gap / length).min(1.0));
            for k in 0..4 {
                particles[p[k]].shift(-scale[k] * cut * slip);
            }
        }
    }

    /// The guard; returns the particles moved back.
    pub(crate) fn guard(&self, particles: &mut [Particle]) -> u64 {
        let sc = &self.data;
        let prev = records(particles, true);
        let mut reverted = 0;
        for round in 0..=MAX_GUARD_ROUNDS {
            let now = records(particles, false);
            let moved = |i: u32| prev[i as usize][..3] != now[i as usize][..3];
            let mut back: Vec<u32> = Vec::new();
            for (kind, p) in self.pairs(&prev, &now, sc.guard_gap()) {
                if sc.may_touch(kind, p, &prev, &now) {
                    back.extend(p.iter().filter(|&&i| now[i as usize][3] > 0.0 && moved(i)));
                }
            }
            if back.is_empty() {
                break;
            }
            if round == MAX_GUARD_ROUNDS {
                back =
                    sc.vertices().iter().copied().filter(|&i| now[i as usize][3] > 0.0 && moved(i)).collect();
            }
            back.sort_unstable();
            back.dedup();
            for &i in &back {
                let q = &mut particles[i as usize];
                q.position = q.prev_position;
                q.displacement = Vec3::ZERO;
            }
            reverted += back.len() as u64;
        }
        reverted
    }
}
