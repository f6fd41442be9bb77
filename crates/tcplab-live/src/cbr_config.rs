//! The config of one end of a UDP constant-bit-rate flow (`tcplab-flow udp-send|udp-recv
//! --config FILE`), JSON:
//!
//! ```text
//! {"scenario": {...},            the scenario's canonical JSON (tcplab validate --json)
//!  "flow": 0,                    index in scenario.udp
//!  "local": "10.213.0.1:5400", "peer": "10.213.0.2:5400",
//!  "clock_origin_ns": 123,       CLOCK_MONOTONIC of model time 0 (default: the start)
//!  "linger_ns": 2000000000,     the receiver stays this long past the run's end
//!  "realtime": false}            SCHED_FIFO priority 10 (the summary says if granted)
//! ```
//!
//! The source is the simulator's ([`tcplab_sim::app::UdpFlow`]): the same rate, packet
//! size (the IP packet's), start, stop and send times.

use crate::cbr_wire::CBR_HEADER;
use crate::endpoint::{EndpointClock, FactLog};
use crate::udp::Udp;
use crate::wire::IP_UDP;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::Path;
use tcplab_core::Time;
use tcplab_sim::app::UdpFlow;
use tcplab_sim::scenario::{Scenario, UdpFlowSpec};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrConfig {
    pub scenario: Scenario,
    pub flow: usize,
    pub local: SocketAddr,
    pub peer: SocketAddr,
    #[serde(default)]
    pub clock_origin_ns: Option<u64>,
    #[serde(default = "two_seconds")]
    pub linger_ns: u64,
    #[serde(default)]
    pub realtime: bool,
}

fn two_seconds() -> u64 {
    2_000_000_000
}

impl CbrConfig {
    /// Parses and checks `text`; the error is one line naming the field and the value.
    pub fn parse(text: &str) -> Result<CbrConfig, String> {
        let c: CbrConfig = serde_json::from_str(text).map_err(|e| format!("config: {e}"))?;
        c.scenario
            .validate()
            .map_err(|e| format!("config: scenario: {}", e.0))?;
        let n = c.scenario.udp.len();
        if c.flow >= n {
            return Err(format!(
                "config: flow = {}: the scenario has {n} UDP flows",
                c.flow
            ));
        }
        if c.flow > u16::MAX as usize {
            return Err(format!("config: flow = {}: at most 65535", c.flow));
        }
        let size = c.spec().packet_size as usize;
        if size < IP_UDP + CBR_HEADER {
            return Err(format!(
                "config: udp[{}].packet_size = {size}: live UDP packets carry a {}-byte \
                 header, so at least {} bytes",
                c.flow,
                CBR_HEADER,
                IP_UDP + CBR_HEADER
            ));
        }
        Ok(c)
    }

    /// What both ends do first: bind the socket, ask for the scheduling, say `ready`, wait
    /// for model time 0 and open the fact log in `out`. Returns the clock (ns), the
    /// socket, the scheduling granted and the log.
    pub fn open(&self, out: &Path) -> Result<(EndpointClock, Udp, &'static str, FactLog), String> {
        let clock = EndpointClock::new(self.clock_origin_ns, 1);
        let udp =
            Udp::open(self.local, self.peer).map_err(|e| format!("socket {}: {e}", self.local))?;
        let sched = crate::process::realtime(self.realtime);
        crate::endpoint::ready();
        clock.wait_for_origin();
        let facts = FactLog::create(&out.join("facts.jsonl")).map_err(|e| e.to_string())?;
        Ok((clock, udp, sched, facts))
    }

    pub fn spec(&self) -> &UdpFlowSpec {
        &self.scenario.udp[self.flow]
    }

    /// The simulator's source of this flow (its send times, [`UdpFlow::send_time`]).
    pub fn source(&self) -> UdpFlow {
        let s = self.spec();
        UdpFlow {
            name: s.name.clone().unwrap_or_default(),
            src: 0,
            dst: 0,
            rate: s.rate,
            packet_size: s.packet_size,
            start: Time::ZERO + s.start,
            stop: s.stop.map(|d| Time::ZERO + d),
            next: 0,
            stopped: false,
            received: 0,
            received_bytes: 0,
        }
    }

    /// UDP payload bytes of each datagram (the packet size less the IP and UDP headers).
    pub fn payload(&self) -> usize {
        self.spec().packet_size as usize - IP_UDP
    }

    pub fn end(&self) -> Time {
        Time::ZERO + self.scenario.duration
    }

    /// When the source stops sending: its `stop`, at most the end of the run.
    pub fn until(&self) -> Time {
        let s = self.source();
        s.stop.map_or(self.end(), |t| t.min(self.end()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(size: u32, flow: usize) -> String {
        format!(
            r#"{{"scenario": {{"name": "t", "seed": 4, "duration": 1000000000,
              "topology": {{"kind": "explicit",
                "nodes": [{{"name": "a", "kind": "host"}}, {{"name": "b", "kind": "host"}}],
                "links": [{{"from": "a", "to": "b",
                  "forward": {{"rate": 10000000, "delay": 5000000, "buffer": {{"packets": 50}}}},
                  "reverse": {{"rate": 10000000, "delay": 5000000, "buffer": {{"packets": 50}}}}}}]}},
              "flows": [],
              "udp": [{{"src": "a", "dst": "b", "rate": 1000000, "packet_size": {size},
                        "start": 100000000}}]}},
              "flow": {flow}, "local": "10.0.0.1:1", "peer": "10.0.0.2:1"}}"#
        )
    }

    #[test]
    fn a_udp_flow_keeps_the_simulators_send_times() {
        let c = CbrConfig::parse(&config(1000, 0)).unwrap();
        assert_eq!(c.payload(), 972);
        let s = c.source();
        // 1000 bytes at 1 Mb/s: one packet each 8 ms from 100 ms.
        assert_eq!(s.send_time(0).as_nanos(), 100_000_000);
        assert_eq!(s.send_time(3).as_nanos(), 124_000_000);
        assert_eq!(c.until(), c.end());
    }

    #[test]
    fn bad_configs_name_the_field() {
        assert_eq!(
            CbrConfig::parse(&config(1000, 1)).unwrap_err(),
            "config: flow = 1: the scenario has 1 UDP flows"
        );
        let e = CbrConfig::parse(&config(40, 0)).unwrap_err();
        assert!(e.starts_with("config: udp[0].packet_size = 40:"), "{e}");
    }
}
