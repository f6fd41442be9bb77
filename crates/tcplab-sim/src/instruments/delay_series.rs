//! One-way delay over time (docs/delay.md, "Over time"): per TCP flow (its data segments)
//! and per UDP flow (its datagrams), per interval of the run (`[k w, (k + 1) w)` by arrival
//! time, `w` the scenario's `trace.interval`), the packets delivered in it and their one-way
//! delay's mean, least, most, median and 95th percentile: the `delay_series` table.
//!
//! Fed by the same [`Delivered`] facts as [`super::delay`], so a flow's intervals partition
//! its delivered packets: their counts sum to the `delay` table's `packets_delivered`, and
//! their means weighted by count give its `delay_mean_ns`. An interval without arrivals has
//! no row. The RTT over time is the `series` table's `srtt_ns` (the sender's smoothed RTT,
//! recorded with the same `trace.series` setting).
//!
//! Memory does not grow with packets: per flow the open interval's counters and one
//! [`LogHistogram`] (percentiles within 1/128 of the exact ones, clamped to the interval's
//! extremes, as the `delay` table's), plus one row per closed interval. Each closed row is
//! charged against the run's recording limit ([`Budget`], shared with the recorder and the
//! series instrument): the row that does not fit is not kept and recording stops. With
//! `trace.max_rows_per_flow` the intervals widen to keep at most about that many rows per
//! flow ([`DelaySeries::new`]). Off (one branch per delivery) unless the run records series.

use super::fact::Delivered;
use super::histogram::LogHistogram;
use crate::packet::PacketKind;
use crate::results::DelaySeriesLog;
use crate::trace::{row_bytes, Budget};

/// The instrument: an [`OpenInterval`] and the closed intervals' rows per TCP and UDP flow.
#[derive(Clone, Debug, Default)]
pub struct DelaySeries {
    /// Interval width (ns); 0: off.
    width_ns: u64,
    /// The width is `trace.interval` widened by `max_rows_per_flow`.
    widened: bool,
    /// Rows of closed intervals, all flows.
    rows: usize,
    tcp: Vec<FlowIntervals>,
    udp: Vec<FlowIntervals>,
}

/// One flow's intervals: the open one and the rows of those closed.
#[derive(Clone, Debug, Default)]
struct FlowIntervals {
    open: OpenInterval,
    rows: Vec<IntervalRow>,
}

/// The interval that packets are arriving in.
#[derive(Clone, Debug, Default)]
struct OpenInterval {
    /// Its index (its start is `index * width`).
    index: u64,
    packets: u64,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    delays: LogHistogram,
}

/// A closed interval: one row of the table without the flow.
#[derive(Clone, Copy, Debug, PartialEq)]
struct IntervalRow {
    time_ns: u64,
    packets: u64,
    mean_ns: f64,
    min_ns: u64,
    p50_ns: u64,
    p95_ns: u64,
    max_ns: u64,
}

impl DelaySeries {
    /// Off: takes nothing, gives an empty table.
    pub fn off() -> Self {
        DelaySeries::default()
    }

    /// Intervals of `interval_ns` (0: off) for `tcp_flows` and `udp_flows` flows. With
    /// `max_rows_per_flow = Some(m)` and a run of `duration_ns`, an interval is at least
    /// `duration / m` long (m counted as at least 2), so a flow has at most about m rows.
    pub fn new(
        interval_ns: u64,
        tcp_flows: usize,
        udp_flows: usize,
        duration_ns: u64,
        max_rows_per_flow: Option<u64>,
    ) -> Self {
        let width_ns = Self::width(interval_ns, duration_ns, max_rows_per_flow);
        DelaySeries {
            width_ns,
            widened: width_ns > interval_ns,
            rows: 0,
            tcp: vec![FlowIntervals::default(); tcp_flows],
            udp: vec![FlowIntervals::default(); udp_flows],
        }
    }

    /// The interval width for `interval_ns` (0: off), a run of `duration_ns` and
    /// `max_rows_per_flow`: at least `duration / m` (m counted as at least 2).
    pub fn width(interval_ns: u64, duration_ns: u64, max_rows_per_flow: Option<u64>) -> u64 {
        let floor = max_rows_per_flow.map_or(0, |m| duration_ns.div_ceil(m.max(2)));
        if interval_ns == 0 {
            0
        } else {
            interval_ns.max(floor)
        }
    }

    /// The interval width (ns; 0 when off).
    pub fn width_ns(&self) -> u64 {
        self.width_ns
    }

    /// Rows of the intervals closed so far, and the width of the intervals when widened by
    /// `max_rows_per_flow` (else 0): what [`crate::trace::Recording`] reports.
    pub fn size(&self) -> (usize, u64) {
        (self.rows, if self.widened { self.width_ns } else { 0 })
    }

    /// A data segment or datagram arrived; a closed interval's row is charged against
    /// `budget` (None: no limit).
    #[inline(always)]
    pub fn on_delivered(&mut self, d: &Delivered, budget: Option<&mut Budget>) {
        if self.width_ns != 0 {
            self.take(d, budget);
        }
    }

