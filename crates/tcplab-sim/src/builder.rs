//! Shorthands for building scenarios in Rust (tests, benchmarks) without JSON.
//!
//! ```
//! use tcplab_sim::builder::{dumbbell, ScenarioBuilder};
//! use tcplab_sim::scenario::{Buffer, Duplex, LinkDir, TcpFlowSpec};
//! use tcplab_core::Dur;
//!
//! let bottleneck = Duplex::symmetric(LinkDir::new(10_000_000, Dur::from_millis(20), Buffer::Packets(50)));
//! let access = Duplex::symmetric(LinkDir::new(100_000_000, Dur::from_millis(1), Buffer::Packets(1000)));
//! let scenario = ScenarioBuilder::new("example", dumbbell(2, bottleneck, access))
//!     .duration(Dur::from_secs(10))
//!     .flow(TcpFlowSpec::bulk("s0", "r0"))
//!     .flow(TcpFlowSpec::bulk("s1", "r1").recovery("sack"))
//!     .build();
//! assert_eq!(scenario.flows.len(), 2);
//! ```

use crate::delivery_trace::DeliveryTrace;
use crate::scenario::{
    Buffer, ChannelPreset, ChannelSpec, Dumbbell, Duplex, Explicit, LinkChange, LinkDir, LinkSpec,
    LinkTrace, LossSpec, MacSpec, NodeKind, NodeSpec, PipePreset, QueueSpec, Scenario, SeriesMode,
    StationSpec, TcpFlowSpec, Topology, TraceSpec, UdpFlowSpec, WlanAccess, WlanSpec,
};
use tcplab_core::{ControllerSpec, Dur, RecoverySpec, TcpConfig};

impl LinkDir {
    /// A direction whose capacity is the delivery trace `ms` (Mahimahi's format; `file`
    /// names it in messages); its rate is the trace's mean rate. Panics on a trace
    /// [`DeliveryTrace::from_ms`] refuses.
    pub fn traced(file: &str, ms: Vec<u64>, delay: Dur, buffer: Buffer) -> Self {
        let rate = DeliveryTrace::from_ms(ms.clone())
            .unwrap_or_else(|e| panic!("trace {file}: {e}"))
            .mean_rate();
        LinkDir {
            trace: Some(LinkTrace {
                file: file.to_string(),
                ms,
            }),
            ..LinkDir::new(rate, delay, buffer)
        }
    }
    /// Bernoulli loss with probability `p` per packet.
    pub fn bernoulli(mut self, p: f64) -> Self {
        self.loss = LossSpec::Bernoulli { p };
        self
    }
    pub fn loss(mut self, loss: LossSpec) -> Self {
        self.loss = loss;
        self
    }
    pub fn queue(mut self, queue: QueueSpec) -> Self {
        self.queue = queue;
        self
    }
    /// Adds a change at `change.at` (keep them sorted by time).
    pub fn change(mut self, change: LinkChange) -> Self {
        self.schedule.push(change);
        self
    }
    /// Reports this direction's random drops to the flows' senders after `delay`
    /// (the cross-layer channel).
    pub fn report_losses(mut self, delay: Dur) -> Self {
        self.report_losses = true;
        self.report_delay = delay;
        self
    }
}

/// A dumbbell of `pairs` sender/receiver pairs whose access links are all `access`.
pub fn dumbbell(pairs: u32, bottleneck: Duplex, access: Duplex) -> Topology {
    Topology::Dumbbell(Dumbbell {
        pairs,
        bottleneck,
        sender_access: vec![access.clone()],
        receiver_access: vec![access],
    })
}

/// An explicit topology from `(name, kind)` nodes and `(from, to, duplex)` links.
pub fn explicit(nodes: &[(&str, NodeKind)], links: Vec<(&str, &str, Duplex)>) -> Topology {
    Topology::Explicit(Explicit {
        nodes: nodes
            .iter()
            .map(|&(name, kind)| NodeSpec {
                name: name.into(),
                kind,
            })
            .collect(),
        links: links
            .into_iter()
            .map(|(from, to, d)| LinkSpec {
                from: from.into(),
                to: to.into(),
                forward: d.forward,
                reverse: d.reverse,
            })
            .collect(),
        routing: Default::default(),
        static_routes: Vec::new(),
        wlan: Vec::new(),
    })
}

impl TraceSpec {
    /// Record nothing but summaries (what benchmarks and long tests want).
    pub fn off() -> Self {
        TraceSpec {
            series: SeriesMode::Off,
            interval: Dur::from_millis(10),
            events: false,
            segments: false,
            drops: false,
            pcap: Vec::new(),
            pcap_snaplen: crate::pcap::DEFAULT_SNAPLEN,
            max_rows_per_flow: None,
        }
    }
    /// Record everything, series on change.
    pub fn all() -> Self {
        TraceSpec::default()
    }
    /// Also capture these links to pcap (`"all"`, `"{link}"`, `"{link}/forward"`...).
    pub fn pcap(mut self, selectors: &[&str]) -> Self {
        self.pcap = selectors.iter().map(|s| s.to_string()).collect();
        self
    }
}

