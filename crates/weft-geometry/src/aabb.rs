//! Axis-aligned boxes in m: [`Aabb`].

/// An axis-aligned box in m, its corners included.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// The smallest corner.
    pub min: [f32; 3],
    /// The largest corner.
    pub max: [f32; 3],
}

impl Aabb {
    /// The box with corners `min` and `max`.
    #[inline]
    pub fn new(min: [f32; 3], max: [f32; 3]) -> Aabb {
        Aabb { min, max }
    }

    /// The smallest box around `points` (`min = +∞`, `max = −∞` when there are none; a NaN
    /// coordinate is passed over).
    pub fn around(points: impl IntoIterator<Item = [f32; 3]>) -> Aabb {
        let mut b = Aabb { min: [f32::INFINITY; 3], max: [f32::NEG_INFINITY; 3] };
        for p in points {
            for (k, c) in p.into_iter().enumerate() {
                b.min[k] = b.min[k].min(c);
                b.max[k] = b.max[k].max(c);
            }
        }
        b
    }

    /// The box grown by `pad` (m) on every side.
    #[inline]
    pub fn grown(&self, pad: f32) -> Aabb {
        Aabb { min: self.min.map(|c| c - pad), max: self.max.map(|c| c + pad) }
    }

    /// Whether the two boxes share a point (touching counts; false when a coordinate is NaN).
    /// All six comparisons are made, without a branch between them, so that a filter of
    /// unpredictable answers (a broad phase's) costs no mispredicted branches.
    #[inline]
    pub fn overlaps(&self, other: &Aabb) -> bool {
        let mut meet = true;
        for k in 0..3 {
            meet &= (self.min[k] <= other.max[k]) & (other.min[k] <= self.max[k]);
        }
        meet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_around_points_meet_when_they_touch() {
        let a = Aabb::around([[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]);
        assert_eq!(a, Aabb::new([0.0; 3], [1.0, 2.0, 3.0]));
        let b = Aabb::new([1.0, 2.0, 3.0], [4.0; 3]);
        assert!(a.overlaps(&b) && b.overlaps(&a), "a shared corner");
        let c = Aabb::new([1.5, 0.0, 0.0], [2.0; 3]);
        assert!(!a.overlaps(&c));
        assert!(a.grown(0.5).overlaps(&c));
        assert!(!Aabb::new([f32::NAN; 3], [1.0; 3]).overlaps(&a));
        assert!(!Aabb::around([]).overlaps(&a), "an empty box meets nothing finite");
    }
}
