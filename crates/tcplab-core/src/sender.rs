//! The sending side of a bulk transfer, as a sans-IO state machine.
//!
//! Verbs: `on_segment(now, ack)` feeds an ACK, `poll_transmit(now)` yields the next data
//! segment the windows allow (call until None; `poll_transmit_with_kind` also says what the
//! transmission is, a [`crate::TxKind`]), `poll_timeout()` says when `on_timeout(now)` is
//! due. The window rules come from a [`CongestionControl`], loss detection and repair from a
//! [`LossRecovery`]; the sender owns the [`Scoreboard`], the RTT estimator, the
//! retransmission timer, the counters and the event log.
//!
//! This file holds the state and its construction; each verb lives in a module of its own:
//! `ack` (an ACK arrives), `transmit` (what goes on the wire), `timer` (timeouts),
//! `congestion` (answers to congestion signals), `undo` (undo and F-RTO), `record` (the
//! event log and loss responses), `pacing` (spacing transmissions at the controller's
//! pacing rate).

use crate::cc::{CcContext, CongestionControl};
use crate::log::{LogRecord, LossResponse, SenderCounters};
use crate::rate::RateEstimator;
use crate::recovery::{LossRecovery, RecoveryContext};
use crate::registry::Registries;
use crate::scoreboard::Scoreboard;
use crate::spurious::{Frto, Undo};
use crate::{
    ConfigError, ControllerSpec, Dur, RecoverySpec, RttEstimator, Seq, SharedConfig, TcpConfig,
    Time,
};
use std::sync::Arc;

mod ack;
mod congestion;
mod pacing;
mod record;
mod timer;
mod transmit;
mod undo;

/// The sender's state at a moment, for time series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderSnapshot {
    /// Window that limits sending now: the controller's cwnd, or the recovery strategy's
    /// window during recovery.
    pub cwnd: u64,
    pub ssthresh: u64,
    pub srtt: Option<Dur>,
    pub rto: Dur,
    pub in_flight: u64,
    pub snd_una: Seq,
    pub snd_nxt: Seq,
    pub in_recovery: bool,
}

pub struct Sender {
    cfg: Arc<TcpConfig>,
    cc: Box<dyn CongestionControl>,
    rec: Box<dyn LossRecovery>,
    sb: Scoreboard,
    rtt: RttEstimator,
    /// Bytes the application will write in all; None = unlimited (until `close`).
    app_total: Option<u64>,
    closed: bool,
    snd_nxt: Seq,
    rwnd: u64,
    /// RFC 7323 TS.Recent: the latest TSval of the ACKs, echoed in the data's TSecr.
    ts_recent: Option<Time>,
    rto_deadline: Option<Time>,
    /// Bytes delivered (cumulatively acknowledged or SACKed) so far.
    delivered: u64,
    /// Delivery-rate estimation, for controllers that use rate samples.
    rate: Option<RateEstimator>,
    pacer: pacing::Pacer,
    /// The controller paces (its `pacing_rate` was Some at construction): only then is the
    /// rate read, twice per transmission (a virtual call each).
    paced: bool,
    /// After a timeout: snd.max at that time; retransmissions below it count as timeout
    /// retransmissions until the cumulative ACK passes it.
    rto_recover: Option<Seq>,
    /// snd.una at the latest retransmission timeout: a timeout at the same point is a
    /// repeated timeout of a segment the timer already retransmitted (RFC 5681 §3.1).
    rto_una: Option<Seq>,
    /// The latest reduction, while it may still be undone (`tcp.undo`, `tcp.frto`).
    undo: Option<Undo>,
    /// Nanoseconds per tick of the timestamps this sender's segments carry: an echoed
    /// TSecr comes back as its segment's send time rounded down to a tick. 1 (exact) in the
    /// simulator; a connection on the wire sets its clock's tick (`set_timestamp_tick`).
    ts_tick_ns: u64,
    /// F-RTO after the latest timeout, while it runs (`tcp.frto`).
    frto: Option<Frto>,
    /// F-RTO step 2b on this ACK: new data goes out before further retransmissions.
    frto_send_new: bool,
    /// The next retransmission is the fast retransmission of a new recovery.
    fast_pending: bool,
    /// The strategy asked for a probe (`RecoveryAction::Probe`): the next transmission.
    probe_pending: bool,
    /// RFC 3168 §6.1.2, one reduction per window for any mix of drops and CE: after a window
    /// reduction (an ECN response, or a fast-retransmit entry) no ECN echo reduces again
    /// until snd.una passes this point, and a fast retransmit inside the window of an ECN
    /// response does not reduce again. (Loss after loss in one window stays the recovery
    /// strategy's business: Reno reduces at each fast retransmit, NewReno once.)
    reduced_until: Option<Seq>,
    /// The last reduction was an ECN response (not a loss) and covers up to `reduced_until`.
    ecn_window: bool,
    /// CWR owed on the next new segment.
    cwr_pending: bool,
    counters: SenderCounters,
    /// Duplicate ACKs since the cumulative ACK last advanced (see `on_segment`).
    dupacks_in_row: u32,
    logging: bool,
    log: Vec<LogRecord>,
    logged_window: (u64, u64),
    /// Always recorded, drained by the caller (loss-classification accounting).
    loss_responses: Vec<LossResponse>,
}

