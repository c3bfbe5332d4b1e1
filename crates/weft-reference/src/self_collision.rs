//! Self-collision, plainly: contacts found by testing every pair, then projected together.
//!
//! Every particle of a cloth with self-collision has a thickness `d` (m) and a friction `μ`. Two
//! of them, `i` and `j`, not excluded at rest (the model lists the pairs of one cloth whose rest
//! distance is within the thickness), keep `d_ij = max(d_i, d_j)` between their centres.
//!
//! Once per time step, after the prediction, each free particle's neighbours are all the others
//! within `SEARCH_SCALE · d_ij` (tested pair by pair, in index order). In every iteration, after
//! the other constraints, each free particle `i` sums over its neighbours in contact
//! (`|x_i − x_j| < d_ij`), from the positions before this projection:
//!
//! ```text
//! n  = (x_i − x_j)/|x_i − x_j|,   p = d_ij − |x_i − x_j|
//! Δp = (x_i − x_prev,i) − (x_j − x_prev,j),   Δp_t = Δp − (Δp·n)·n
//! f  = Δp_t · min(1, μ_ij·p/|Δp_t|)          (μ_ij = max(μ_i, μ_j): friction)
//! Δx_i += w_i/(w_i + w_j) · (p·n − f)
//! ```
//!
//! and then every particle moves by `ω/k · Δx_i` (`k` contacts, `ω` = `RELAXATION`) at once
//! (Jacobi). A pair closer than 1 µm has no normal: skipped and counted as degenerate.

use glam::Vec3;
use weft_core::Model;
use weft_core::kinds::distance::MIN_LENGTH;
use weft_core::self_collision::{RELAXATION, SEARCH_SCALE};

use crate::particle::Particle;

/// The model's self-collision data, as plain lists.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Set {
    /// Particles taking part, ascending.
    members: Vec<usize>,
    /// Thickness per particle in m (0: not taking part).
    thickness: Vec<f32>,
    /// Friction per particle.
    friction: Vec<f32>,
    /// Excluded partners per particle.
    excluded: Vec<Vec<u32>>,
    /// This step's neighbours of each member (same order as `members`).
    neighbours: Vec<Vec<usize>>,
}

impl Set {
    /// Copies the model's self-collision data.
    pub(crate) fn from_model(model: &Model) -> Self {
        let sc = model.self_collision();
        Set {
            members: sc.members().iter().map(|&i| i as usize).collect(),
            thickness: sc.thickness().to_vec(),
            friction: sc.friction().to_vec(),
            excluded: (0..sc.thickness().len()).map(|i| sc.excluded(i).to_vec()).collect(),
            neighbours: Vec::new(),
        }
    }

    /// Finds each free member's neighbours at the current positions, testing every pair.
    pub(crate) fn find_contacts(&mut self, particles: &[Particle]) {
        self.neighbours = self
            .members
            .iter()
            .map(|&i| {
                if !particles[i].is_free() {
                    return Vec::new();
                }
                self.members
                    .iter()
                    .copied()
                    .filter(|&j| {
                        let d = self.thickness[i].max(self.thickness[j]);
                        let r = particles[i].position - particles[j].position;
                        j != i
                            && r.dot(r) < SEARCH_SCALE * SEARCH_SCALE * (d * d)
                            && !self.excluded[i].contains(&(j as u32))
                    })
                    .collect()
            })
            .collect();
    }

    /// What the pair `(i, j)` does to particle `i` (module docs).
    fn contact(&self, i: usize, j: usize, particles: &[Particle]) -> Contact {
        let (a, b) = (&particles[i], &particles[j]);
        let d = self.thickness[i].max(self.thickness[j]);
        let r = a.position - b.position;
        let r2 = r.length_squared();
        let distance = r2.sqrt();
        // Touching: closer than `d`, both squared and not (so a NaN distance never touches).
        if !(r2 < d * d && distance < d) {
            return Contact::Apart;
        }
        if distance <= MIN_LENGTH || distance.is_nan() {
            return Contact::Degenerate;
        }
        let n = r * (1.0 / distance);
        let penetration = d - distance;
        let slip = (a.position - a.prev_position) - (b.position - b.prev_position);
        let tangential = slip - n * slip.dot(n);
        let length = tangential.length_squared().sqrt();
        let limit = self.friction[i].max(self.friction[j]) * penetration;
        let kept = if length > limit { tangential * (limit / length) } else { tangential };
        Contact::Push((n * penetration - kept) * (a.inv_mass / (a.inv_mass + b.inv_mass)))
    }

    /// Projects every contact once, all together (Jacobi); returns the degenerate contacts.
    pub(crate) fn project_all(&self, particles: &mut [Particle]) -> u64 {
        let mut degenerate = 0;
        let mut moves = Vec::with_capacity(self.members.len());
        for (&i, neighbours) in self.members.iter().zip(&self.neighbours) {
            let (mut sum, mut pushes) = (Vec3::ZERO, 0u32);
            for &j in neighbours {
                match self.contact(i, j, particles) {
                    Contact::Apart => {}
                    Contact::Degenerate => degenerate += 1,
                    Contact::Push(dx) => {
                        sum += dx;
                        pushes += 1;
                    }
                }
            }
            if pushes > 0 {
                moves.push((i, sum * (RELAXATION / pushes as f32)));
            }
        }
        for (i, dx) in moves {
            particles[i].shift(dx);
        }
        degenerate
    }
}

/// What one neighbour does to a particle in a projection.
enum Contact {
    /// Not touching.
    Apart,
    /// Touching, but closer than [`MIN_LENGTH`]: no normal.
    Degenerate,
    /// The push (m), before the division by the number of pushes.
    Push(Vec3),
}
