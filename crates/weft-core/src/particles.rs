//! Particle state as separate arrays: positions, previous positions, velocities, inverse masses.
//!
//! # Layout and byte budget
//!
//! | array            | element        | bytes | meaning                                  |
//! |------------------|----------------|-------|------------------------------------------|
//! | `positions`      | `[x, y, z, w]` | 16    | m; lane 3 mirrors `inv_mass`             |
//! | `prev_positions` | `[x, y, z, 0]` | 16    | m, at the start of the time step         |
//! | `velocities`     | `[x, y, z, 0]` | 16    | m/s                                      |
//! | `inv_mass`       | `f32`          | 4     | 1/kg; `0` is a pinned (kinematic) particle |
//!
//! Each particle is one 16-byte record, so a kernel fetches a particle with one 128-bit load and
//! turns eight such records into lanes with a transpose. Lane 3 of a position carries the inverse
//! mass because every constraint reads position and inverse mass together: one load brings both.
//! [`Particles`] keeps that mirror equal to `inv_mass`; no public method can change an inverse mass
//! after construction (the constraint colouring depends on which particles are pinned).

use crate::digest::Digest;

/// Number of `f32` in one particle record.
pub const RECORD: usize = 4;

/// Particle state of a whole model (every cloth), in SI units.
#[derive(Debug, Clone, PartialEq)]
pub struct Particles {
    positions: Vec<[f32; RECORD]>,
    prev_positions: Vec<[f32; RECORD]>,
    velocities: Vec<[f32; RECORD]>,
    inv_mass: Vec<f32>,
}

/// Mutable views of the particle state for a solver, with the inverse masses read-only.
///
/// Lane 3 of `positions` must be left as it is (it mirrors `inv_mass`); kernels only write x, y, z.
#[derive(Debug)]
pub struct ParticlesMut<'a> {
    /// `[x, y, z, w]` in m (w: inverse mass in 1/kg, read-only by convention).
    pub positions: &'a mut [[f32; RECORD]],
    /// `[x, y, z, 0]` in m.
    pub prev_positions: &'a mut [[f32; RECORD]],
    /// `[x, y, z, 0]` in m/s.
    pub velocities: &'a mut [[f32; RECORD]],
    /// Inverse masses in 1/kg.
    pub inv_mass: &'a [f32],
}

impl Digest for Particles {
    fn digest<H: std::hash::Hasher>(&self, h: &mut H) {
        let Particles { positions, prev_positions, velocities, inv_mass } = self;
        positions.digest(h);
        prev_positions.digest(h);
        velocities.digest(h);
        inv_mass.digest(h);
    }
}

impl Particles {
    /// Particles at `positions` (m) with `velocities` (m/s) and inverse masses (1/kg, `0` = pinned).
    ///
    /// # Panics
    /// If the three slices differ in length. (The model builder validates values before calling.)
    pub fn new(positions: &[[f32; 3]], velocities: &[[f32; 3]], inv_mass: &[f32]) -> Self {
        assert_eq!(positions.len(), velocities.len(), "one velocity per particle");
        assert_eq!(positions.len(), inv_mass.len(), "one inverse mass per particle");
        let positions: Vec<[f32; RECORD]> =
            positions.iter().zip(inv_mass).map(|(p, &w)| [p[0], p[1], p[2], w]).collect();
        Particles {
            prev_positions: positions.iter().map(|p| [p[0], p[1], p[2], 0.0]).collect(),
            positions,
            velocities: velocities.iter().map(|v| [v[0], v[1], v[2], 0.0]).collect(),
            inv_mass: inv_mass.to_vec(),
        }
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.inv_mass.len()
    }

    /// True when there are no particles.
    pub fn is_empty(&self) -> bool {
        self.inv_mass.is_empty()
    }

    /// Position records `[x, y, z, w]`: m, and the inverse mass in lane 3.
    pub fn positions(&self) -> &[[f32; RECORD]] {
        &self.positions
    }

    /// Position of particle `i` in m.
    pub fn position(&self, i: usize) -> [f32; 3] {
        let p = self.positions[i];
        [p[0], p[1], p[2]]
    }

    /// Positions at the start of the last time step, `[x, y, z, 0]` in m.
    pub fn prev_positions(&self) -> &[[f32; RECORD]] {
        &self.prev_positions
    }

    /// Velocities `[x, y, z, 0]` in m/s.
    pub fn velocities(&self) -> &[[f32; RECORD]] {
        &self.velocities
    }

    /// Inverse masses in 1/kg (`0` = pinned).
    pub fn inv_mass(&self) -> &[f32] {
        &self.inv_mass
    }

    /// True when particle `i` is free to move (inverse mass > 0).
    pub fn is_free(&self, i: usize) -> bool {
        self.inv_mass[i] > 0.0
    }

    /// Mutable state for a solver.
    pub fn state_mut(&mut self) -> ParticlesMut<'_> {
        ParticlesMut {
            positions: &mut self.positions,
            prev_positions: &mut self.prev_positions,
            velocities: &mut self.velocities,
            inv_mass: &self.inv_mass,
        }
    }

    /// Whether lane 3 of every position still mirrors the inverse mass (a solver must keep it).
    pub fn mirror_is_consistent(&self) -> bool {
        self.positions.iter().zip(&self.inv_mass).all(|(p, &w)| p[3].to_bits() == w.to_bits())
    }

    /// True when every position and velocity component is finite.
    pub fn all_finite(&self) -> bool {
        self.positions.iter().chain(&self.velocities).all(|p| p.iter().all(|c| c.is_finite()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_carry_inverse_mass() {
        let p = Particles::new(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], &[[0.0; 3]; 2], &[0.0, 0.5]);
        assert_eq!(p.positions()[1], [4.0, 5.0, 6.0, 0.5]);
        assert_eq!(p.prev_positions()[1], [4.0, 5.0, 6.0, 0.0]);
        assert!(p.mirror_is_consistent());
        assert!(!p.is_free(0) && p.is_free(1));
        assert_eq!(p.position(0), [1.0, 2.0, 3.0]);
    }
}
