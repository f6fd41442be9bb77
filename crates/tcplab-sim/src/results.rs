//! What a run produces: its rows and logs, before they become the tables' columns.
//! The tables and columns Python sees are declared in [`crate::columns`] (the one column
//! schema); docs/results.md explains them.

use crate::labels::Labels;
pub use crate::packet::DropCause;
use serde::Serialize;
use tcplab_core::SenderCounters;

/// The actual cause of the loss behind a loss response, in the two classes of Veno's
/// Table I: congestion (buffer overflow, AQM), random (link error, MAC), or none (the
/// segment's latest transmission was not dropped: a spurious trigger).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum LossCause {
    Congestion = 0,
    Random = 1,
    None = 2,
}

impl LossCause {
    pub const ALL: [LossCause; 3] = [LossCause::Congestion, LossCause::Random, LossCause::None];
    pub fn of(cause: Option<DropCause>) -> Self {
        match cause {
            None => LossCause::None,
            Some(c) if c.is_random() => LossCause::Random,
            Some(_) => LossCause::Congestion,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            LossCause::Congestion => "congestion",
            LossCause::Random => "random",
            LossCause::None => "none",
        }
    }
}

/// The `flows` columns a sender's own counters give, written once for the simulator's rows
/// (`FlowSummary::sender`) and a live tcplab sender's summary (`tcplab_live::endpoint::sender_figures`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SenderColumns {
    pub segments_sent: u64,
    pub bytes_sent: u64,
    pub retransmits: u64,
    pub retransmits_fast: u64,
    pub retransmits_recovery: u64,
    pub retransmits_timeout: u64,
    /// Tail-loss probes that resent the highest segment (RACK-TLP).
    pub retransmits_probe: u64,
    /// Recovery entries (fast retransmits).
    pub fast_retransmits: u64,
    /// New reductions within one recovery (LRD's lost-retransmission detection).
    pub recovery_restarts: u64,
    /// Tail-loss probes sent (new data or a retransmission).
    pub probes: u64,
    pub timeouts: u64,
    /// Timeouts that fired again before the cumulative ACK moved (among `timeouts`).
    pub timeouts_repeated: u64,
    /// Timeouts found spurious and undone (`tcp.frto`, `tcp.undo`).
    pub undos_timeout: u64,
    /// Fast-recovery reductions found unnecessary and undone (`tcp.undo`).
    pub undos_recovery: u64,
    /// Window reductions: fast retransmits + recovery restarts + timeouts + ECN responses.
    pub loss_events: u64,
    pub dup_acks: u64,
    /// Window reductions in answer to ECN echoes (at most one per window of data).
    pub ecn_reductions: u64,
    /// The smallest and the mean RTT sample (None without a sample).
    pub min_rtt_ns: Option<u64>,
    pub mean_rtt_ns: Option<u64>,
}

impl SenderColumns {
    pub fn of(sc: &SenderCounters) -> Self {
        SenderColumns {
            segments_sent: sc.segments_sent,
            bytes_sent: sc.bytes_sent,
            retransmits: sc.retransmits,
            retransmits_fast: sc.retransmits_fast,
            retransmits_recovery: sc.retransmits_recovery,
            retransmits_timeout: sc.retransmits_timeout,
            retransmits_probe: sc.retransmits_probe,
            fast_retransmits: sc.recoveries,
            recovery_restarts: sc.recovery_restarts,
            probes: sc.probes,
            timeouts: sc.timeouts,
            timeouts_repeated: sc.timeouts_repeated,
            undos_timeout: sc.undos_timeout,
            undos_recovery: sc.undos_recovery,
            loss_events: sc.recoveries + sc.recovery_restarts + sc.timeouts + sc.ecn_reductions,
            dup_acks: sc.dup_acks,
            ecn_reductions: sc.ecn_reductions,
            min_rtt_ns: sc.rtt_min_ns,
            mean_rtt_ns: (sc.rtt_samples > 0)
                .then(|| (sc.rtt_sum_ns / sc.rtt_samples as u128) as u64),
        }
    }
}

