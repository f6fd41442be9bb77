//! Named parameters of a congestion controller or recovery strategy, as a scenario file
//! gives them (`controller = { name = "veno", beta = 3 }`), read with typed accessors that
//! reject unknown names and values of the wrong type.

use crate::ConfigError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ParamValue {
    Bool(bool),
    Num(f64),
    Str(String),
}

pub type Params = BTreeMap<String, ParamValue>;

/// A value as a scenario file writes it: `5.0`, `true`, `"prr"`.
impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Bool(b) => write!(f, "{b}"),
            ParamValue::Num(v) if v.is_finite() && v.fract() == 0.0 => write!(f, "{v:.1}"),
            ParamValue::Num(v) => write!(f, "{v}"),
            ParamValue::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// Reads parameters for one component; `finish` fails on names nobody asked for.
pub struct ParamReader<'a> {
    owner: &'a str,
    params: &'a Params,
    used: BTreeSet<&'a str>,
}

impl<'a> ParamReader<'a> {
    pub fn new(owner: &'a str, params: &'a Params) -> Self {
        ParamReader {
            owner,
            params,
            used: BTreeSet::new(),
        }
    }

    fn get(&mut self, name: &'static str) -> Option<&'a ParamValue> {
        self.used.insert(name);
        self.params.get(name)
    }

    /// A number, with its default, checked to lie in `[min, max]`.
    pub fn num(
        &mut self,
        name: &'static str,
        default: f64,
        min: f64,
        max: f64,
    ) -> Result<f64, ConfigError> {
        match self.get(name) {
            None => Ok(default),
            Some(ParamValue::Num(v)) if v.is_finite() && *v >= min && *v <= max => Ok(*v),
            Some(v) => Err(ConfigError::new(format!(
                "{}.{name} = {v}: expected a number in [{min}, {max}]",
                self.owner
            ))),
        }
    }

    pub fn flag(&mut self, name: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(name) {
            None => Ok(default),
            Some(ParamValue::Bool(b)) => Ok(*b),
            Some(v) => Err(ConfigError::new(format!(
                "{}.{name} = {v}: expected true or false",
                self.owner
            ))),
        }
    }

    /// One of `allowed`, returned as given.
    pub fn choice(
        &mut self,
        name: &'static str,
        default: &'static str,
        allowed: &[&'static str],
    ) -> Result<&'static str, ConfigError> {
        match self.get(name) {
            None => Ok(default),
            Some(ParamValue::Str(s)) => allowed
                .iter()
                .find(|a| **a == s.as_str())
                .copied()
                .ok_or_else(|| {
                    ConfigError::new(format!(
                        "{}.{name} = {s:?}: expected one of {allowed:?}",
                        self.owner
                    ))
                }),
            Some(v) => Err(ConfigError::new(format!(
                "{}.{name} = {v}: expected one of {allowed:?}",
                self.owner
            ))),
        }
    }

    /// Fails when the parameters name something this component does not have.
    pub fn finish(self) -> Result<(), ConfigError> {
        let unknown: Vec<&String> = self
            .params
            .keys()
            .filter(|k| !self.used.contains(k.as_str()))
            .collect();
        if unknown.is_empty() {
            Ok(())
        } else {
            let known: Vec<&&str> = self.used.iter().collect();
            Err(ConfigError::new(format!(
                "{}: unknown parameter(s) {unknown:?}; known: {known:?}",
                self.owner
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, ParamValue)]) -> Params {
        kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
    }

    #[test]
    fn reads_defaults_and_values() {
        let p = params(&[("beta", ParamValue::Num(2.0))]);
        let mut r = ParamReader::new("veno", &p);
        assert_eq!(r.num("beta", 3.0, 0.0, 100.0).unwrap(), 2.0);
        assert_eq!(r.num("alpha", 1.0, 0.0, 100.0).unwrap(), 1.0);
        r.finish().unwrap();
    }

    #[test]
    fn rejects_unknown_and_out_of_range() {
        let p = params(&[("bta", ParamValue::Num(2.0))]);
        let mut r = ParamReader::new("veno", &p);
        r.num("beta", 3.0, 0.0, 100.0).unwrap();
        let e = r.finish().unwrap_err();
        assert!(e.message.contains("bta"), "{e}");

        let p = params(&[("beta", ParamValue::Num(-1.0))]);
        let mut r = ParamReader::new("veno", &p);
        let e = r.num("beta", 3.0, 0.0, 100.0).unwrap_err();
        assert!(
            e.message.contains("veno.beta") && e.message.contains("-1"),
            "{e}"
        );

        // The value as a scenario writes it, not Rust's `Num(5.0)`.
        let p = params(&[("beta", ParamValue::Num(5.0))]);
        let mut r = ParamReader::new("cubic", &p);
        let e = r.num("beta", 0.7, 0.01, 0.99).unwrap_err();
        assert!(e.message.starts_with("cubic.beta = 5.0: expected"), "{e}");
        let p = params(&[("beta", ParamValue::Num(f64::NAN))]);
        let e = ParamReader::new("cubic", &p)
            .num("beta", 0.7, 0.01, 0.99)
            .unwrap_err();
        assert!(e.message.starts_with("cubic.beta = NaN: expected"), "{e}");

        let p = params(&[("flavor", ParamValue::Str("bsd".into()))]);
        let mut r = ParamReader::new("veno", &p);
        let e = r
            .choice("flavor", "paper", &["paper", "linux"])
            .unwrap_err();
        assert!(
            e.message.contains("bsd") && e.message.contains("linux"),
            "{e}"
        );
    }
}
