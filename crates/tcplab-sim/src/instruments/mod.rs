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
//! - [`record`]: facts as JSON lines, to record them and to replay them.
//!
//! The set is fixed ([`Instruments`], static dispatch): a fact costs a few branches. The same
//! instruments run on a recorded fact stream ([`replay`]), e.g. an emulator's drop log and a
//! real sender's transmissions and loss responses, and give the same figures.

pub mod classify;
pub mod delay;
pub mod drops;
pub mod eth;
pub mod fact;
pub mod histogram;
pub mod record;
pub mod timeouts;

pub use fact::{Delivered, Dropped, Fact};

use crate::results::{DelayHistogramLog, DelaySummary, FlowSummary, VerdictLog};
use classify::LossClassification;
use delay::DelayMetrics;
use drops::DropLog;
use eth::LossEvents;
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
            verdicts: VerdictLog::default(),
            recorded: None,
        }
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
    /// ACK) take the inlined path; the rare facts (drops, marks, loss responses, reports)
    /// the other. Only the delay instrument reads deliveries and datagrams sent.
    #[inline(always)]
    pub fn on_fact(&mut self, fact: Fact) {
        if self.recorded.is_some() {
            self.keep(fact);
        }
        match fact {
            Fact::Transmit { .. } | Fact::Acked { .. } => self.dispatch(&fact),
            Fact::Delivered(d) => self.delay.on_delivered(&d),
            Fact::UdpSent { .. } => self.delay.on_fact(&fact, &self.drops),
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

    /// Hands `fact` to every instrument, the drop log first.
    #[inline(always)]
    fn dispatch(&mut self, fact: &Fact) {
        self.drops.on_fact(fact);
        self.classification.on_fact(fact, &self.drops);
        self.timeouts.on_fact(fact, &self.drops);
        self.loss_events.on_fact(fact, &self.drops);
        self.delay.on_fact(fact, &self.drops);
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
            instruments: self,
        }
    }
}

/// What the instruments measured.
#[derive(Clone, Debug)]
pub struct Measurements {
    /// One row per loss response.
    pub verdicts: VerdictLog,
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
        self.instruments.delay.rows(&self.instruments.drops)
    }

    /// The `delay_histogram` table.
    pub fn delay_histogram(&self) -> DelayHistogramLog {
        self.instruments.delay.histograms()
    }

    /// TCP flow `flow`'s summary row with only the instruments' fields set.
    pub fn row(&self, flow: usize) -> FlowSummary {
        let mut row = FlowSummary::default();
        self.fill(flow, &mut row);
        row
    }
}

/// Runs the instruments on a recorded fact stream of `tcp_flows` TCP and `udp_flows` UDP
/// flows (flow indices below those), in order.
pub fn replay(
    tcp_flows: usize,
    udp_flows: usize,
    facts: impl IntoIterator<Item = Fact>,
) -> Measurements {
    let mut m = Instruments::new(tcp_flows, udp_flows);
    for f in facts {
        m.on_fact(f);
    }
    m.finish()
}
