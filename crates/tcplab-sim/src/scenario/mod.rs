//! The scenario a simulation runs, in canonical units (ns, bit/s, bytes). This is the JSON
//! that Python's pydantic schema emits after validating a TOML file (docs/scenario.md);
//! Rust users build it directly. `Scenario::validate` ([`crate::validate`]) re-checks
//! everything, so the simulator never trusts its input.
//!
//! A leaf module: plain serde types (here, [`presets`] and [`wlan`]) that depend on
//! tcplab-core's config types only, never on the engine; the engine (topology expansion,
//! validation, network, simulation) depends on them.

use serde::{Deserialize, Serialize};
use tcplab_core::{ControllerSpec, Dur, RecoverySpec, TcpConfig};

pub mod presets;
pub mod vocabulary;
pub mod wlan;

pub use presets::{ParkingLot, WiredCumWireless};
pub use wlan::{
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

impl Scenario {
    /// The TCP settings flow `f` runs with: its own, else the scenario's.
    pub fn tcp_of<'a>(&'a self, f: &'a TcpFlowSpec) -> &'a TcpConfig {
        f.tcp.as_ref().unwrap_or(&self.tcp)
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // built once per run; boxing would only cost clarity
pub enum Topology {
    Dumbbell(Dumbbell),
    Explicit(Explicit),
    /// Cascaded bottlenecks with long, cross and reverse flows (Adaptive Reno Fig. 5).
    ParkingLot(ParkingLot),
    /// Servers, a wired path, a base station and a lossy last hop to mobile hosts
    /// (Venoplus Fig. 2, Veno Fig. 3b).
    WiredCumWireless(WiredCumWireless),
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

impl Dumbbell {
    /// The least rate of a default access link (bit/s).
    pub const DEFAULT_ACCESS_MIN_RATE: u64 = 1_000_000_000;
    /// A default access link's buffer (packets).
    pub const DEFAULT_ACCESS_BUFFER_PACKETS: u32 = 1000;
    /// How many times the bottleneck's rate a default access link carries.
    pub const DEFAULT_ACCESS_RATE_FACTOR: u64 = 10;

    /// The access links of a preset (the dumbbell's senders and receivers, the parking
    /// lot's hosts) when the scenario gives none: never the bottleneck, whose fastest
    /// direction carries `bottleneck_rate` bit/s. [`Self::DEFAULT_ACCESS_RATE_FACTOR`] times
    /// that rate (at least [`Self::DEFAULT_ACCESS_MIN_RATE`], at most `u64::MAX`), no delay,
    /// [`Self::DEFAULT_ACCESS_BUFFER_PACKETS`] packets, drop-tail, no loss, both ways. The
    /// one home of this default: the Python schema reads it through
    /// `_native.default_access_json`.
    pub fn default_access(bottleneck_rate: u64) -> Duplex {
        let rate = bottleneck_rate
            .saturating_mul(Self::DEFAULT_ACCESS_RATE_FACTOR)
            .max(Self::DEFAULT_ACCESS_MIN_RATE);
        Duplex::symmetric(LinkDir::new(
            rate,
            Dur::ZERO,
            Buffer::Packets(Self::DEFAULT_ACCESS_BUFFER_PACKETS),
        ))
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explicit {
    pub nodes: Vec<NodeSpec>,
    pub links: Vec<LinkSpec>,
    /// How routes are computed (default: fewest hops).
    #[serde(default, skip_serializing_if = "Routing::is_hops")]
    pub routing: Routing,
    /// Static routing entries; each overrides the computed next hop of one node for one
    /// destination host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub static_routes: Vec<StaticRoute>,
    /// 802.11b WLAN segments (docs/wlan.md).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub wlan: Vec<WlanSpec>,
}

/// Shortest paths by hop count or by the sum of propagation delays (docs/scenario.md gives
/// the tie-break rules).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    #[default]
    Hops,
    Delay,
}

impl Routing {
    fn is_hops(&self) -> bool {
        *self == Routing::Hops
    }
}

/// At node `at`, packets for host `dst` go to the neighbour `next`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StaticRoute {
    pub at: String,
    pub dst: String,
    pub next: String,
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

impl Duplex {
    pub fn new(forward: LinkDir, reverse: LinkDir) -> Self {
        Duplex { forward, reverse }
    }
    /// Both directions alike.
    pub fn symmetric(dir: LinkDir) -> Self {
        Duplex {
            forward: dir.clone(),
            reverse: dir,
        }
    }
}

impl LinkDir {
    /// A direction of `rate_bps` bit/s, `delay` and `buffer` with the defaults of everything
    /// else: drop-tail, no loss, no schedule, no reports, no trace.
    pub fn new(rate_bps: u64, delay: Dur, buffer: Buffer) -> Self {
        LinkDir {
            rate: rate_bps,
            delay,
            buffer,
            queue: QueueSpec::default(),
            loss: LossSpec::default(),
            report_losses: false,
            report_delay: Dur::ZERO,
            schedule: Vec::new(),
            trace: None,
        }
    }
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
    /// Changes to this direction at given times (a time-varying link); sorted by `at`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub schedule: Vec<LinkChange>,
    /// Trace-driven capacity (Mahimahi's format, [`crate::delivery_trace`]): packets leave
    /// at the trace's delivery opportunities instead of being serialized at `rate`, which
    /// must then be the trace's mean rate (used by RED and reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<LinkTrace>,
}

/// A link direction's delivery trace: the file it was read from (for messages) and its
/// opportunities in ms, as the file lists them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkTrace {
    pub file: String,
    pub ms: Vec<u64>,
}

/// A change of a link direction at time `at` (from the start of the run). Fields left None
/// keep their value. Applied without disturbing packets already there: the packet being
/// serialized finishes at the old rate (its loss draw was made with the old model),
/// propagating packets keep their arrival time, and a smaller buffer drops nothing already
/// queued, it only refuses new packets until the link holds less (docs/network-models.md).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkChange {
    pub at: Dur,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Buffer>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
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
    /// Random Early Detection (Floyd & Jacobson 1993), docs/network-models.md.
    Red(RedSpec),
}

/// RED parameters. Thresholds are in packets (`mode = packets`) or bytes (`mode = bytes`);
/// the link's `buffer` is the hard limit, checked against the instantaneous occupancy.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub min_th: f64,
    pub max_th: f64,
    /// Early-drop probability at `max_th` (default 0.1, Floyd's recommendation).
    #[serde(default = "default_max_p")]
    pub max_p: f64,
    /// Weight of the EWMA average: avg <- (1 - w_q) avg + w_q q (default 0.002, Floyd's).
    #[serde(default = "default_w_q")]
    pub w_q: f64,
    /// Drop probability rises linearly from max_p to 1 between max_th and 2 max_th
    /// (otherwise everything above max_th is dropped).
    #[serde(default)]
    pub gentle: bool,
    /// Spread drops uniformly over [1/p_b, 2/p_b] packets instead of [1, 1/p_b] (ns "wait").
    #[serde(default = "yes")]
    pub wait: bool,
    #[serde(default)]
    pub mode: RedMode,
    /// Mark ECN-capable packets (CE) instead of dropping them early.
    #[serde(default)]
    pub ecn: bool,
    /// Typical packet size in bytes: the idle-time decay counts idle time in transmission
    /// times of such packets, and byte mode scales p_b by size / mean_packet_size.
    #[serde(default = "default_mean_packet_size")]
    pub mean_packet_size: u32,
}

fn yes() -> bool {
    true
}
fn default_max_p() -> f64 {
    0.1
}
fn default_w_q() -> f64 {
    0.002
}
fn default_mean_packet_size() -> u32 {
    1500
}

/// What RED's average and thresholds count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RedMode {
    #[default]
    Packets,
    Bytes,
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
    /// Bit errors: a packet of `size` bytes is lost with probability 1 - (1 - ber)^(8 size).
    Ber { ber: f64 },
    /// Gilbert-Elliott two-state burst loss: per packet the chain moves good -> bad with
    /// `p_gb` and bad -> good with `p_bg`; a packet is lost with `loss_good` / `loss_bad`
    /// in the state it meets (defaults 0 and 1: the Gilbert model).
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        #[serde(default)]
        loss_good: f64,
        #[serde(default = "one")]
        loss_bad: f64,
    },
    /// Time-based trace: the first packet whose serialization ends at or after each of
    /// `times` is lost, and every packet whose serialization ends inside one of the
    /// `[start, end)` `intervals`. Deterministic, draws nothing.
    TimeTrace {
        #[serde(default)]
        times: Vec<Dur>,
        #[serde(default)]
        intervals: Vec<[Dur; 2]>,
    },
}

