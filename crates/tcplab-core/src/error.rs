//! Configuration errors: every message names the field, the bad value and what is allowed.
//! A [`ConfigError`] of a coded rule also carries them structured (`field`, `rule`, `value`,
//! `limit`), so that readers word it their own way: tcplab-sim's `Problem`s and the Python
//! schema's messages in user units are built from it, and the rule itself lives here only.

use serde::Serialize;
use std::fmt;

/// Why a configuration is not acceptable: the one-line `message`, and for coded rules the
/// field (dotted, as the message names it: `tcp.mss`, `tcp.growth.limit`), the rule it
/// breaks (one of the constants below; "" for errors known by their message only), the
/// offending value and the bound it is held to, in canonical units (bytes, ns, segments).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ConfigError {
    pub field: String,
    pub rule: &'static str,
    pub value: Option<ConfigValue>,
    pub limit: Option<ConfigValue>,
    pub message: String,
}

/// A value of a [`ConfigError`] (JSON: a plain number, boolean, string or list of numbers).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ConfigValue {
    Bool(bool),
    Int(u64),
    Num(f64),
    Text(String),
    /// An inclusive range `[lo, hi]`.
    Range([u64; 2]),
}

impl ConfigError {
    /// A value outside `limit` = `[lo, hi]`.
    pub const RANGE: &'static str = "range";
    /// A value below `limit` (a count that must be at least 1, or a time that must be > 0
    /// with `limit` 1 ns).
    pub const AT_LEAST: &'static str = "at_least";
    /// An initial ssthresh below 2 MSS (`limit`: 2 MSS in bytes).
    pub const SSTHRESH_BELOW_2MSS: &'static str = "ssthresh_below_2mss";
    /// `rto_min` above `rto_max` (`limit`: rto_max, ns).
    pub const RTO_MIN_ABOVE_MAX: &'static str = "rto_min_above_max";
    /// A receive buffer smaller than one MSS (`limit`: the MSS, bytes).
    pub const RCV_BUF_BELOW_MSS: &'static str = "rcv_buf_below_mss";
    /// With quickack, `delayed_ack_min` above `delayed_ack_timeout` (`limit`, ns).
    pub const ATO_MIN_ABOVE_TIMEOUT: &'static str = "ato_min_above_timeout";
    /// DSACK without SACK (`sack_blocks` = 0).
    pub const DSACK_NEEDS_SACK: &'static str = "dsack_needs_sack";

    /// An error known by its message only (no field, no rule).
    pub fn new(msg: impl Into<String>) -> Self {
        ConfigError {
            field: String::new(),
            rule: "",
            value: None,
            limit: None,
            message: msg.into(),
        }
    }

    /// `field = value: expected` under `rule`, held to `limit`.
    pub fn rule(
        field: impl Into<String>,
        rule: &'static str,
        value: impl Into<ConfigValue>,
        limit: Option<ConfigValue>,
        expected: &str,
    ) -> Self {
        let (field, value) = (field.into(), value.into());
        ConfigError {
            message: format!("{field} = {value}: {expected}"),
            field,
            rule,
            value: Some(value),
            limit,
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

/// As in the messages: numbers as they are (times in ns), strings quoted.
impl fmt::Display for ConfigValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigValue::Bool(b) => write!(f, "{b}"),
            ConfigValue::Int(v) => write!(f, "{v}"),
            ConfigValue::Num(v) => write!(f, "{v}"),
            ConfigValue::Text(s) => write!(f, "{s:?}"),
            ConfigValue::Range([lo, hi]) => write!(f, "[{lo}, {hi}]"),
        }
    }
}

impl From<bool> for ConfigValue {
    fn from(b: bool) -> Self {
        ConfigValue::Bool(b)
    }
}
impl From<u64> for ConfigValue {
    fn from(v: u64) -> Self {
        ConfigValue::Int(v)
    }
}
impl From<u32> for ConfigValue {
    fn from(v: u32) -> Self {
        ConfigValue::Int(v.into())
    }
}
impl From<u8> for ConfigValue {
    fn from(v: u8) -> Self {
        ConfigValue::Int(v.into())
    }
}
impl From<f64> for ConfigValue {
    fn from(v: f64) -> Self {
        ConfigValue::Num(v)
    }
}
impl From<crate::Dur> for ConfigValue {
    fn from(d: crate::Dur) -> Self {
        ConfigValue::Int(d.as_nanos())
    }
}
impl From<&str> for ConfigValue {
    fn from(s: &str) -> Self {
        ConfigValue::Text(s.to_string())
    }
}
