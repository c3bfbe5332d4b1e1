//! The registry's example keys of the batched constraint kinds (`KindInfo::example`) read as a
//! cloth's keys, without a scene file: how the fuzz targets turn on every registered kind, so a
//! kind added to the registry is fuzzed with no change here.

use weft_core::kinds::{KindDescs, KindId, SceneKeys};
use weft_core::settings::StrainTolerance;
use weft_core::units::{Compliance, Elasticity, Stiffness};

/// A value of an example item.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Value {
    Number(f64),
    Switch(bool),
    Pairs(&'static str),
}

/// The example items of some kinds, as [`SceneKeys`].
#[derive(Debug, Clone, Default)]
pub struct ExampleKeys {
    items: Vec<(&'static str, Value)>,
    has_pins: bool,
}

impl ExampleKeys {
    /// The example items of `kinds`, for a cloth with pins or without.
    ///
    /// # Panics
    /// If an example item is not `key = number` or `key = true|false` (a registry mistake).
    pub fn of(kinds: &[KindId], has_pins: bool) -> Self {
        let items = kinds
            .iter()
            .flat_map(|k| k.info().example)
            .map(|item| {
                let (key, value) = item.split_once('=').expect("an example item is `key = value`");
                let value = match value.trim() {
                    "true" => Value::Switch(true),
                    "false" => Value::Switch(false),
                    v if v.starts_with('[') => Value::Pairs(v),
                    v => Value::Number(v.parse().unwrap_or_else(|_| panic!("example item {item}"))),
                };
                (key.trim(), value)
            })
            .collect();
        ExampleKeys { items, has_pins }
    }

    /// The descriptions of the batched kinds these items turn on (the others off), or the error.
    pub fn descs(mut self) -> Result<KindDescs, String> {
        KindDescs::describe(&mut self)
    }

    fn get(&self, key: &str) -> Option<Value> {
        self.items.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

impl SceneKeys for ExampleKeys {
    type Error = String;

    fn given(&self, key: &'static str) -> bool {
        self.get(key).is_some()
    }

    fn number(&mut self, key: &'static str) -> Result<Option<f32>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Number(v)) => Ok(Some(v as f32)),
            Some(_) => Err(format!("{key}: not a number")),
        }
    }

    fn switch(&mut self, key: &'static str) -> Option<bool> {
        match self.get(key) {
            Some(Value::Switch(on)) => Some(on),
            _ => None,
        }
    }

    fn pairs(&mut self, key: &'static str) -> Result<Option<Vec<[u32; 2]>>, String> {
        let Some(Value::Pairs(text)) = self.get(key) else { return Ok(None) };
        let numbers: Vec<u32> = text
            .split(|c: char| !c.is_ascii_digit())
            .filter(|n| !n.is_empty())
            .map(|n| n.parse().map_err(|e| format!("{key}: {e}")))
            .collect::<Result<_, _>>()?;
        Ok(Some(numbers.chunks(2).map(|p| [p[0], p.get(1).copied().unwrap_or(p[0])]).collect()))
    }

    fn material(
        &mut self,
        compliance: &'static str,
        stiffness: &'static str,
    ) -> Result<Option<Elasticity>, String> {
        if let Some(c) = self.number(compliance)? {
            return Compliance::new(c).map(|c| Some(Elasticity::Compliance(c))).map_err(|e| format!("{e}"));
        }
        match self.number(stiffness)? {
            Some(k) => Stiffness::new(k).map(|k| Some(Elasticity::Stiffness(k))).map_err(|e| format!("{e}")),
            None => Ok(None),
        }
    }

    fn needs(&self, key: &'static str, needs: &'static str) -> String {
        format!("{key} needs {needs}")
    }

    fn conflict(&self, key: &'static str, first: &'static str, second: &'static str) -> String {
        format!("{key}: {first} and {second} do not go together")
    }

    fn tolerance(&self) -> Option<&StrainTolerance> {
        None
    }

    fn has_pins(&self) -> bool {
        self.has_pins
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_batched_kind_is_turned_on_by_its_example() {
        let none = ExampleKeys::of(&[], true).descs().unwrap();
        for &kind in KindId::ALL.iter().filter(|k| k.is_batched() && !k.info().example.is_empty()) {
            let on = ExampleKeys::of(&[kind], true).descs().unwrap();
            assert_ne!(on, none, "{kind:?}: its example turns it on");
        }
    }
}
