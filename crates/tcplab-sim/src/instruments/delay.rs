//! Per-packet delay metrics as ns-3's FlowMonitor and iperf3 give them (docs/delay.md): per
//! TCP flow (its data segments) and per UDP flow (its datagrams), the one-way delay of
//! every packet delivered (arrival time - the time its source handed it to the network:
//! queueing, transmission and propagation on every hop), its mean, extremes and
//! percentiles, the jitter between consecutive arrivals, and the share of packets sent
//! that were lost.
//!
//! - jitter, FlowMonitor's: the mean of `|d_i - d_(i-1)|` over consecutive arrivals (its
//!   `jitterSum / (rxPackets - 1)`);
//! - jitter, iperf3's: RFC 3550's smoothed interarrival jitter `J += (|D| - J) / 16` with
//!   `D = d_i - d_(i-1)`, its value after the last arrival;
//! - loss %: packets dropped / packets sent × 100 (UDP: datagrams, as iperf3 reports
//!   lost/total; TCP: data transmissions, retransmissions included); packets still in
//!   flight at the end count as sent, not lost.
//!
//! Memory does not grow with packets: per flow a few counters and two
//! [`LogHistogram`]s (delay and |D|), whose percentiles are within 1/128 of the exact ones.
//! ACKs are not measured.

use super::conservation::PacketConservation;
use super::drops::DropLog;
use super::fact::Delivered;
use super::histogram::LogHistogram;
use super::{Fact, Instrument};
use crate::packet::PacketKind;
use crate::results::{DelayHistogramLog, DelaySummary, FlowSummary};

/// The instrument: a [`FlowDelay`] per TCP flow and per UDP flow.
#[derive(Clone, Debug, Default)]
pub struct DelayMetrics {
    tcp: Vec<FlowDelay>,
    udp: Vec<FlowDelay>,
}

impl DelayMetrics {
    pub fn new(tcp_flows: usize, udp_flows: usize) -> Self {
        DelayMetrics {
            tcp: vec![FlowDelay::default(); tcp_flows],
            udp: vec![FlowDelay::default(); udp_flows],
        }
    }

    /// A data segment or datagram arrived.
    #[inline(always)]
    pub fn on_delivered(&mut self, d: &Delivered) {
        let flows = match d.kind {
            PacketKind::Data => &mut self.tcp,
            PacketKind::Udp => &mut self.udp,
            PacketKind::Ack => return,
        };
        flows[d.flow as usize].on_delay(d.time.saturating_since(d.sent_at).as_nanos());
    }

    /// The rows of the `delay` table: TCP flows, then UDP flows (names left empty); the
    /// packets sent are the conservation instrument's count, the drops the drop log's.
    pub fn rows(&self, truth: &DropLog, counts: &PacketConservation) -> Vec<DelaySummary> {
        let tcp = self.tcp.iter().enumerate().map(|(i, f)| {
            let dropped = truth.tcp.get(i).map_or(0, |d| d[0]);
            f.summary("tcp", i, counts.tcp(i)[0].sent, dropped)
        });
        let udp = self.udp.iter().enumerate().map(|(i, f)| {
            let dropped = truth.udp.get(i).copied().unwrap_or(0);
            f.summary("udp", i, counts.udp(i).sent, dropped)
        });
        tcp.chain(udp).collect()
    }

    /// The `delay_histogram` table: every non-empty bucket of every flow's histograms.
    pub fn histograms(&self) -> DelayHistogramLog {
        let flows = self.tcp.iter().chain(&self.udp);
        let rows: usize = flows.map(|f| f.delay.used() + f.jitter.used()).sum();
        let mut log = DelayHistogramLog {
            flow_kind: Vec::with_capacity(rows),
            flow: Vec::with_capacity(rows),
            metric: Vec::with_capacity(rows),
            lower_ns: Vec::with_capacity(rows),
            width_ns: Vec::with_capacity(rows),
            packets: Vec::with_capacity(rows),
        };
        for (kind, flows) in [("tcp", &self.tcp), ("udp", &self.udp)] {
            for (i, f) in flows.iter().enumerate() {
                for (metric, h) in [("delay", &f.delay), ("jitter", &f.jitter)] {
                    h.for_each_bucket(|lower, width, n| {
                        log.flow_kind.push(kind);
                        log.flow.push(i as u32);
                        log.metric.push(metric);
                        log.lower_ns.push(lower);
                        log.width_ns.push(width);
                        log.packets.push(n);
                    });
                }
            }
        }
        log
    }
}

