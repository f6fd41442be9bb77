//! The config of one transport endpoint (`tcplab-flow send|recv --config FILE`), JSON:
//!
//! ```text
//! {"scenario": {...},            the scenario's canonical JSON (tcplab validate --json)
//!  "flow": 0,                    index in scenario.flows
//!  "local": "10.213.0.1:5000", "peer": "10.213.0.2:5000",
//!  "framing": "tcplab",          or "eth" (1024-byte packets, 17-byte header)
//!  "clock_origin_ns": 123,       CLOCK_MONOTONIC of model time 0 (default: the start)
//!  "sample_ns": 10000000,        series interval (default: scenario.trace.interval)
//!  "linger_ns": 2000000000,     the receiver stays this long past the flow's end
//!  "realtime": false}            SCHED_FIFO priority 10 (the summary says if granted)
//! ```
//!
//! The sender is built exactly as the simulator builds flow `flow`: its TCP settings
//! (`flows[i].tcp` or the scenario's `tcp`), its controller and recovery strategy by name
//! from the built-in registries, and the controller's seed from the stream
//! `controller/{i}` of the scenario's seed.

use crate::wire::Framing;
use serde::Deserialize;
use std::net::SocketAddr;
use tcplab_core::registry::Registries;
use tcplab_core::{Dur, Sender, TcpConfig, Time};
use tcplab_sim::framing_rules::eth_framing;
use tcplab_sim::rng::Rng;
use tcplab_sim::scenario::{Scenario, TcpFlowSpec};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub scenario: Scenario,
    pub flow: usize,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    #[serde(default = "tcplab")]
    pub framing: Framing,
    #[serde(default)]
    pub clock_origin_ns: Option<u64>,
    #[serde(default)]
    pub sample_ns: Option<u64>,
    #[serde(default = "two_seconds")]
    pub linger_ns: u64,
    /// Ask for real-time scheduling (SCHED_FIFO), as the emulator's `--realtime`.
    #[serde(default)]
    pub realtime: bool,
}

fn tcplab() -> Framing {
    Framing::Tcplab
}
fn two_seconds() -> u64 {
    2_000_000_000
}

impl FlowConfig {
    /// Parses and checks `text`; the error is one line naming the field and the value.
    pub fn parse(text: &str) -> Result<FlowConfig, String> {
        let c: FlowConfig = serde_json::from_str(text).map_err(|e| format!("config: {e}"))?;
        c.scenario
            .validate()
            .map_err(|e| format!("config: scenario: {}", e.0))?;
        let n = c.scenario.flows.len();
        if c.flow >= n {
            return Err(format!(
                "config: flow = {}: the scenario has {n} TCP flows",
                c.flow
            ));
        }
        if c.framing == Framing::Eth {
            let p = format!("flows[{}]", c.flow);
            let problems = eth_framing(&p, c.flow, "tcp.mss", c.tcp().mss, c.spec().bytes);
            if let Some(first) = problems.first() {
                return Err(format!("config: {}", first.message));
            }
        }
        if c.flow > u16::MAX as usize {
            return Err(format!("config: flow = {}: at most 65535", c.flow));
        }
        if c.sample_ns == Some(0) {
            return Err("config: sample_ns = 0: must be positive".into());
        }
        Ok(c)
    }

    pub fn spec(&self) -> &TcpFlowSpec {
        &self.scenario.flows[self.flow]
    }

    pub fn tcp(&self) -> &TcpConfig {
        self.scenario.tcp_of(self.spec())
    }

    /// The flow's sender, as the simulator builds it.
    pub fn sender(&self) -> Result<Sender, String> {
        let f = self.spec();
        let seed = Rng::stream(self.scenario.seed, &format!("controller/{}", self.flow)).next_u64();
        Sender::build_seeded(
            &Registries::default(),
            self.tcp(),
            &f.controller,
            &f.recovery,
            f.bytes,
            seed,
        )
        .map_err(|e| format!("config: flows[{}]: {e}", self.flow))
    }

    /// When the application starts writing.
    pub fn start(&self) -> Time {
        Time::ZERO + self.spec().start
    }

    /// When the application stops writing (its `stop`, at most the scenario's duration).
    pub fn stop(&self) -> Time {
        let d = self.scenario.duration;
        Time::ZERO + self.spec().stop.map_or(d, |s| s.min(d))
    }

    /// The end of the run: the scenario's duration.
    pub fn end(&self) -> Time {
        Time::ZERO + self.scenario.duration
    }

    /// Where the sender writes `table` ("events": the core's event log; "segments": its
    /// transmissions) as `<table>.csv` in `out`, when the scenario traces it (`trace.events`,
    /// `trace.segments`), as the simulator fills those tables.
    pub fn trace_path(&self, out: &std::path::Path, table: &str) -> Option<std::path::PathBuf> {
        let t = &self.scenario.trace;
        let on = match table {
            "events" => t.events,
            "segments" => t.segments,
            _ => false,
        };
        on.then(|| out.join(format!("{table}.csv")))
    }

    pub fn sample_interval(&self) -> Dur {
        Dur::from_nanos(
            self.sample_ns
                .unwrap_or(self.scenario.trace.interval.as_nanos())
                .max(1),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scenario(mss: u32, bytes: &str) -> String {
        format!(
            r#"{{"name": "t", "seed": 4, "duration": 1000000000,
              "topology": {{"kind": "explicit",
                "nodes": [{{"name": "a", "kind": "host"}}, {{"name": "b", "kind": "host"}}],
                "links": [{{"from": "a", "to": "b",
                  "forward": {{"rate": 10000000, "delay": 5000000, "buffer": {{"packets": 50}}}},
                  "reverse": {{"rate": 10000000, "delay": 5000000, "buffer": {{"packets": 50}}}}}}]}},
              "tcp": {{"mss": {mss}}},
              "flows": [{{"src": "a", "dst": "b", "controller": {{"name": "reno"}},
                          "recovery": {{"name": "newreno"}}{bytes}}}]}}"#
        )
    }

    fn config(scenario: &str, extra: &str) -> String {
        format!(
            r#"{{"scenario": {scenario}, "flow": 0, "local": "10.0.0.1:1",
                "peer": "10.0.0.2:1"{extra}}}"#
        )
    }

    #[test]
    fn a_flow_of_a_canonical_scenario_builds_its_sender() {
        let c = FlowConfig::parse(&config(&scenario(1448, ""), "")).unwrap();
        assert_eq!(c.framing, Framing::Tcplab);
        assert_eq!(c.end(), Time::ZERO + Dur::from_secs(1));
        let s = c.sender().unwrap();
        assert_eq!(s.controller().name(), "reno");
    }

    #[test]
    fn bad_configs_name_the_field() {
        let e = FlowConfig::parse(&config(&scenario(1448, ""), r#", "flow": 3"#));
        assert!(e.unwrap_err().contains("duplicate field"));
        let e = FlowConfig::parse(&config(&scenario(1448, ""), r#", "framing": "eth""#));
        assert_eq!(
            e.unwrap_err(),
            "config: tcp.mss = 1448: framing = \"eth\" sends 1024-byte packets"
        );
        let e = FlowConfig::parse(&config(
            &scenario(1024, r#", "bytes": 1000"#),
            r#", "framing": "eth""#,
        ));
        assert!(e.unwrap_err().contains("flows[0].bytes = 1000"));
        assert!(FlowConfig::parse(&config(
            &scenario(1024, r#", "bytes": 2048"#),
            r#", "framing": "eth""#
        ))
        .is_ok());
    }
}
