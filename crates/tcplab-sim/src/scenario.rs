//! The scenario a simulation runs, in canonical units (ns, bit/s, bytes). This is the JSON
//! that Python's pydantic schema emits after validating a TOML file (docs/scenario.md);
//! Rust users build it directly. `Scenario::validate` re-checks everything, so the
//! simulator never trusts its input.

use serde::{Deserialize, Serialize};
use tcplab_core::{ControllerSpec, Dur, RecoverySpec, TcpConfig};

pub use crate::wlan::spec::{
    ChannelPreset, ChannelSpec, MacSpec, PipePreset, StationSpec, WlanAccess, WlanSpec,
};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// Root of every random stream in the run.
    pub seed: u64,
    /// Simulated time to run.
    pub duration: Dur,
    pub topology: Topology,
    /// TCP settings of flows that do not give their own.
    #[serde(default)]
    pub tcp: TcpConfig,
    #[serde(default)]
    pub flows: Vec<TcpFlowSpec>,
    #[serde(default)]
    pub udp: Vec<UdpFlowSpec>,
    #[serde(default)]
    pub trace: TraceSpec,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Topology {
    Dumbbell(Dumbbell),
    Explicit(Explicit),
    /// The WLAN paper's Fig. 3 (docs/wlan.md).
    WlanAccess(Box<WlanAccess>),
}

/// N sender hosts `s0..` each on its own access link to router `left`, a bottleneck
/// `left`-`right`, and N receiver hosts `r0..` on access links from `right`. Link names are
/// `"{from}-{to}"`: `s0-left`, `left-right`, `right-r0`. Forward is from sender to receiver.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Dumbbell {
    pub pairs: u32,
    pub bottleneck: Duplex,
    /// One entry for all pairs, or one per pair (so flows can have different RTTs).
    pub sender_access: Vec<Duplex>,
    pub receiver_access: Vec<Duplex>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explicit {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// 802.11b WLAN segments (docs/wlan.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wlan: Vec<WlanSpec>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Host,
    Router,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    pub kind: NodeKind,
}

/// A duplex link between two named nodes; `forward` carries packets from `from` to `to`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub from: String,
    pub to: String,
    pub forward: LinkDir,
    pub reverse: LinkDir,
}

/// The two directions of a link, configured independently (Dummynet B_f/mu_f/tau_f and
/// B_r/mu_r/tau_r).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Duplex {
    pub forward: LinkDir,
    pub reverse: LinkDir,
}

/// One direction of a link: a FIFO queue feeding a serializer and a propagation delay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDir {
    /// Bits per second.
    pub rate: u64,
    /// One-way propagation delay.
    pub delay: Dur,
    pub buffer: Buffer,
    #[serde(default)]
    pub queue: QueueSpec,
    #[serde(default)]
    pub loss: LossSpec,
    /// Cross-layer channel: this direction reports each random drop it makes (cause
    /// `link_error`, later `mac`) of a TCP packet to the sender of that packet's flow, as a
    /// `CrossLayerReport` of one loss (an oracle from the lossy hop's MAC to the sender; see
    /// docs/loss-classification.md). Default false.
    #[serde(default, skip_serializing_if = "is_false")]
    pub report_losses: bool,
    /// Delay between such a drop and the report reaching the sender (default 0: at once).
    /// Only with `report_losses`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub report_delay: Dur,
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero(d: &Dur) -> bool {
    *d == Dur::ZERO
}

/// Queue capacity, counting the packet being serialized (Dummynet semantics).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Buffer {
    Packets(u32),
    Bytes(u64),
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "discipline", rename_all = "snake_case", deny_unknown_fields)]
pub enum QueueSpec {
    #[default]
    DropTail,
}

/// Random loss on one link direction, drawn from that direction's own seeded stream.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    #[default]
    None,
    /// Each packet is lost independently with probability `p`.
    Bernoulli { p: f64 },
    /// Trace-driven loss: the packets of this link direction with these indices are lost
    /// on the wire (0 = the first packet the direction serializes; packets its queue drops
    /// are not counted). Deterministic, draws nothing; e.g. `{model: trace, packets: [5, 9]}`.
    Trace { packets: Vec<u64> },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpFlowSpec {
    /// Defaults to "flow{index}".
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    pub controller: ControllerSpec,
    pub recovery: RecoverySpec,
    #[serde(default)]
    pub start: Dur,
    /// Bytes to transfer; None = until `stop` or the end of the run.
    #[serde(default)]
    pub bytes: Option<u64>,
    /// The application stops writing at this time.
    #[serde(default)]
    pub stop: Option<Dur>,
    /// This flow's TCP settings; None = the scenario's `tcp`.
    #[serde(default)]
    pub tcp: Option<TcpConfig>,
}

/// A constant-bit-rate UDP source.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UdpFlowSpec {
    #[serde(default)]
    pub name: Option<String>,
    pub src: String,
    pub dst: String,
    /// Bits per second of payload+headers on the wire.
    pub rate: u64,
    /// Bytes per packet on the wire.
    pub packet_size: u32,
    #[serde(default)]
    pub start: Dur,
    #[serde(default)]
    pub stop: Option<Dur>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SeriesMode {
    Off,
    /// A row whenever a sampled value changes.
    #[default]
    Change,
    /// A row every `interval`.
    Interval,
}

/// What the run records besides summaries.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TraceSpec {
    /// Per-flow cwnd/ssthresh/srtt/rto/in-flight/delivered and per-link queue series.
    pub series: SeriesMode,
    pub interval: Dur,
    /// Sender event log (window changes with reasons, recoveries, timeouts).
    pub events: bool,
    /// Every data segment sent (time-sequence plots).
    pub segments: bool,
    /// Every dropped packet with its cause.
    pub drops: bool,
}

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec {
            series: SeriesMode::Change,
            interval: Dur::from_millis(10),
            events: true,
            segments: true,
            drops: true,
        }
    }
}
