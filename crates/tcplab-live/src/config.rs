//! The emulator's one-link config, JSON: the run's seed, the link's name (its random streams are
//! `"queue/{link}/forward"`, `"loss/{link}/forward"`, ... as in the simulator) and its two
//! directions in the scenario's canonical form (`tcplab validate --json`: rates in bit/s,
//! times in ns). Forward carries packets from namespace A to namespace B. `kernel_tcp`: both
//! hosts run the kernel's TCP (a Linux flow), not a user-space endpoint.

use serde::Deserialize;
use tcplab_sim::scenario::LinkDir;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    #[serde(default)]
    pub seed: u64,
    #[serde(default = "default_link")]
    pub link: String,
    pub forward: LinkDir,
    pub reverse: LinkDir,
    /// Both hosts run kernel TCP ends (a Linux flow): their answers to a delivery are read
    /// right after it is written (`Emulator::write`). Default false: user-space endpoints.
    #[serde(default)]
    pub kernel_tcp: bool,
}

fn default_link() -> String {
    "l0".into()
}

impl Config {
    /// Parses and checks `text`; the error is one line naming the field and the value.
    pub fn parse(text: &str) -> Result<Config, String> {
        let c: Config = serde_json::from_str(text).map_err(|e| format!("config: {e}"))?;
        check_dir("config: forward", &c.forward)?;
        check_dir("config: reverse", &c.reverse)?;
        Ok(c)
    }
}

/// What the emulator cannot run in a link direction at `path`: a zero rate without a
/// delivery trace, cross-layer loss reports.
pub fn check_dir(path: &str, d: &LinkDir) -> Result<(), String> {
    if d.rate == 0 && d.trace.is_none() {
        return Err(format!("{path}.rate = 0: must be positive"));
    }
    if d.report_losses {
        return Err(format!(
            "{path}.report_losses = true: cross-layer reports are not emulated"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_link_directions_parse_and_bad_ones_are_named() {
        let dir = r#"{"rate": 10000000, "delay": 5000000, "buffer": {"packets": 50},
                      "loss": {"model": "bernoulli", "p": 0.01}}"#;
        let c = Config::parse(&format!(
            r#"{{"seed": 3, "forward": {dir}, "reverse": {dir}}}"#
        ))
        .unwrap();
        assert_eq!(
            (c.seed, c.link.as_str(), c.forward.rate),
            (3, "l0", 10_000_000)
        );
        let zero = dir.replace("10000000", "0");
        let e = Config::parse(&format!(r#"{{"forward": {zero}, "reverse": {dir}}}"#));
        assert_eq!(e.unwrap_err(), "config: forward.rate = 0: must be positive");
        let e = Config::parse(&format!(
            r#"{{"forward": {dir}, "reverse": {dir}, "x": 1}}"#
        ));
        assert!(e.unwrap_err().contains("unknown field `x`"));
    }
}