/// One row per TCP flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSummary {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub controller: String,
    pub recovery: String,
    pub start_ns: u64,
    /// When the last byte was acknowledged (transfers of N bytes), else the end of the run.
    pub end_ns: u64,
    pub completed: bool,
    pub bytes_delivered: u64,
    /// Application bytes delivered * 8 / (end - start).
    pub throughput_bps: f64,
    /// Application bytes delivered / bytes sent (including retransmissions).
    pub goodput: f64,
    /// The columns the sender's counters give (retransmissions, timeouts, RTT...).
    pub sender: SenderColumns,
    pub acks_sent: u64,
    /// Segments that arrived when every byte was already there (unnecessary retransmissions).
    pub spurious_retransmits: u64,
    /// Data segments of this flow dropped anywhere (ground truth).
    pub data_drops: u64,
    pub ack_drops: u64,
    /// Loss-classification accounting (Veno's Table I; docs/loss-classification.md). Each
    /// array is indexed by `LossCause as usize`: [congestion, random, none].
    /// Fast retransmits whose verdict label was "4/5" (#FF4/5).
    pub ff45: [u64; 3],
    /// Fast retransmits whose verdict label was "1/2" (#FF1/2).
    pub ff12: [u64; 3],
    /// Fast retransmits with any other label ("keep", "areno", "bwe", ...).
    pub ff_other: [u64; 3],
    /// Timeouts by cause.
    pub timeouts_by_cause: [u64; 3],
    /// Share of "4/5" decisions that answered a random loss: ff45[random] / sum(ff45).
    pub ff45_accuracy: Option<f64>,
    /// Share of congestion losses answered with "4/5" among those answered with "4/5" or
    /// "1/2": ff45[congestion] / (ff45[congestion] + ff12[congestion]).
    pub congestion_misdiagnosis: Option<f64>,
    /// Mean verdict value (reduction factor, or a congestion level such as Adaptive Reno's
    /// c) over fast retransmits caused by congestion / by random loss.
    pub ff_value_mean_congestion: Option<f64>,
    pub ff_value_mean_random: Option<f64>,
    /// Cross-layer reports (random drops of this flow's packets) delivered to the sender.
    pub cross_layer_reports: u64,
    /// Timeouts by cause (docs/timeouts.md), indexed by `TimeoutClass as usize`:
    /// [lost_timeout_rtx, lost_fast_rtx, mpl_lost_rtx, mpl_missing_acks, non_trigger, other].
    pub timeouts_by_class: [u64; 6],
    /// Loss-indication probability: (timeouts + recovery entries) / segments sent (0 when
    /// nothing was sent).
    pub loss_indication_p: f64,
    /// Loss events (ETH report Table 3; docs/eth-metrics.md): reductions that followed exactly
    /// one / more than one dropped data transmission of their window.
    pub loss_events_single: u64,
    pub loss_events_multiple: u64,
    /// Dropped data transmissions counted in loss events, and the most in one event.
    pub loss_event_drops: u64,
    pub loss_event_max: u64,
    /// Recovery entries by the duplicate ACKs in a row that triggered them: 0, 1, 2, 3, 4+.
    pub recoveries_by_dupacks: [u64; 5],
    /// Mean duplicate ACKs per recovery entry (None without recoveries).
    pub dupacks_per_recovery: Option<f64>,
    /// Use of the n-th SACK block (ETH report Table 6), index n - 1: ACKs the sender got
    /// with at least n blocks, and those whose n-th block SACKed new data.
    pub sack_block_carried: [u64; 6],
    pub sack_block_used: [u64; 6],
    /// ACKs with a DSACK block (RFC 2883) the receiver sent.
    pub dsacks_sent: u64,
    /// Data segments of this flow marked CE by a queue (ECN; not drops).
    pub ecn_marks: u64,
}

/// One row per UDP flow.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UdpSummary {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub packets_dropped: u64,
    pub throughput_bps: f64,
}