fn one() -> f64 {
    1.0
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
    /// Explicit route: node names from `src` to `dst`, consecutive ones joined by a link,
    /// routers in between. ACKs take it backwards. None = the topology's routes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<String>>,
    /// The stack that carries the flow on a live testbed (`tcplab run --live`). A simulated
    /// run simulates tcplab's sender for every flow whatever this says (docs/live.md); a real
    /// TCP stack's flow (`linux`, `tcplab-tcp`) starts from its handshake's RTT sample there
    /// ([`crate::handshake`]).
    #[serde(default, skip_serializing_if = "is_default")]
    pub stack: Stack,
    /// The wire format of a `stack = "tcplab"` flow on a live testbed; a simulated run
    /// ignores it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub framing: Framing,
    /// Who receives a `stack = "linux"` flow on a live testbed: the destination's kernel
    /// (default) or tcplab's receiver speaking TCP (`"tcplab"`); a simulated run ignores it.
    #[serde(default, skip_serializing_if = "is_default")]
    pub receiver: ReceiverStack,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// Which stack runs a TCP flow live: tcplab-core's sender and receiver over UDP, the host
/// kernel's TCP with the flow's controller as its congestion control, or tcplab-core's
/// sender speaking real TCP to the destination's kernel (docs/real-tcp.md).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stack {
    #[default]
    Tcplab,
    Linux,
    #[serde(rename = "tcplab-tcp")]
    TcplabTcp,
}

