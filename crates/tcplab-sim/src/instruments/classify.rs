//! Loss-classification accounting: at every loss response of a TCP flow (fast-retransmit
//! entry or timeout) the controller's verdict is paired with the ground-truth cause of the
//! loss that triggered it, as Veno's Table I does. The cause is the drop cause of the most
//! recent transmission of the segment at snd.una when the response happened (from the
//! ground-truth drop log, [`super::drops::DropLog::latest_drop`]), or none when that
//! transmission was not dropped (a spurious trigger: a lost ACK, a retransmission still on
//! its way). Rows go to [`VerdictLog`] and counts to the flow's summary, whatever the run
//! traces. docs/loss-classification.md describes the table and the figures.

use super::drops::DropLog;
use super::timeouts::TimeoutClass;
use super::{Fact, Instrument};
use crate::packet::DropCause;
use crate::results::{FlowSummary, LossCause, VerdictLog};
use tcplab_core::cc::CongestionKind;
use tcplab_core::LossResponse;

/// The instrument: per TCP flow, its loss responses against the ground truth.
#[derive(Clone, Debug, Default)]
pub struct LossClassification {
    flows: Vec<Classification>,
}

impl LossClassification {
    pub fn new(tcp_flows: usize) -> Self {
        LossClassification {
            flows: vec![Classification::default(); tcp_flows],
        }
    }
}

impl Instrument for LossClassification {
    #[inline(always)]
    fn on_fact(&mut self, fact: &Fact, truth: &DropLog) {
        match *fact {
            Fact::LossResponse { flow, response, .. } => {
                let r = &response;
                let cause = truth.latest_drop(flow, r.seq.0, r.transmissions);
                self.flows[flow as usize].record(r, cause);
            }
            Fact::Report { flow } => self.flows[flow as usize].reports += 1,
            _ => {}
        }
    }

    fn fill(&self, flow: usize, row: &mut FlowSummary) {
        self.flows[flow].fill(row);
    }
}

/// Per-flow counts of verdicts by actual cause.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Classification {
    pub ff45: [u64; 3],
    pub ff12: [u64; 3],
    pub ff_other: [u64; 3],
    pub timeouts: [u64; 3],
    /// Sum and count of fast-retransmit verdict values, for congestion and random causes.
    value_sum: [f64; 2],
    value_n: [u64; 2],
    /// Cross-layer reports delivered to the sender.
    pub reports: u64,
}

impl Classification {
    /// Counts one loss response whose loss had `cause`.
    pub fn record(&mut self, r: &LossResponse, cause: Option<DropCause>) {
        let c = LossCause::of(cause) as usize;
        match r.kind {
            // Further reductions inside a recovery: rows of the verdicts table only.
            CongestionKind::FastRetransmit if r.restart => {}
            CongestionKind::FastRetransmit => {
                match r.label {
                    "4/5" => self.ff45[c] += 1,
                    "1/2" => self.ff12[c] += 1,
                    _ => self.ff_other[c] += 1,
                }
                if c < 2 {
                    self.value_sum[c] += r.value;
                    self.value_n[c] += 1;
                }
            }
            CongestionKind::Timeout => self.timeouts[c] += 1,
            CongestionKind::Ecn => {}
        }
    }

