//! Measurement as instruments: the simulator states [`Fact`]s (a packet dropped with its
//! cause, a sender's transmission, loss response, acknowledgment), the instruments turn
//! them into the measurements of the flow summaries and the verdicts table. The simulator
//! core keeps no measurement records of its own.
//!
//! - [`drops`]: the ground-truth drop log (drops and marks per flow, latest dropped
//!   transmission per outstanding segment), which the others read;
//! - [`classify`]: loss classification against the ground truth (Veno's Table I);
//! - [`timeouts`]: the timeout taxonomy (docs/timeouts.md);
//! - [`eth`]: loss events and duplicate ACKs per recovery (docs/eth-metrics.md);
//! - [`delay`]: one-way delay, jitter and loss per flow (docs/delay.md), with
//!   [`histogram`], the fixed-size histogram behind its percentiles;
//! - [`delay_series`]: the one-way delay per flow over time, per `trace.interval` (the
//!   `delay_series` table; on when the run records series);
//! - [`conservation`]: packets sent = delivered + dropped + in flight per flow and kind, the
//!   endpoints' counters and the applications' reads (the `conservation` result);
//! - [`series`]: the flows' state and the link directions' queues over time (the `series`
//!   and `queues` tables);
//! - [`record`]: facts as JSON lines, to record them and to replay them (docs/instruments.md).
//!
//! The set is fixed ([`Instruments`], static dispatch): a fact costs a few branches. The same
//! instruments run on a recorded fact stream ([`replay`]), e.g. an emulator's drop log and a
//! real sender's transmissions and loss responses, and give the same figures.
//!
//! A new instrument: a module here that takes [`Fact`]s (add the facts it needs to
//! [`fact`], their JSON form to [`record`], and state them where they happen: the driver
//! `crate::sim`, the network, or the end-of-run census `crate::census`), a field of
//! [`Instruments`] fed in [`Instruments::on_fact`], and its figures in [`Measurements`].

pub mod classify;
pub mod conservation;
pub mod delay;
pub mod delay_series;
pub mod drops;
pub mod eth;
pub mod fact;
pub mod histogram;
pub mod record;
pub mod series;
pub mod timeouts;

pub use fact::{Delivered, Dropped, Fact, FlowSample};

use crate::results::{
    Conservation, DelayHistogramLog, DelaySeriesLog, DelaySummary, FlowSeries, FlowSummary,
    QueueSeries, UdpSummary, VerdictLog,
};
use crate::scenario::TraceSpec;
use crate::trace::{table_cap, Budget, QUEUES_TABLE, SERIES_TABLE};
use crate::Results;
use classify::LossClassification;
use conservation::PacketConservation;
use delay::DelayMetrics;
use delay_series::DelaySeries;
use drops::DropLog;
use eth::LossEvents;
use series::Series;
use tcplab_core::Dur;
use timeouts::TimeoutTaxonomy;

/// An instrument: takes facts, one at a time in the order they happened, and writes its
/// figures into the flows' summary rows at the end.
pub trait Instrument {
    /// Takes one fact; `truth`, the ground-truth drop log, has already taken it.
    fn on_fact(&mut self, fact: &Fact, truth: &DropLog);
    /// Writes its figures into TCP flow `flow`'s summary row.
    fn fill(&self, flow: usize, row: &mut FlowSummary);
}

/// The instruments of a run.
#[derive(Clone, Debug)]
pub struct Instruments {
    drops: DropLog,
    classification: LossClassification,
    timeouts: TimeoutTaxonomy,
    loss_events: LossEvents,
    delay: DelayMetrics,
    delay_series: DelaySeries,
    conservation: PacketConservation,
    series: Series,
    verdicts: VerdictLog,
    /// Every fact taken, when recording ([`Instruments::record`]).
    recorded: Option<Vec<Fact>>,
}

impl Instruments {
    pub fn new(tcp_flows: usize, udp_flows: usize) -> Self {
        Instruments {
            drops: DropLog::new(tcp_flows, udp_flows),
            classification: LossClassification::new(tcp_flows),
            timeouts: TimeoutTaxonomy::new(tcp_flows),
            loss_events: LossEvents::new(tcp_flows),
            delay: DelayMetrics::new(tcp_flows, udp_flows),
            delay_series: DelaySeries::off(),
            conservation: PacketConservation::new(tcp_flows, udp_flows),
            series: Series::new(tcp_flows, 0, None, None),
            verdicts: VerdictLog::default(),
            recorded: None,
        }
    }

    /// The series tables keep at most the rows [`crate::trace::table_cap`] gives for `trace`
    /// and `links` link directions, decimated (see [`series`]).
    pub fn bound_series(&mut self, links: usize, trace: &TraceSpec) {
        let tcp_flows = self.drops.tcp.len();
        self.series = Series::new(
            tcp_flows,
            links,
            table_cap(trace, SERIES_TABLE, tcp_flows),
            table_cap(trace, QUEUES_TABLE, links),
        );
    }