/// Who receives a live TCP flow: the stack's own receiver, or tcplab-core's receiver
/// speaking real TCP (to a Linux sender: `stack = "linux"`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReceiverStack {
    #[default]
    #[serde(rename = "stack")]
    Stack,
    Tcplab,
}

/// The live wire format of a tcplab-stack flow: tcplab's own header carrying every field of
/// the core's segments, or the ETH framework's (1024-byte packets, 17-byte header).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Framing {
    #[default]
    Tcplab,
    Eth,
}

/// The ETH framework's packet payload (bytes): a flow in its framing sends only such
/// packets (its `mss`) and a whole number of them.
pub const ETH_PACKET: u32 = 1024;
/// The ETH framework's header (bytes).
pub const ETH_HEADER: usize = 17;
/// Flows the ETH header can tell apart (a one-byte flow number).
pub const ETH_FLOWS: usize = 256;

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
    /// Explicit route from `src` to `dst` (node names), as for TCP flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<String>>,
}

/// Default bytes kept per packet: every header with its options (IPv4 20 + TCP at most 60).
pub const DEFAULT_SNAPLEN: u32 = 128;

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
    /// Links to capture to pcap files: `"all"`, `"{link}"` (both directions) or
    /// `"{link}/forward"` / `"{link}/reverse"` (see [`crate::pcap`], docs/pcap.md).
    pub pcap: Vec<String>,
    /// Bytes of each captured packet kept in the file (1..=65535; the rest is cut).
    pub pcap_snaplen: u32,
    /// Keeps long runs bounded: with a number, the series and queue tables are decimated to
    /// at most about this many rows per flow (link direction) and the logs keep their first
    /// this many rows per flow ([`crate::trace`]; values below 2 count as 2). None (the
    /// default): the series and queues tables each stay within
    /// [`crate::trace::DEFAULT_TABLE_BYTES`], decimated past it, the logs whole.
    /// [`MaxRows::All`]: every row.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rows_per_flow: Option<MaxRows>,
}

/// `trace.max_rows_per_flow`: a number of rows per flow, or `"all"` (every row of every table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MaxRows {
    Rows(u64),
    All,
}

impl Serialize for MaxRows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            MaxRows::Rows(m) => s.serialize_u64(m),
            MaxRows::All => s.serialize_str("all"),
        }
    }
}

impl<'de> Deserialize<'de> for MaxRows {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = MaxRows;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number of rows or \"all\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<MaxRows, E> {
                Ok(MaxRows::Rows(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<MaxRows, E> {
                u64::try_from(v)
                    .map(MaxRows::Rows)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(v), &self))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<MaxRows, E> {
                if v == "all" {
                    Ok(MaxRows::All)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl TraceSpec {
    /// Whether the default bound holds the series and queues tables
    /// ([`crate::trace::table_cap`]): recorded on change, no `max_rows_per_flow` given.
    pub fn default_bound(&self) -> bool {
        self.max_rows_per_flow.is_none() && self.series == SeriesMode::Change
    }

    /// The rows per flow (link direction) the user bounds every table to, if a number.
    pub fn rows_per_flow(&self) -> Option<u64> {
        match self.max_rows_per_flow {
            Some(MaxRows::Rows(m)) => Some(m),
            _ => None,
        }
    }
}

impl Default for TraceSpec {
    fn default() -> Self {
        TraceSpec {
            series: SeriesMode::Change,
            interval: Dur::from_millis(10),
            events: true,
            segments: true,
            drops: true,
            pcap: Vec::new(),
            pcap_snaplen: DEFAULT_SNAPLEN,
            max_rows_per_flow: None,
        }
    }
}