    /// Writes the counts and the figures into the flow's summary row.
    pub fn fill(&self, s: &mut FlowSummary) {
        const CONG: usize = LossCause::Congestion as usize;
        const RAND: usize = LossCause::Random as usize;
        s.ff45 = self.ff45;
        s.ff12 = self.ff12;
        s.ff_other = self.ff_other;
        s.timeouts_by_cause = self.timeouts;
        s.ff45_accuracy = ratio(self.ff45[RAND], self.ff45.iter().sum());
        s.congestion_misdiagnosis = ratio(self.ff45[CONG], self.ff45[CONG] + self.ff12[CONG]);
        let mean =
            |k: usize| (self.value_n[k] > 0).then(|| self.value_sum[k] / self.value_n[k] as f64);
        s.ff_value_mean_congestion = mean(CONG);
        s.ff_value_mean_random = mean(RAND);
        s.cross_layer_reports = self.reports;
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl VerdictLog {
    pub fn push(
        &mut self,
        flow: u32,
        r: &LossResponse,
        cause: Option<DropCause>,
        class: Option<TimeoutClass>,
    ) {
        self.time_ns.push(r.time.as_nanos());
        self.flow.push(flow);
        self.trigger.push(match r.kind {
            CongestionKind::FastRetransmit if r.restart => "recovery_restart",
            CongestionKind::FastRetransmit => "fast_retransmit",
            CongestionKind::Timeout => "timeout",
            CongestionKind::Ecn => "ecn",
        });
        self.label.push(r.label);
        self.value.push(r.value);
        self.seq.push(r.seq.0);
        self.cwnd.push(r.cwnd_before);
        self.ssthresh.push(r.ssthresh_after);
        self.cause.push(cause.map_or("none", DropCause::as_str));
        self.timeout_class
            .push(class.map_or("", TimeoutClass::as_str));
        self.dupacks.push(r.dupacks);
        self.lost_segments.push(0);
    }

    pub fn len(&self) -> usize {
        self.time_ns.len()
    }
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::{Seq, Time};

    fn response(kind: CongestionKind, label: &'static str, value: f64) -> LossResponse {
        LossResponse {
            time: Time::from_millis(5),
            kind,
            restart: false,
            label,
            value,
            seq: Seq(1460),
            transmissions: 1,
            cwnd_before: 14600,
            ssthresh_after: 7300,
            in_recovery: false,
            dupacks: 3,
        }
    }

    #[test]
    fn table_one_counts_and_figures() {
        use CongestionKind::*;
        let mut c = Classification::default();
        let (ovf, err) = (Some(DropCause::BufferOverflow), Some(DropCause::LinkError));
        for _ in 0..83 {
            c.record(&response(FastRetransmit, "4/5", 0.8), err);
        }
        c.record(&response(FastRetransmit, "4/5", 0.8), ovf);
        for _ in 0..10 {
            c.record(&response(FastRetransmit, "1/2", 0.5), ovf);
        }
        c.record(&response(FastRetransmit, "1/2", 0.5), None);
        c.record(&response(FastRetransmit, "keep", 1.0), Some(DropCause::Mac));
        c.record(&response(Timeout, "1/2", 0.5), Some(DropCause::AqmEarly));
        c.record(&response(Timeout, "1/2", 0.5), None);
        let mut s = FlowSummary::default();
        c.fill(&mut s);
        assert_eq!(s.ff45, [1, 83, 0]);
        assert_eq!(s.ff12, [10, 0, 1]);
        assert_eq!(s.ff_other, [0, 1, 0]);
        assert_eq!(s.timeouts_by_cause, [1, 0, 1]);
        assert_eq!(s.ff45_accuracy, Some(83.0 / 84.0));
        assert_eq!(s.congestion_misdiagnosis, Some(1.0 / 11.0));
        assert_eq!(s.ff_value_mean_congestion, Some((0.8 + 5.0) / 11.0));
        let mean_random = s.ff_value_mean_random.unwrap();
        assert!((mean_random - (83.0 * 0.8 + 1.0) / 84.0).abs() < 1e-12);
        let empty = FlowSummary::default();
        assert_eq!(empty.ff45_accuracy, None);
    }

    #[test]
    fn verdict_rows() {
        let mut v = VerdictLog::default();
        v.push(
            3,
            &response(CongestionKind::Timeout, "1/2", 0.5),
            Some(DropCause::LinkError),
            Some(TimeoutClass::NonTrigger),
        );
        v.push(
            3,
            &response(CongestionKind::FastRetransmit, "4/5", 0.8),
            None,
            None,
        );
        let restart = LossResponse {
            restart: true,
            ..response(CongestionKind::FastRetransmit, "1/2", 0.5)
        };
        v.push(3, &restart, Some(DropCause::BufferOverflow), None);
        assert_eq!(v.timeout_class, ["non_trigger", "", ""]);
        assert_eq!(v.len(), 3);
        assert_eq!(
            v.trigger,
            ["timeout", "fast_retransmit", "recovery_restart"]
        );
        assert_eq!(v.cause, ["link_error", "none", "buffer_overflow"]);
        let mut c = Classification::default();
        c.record(&restart, Some(DropCause::BufferOverflow));
        assert_eq!(c, Classification::default(), "restarts are not in Table I");
        assert_eq!((v.seq[0], v.cwnd[0], v.ssthresh[0]), (1460, 14600, 7300));
    }
}