/// One-way delay, jitter and loss of one flow's packets (table "delay"; TCP: data
/// segments, UDP: datagrams; docs/delay.md).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelaySummary {
    pub name: String,
    /// "tcp" or "udp".
    pub flow_kind: &'static str,
    /// Index into `Results::flows` or `Results::udp`.
    pub flow: u32,
    /// TCP: data transmissions, retransmissions included; UDP: datagrams.
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    /// packets_dropped / packets_sent * 100; None when nothing was sent.
    pub loss_pct: Option<f64>,
    /// One-way delay of the packets delivered (None without any): least, mean, percentiles
    /// (within 1/128 of the exact value) and most.
    pub delay_min_ns: Option<u64>,
    pub delay_mean_ns: Option<f64>,
    pub delay_p50_ns: Option<u64>,
    pub delay_p95_ns: Option<u64>,
    pub delay_p99_ns: Option<u64>,
    pub delay_max_ns: Option<u64>,
    /// Mean |delay difference| of consecutive arrivals (FlowMonitor); None below 2 arrivals.
    pub jitter_mean_ns: Option<f64>,
    /// RFC 3550's smoothed interarrival jitter after the last arrival (iperf3).
    pub jitter_rfc3550_ns: Option<f64>,
}

/// The delay and jitter histograms of every flow (table "delay_histogram"): one row per
/// non-empty bucket.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelayHistogramLog {
    /// "tcp" or "udp".
    pub flow_kind: Vec<&'static str>,
    pub flow: Vec<u32>,
    /// "delay" (one-way delay) or "jitter" (|delay difference| of consecutive arrivals).
    pub metric: Vec<&'static str>,
    /// The bucket holds values in [lower_ns, lower_ns + width_ns).
    pub lower_ns: Vec<u64>,
    pub width_ns: Vec<u64>,
    pub packets: Vec<u64>,
}

/// One-way delay over time (table "delay_series",
/// [`crate::instruments::delay_series`]): one row per flow and interval of `trace.interval`
/// in which packets arrived.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DelaySeriesLog {
    /// "tcp" or "udp".
    pub flow_kind: Labels,
    pub flow: Vec<u32>,
    /// Start of the interval (arrival times in [time_ns, time_ns + interval)).
    pub time_ns: Vec<u64>,
    pub packets: Vec<u64>,
    pub delay_mean_ns: Vec<f64>,
    pub delay_min_ns: Vec<u64>,
    pub delay_p50_ns: Vec<u64>,
    pub delay_p95_ns: Vec<u64>,
    pub delay_max_ns: Vec<u64>,
}

/// One row per link direction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LinkSummary {
    /// `"{from}-{to}"` of the duplex link.
    pub link: String,
    /// "forward" or "reverse".
    pub direction: &'static str,
    pub from: String,
    pub to: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Drops by cause, indexed by `DropCause as usize`.
    pub drops: [u64; 5],
    /// Fraction of the run the serializer was busy.
    pub utilization: f64,
    /// Packets marked Congestion Experienced (ECN) by the queue; not drops.
    pub ecn_marks: u64,
}

/// Per-flow time series (table "series").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowSeries {
    pub flow: Vec<u32>,
    pub time_ns: Vec<u64>,
    pub cwnd: Vec<u64>,
    pub ssthresh: Vec<u64>,
    /// 0 until the first RTT sample.
    pub srtt_ns: Vec<u64>,
    pub rto_ns: Vec<u64>,
    pub in_flight: Vec<u64>,
    /// Application bytes delivered so far.
    pub delivered: Vec<u64>,
    /// Payload bytes sent so far, retransmissions included.
    pub bytes_sent: Vec<u64>,
}

/// Per-link-direction queue length (table "queues"); `link` indexes `Results::links`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct QueueSeries {
    pub link: Vec<u32>,
    pub time_ns: Vec<u64>,
    pub packets: Vec<u32>,
    pub bytes: Vec<u64>,
}

/// Every dropped packet (table "drops").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DropLog {
    pub time_ns: Vec<u64>,
    /// Index into `Results::links`.
    pub link: Vec<u32>,
    /// "tcp" or "udp".
    pub flow_kind: Labels,
    /// Index into `Results::flows` or `Results::udp`.
    pub flow: Vec<u32>,
    /// "data", "ack" or "udp".
    pub packet: Labels,
    /// Data: first byte; ACK: cumulative ACK; UDP: packet number.
    pub seq: Vec<u64>,
    pub size: Vec<u32>,
    pub cause: Labels,
    /// Received power of the last attempt of a WLAN MAC drop, dBm; None for other drops
    /// (NaN in the Python table).
    pub rssi_dbm: Vec<Option<f64>>,
}