impl Sender {
    /// A sender writing `app_bytes` bytes (None: until `close`).
    pub fn new(
        cfg: impl SharedConfig,
        cc: Box<dyn CongestionControl>,
        rec: Box<dyn LossRecovery>,
        app_bytes: Option<u64>,
    ) -> Self {
        let cfg = cfg.shared();
        let rtt = RttEstimator::for_config(&cfg);
        let logged_window = (cc.cwnd(), cc.ssthresh());
        let rate = cc.uses_rate_samples().then(RateEstimator::new);
        let paced = cc.pacing_rate().is_some();
        Sender {
            sb: Scoreboard::new(cfg.mss),
            cc,
            rec,
            rtt,
            app_total: app_bytes,
            closed: false,
            snd_nxt: Seq(0),
            rwnd: cfg.rcv_buf,
            ts_recent: None,
            rto_deadline: None,
            delivered: 0,
            rate,
            pacer: pacing::Pacer::default(),
            paced,
            rto_recover: None,
            rto_una: None,
            undo: None,
            ts_tick_ns: 1,
            frto: None,
            frto_send_new: false,
            fast_pending: false,
            probe_pending: false,
            reduced_until: None,
            ecn_window: false,
            cwr_pending: false,
            counters: SenderCounters::default(),
            dupacks_in_row: 0,
            logging: false,
            log: Vec::new(),
            logged_window,
            loss_responses: Vec::new(),
            cfg,
        }
    }

    /// Builds the controller and the recovery strategy by name, from the built-ins.
    pub fn build(
        cfg: impl SharedConfig,
        controller: &ControllerSpec,
        recovery: &RecoverySpec,
        app_bytes: Option<u64>,
    ) -> Result<Self, ConfigError> {
        Self::build_with(&Registries::default(), cfg, controller, recovery, app_bytes)
    }

    /// Builds the controller and the recovery strategy by name, from `registries`, with
    /// controller seed 0.
    pub fn build_with(
        registries: &Registries,
        cfg: impl SharedConfig,
        controller: &ControllerSpec,
        recovery: &RecoverySpec,
        app_bytes: Option<u64>,
    ) -> Result<Self, ConfigError> {
        Self::build_seeded(registries, cfg, controller, recovery, app_bytes, 0)
    }

    /// As `build_with`, seeding the controller's random stream with `seed`
    /// (`CcContext::seed`).
    pub fn build_seeded(
        registries: &Registries,
        cfg: impl SharedConfig,
        controller: &ControllerSpec,
        recovery: &RecoverySpec,
        app_bytes: Option<u64>,
        seed: u64,
    ) -> Result<Self, ConfigError> {
        let cfg = cfg.shared();
        cfg.validate()?;
        let mss = cfg.mss as u64;
        let ctx = CcContext {
            mss: cfg.mss,
            initial_cwnd: cfg.initial_cwnd as u64 * mss,
            initial_ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX),
            growth: cfg.growth,
            seed,
        };
        let rctx = RecoveryContext {
            mss: cfg.mss,
            dupthresh: cfg.dupthresh,
            sack: cfg.sack(),
        };
        let cc = registries
            .controllers
            .build(&controller.name, &controller.params, &ctx)?;
        let rec = registries
            .recoveries
            .build(&recovery.name, &recovery.params, &rctx)?;
        Ok(Sender::new(cfg, cc, rec, app_bytes))
    }

    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    pub fn recovery(&self) -> &dyn LossRecovery {
        self.rec.as_ref()
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    pub fn counters(&self) -> &SenderCounters {
        &self.counters
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    /// The settings the sender runs with.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    /// The connection's handshake took `rtt` (a SYN or SYN-ACK sent once) and completed at
    /// `now`: the estimator's first sample, before any data (the RTT counters count data
    /// samples only), and the controller's (`CongestionControl::on_handshake_rtt`), as
    /// Linux's `tcp_init_transfer` initializes the controller after the SYN-ACK's sample.
    pub fn on_handshake_rtt(&mut self, now: Time, rtt: Dur) {
        self.rtt.on_sample_at(rtt, self.snd_una(), self.snd_nxt);
        self.cc.on_handshake_rtt(now, rtt);
    }

    /// The timestamps this sender's segments carry have ticks of `tick` (a connection's
    /// TSval clock). Undo compares echoed timestamps with the first retransmission's send
    /// time in these ticks, as Linux compares `retrans_stamp` in TSval units
    /// (`tcp_packet_delayed`): an echo of the retransmission itself, which comes back
    /// rounded down to its tick, is then never taken for an echo of an earlier original.
    pub fn set_timestamp_tick(&mut self, tick: Dur) {
        self.ts_tick_ns = tick.as_nanos().max(1);
    }
    pub fn snd_una(&self) -> Seq {
        self.sb.seq_of(self.sb.una()).min(self.snd_nxt)
    }
    pub fn snd_nxt(&self) -> Seq {
        self.snd_nxt
    }

    /// The application stops writing; outstanding data is still delivered.
    pub fn close(&mut self) {
        self.closed = true;
    }
    /// The application has nothing more to send and everything sent was acknowledged.
    pub fn is_finished(&self) -> bool {
        self.sb.is_empty() && self.app_remaining() == 0
    }
    fn app_remaining(&self) -> u64 {
        if self.closed {
            return 0;
        }
        match self.app_total {
            Some(t) => t.saturating_sub(self.snd_nxt.0),
            None => u64::MAX,
        }
    }

    pub fn snapshot(&self) -> SenderSnapshot {
        SenderSnapshot {
            cwnd: self.send_window(),
            ssthresh: self.cc.ssthresh(),
            srtt: self.rtt.srtt(),
            rto: self.rtt.rto(),
            in_flight: self.rec.in_flight(&self.sb),
            snd_una: self.snd_una(),
            snd_nxt: self.snd_nxt,
            in_recovery: self.rec.in_recovery(),
        }
    }

    fn send_window(&self) -> u64 {
        if self.rec.in_recovery() && !self.cc.owns_recovery_window() {
            self.rec.window()
        } else {
            self.cc.cwnd()
        }
    }
}
