//! Colliders moved from outside the scene while a model is stepped: a script that drives a ball
//! frame by frame ([`Model::move_collider`]).
//!
//! A collider (analytic or mesh) is moved by replacing its rigid keys (see [`crate::collider`]):
//! from its pose at the model's time to the pose asked for, reached at the time asked for and held
//! after, so that the cloth sees it move over the time steps between (with its velocity, for
//! friction and the swept check), never jump. Pins that follow the collider keep following the
//! keys it was built with.

use crate::collider::{ColliderError, RigidKey, slerp, validate_keys};
use crate::error::Rule;
use crate::model::Model;

impl Model {
    /// The pose of the collider named `name` (analytic or mesh) at time `t` (s), as a key at that
    /// time: its keys' positions interpolated linearly and rotations by slerp, held before the
    /// first key and after the last (rotations normalised). `None` if no collider has that name.
    pub fn collider_key_at(&self, name: &str, t: f64) -> Option<RigidKey> {
        Some(key_at(self.collider_keys(name)?, t))
    }

    /// Moves the collider named `name` (analytic or mesh): from its pose at the model's time
    /// ([`Model::time`]) to `to`, reached at `to.time` s (after the model's time) and held after.
    /// Its keys become those two; a mesh collider's own animation (its frames) goes on beneath
    /// them.
    ///
    /// Refused, with the model unchanged: a name no collider has ([`Rule::UnknownCollider`]), and
    /// keys that break the key rules ([`crate::collider::validate_keys`]: `to.time` not after the
    /// model's time as an `f32`, a position or rotation not finite or too large, a zero rotation).
    pub fn move_collider(&mut self, name: &str, to: RigidKey) -> Result<(), ColliderError> {
        let unknown = || ColliderError {
            field: "name",
            index: None,
            rule: Rule::UnknownCollider { name: name.to_string() },
        };
        let now = self.time;
        let from = self.collider_key_at(name, now).ok_or_else(unknown)?;
        let keys = [from, to];
        validate_keys(&keys)?;
        let keys = crate::collider::normalised_keys(&keys);
        if let Some(c) = self.colliders.iter_mut().find(|c| c.name == name) {
            c.keys = keys;
        } else if let Some(m) = self.meshes.iter_mut().find(|m| m.name == name) {
            m.keys = keys;
        }
        Ok(())
    }

    /// The keys of the collider named `name`, analytic or mesh.
    fn collider_keys(&self, name: &str) -> Option<&[RigidKey]> {
        let analytic = self.colliders.iter().find(|c| c.name == name).map(|c| &c.keys);
        analytic.or_else(|| self.meshes.iter().find(|m| m.name == name).map(|m| &m.keys)).map(Vec::as_slice)
    }
}

/// The key of `keys` (normalised rotations, at least one) at time `t` (s), as
/// [`crate::collider`] interpolates them: a key of `keys` itself where `t` is at or outside one.
fn key_at(keys: &[RigidKey], t: f64) -> RigidKey {
    let time = t as f32;
    match keys.iter().position(|k| k.time as f64 > t) {
        None => RigidKey { time, ..keys[keys.len() - 1] },
        Some(0) => RigidKey { time, ..keys[0] },
        Some(i) => {
            let (a, b) = (&keys[i - 1], &keys[i]);
            let s = (t - a.time as f64) / (b.time as f64 - a.time as f64);
            let position = std::array::from_fn(|j| {
                let (p0, p1) = (a.position[j] as f64, b.position[j] as f64);
                (p0 + (p1 - p0) * s) as f32
            });
            let q = slerp(a.rotation.map(f64::from), b.rotation.map(f64::from), s);
            RigidKey { time, position, rotation: q.map(|c| c as f32) }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::collider::{ColliderDesc, ColliderShape};
    use crate::{ModelBuilder, SimSettings};

    use super::*;

    fn model_with_ball(keys: Vec<RigidKey>) -> Model {
        let mut b = ModelBuilder::new(SimSettings::default(), Default::default()).unwrap();
        let cloth =
            crate::ClothDesc { name: "dot".into(), positions: vec![[0.0, 2.0, 0.0]], ..Default::default() };
        b.add_cloth(&cloth).unwrap();
        let ball = ColliderDesc {
            name: "ball".into(),
            shape: ColliderShape::Sphere { radius: 0.5 },
            keys,
            ..Default::default()
        };
        b.add_collider(&ball).unwrap();
        b.build().unwrap()
    }

    #[test]
    fn keys_are_read_between_and_outside_them() {
        let half_turn = [0.0, 1.0, 0.0, 0.0];
        let keys = [
            RigidKey { time: 1.0, position: [0.0, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0] },
            RigidKey { time: 3.0, position: [2.0, 4.0, 0.0], rotation: half_turn },
        ];
        assert_eq!(key_at(&keys, 0.5), RigidKey { time: 0.5, ..keys[0] });
        assert_eq!(key_at(&keys, 9.0), RigidKey { time: 9.0, ..keys[1] });
        let mid = key_at(&keys, 2.0);
        assert_eq!(mid.position, [1.0, 2.0, 0.0]);
        let s = std::f32::consts::FRAC_1_SQRT_2;
        assert!(mid.rotation.iter().zip([0.0, s, 0.0, s]).all(|(a, b)| (a - b).abs() < 1e-6), "{mid:?}");
    }

    #[test]
    fn a_moved_collider_goes_from_where_it_is_to_where_it_is_sent() {
        let mut model = model_with_ball(vec![RigidKey::at([1.0, 0.0, 0.0])]);
        model.parts_mut().time.clone_from(&0.5);
        let to = RigidKey { time: 1.0, position: [3.0, 0.0, 0.0], rotation: [0.0, 0.0, 0.0, 1.0] };
        model.move_collider("ball", to).unwrap();
        let placed = model.colliders()[0].placed(0.5, 0.75);
        assert_eq!((placed.prev_position, placed.position), ([1.0, 0.0, 0.0], [2.0, 0.0, 0.0]));
        assert_eq!(model.colliders()[0].placed(1.0, 2.0).position, [3.0, 0.0, 0.0], "held after");
        assert_eq!(model.collider_key_at("ball", 1.5).map(|k| k.position), Some([3.0, 0.0, 0.0]));
    }

    #[test]
    fn a_move_that_breaks_a_rule_changes_nothing() {
        let mut model = model_with_ball(vec![RigidKey::at([1.0, 0.0, 0.0])]);
        let before = model.colliders()[0].clone();
        let e = model.move_collider("bal", RigidKey::at([0.0; 3])).unwrap_err();
        assert_eq!(e.rule, Rule::UnknownCollider { name: "bal".into() });
        model.parts_mut().time.clone_from(&2.0);
        let e = model.move_collider("ball", RigidKey { time: 1.0, ..RigidKey::at([0.0; 3]) }).unwrap_err();
        assert_eq!((e.field, e.rule), ("keys", Rule::KeysOutOfOrder { time: 1.0, previous: 2.0 }));
        let e = model.move_collider("ball", RigidKey { time: 3.0, ..RigidKey::at([f32::NAN, 0.0, 0.0]) });
        assert_eq!(e.unwrap_err().field, "position");
        assert_eq!(model.colliders()[0], before);
    }
}