/// Sender event log (table "events").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EventLog {
    pub time_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub event: Labels,
    pub reason: Labels,
    pub cwnd: Vec<u64>,
    pub ssthresh: Vec<u64>,
    pub seq: Vec<u64>,
    pub label: Labels,
    pub value: Vec<f64>,
}

/// Every loss response of every TCP flow (table "verdicts"), recorded whatever is traced:
/// the controller's verdict next to the ground-truth cause of the loss that triggered it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VerdictLog {
    pub time_ns: Vec<u64>,
    pub flow: Vec<u32>,
    /// "fast_retransmit", "recovery_restart" or "timeout".
    pub trigger: Vec<&'static str>,
    /// The controller's verdict, e.g. "1/2", "4/5", "keep", "areno".
    pub label: Vec<&'static str>,
    pub value: Vec<f64>,
    /// snd.una: the first byte of the segment whose loss triggered the response.
    pub seq: Vec<u64>,
    /// The controller's cwnd just before the response, bytes.
    pub cwnd: Vec<u64>,
    /// ssthresh right after it, bytes.
    pub ssthresh: Vec<u64>,
    /// Drop cause of the most recent transmission of the segment at `seq`
    /// (`buffer_overflow`, `aqm_early`, `aqm_forced`, `link_error`, `mac`), or "none" when
    /// that transmission was not dropped.
    pub cause: Vec<&'static str>,
    /// Timeouts only (otherwise ""): the timeout's cause in the ETH report's taxonomy,
    /// `lost_timeout_rtx`, `lost_fast_rtx`, `mpl_lost_rtx`, `mpl_missing_acks`,
    /// `non_trigger` or `other` (docs/timeouts.md).
    pub timeout_class: Vec<&'static str>,
    /// Duplicate ACKs in a row when the signal arrived, the triggering ACK included (for a
    /// fast retransmit: the dup ACKs that triggered the recovery).
    pub dupacks: Vec<u32>,
    /// Dropped data transmissions of the loss event this response closed: those sent
    /// before it and after the flow's previous response (docs/eth-metrics.md); 0 = no loss
    /// event. Filled in at the end of the run.
    pub lost_segments: Vec<u32>,
}

/// Every data segment sent (table "segments").
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SegmentLog {
    pub time_ns: Vec<u64>,
    pub flow: Vec<u32>,
    pub seq: Vec<u64>,
    pub len: Vec<u32>,
    /// Transmissions of this range before this one (0 = original).
    pub retransmission: Vec<u8>,
}

/// End-of-run accounting: every data segment sent was delivered, dropped with a cause or is
/// still in flight; every application got every byte exactly once, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Conservation {
    pub ok: bool,
    /// Empty when ok; otherwise what did not add up.
    pub violations: Vec<String>,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_in_flight: u64,
}

/// Cost of the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunStats {
    pub sim_time_ns: u64,
    pub events: u64,
    /// Packet serializations on any link (one per hop).
    pub transmissions: u64,
    /// Most events waiting in the queue at once.
    pub peak_pending_events: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Results {
    pub flows: Vec<FlowSummary>,
    pub udp: Vec<UdpSummary>,
    pub links: Vec<LinkSummary>,
    pub series: FlowSeries,
    pub queues: QueueSeries,
    pub drops: DropLog,
    pub events: EventLog,
    pub segments: SegmentLog,
    pub verdicts: VerdictLog,
    /// One row per TCP flow, then one per UDP flow.
    pub delay: Vec<DelaySummary>,
    pub delay_histogram: DelayHistogramLog,
    /// One-way delay per flow and interval (empty unless series are recorded).
    pub delay_series: DelaySeriesLog,
    pub conservation: Conservation,
    pub stats: RunStats,
    /// pcap files of the links `trace.pcap` names (empty without).
    pub pcap: crate::pcap::PcapOutput,
}