    /// Measures the one-way delay over time in intervals of `interval` (see
    /// [`DelaySeries::new`]: a run of `duration`, at most about `max_rows_per_flow` rows per
    /// flow when Some).
    pub fn delay_over_time(
        &mut self,
        interval: Dur,
        duration: Dur,
        max_rows_per_flow: Option<u64>,
    ) {
        self.delay_series = DelaySeries::new(
            interval.as_nanos(),
            self.drops.tcp.len(),
            self.drops.udp.len(),
            duration.as_nanos(),
            max_rows_per_flow,
        );
    }

    /// The series instrument so far.
    pub fn series(&self) -> &Series {
        &self.series
    }

    /// Rows and bucket width of the series, queues and delay_series tables so far (for
    /// [`crate::trace::Recorder::recording`]).
    pub fn series_sizes(&self) -> [(usize, u64); 3] {
        let [series, queues] = self.series.sizes();
        [series, queues, self.delay_series.size()]
    }

    /// Keeps every fact from now on ([`Measurements::facts`]).
    pub fn record(&mut self) {
        self.recorded.get_or_insert_with(Vec::new);
    }

    /// The ground-truth drop log so far.
    pub fn drops(&self) -> &DropLog {
        &self.drops
    }

    /// Takes one fact. Transmissions, acknowledgments and deliveries (one per packet or
    /// ACK) take the inlined path; the rare facts (drops, marks, loss responses, reports,
    /// the census) the other. Only the delay and conservation instruments read deliveries,
    /// only conservation datagrams sent and ACKs sent and delivered (the `delay` table's
    /// packets sent are its count). The series and delay_series rows a fact adds are not
    /// charged against any budget.
    #[inline(always)]
    pub fn on_fact(&mut self, fact: Fact) {
        self.take(fact, None)
    }

    /// [`on_fact`](Self::on_fact), the series and delay_series rows charged against
    /// `budget` (the run's recording limit).
    #[inline(always)]
    pub fn on_fact_within(&mut self, fact: Fact, budget: &mut Budget) {
        self.take(fact, Some(budget))
    }

    #[inline(always)]
    fn take(&mut self, fact: Fact, budget: Option<&mut Budget>) {
        if self.recorded.is_some() {
            self.keep(fact);
        }
        match fact {
            Fact::Transmit { .. } | Fact::Acked { .. } => self.dispatch(&fact),
            Fact::Delivered(d) => {
                self.delay.on_delivered(&d);
                self.delay_series.on_delivered(&d, budget);
                self.conservation.on_delivered(d.flow, d.kind);
            }
            Fact::AckSent { .. } | Fact::AckDelivered { .. } | Fact::UdpSent { .. } => {
                self.conservation.on_fact(&fact)
            }
            Fact::FlowState { .. } | Fact::QueueState { .. } => match budget {
                Some(b) => self.series.on_fact(&fact, b),
                None => self.series.on_fact(&fact, &mut Budget::unlimited()),
            },
            _ => self.on_rare_fact(&fact),
        }
    }

    #[cold]
    #[inline(never)]
    fn keep(&mut self, fact: Fact) {
        if let Some(r) = &mut self.recorded {
            r.push(fact);
        }
    }

    /// Hands `fact` to every instrument but the delay one (which reads only deliveries),
    /// the drop log first.
    #[inline(always)]
    fn dispatch(&mut self, fact: &Fact) {
        self.drops.on_fact(fact);
        self.classification.on_fact(fact, &self.drops);
        self.timeouts.on_fact(fact, &self.drops);
        self.loss_events.on_fact(fact, &self.drops);
        self.conservation.on_fact(fact);
    }

    #[inline(never)]
    fn on_rare_fact(&mut self, fact: &Fact) {
        self.dispatch(fact);
        if let Fact::LossResponse { flow, response, .. } = *fact {
            let cause = self
                .drops
                .latest_drop(flow, response.seq.0, response.transmissions);
            let class = self.timeouts.last_class();
            self.verdicts.push(flow, &response, cause, class);
        }
    }

    /// Ends the measurement.
    pub fn finish(mut self) -> Measurements {
        for (row, n) in self.loss_events.event_sizes() {
            self.verdicts.lost_segments[row] = n;
        }
        Measurements {
            facts: self.recorded.take().unwrap_or_default(),
            verdicts: std::mem::take(&mut self.verdicts),
            series: std::mem::take(&mut self.series.series),
            queues: std::mem::take(&mut self.series.queues),
            instruments: self,
        }
    }
}

/// What the instruments measured.
#[derive(Clone, Debug)]
pub struct Measurements {
    /// One row per loss response.
    pub verdicts: VerdictLog,
    /// The `series` table.
    pub series: FlowSeries,
    /// The `queues` table.
    pub queues: QueueSeries,
    /// Every fact, in order, when recording; else empty.
    pub facts: Vec<Fact>,
    instruments: Instruments,
}

