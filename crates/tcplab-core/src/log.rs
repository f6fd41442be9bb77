//! Counters and the event log of a connection: everything the papers count, with times.

use crate::cc::CongestionKind;
use crate::{Seq, Time, MAX_SACK_BLOCKS};

/// Sender-side counts over the whole connection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Data segments put on the wire, originals and retransmissions.
    pub segments_sent: u64,
    pub bytes_sent: u64,
    /// Retransmitted segments, all kinds.
    pub retransmits: u64,
    /// The retransmission sent on entering fast recovery.
    pub retransmits_fast: u64,
    /// Further retransmissions during fast recovery.
    pub retransmits_recovery: u64,
    /// Retransmissions of data the retransmission timer declared lost.
    pub retransmits_timeout: u64,
    /// Tail loss probes that resent the highest segment (RACK-TLP).
    pub retransmits_probe: u64,
    /// Recovery entries triggered by ACKs (fast retransmits).
    pub recoveries: u64,
    /// Further reductions inside a recovery (a strategy's `Restart`, e.g. LRD's lost
    /// retransmission); not counted in `recoveries`.
    pub recovery_restarts: u64,
    /// Tail loss probes sent (new data or a retransmission).
    pub probes: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// Among them, repeated expiries before the cumulative ACK moved (ssthresh held unless
    /// `tcp.repeated_rto = "bsd"`).
    pub timeouts_repeated: u64,
    /// Window reductions in answer to ECN echoes.
    pub ecn_reductions: u64,
    /// Timeouts found spurious and undone (F-RTO, DSACK or timestamps; `tcp.frto`,
    /// `tcp.undo`).
    pub undos_timeout: u64,
    /// Fast-recovery reductions found unnecessary and undone (DSACK or timestamps).
    pub undos_recovery: u64,
    pub acks_received: u64,
    pub dup_acks: u64,
    pub rtt_samples: u64,
    /// Sum of RTT samples in ns (for the mean).
    pub rtt_sum_ns: u128,
    pub rtt_min_ns: Option<u64>,
    /// Use of the n-th SACK block (ETH report Table 6), index n - 1: ACKs that carried at
    /// least n SACK blocks.
    pub sack_blocks_carried: [u64; MAX_SACK_BLOCKS],
    /// ... and ACKs whose n-th block was *used*: it covered data above the cumulative ACK
    /// that was not SACKed before (counted only for strategies that read SACK).
    pub sack_blocks_used: [u64; MAX_SACK_BLOCKS],
    /// ACKs whose first SACK block was a DSACK (RFC 2883) report.
    pub dsacks_received: u64,
}

/// What a transmitted data segment was, as the sender decided it: the kind that
/// incremented the matching counter of [`SenderCounters`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TxKind {
    /// Original transmission of new data (a probe that sends new data included).
    New = 0,
    /// The retransmission that starts a recovery (`retransmits_fast`).
    Fast = 1,
    /// Any other retransmission during a recovery (`retransmits_recovery`).
    Recovery = 2,
    /// A retransmission outside recovery, after a retransmission timeout
    /// (`retransmits_timeout`).
    Timeout = 3,
    /// A tail loss probe that resent the highest segment (`retransmits_probe`).
    Probe = 4,
}

impl TxKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TxKind::New => "new",
            TxKind::Fast => "fast",
            TxKind::Recovery => "recovery",
            TxKind::Timeout => "timeout",
            TxKind::Probe => "probe",
        }
    }
    pub fn is_retransmission(self) -> bool {
        self != TxKind::New
    }
}

/// Receiver-side counts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverCounters {
    /// Every data segment that arrived (duplicates and dropped ones included).
    pub segments_received: u64,
    /// Payload bytes of every segment that arrived.
    pub bytes_received: u64,
    /// Segments whose every byte had already arrived: unnecessary retransmissions.
    pub duplicate_segments: u64,
    /// Segments that arrived above a hole (with new data; duplicates count only above).
    pub out_of_order_segments: u64,
    /// Segments dropped because they start at or beyond the advertised window's right edge.
    pub out_of_window_segments: u64,
    pub acks_sent: u64,
    /// ACKs that carried a DSACK block (RFC 2883; only with `TcpConfig::dsack`).
    pub dsacks_sent: u64,
    /// Bytes delivered in order to the application (equals the cumulative ACK point).
    pub bytes_delivered: u64,
}