impl TcpFlowSpec {
    /// An unlimited bulk transfer from `src` to `dst` with Reno window rules and NewReno
    /// recovery, starting at 0.
    pub fn bulk(src: &str, dst: &str) -> Self {
        TcpFlowSpec {
            name: None,
            src: src.into(),
            dst: dst.into(),
            controller: ControllerSpec::named("reno"),
            recovery: RecoverySpec::named("newreno"),
            start: Dur::ZERO,
            bytes: None,
            stop: None,
            tcp: None,
            route: None,
            stack: Default::default(),
            framing: Default::default(),
            receiver: Default::default(),
        }
    }
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }
    pub fn controller(mut self, name: &str) -> Self {
        self.controller = ControllerSpec::named(name);
        self
    }
    pub fn recovery(mut self, name: &str) -> Self {
        self.recovery = RecoverySpec::named(name);
        self
    }
    pub fn bytes(mut self, n: u64) -> Self {
        self.bytes = Some(n);
        self
    }
    pub fn start(mut self, t: Dur) -> Self {
        self.start = t;
        self
    }
    pub fn stop(mut self, t: Dur) -> Self {
        self.stop = Some(t);
        self
    }
    pub fn tcp(mut self, cfg: TcpConfig) -> Self {
        self.tcp = Some(cfg);
        self
    }
    /// Pins the flow to this route (node names from src to dst).
    pub fn route(mut self, nodes: &[&str]) -> Self {
        self.route = Some(nodes.iter().map(|n| n.to_string()).collect());
        self
    }
}

impl UdpFlowSpec {
    /// A CBR source of `rate_bps` (wire bits) in packets of `packet_size` wire bytes.
    pub fn cbr(src: &str, dst: &str, rate_bps: u64, packet_size: u32) -> Self {
        UdpFlowSpec {
            name: None,
            src: src.into(),
            dst: dst.into(),
            rate: rate_bps,
            packet_size,
            start: Dur::ZERO,
            stop: None,
            route: None,
        }
    }
    pub fn named(mut self, name: &str) -> Self {
        self.name = Some(name.into());
        self
    }
    pub fn start(mut self, t: Dur) -> Self {
        self.start = t;
        self
    }
    pub fn stop(mut self, t: Dur) -> Self {
        self.stop = Some(t);
        self
    }
}

/// Builds a [`Scenario`]: seed 1, 10 s, default TCP settings, full tracing unless changed.
pub struct ScenarioBuilder {
    s: Scenario,
}

impl ScenarioBuilder {
    pub fn new(name: &str, topology: Topology) -> Self {
        ScenarioBuilder {
            s: Scenario {
                name: name.into(),
                description: String::new(),
                seed: 1,
                duration: Dur::from_secs(10),
                topology,
                tcp: TcpConfig::default(),
                flows: Vec::new(),
                udp: Vec::new(),
                trace: TraceSpec::default(),
            },
        }
    }
    pub fn seed(mut self, seed: u64) -> Self {
        self.s.seed = seed;
        self
    }
    pub fn duration(mut self, d: Dur) -> Self {
        self.s.duration = d;
        self
    }
    pub fn tcp(mut self, cfg: TcpConfig) -> Self {
        self.s.tcp = cfg;
        self
    }
    pub fn flow(mut self, f: TcpFlowSpec) -> Self {
        self.s.flows.push(f);
        self
    }
    pub fn udp(mut self, f: UdpFlowSpec) -> Self {
        self.s.udp.push(f);
        self
    }
    pub fn trace(mut self, t: TraceSpec) -> Self {
        self.s.trace = t;
        self
    }
    pub fn build(self) -> Scenario {
        self.s
    }
}

impl StationSpec {
    /// Station `node` at `metres` from the AP.
    pub fn at(node: &str, metres: f64) -> Self {
        StationSpec {
            node: node.into(),
            distance: Some(metres),
            preset: None,
        }
    }
    /// Station `node` placed by a link-quality preset.
    pub fn preset(node: &str, preset: ChannelPreset) -> Self {
        StationSpec {
            node: node.into(),
            distance: None,
            preset: Some(preset),
        }
    }
}

impl WlanSpec {
    /// A segment with default MAC and channel parameters.
    pub fn new(name: &str, ap: &str, stations: Vec<StationSpec>) -> Self {
        WlanSpec {
            name: name.into(),
            ap: ap.into(),
            stations,
            preset: None,
            mac: MacSpec::default(),
            channel: ChannelSpec::default(),
            report_losses: false,
            report_delay: Dur::ZERO,
        }
    }
    /// Reports channel losses (MAC drops below the receive threshold) after `delay`.
    pub fn report_losses(mut self, delay: Dur) -> Self {
        self.report_losses = true;
        self.report_delay = delay;
        self
    }
}

impl PipePreset {
    /// Both directions of the pipe, drop-tail.
    pub fn duplex(self) -> Duplex {
        let (rate, delay, packets) = self.params();
        Duplex::symmetric(LinkDir::new(rate, delay, Buffer::Packets(packets)))
    }
}

/// The WLAN paper's Fig. 3 with `pipe` and one station `sta{i}` per entry of `stations`;
/// the server's access link [`WlanAccess::default_access`].
pub fn wlan_access(pipe: PipePreset, stations: &[ChannelPreset]) -> Topology {
    let stations = stations
        .iter()
        .enumerate()
        .map(|(i, &p)| StationSpec::preset(&format!("sta{i}"), p))
        .collect();
    Topology::WlanAccess(Box::new(WlanAccess {
        access: WlanAccess::default_access(),
        pipe: pipe.duplex(),
        wlan: WlanSpec::new("wlan0", "ap", stations),
    }))
}