impl Instrument for DelayMetrics {
    #[inline(always)]
    fn on_fact(&mut self, fact: &Fact, _truth: &DropLog) {
        if let Fact::Delivered(d) = fact {
            self.on_delivered(d);
        }
    }

    /// The delay metrics are a table of their own ([`DelayMetrics::rows`]).
    fn fill(&self, _flow: usize, _row: &mut FlowSummary) {}
}

/// One flow's delays.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FlowDelay {
    /// The sum, least and most of the delivered packets' one-way delays (ns); how many were
    /// delivered is the histogram's total.
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    delay: LogHistogram,
    /// The previous arrival's delay.
    last_ns: Option<u64>,
    /// Sum of |d_i - d_(i-1)| and its histogram.
    jitter_sum_ns: u128,
    jitter: LogHistogram,
    /// RFC 3550's smoothed jitter (ns).
    rfc3550_ns: f64,
}

impl FlowDelay {
    /// One packet arrived `delay` ns after it was sent.
    #[inline(always)]
    pub fn on_delay(&mut self, delay: u64) {
        // The previous arrival's delay is None only before the first arrival.
        match self.last_ns {
            None => self.min_ns = delay,
            Some(last) => {
                let d = delay.abs_diff(last);
                self.jitter_sum_ns += d as u128;
                self.jitter.add(d);
                self.rfc3550_ns += (d as f64 - self.rfc3550_ns) / 16.0;
            }
        }
        self.sum_ns += delay as u128;
        self.min_ns = self.min_ns.min(delay);
        self.max_ns = self.max_ns.max(delay);
        self.delay.add(delay);
        self.last_ns = Some(delay);
    }

    /// The quantiles `qs` (increasing) of the delays, in one pass (nearest rank, within
    /// 1/128; exact at the extremes).
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> [Option<u64>; N] {
        self.delay
            .quantiles(qs)
            .map(|q| q.map(|v| v.clamp(self.min_ns, self.max_ns)))
    }

    /// The `delay` table's row of this flow (`kind` "tcp" or "udp", index `flow`), which
    /// sent `sent` packets (TCP: data transmissions; UDP: datagrams) and lost `dropped`;
    /// the name is left empty.
    pub fn summary(
        &self,
        kind: &'static str,
        flow: usize,
        sent: u64,
        dropped: u64,
    ) -> DelaySummary {
        let n = self.delay.total();
        let some = |v| (n > 0).then_some(v);
        let [p50, p95, p99] = self.quantiles([0.5, 0.95, 0.99]);
        DelaySummary {
            name: String::new(),
            flow_kind: kind,
            flow: flow as u32,
            packets_sent: sent,
            packets_delivered: n,
            packets_dropped: dropped,
            loss_pct: (sent > 0).then(|| dropped as f64 * 100.0 / sent as f64),
            delay_min_ns: some(self.min_ns),
            delay_mean_ns: (n > 0).then(|| self.sum_ns as f64 / n as f64),
            delay_p50_ns: p50,
            delay_p95_ns: p95,
            delay_p99_ns: p99,
            delay_max_ns: some(self.max_ns),
            jitter_mean_ns: (n > 1).then(|| self.jitter_sum_ns as f64 / (n - 1) as f64),
            jitter_rfc3550_ns: (n > 1).then_some(self.rfc3550_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_follows_flowmonitor_and_rfc3550() {
        let mut f = FlowDelay::default();
        for d in [100, 110, 90, 90] {
            f.on_delay(d);
        }
        let s = f.summary("udp", 0, 0, 0);
        assert_eq!((s.delay_min_ns, s.delay_max_ns), (Some(90), Some(110)));
        assert_eq!(s.delay_mean_ns, Some(97.5));
        // |D| = 10, 20, 0.
        assert_eq!(s.jitter_mean_ns, Some(10.0));
        let mut j = 0.0;
        for d in [10.0, 20.0, 0.0] {
            j += (d - j) / 16.0;
        }
        assert_eq!(s.jitter_rfc3550_ns, Some(j));
        assert_eq!(s.loss_pct, None, "nothing sent");
    }

    #[test]
    fn loss_is_drops_over_sent() {
        let m = DelayMetrics::new(1, 1);
        let mut counts = PacketConservation::new(1, 1);
        let mut truth = DropLog::new(1, 1);
        truth.tcp[0] = [3, 1];
        truth.udp[0] = 5;
        for seq in 0..40 {
            counts.on_fact(&Fact::UdpSent { flow: 0, seq });
        }
        let rows = m.rows(&truth, &counts);
        assert_eq!(rows[1].loss_pct, Some(12.5));
        assert_eq!(rows[0].loss_pct, None);
        assert_eq!(rows[0].delay_p50_ns, None);
    }
}