/// Why the send window changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowReason {
    SlowStart,
    CongestionAvoidance,
    /// Reduction at recovery entry.
    FastRetransmit,
    /// Change during recovery (inflation, deflation, rate halving, ...).
    Recovery,
    RecoveryExit,
    Timeout,
    Ecn,
    Undo,
}

impl WindowReason {
    pub fn as_str(self) -> &'static str {
        match self {
            WindowReason::SlowStart => "slow_start",
            WindowReason::CongestionAvoidance => "congestion_avoidance",
            WindowReason::FastRetransmit => "fast_retransmit",
            WindowReason::Recovery => "recovery",
            WindowReason::RecoveryExit => "recovery_exit",
            WindowReason::Timeout => "timeout",
            WindowReason::Ecn => "ecn",
            WindowReason::Undo => "undo",
        }
    }
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// cwnd or ssthresh changed.
    Window(WindowReason),
    /// Fast retransmit: the controller's verdict is in `label`/`value`.
    RecoveryEnter,
    RecoveryExit,
    /// Retransmission timer expired; `value` is the backed-off RTO in seconds.
    Timeout,
    /// ECN echo answered; verdict in `label`/`value`.
    EcnResponse,
    /// A reduction found unnecessary was undone; `label` says how ("frto", "dsack",
    /// "timestamp").
    Undo,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Window(_) => "window",
            Event::RecoveryEnter => "recovery_enter",
            Event::RecoveryExit => "recovery_exit",
            Event::Timeout => "timeout",
            Event::EcnResponse => "ecn_response",
            Event::Undo => "undo",
        }
    }
    pub fn reason(self) -> &'static str {
        match self {
            Event::Window(r) => r.as_str(),
            _ => "",
        }
    }
}

/// One entry of the event log. `cwnd` is the effective send window (the recovery strategy's
/// during recovery), `seq` the cumulative ACK point at the time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogRecord {
    pub time: Time,
    pub event: Event,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub seq: Seq,
    pub label: &'static str,
    pub value: f64,
}

/// How the sender answered one loss signal (a fast-retransmit entry or a timeout): recorded
/// whether or not the event log is on, so that loss-classification accounting (the
/// controller's verdict against the ground-truth cause of the loss) never depends on
/// tracing. Drain with `Sender::drain_loss_responses`; one small record per loss signal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossResponse {
    pub time: Time,
    /// `FastRetransmit` or `Timeout` (ECN responses are not loss responses).
    pub kind: CongestionKind,
    /// A further reduction inside a recovery (the strategy's `Restart`, e.g. LRD's lost
    /// retransmission), not a recovery entry; kind `FastRetransmit`.
    pub restart: bool,
    /// The controller's verdict (`Verdict::label`, `Verdict::value`).
    pub label: &'static str,
    pub value: f64,
    /// snd.una when the signal arrived: the first byte of the segment whose loss triggered it.
    pub seq: Seq,
    /// Transmissions of that segment so far (1 = only the original); 0 when nothing was
    /// outstanding. The latest transmission carries `DataSegment::retransmission` =
    /// `transmissions - 1`.
    pub transmissions: u8,
    /// The controller's cwnd just before it answered.
    pub cwnd_before: u64,
    /// ssthresh right after it answered.
    pub ssthresh_after: u64,
    /// The loss-recovery strategy was in recovery when the signal arrived (for a timeout:
    /// just before the timeout ended that recovery).
    pub in_recovery: bool,
    /// Duplicate ACKs in a row when the signal arrived, the triggering ACK included: the dup
    /// ACKs that triggered a recovery (3 for Reno with the default `dupthresh`, 1 for
    /// Rate-Halving). Counted since the cumulative ACK last advanced; a duplicate is an
    /// RFC 5681 duplicate for strategies that ignore SACK, an ACK that newly SACKs data
    /// (RFC 6675 §2, also when it advances the cumulative ACK) for those that read it.
    pub dupacks: u32,
}