    #[inline(never)]
    fn take(&mut self, d: &Delivered, budget: Option<&mut Budget>) {
        let flows = match d.kind {
            PacketKind::Data => &mut self.tcp,
            PacketKind::Udp => &mut self.udp,
            PacketKind::Ack => return,
        };
        let f = &mut flows[d.flow as usize];
        let index = d.time.as_nanos() / self.width_ns;
        if f.open.packets > 0 && f.open.index != index {
            let keep =
                budget.is_none_or(|b| b.charge("delay_series", row_bytes::DELAY_SERIES, d.time));
            let row = f.close(self.width_ns);
            if keep {
                f.rows.push(row);
                self.rows += 1;
            }
        }
        let o = &mut f.open;
        let delay = d.time.saturating_since(d.sent_at).as_nanos();
        if o.packets == 0 {
            o.index = index;
            o.min_ns = delay;
            o.max_ns = delay;
        }
        o.packets += 1;
        o.sum_ns += delay as u128;
        o.min_ns = o.min_ns.min(delay);
        o.max_ns = o.max_ns.max(delay);
        o.delays.add(delay);
    }

    /// The `delay_series` table: TCP flows, then UDP flows, each by time (the open
    /// intervals closed: the end of the measurement).
    pub fn into_log(self) -> DelaySeriesLog {
        let mut log = DelaySeriesLog::default();
        for (kind, flows) in [("tcp", self.tcp), ("udp", self.udp)] {
            for (i, mut f) in flows.into_iter().enumerate() {
                if f.open.packets > 0 {
                    let row = f.close(self.width_ns);
                    f.rows.push(row);
                }
                for r in &f.rows {
                    log.flow_kind.push(kind);
                    log.flow.push(i as u32);
                    log.time_ns.push(r.time_ns);
                    log.packets.push(r.packets);
                    log.delay_mean_ns.push(r.mean_ns);
                    log.delay_min_ns.push(r.min_ns);
                    log.delay_p50_ns.push(r.p50_ns);
                    log.delay_p95_ns.push(r.p95_ns);
                    log.delay_max_ns.push(r.max_ns);
                }
            }
        }
        log
    }
}

impl FlowIntervals {
    /// Closes the open interval (it holds a packet) into a row.
    fn close(&mut self, width_ns: u64) -> IntervalRow {
        let o = std::mem::take(&mut self.open);
        let quantile = |q| {
            o.delays
                .quantile(q)
                .map_or(o.min_ns, |v| v.clamp(o.min_ns, o.max_ns))
        };
        IntervalRow {
            time_ns: o.index.saturating_mul(width_ns),
            packets: o.packets,
            mean_ns: o.sum_ns as f64 / o.packets as f64,
            min_ns: o.min_ns,
            p50_ns: quantile(0.5),
            p95_ns: quantile(0.95),
            max_ns: o.max_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::Time;

    fn arrival(kind: PacketKind, flow: u32, at_ns: u64, delay_ns: u64) -> Delivered {
        Delivered {
            time: Time::from_nanos(at_ns),
            flow,
            kind,
            seq: 0,
            sent_at: Time::from_nanos(at_ns - delay_ns),
        }
    }

    #[test]
    fn packets_fall_in_the_interval_of_their_arrival() {
        let mut s = DelaySeries::new(100, 1, 1, 1_000, None);
        for (at, d) in [(10, 5), (50, 15), (99, 10), (100, 40), (350, 7)] {
            s.on_delivered(&arrival(PacketKind::Data, 0, at, d), None);
        }
        s.on_delivered(&arrival(PacketKind::Udp, 0, 120, 3), None);
        s.on_delivered(&arrival(PacketKind::Ack, 0, 130, 3), None);
        s.on_delivered(&arrival(PacketKind::Data, 0, 360, 9), None);
        let log = s.into_log();
        assert_eq!(log.flow_kind, ["tcp", "tcp", "tcp", "udp"]);
        assert_eq!(log.time_ns, [0, 100, 300, 100]);
        assert_eq!(log.packets, [3, 1, 2, 1]);
        assert_eq!(log.delay_mean_ns, [10.0, 40.0, 8.0, 3.0]);
        assert_eq!((log.delay_min_ns[0], log.delay_max_ns[0]), (5, 15));
        assert_eq!((log.delay_p50_ns[0], log.delay_p95_ns[0]), (10, 15));
    }

    #[test]
    fn off_takes_nothing_and_a_row_cap_widens_the_intervals() {
        let mut off = DelaySeries::off();
        off.on_delivered(&arrival(PacketKind::Data, 0, 10, 5), None);
        assert!(off.into_log().time_ns.is_empty());
        let capped = DelaySeries::new(10, 1, 0, 1_000_000, Some(100));
        assert_eq!(capped.width_ns(), 10_000);
        assert_eq!(capped.size(), (0, 10_000));
        assert_eq!(DelaySeries::new(10, 1, 0, 1_000_000, None).size(), (0, 0));
        assert_eq!(DelaySeries::new(0, 1, 0, 1_000, Some(2)).width_ns(), 0);
    }

    #[test]
    fn closed_rows_are_charged_and_a_row_past_the_limit_is_not_kept() {
        // Room for two rows: the third interval closed passes the limit.
        let mut budget = Budget::unlimited();
        budget.set_limit(2 * row_bytes::DELAY_SERIES);
        let mut s = DelaySeries::new(100, 1, 0, 10_000, None);
        for k in 0..5u64 {
            s.on_delivered(
                &arrival(PacketKind::Data, 0, 100 * k + 10, 5),
                Some(&mut budget),
            );
        }
        // Intervals 0..=3 closed (4 rows offered), 2 kept; the open one is not charged.
        assert_eq!(s.size().0, 2);
        assert_eq!(budget.over(), Some(("delay_series", Time::from_nanos(310))));
        assert_eq!(budget.used(), 2 * row_bytes::DELAY_SERIES);
    }
}
