//! One particle as a plain record: where it is, where it was, how fast it goes, how heavy it is.

use glam::Vec3;

/// A point mass, in SI units.
///
/// The reference solver keeps particles as an array of these records (array of structs), the
/// layout that is easiest to read; `weft-core` stores the same state as separate arrays for the
/// SIMD kernels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Particle {
    /// Position `x` in m.
    pub(crate) position: Vec3,
    /// Position `x_prev` at the start of the current (or last) time step, in m.
    pub(crate) prev_position: Vec3,
    /// Velocity `v` in m/s.
    pub(crate) velocity: Vec3,
    /// Displacement `d` over the current (or last) time step, in m: `h·v` from the prediction
    /// plus every correction since, so `x − x_prev` without the rounding of `x` (see
    /// `weft_kernels::integrate`); the velocity is rebuilt from it.
    pub(crate) displacement: Vec3,
    /// Inverse mass `w = 1/m` in 1/kg; `0` for a pinned particle, which never moves.
    pub(crate) inv_mass: f32,
}

impl Particle {
    /// True when the particle has a finite mass and so can move (`w > 0`).
    pub(crate) fn is_free(&self) -> bool {
        self.inv_mass > 0.0
    }

    /// Moves the particle by the correction `delta` (m): `x += delta`, `d += delta`.
    pub(crate) fn shift(&mut self, delta: Vec3) {
        self.position += delta;
        self.displacement += delta;
    }

    /// A particle at rest at `position` (m) with inverse mass `inv_mass` (1/kg), for tests.
    #[cfg(test)]
    pub(crate) fn at_rest(position: Vec3, inv_mass: f32) -> Self {
        Particle {
            position,
            prev_position: position,
            velocity: Vec3::ZERO,
            displacement: Vec3::ZERO,
            inv_mass,
        }
    }

    /// Sets the position outright to `x` (m): `d = x − x_prev`.
    pub(crate) fn place(&mut self, x: Vec3) {
        self.position = x;
        self.displacement = x - self.prev_position;
    }
}