impl Measurements {
    /// The ground-truth drop log.
    pub fn drops(&self) -> &DropLog {
        &self.instruments.drops
    }

    /// Writes every instrument's figures into TCP flow `flow`'s summary row.
    pub fn fill(&self, flow: usize, row: &mut FlowSummary) {
        let i = &self.instruments;
        i.drops.fill(flow, row);
        i.classification.fill(flow, row);
        i.timeouts.fill(flow, row);
        i.loss_events.fill(flow, row);
    }

    /// The `delay` table's rows (TCP flows, then UDP flows; names left empty).
    pub fn delay(&self) -> Vec<DelaySummary> {
        let i = &self.instruments;
        i.delay.rows(&i.drops, &i.conservation)
    }

    /// The `delay_histogram` table.
    pub fn delay_histogram(&self) -> DelayHistogramLog {
        self.instruments.delay.histograms()
    }

    /// The `delay_series` table (taken: a second call gives an empty one).
    pub fn delay_series(&mut self) -> DelaySeriesLog {
        std::mem::take(&mut self.instruments.delay_series).into_log()
    }

    /// The conservation verdict; violations name the flows by `tcp_names` and `udp_names`.
    pub fn conservation(&self, tcp_names: &[String], udp_names: &[String]) -> Conservation {
        self.instruments.conservation.verdict(tcp_names, udp_names)
    }

    /// The conservation instrument's counts.
    pub fn packets(&self) -> &PacketConservation {
        &self.instruments.conservation
    }

    /// TCP flow `flow`'s summary row with only the instruments' fields set.
    pub fn row(&self, flow: usize) -> FlowSummary {
        let mut row = FlowSummary::default();
        self.fill(flow, &mut row);
        row
    }
}

impl Measurements {
    /// The results of a run as far as the instruments measure them (a replayed fact
    /// stream's): the flows' and UDP flows' rows with the instruments' fields (UDP: packets
    /// sent, received and dropped), the verdicts, delay, delay histogram, series and queues
    /// tables and the conservation verdict; the flows named by `tcp_names` and `udp_names`.
    /// The rest (endpoints' counters, links, logs, run stats) is left empty.
    pub fn into_results(mut self, tcp_names: &[String], udp_names: &[String]) -> Results {
        let flows = (0..tcp_names.len())
            .map(|i| FlowSummary {
                name: tcp_names[i].clone(),
                ..self.row(i)
            })
            .collect();
        let udp = udp_names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let t = self.packets().udp(i);
                UdpSummary {
                    name: name.clone(),
                    packets_sent: t.sent,
                    packets_received: t.delivered,
                    packets_dropped: t.dropped,
                    ..UdpSummary::default()
                }
            })
            .collect();
        let mut delay = self.delay();
        for (row, name) in delay.iter_mut().zip(tcp_names.iter().chain(udp_names)) {
            row.name = name.clone();
        }
        Results {
            flows,
            udp,
            conservation: self.conservation(tcp_names, udp_names),
            delay_histogram: self.delay_histogram(),
            delay_series: self.delay_series(),
            delay,
            series: std::mem::take(&mut self.series),
            queues: std::mem::take(&mut self.queues),
            verdicts: std::mem::take(&mut self.verdicts),
            ..Results::default()
        }
    }
}

/// Checks that every fact of a recorded stream names a flow below `tcp_flows` (TCP) or
/// `udp_flows` (UDP), as [`replay`] needs; else one line naming the first that does not.
pub fn check_flows(facts: &[Fact], tcp_flows: usize, udp_flows: usize) -> Result<(), String> {
    for (n, f) in facts.iter().enumerate() {
        if let Some((udp, flow)) = f.flow() {
            let (what, count) = if udp {
                ("UDP", udp_flows)
            } else {
                ("TCP", tcp_flows)
            };
            if flow as usize >= count {
                return Err(format!(
                    "fact {}: {what} flow {flow}, but {}_flows = {count}",
                    n + 1,
                    what.to_lowercase()
                ));
            }
        }
    }
    Ok(())
}

/// Runs the instruments on a recorded fact stream of `tcp_flows` TCP and `udp_flows` UDP
/// flows (flow indices below those), in order.
pub fn replay(
    tcp_flows: usize,
    udp_flows: usize,
    facts: impl IntoIterator<Item = Fact>,
) -> Measurements {
    replay_with(tcp_flows, udp_flows, None, facts)
}

/// [`replay`], measuring the one-way delay over time in intervals of `delay_interval` when
/// Some (as a run with series and that `trace.interval` does, without `max_rows_per_flow`).
pub fn replay_with(
    tcp_flows: usize,
    udp_flows: usize,
    delay_interval: Option<Dur>,
    facts: impl IntoIterator<Item = Fact>,
) -> Measurements {
    let mut m = Instruments::new(tcp_flows, udp_flows);
    if let Some(interval) = delay_interval {
        m.delay_over_time(interval, Dur::ZERO, None);
    }
    for f in facts {
        m.on_fact(f);
    }
    m.finish()
}
