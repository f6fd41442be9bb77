//! The sending side of a bulk transfer, as a sans-IO state machine.
//!
//! Verbs: `on_segment(now, ack)` feeds an ACK, `poll_transmit(now)` yields the next data
//! segment the windows allow (call until None; `poll_transmit_with_kind` also says what the
//! transmission is, a [`TxKind`]), `poll_timeout()` says when `on_timeout(now)` is due. The window rules come from a [`CongestionControl`], loss detection and repair
//! from a [`LossRecovery`]; the sender owns the [`Scoreboard`], the RTT estimator, the
//! retransmission timer, the counters and the event log.

use crate::ack::AckFacts;
use crate::cc::{
    self, AckSample, CcContext, CongestionControl, CongestionEvent, CongestionKind,
    CrossLayerReport,
};
use crate::log::{Event, LogRecord, LossResponse, SenderCounters, TxKind, WindowReason};
use crate::recovery::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::registry::Registries;
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::spurious::{Frto, Undo};

mod undo;
use crate::{
    AckSegment, ConfigError, ControllerSpec, DataSegment, Dur, RecoverySpec, RepeatedRto,
    RttEstimator, Seq, TcpConfig, Time,
};

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
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    rec: Box<dyn LossRecovery>,
    sb: Scoreboard,
    rtt: RttEstimator,
    /// Bytes the application will write in all; None = unlimited (until `close`).
    app_total: Option<u64>,
    closed: bool,
    snd_nxt: Seq,
    rwnd: u64,
    rto_deadline: Option<Time>,
    delivered: u64,
    /// After a timeout: snd.max at that time; retransmissions below it count as timeout
    /// retransmissions until the cumulative ACK passes it.
    rto_recover: Option<Seq>,
    /// snd.una at the latest retransmission timeout: a timeout at the same point is a
    /// repeated timeout of a segment the timer already retransmitted (RFC 5681 §3.1).
    rto_una: Option<Seq>,
    /// The latest reduction, while it may still be undone (`tcp.undo`, `tcp.frto`).
    undo: Option<Undo>,
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
        cfg: &TcpConfig,
        cc: Box<dyn CongestionControl>,
        rec: Box<dyn LossRecovery>,
        app_bytes: Option<u64>,
    ) -> Self {
        let rtt = RttEstimator::for_config(cfg);
        let logged_window = (cc.cwnd(), cc.ssthresh());
        Sender {
            sb: Scoreboard::new(cfg.mss),
            cfg: cfg.clone(),
            cc,
            rec,
            rtt,
            app_total: app_bytes,
            closed: false,
            snd_nxt: Seq(0),
            rwnd: cfg.rcv_buf,
            rto_deadline: None,
            delivered: 0,
            rto_recover: None,
            rto_una: None,
            undo: None,
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
        }
    }

    /// Builds the controller and the recovery strategy by name, from the built-ins.
    pub fn build(
        cfg: &TcpConfig,
        controller: &ControllerSpec,
        recovery: &RecoverySpec,
        app_bytes: Option<u64>,
    ) -> Result<Self, ConfigError> {
        Self::build_with(&Registries::default(), cfg, controller, recovery, app_bytes)
    }

    /// Builds the controller and the recovery strategy by name, from `registries`.
    pub fn build_with(
        registries: &Registries,
        cfg: &TcpConfig,
        controller: &ControllerSpec,
        recovery: &RecoverySpec,
        app_bytes: Option<u64>,
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let mss = cfg.mss as u64;
        let ctx = CcContext {
            mss: cfg.mss,
            initial_cwnd: cfg.initial_cwnd as u64 * mss,
            initial_ssthresh: cfg.initial_ssthresh.unwrap_or(u64::MAX),
            growth: cfg.growth,
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

    /// Turns the event log on or off (off by default).
    pub fn set_logging(&mut self, on: bool) {
        self.logging = on;
    }
    /// Moves the log records gathered so far into `out`.
    pub fn drain_log(&mut self, out: &mut Vec<LogRecord>) {
        out.append(&mut self.log);
    }
    /// Moves the loss responses (fast-retransmit entries and timeouts with the controller's
    /// verdict) recorded so far into `out`. They are recorded whether or not logging is on;
    /// a caller that never drains them keeps one small record per loss signal.
    pub fn drain_loss_responses(&mut self, out: &mut Vec<LossResponse>) {
        out.append(&mut self.loss_responses);
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
        if self.rec.in_recovery() {
            self.rec.window()
        } else {
            self.cc.cwnd()
        }
    }

    /// An acknowledgment arrived.
    pub fn on_segment(&mut self, now: Time, ack: &AckSegment) {
        self.counters.acks_received += 1;
        if ack.ack > self.snd_nxt {
            return; // acknowledges data never sent: ignore (RFC 9293 §3.10.7.4)
        }
        let prev_una = self.snd_una();
        self.rwnd = ack.window;
        self.sb.take_delivery(); // what follows is this ACK's
        let acked = if ack.ack > prev_una {
            let to = self.sb.idx_covered_below(ack.ack);
            self.sb.ack_to(to)
        } else {
            Default::default()
        };
        let dsack = is_dsack(ack);
        if dsack {
            self.counters.dsacks_received += 1;
            if let (Some(u), Some(b)) = (self.undo.as_mut(), ack.sack.as_slice().first()) {
                let mss = self.cfg.mss as u64;
                u.on_dsack((b.end.0.saturating_sub(b.start.0)).div_ceil(mss) as u32);
            }
        }
        let mut sacked = 0;
        let uses_sack = self.rec.uses_sack();
        for (n, b) in ack.sack.iter().enumerate() {
            self.counters.sack_blocks_carried[n] += 1;
            if !uses_sack || (dsack && n == 0) || b.end <= ack.ack {
                continue; // a DSACK block reports a duplicate, nothing to record
            }
            let new = self.sb.sack(b.start.max(ack.ack), b.end);
            if new > 0 {
                self.counters.sack_blocks_used[n] += 1;
            }
            sacked += new;
        }
        let delivery = self.sb.take_delivery();
        let is_duplicate = acked.bytes == 0 && !self.sb.is_empty() && ack.ack == prev_una;
        if is_duplicate {
            self.counters.dup_acks += 1;
        }
        // Duplicate ACKs in a row as the strategy sees them: RFC 5681 duplicates, or, for
        // strategies that read SACK, ACKs that newly SACK data (RFC 6675 §2), the one that
        // also advances the cumulative ACK included.
        let dup = if uses_sack { sacked > 0 } else { is_duplicate };
        if acked.bytes > 0 {
            self.dupacks_in_row = 0;
        }
        if dup {
            self.dupacks_in_row += 1;
        }

        // RTT: timestamps on every ACK that advances; otherwise Karn's rule.
        let mut rtt = None;
        if acked.bytes > 0 {
            rtt = match (self.cfg.timestamps, ack.ts_ecr) {
                (true, Some(ecr)) => Some(now.saturating_since(ecr)),
                // Karn (RFC 6298 §3): no sample when the ACK covers retransmitted data, and
                // a segment SACKed earlier was delivered long before this ACK.
                (false, _) if !acked.retransmitted => {
                    acked.timed.map(|sent| now.saturating_since(sent))
                }
                _ => None,
            };
        }
        if let Some(r) = rtt {
            self.rtt.on_sample_at(r, self.snd_una(), self.snd_nxt);
            let c = &mut self.counters;
            c.rtt_samples += 1;
            c.rtt_sum_ns += r.as_nanos() as u128;
            c.rtt_min_ns = Some(c.rtt_min_ns.map_or(r.as_nanos(), |m| m.min(r.as_nanos())));
        }
        let delivered_bytes = acked.bytes - acked.previously_sacked_bytes + sacked;
        self.delivered += delivered_bytes;
        self.frto_send_new = false;
        if self.rto_recover.is_some() {
            self.after_timeout_ack(
                now,
                ack,
                acked.bytes > 0,
                &delivery,
                is_duplicate || sacked > 0,
            );
        }

        let facts = AckFacts {
            now,
            mss: self.cfg.mss,
            acked_bytes: acked.bytes,
            sacked_bytes: sacked,
            is_duplicate,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            snd_una: self.snd_una(),
        };
        let sample = AckSample {
            facts,
            rtt,
            snd_nxt: self.snd_nxt,
            in_flight: self.rec.in_flight(&self.sb),
            delivered: self.delivered,
            in_recovery: self.rec.in_recovery(),
        };
        self.cc.observe(&sample);

        let info = AckInfo {
            facts,
            dupthresh: self.cfg.dupthresh,
            prev_una,
            snd_max: self.snd_nxt,
            delivered_bytes,
            delivery,
            dsack,
        };
        let was_in_recovery = self.rec.in_recovery();
        let action = self.rec.on_ack(&info, &mut self.sb);
        if dsack && !was_in_recovery && self.rto_recover.is_none() {
            self.try_undo(now, None, "dsack");
        }
        let reason = match self.apply(now, action, ack.ts_ecr) {
            Some(reason) => reason,
            None if was_in_recovery => WindowReason::Recovery,
            None => {
                let reason = if self.cc.cwnd() < self.cc.ssthresh() {
                    WindowReason::SlowStart
                } else {
                    WindowReason::CongestionAvoidance
                };
                // RFC 3168 §6.1.2: an ACK that echoes congestion never grows the window.
                if acked.bytes > 0 && !(ack.ece && self.cfg.ecn) {
                    self.cc.on_ack(&sample);
                }
                reason
            }
        };
        if self.rto_recover.is_some_and(|r| self.snd_una() >= r) {
            self.rto_recover = None;
        }
        if ack.ece && self.cfg.ecn {
            self.on_ecn_echo(now);
        }

        // RFC 6298 §5.2-5.3: stop the timer when all is acknowledged, restart it on new ACKs.
        if self.sb.is_empty() {
            self.rto_deadline = None;
        } else if (acked.bytes > 0 && self.rec.restarts_timer()) || self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.log_window(now, reason);
    }

    /// Carries out what the recovery strategy asked for; the window reason when it acted.
    fn apply(
        &mut self,
        now: Time,
        action: RecoveryAction,
        ts_ecr: Option<Time>,
    ) -> Option<WindowReason> {
        match action {
            RecoveryAction::None => None,
            RecoveryAction::Enter => {
                self.enter_recovery(now, false);
                Some(WindowReason::FastRetransmit)
            }
            RecoveryAction::Exit { cwnd } => {
                self.exit_recovery(now, cwnd);
                // Linux tcp_try_undo_recovery: at the end of recovery.
                if self.try_undo(now, ts_ecr, "timestamp") {
                    return Some(WindowReason::Undo);
                }
                Some(WindowReason::RecoveryExit)
            }
            RecoveryAction::Restart { cwnd } => {
                self.exit_recovery(now, cwnd);
                self.enter_recovery(now, true);
                Some(WindowReason::FastRetransmit)
            }
            RecoveryAction::Probe => {
                self.counters.probes += 1;
                self.probe_pending = true;
                // RFC 8985 §7.3: the probe rearms the retransmission timer.
                self.rto_deadline = Some(now + self.rtt.rto());
                None
            }
        }
    }

    fn enter_recovery(&mut self, now: Time, restart: bool) {
        if restart {
            self.counters.recovery_restarts += 1;
        } else {
            self.counters.recoveries += 1;
        }
        let ev = self.congestion_event(now, CongestionKind::FastRetransmit);
        let cwnd_before = self.cc.cwnd();
        // The hole (at snd.una) was sent before the ECN response: the same window.
        let same_window = self.reduced_until.is_some_and(|r| self.snd_una() < r);
        let verdict = if !restart && self.ecn_window && same_window {
            // Already reduced for this window by an ECN response (RFC 3168 §6.1.2).
            cc::Verdict {
                label: "ecn-held",
                value: 1.0,
            }
        } else {
            let ssthresh_before = self.cc.ssthresh();
            // A restart (a lost retransmission) proves a real loss: nothing to undo.
            self.undo =
                (self.cfg.undo && !restart).then(|| Undo::start(cwnd_before, ssthresh_before));
            self.cc.on_congestion(&ev)
        };
        self.reduced_until = Some(self.snd_nxt);
        self.ecn_window = false;
        self.note_loss_response(now, ev.kind, restart, verdict, cwnd_before);
        self.rec.enter(
            now,
            self.cc.cwnd(),
            self.cc.ssthresh(),
            self.snd_nxt,
            &mut self.sb,
        );
        self.fast_pending = !restart;
        self.record(now, Event::RecoveryEnter, verdict.label, verdict.value);
    }

    fn exit_recovery(&mut self, now: Time, cwnd: Option<u64>) {
        let c = cwnd.unwrap_or(self.cc.ssthresh());
        self.cc.on_recovery_exit(now, c);
        self.fast_pending = false;
        self.record(now, Event::RecoveryExit, "", 0.0);
    }

    fn on_ecn_echo(&mut self, now: Time) {
        // RFC 3168 §6.1.2: one reduction per window. ECE is ignored until an ACK covers data
        // sent after the last reduction (snd_una > recover): the ACK of exactly `recover` was
        // sent before the receiver saw our CWR, so its ECE still echoes the old mark.
        if self.rec.in_recovery() || self.reduced_until.is_some_and(|r| self.snd_una() <= r) {
            return;
        }
        self.counters.ecn_reductions += 1;
        self.undo = None;
        let ev = self.congestion_event(now, CongestionKind::Ecn);
        let verdict = self.cc.on_congestion(&ev);
        self.reduced_until = Some(self.snd_nxt);
        self.ecn_window = true;
        self.cwr_pending = true;
        self.record(now, Event::EcnResponse, verdict.label, verdict.value);
        self.log_window(now, WindowReason::Ecn);
    }

    fn congestion_event(&self, now: Time, kind: CongestionKind) -> CongestionEvent {
        CongestionEvent {
            now,
            kind,
            mss: self.cfg.mss,
            flight_size: self.sb.outstanding(),
            latest_rtt: self.rtt.latest(),
            min_rtt: self.rtt.min_rtt(),
        }
    }

    /// A cross-layer report from a lossy hop (see [`CrossLayerReport`]): handed to the
    /// controller as is. Controllers that do not use such reports ignore it.
    pub fn on_cross_layer(&mut self, report: &CrossLayerReport) {
        self.cc.on_cross_layer(report);
    }

    /// When `on_timeout` is due.
    pub fn poll_timeout(&self) -> Option<Time> {
        match (self.rto_deadline, self.rec.poll_timeout(self.rto_deadline)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// A timer expired (call at or after `poll_timeout`; early calls do nothing).
    pub fn on_timeout(&mut self, now: Time) {
        if self
            .rec
            .poll_timeout(self.rto_deadline)
            .is_some_and(|t| t <= now)
        {
            let action = self.rec.on_timer(now, self.rto_deadline, &mut self.sb);
            if let Some(reason) = self.apply(now, action, None) {
                self.log_window(now, reason);
            }
        }
        if self.rto_deadline.is_none_or(|d| now < d) {
            return;
        }
        self.counters.timeouts += 1;
        self.rtt.back_off();
        self.sb.mark_all_lost();
        let ev = self.congestion_event(now, CongestionKind::Timeout);
        let cwnd_before = self.cc.cwnd();
        let una = self.snd_una();
        let repeated = self.rto_una.replace(una) == Some(una);
        let was_in_recovery = self.rec.in_recovery();
        let verdict = if repeated && self.cfg.repeated_rto == RepeatedRto::Rfc5681 {
            self.counters.timeouts_repeated += 1;
            self.cc.on_repeated_timeout(now);
            cc::Verdict {
                label: "held",
                value: 1.0,
            }
        } else {
            if !repeated {
                let (cwnd, ssthresh) = (cwnd_before, self.cc.ssthresh());
                self.undo = (self.cfg.undo || self.cfg.frto).then(|| Undo::start(cwnd, ssthresh));
            }
            self.cc.on_congestion(&ev)
        };
        // RFC 5682 §3.1 step 1 (Linux tcp_enter_loss): F-RTO unless the timeout interrupts a
        // fast recovery, also for a repeated timeout of the same segment (§3.2).
        self.frto =
            (self.cfg.frto && (!was_in_recovery || repeated)).then(|| Frto::start(self.snd_nxt));
        self.note_loss_response(now, ev.kind, false, verdict, cwnd_before);
        self.rec.on_timeout(now, self.snd_nxt);
        self.rto_recover = Some(self.snd_nxt);
        self.fast_pending = false;
        self.probe_pending = false;
        self.rto_deadline = None; // restarted by the retransmission (RFC 6298 §5.5-5.6)
        self.record(
            now,
            Event::Timeout,
            verdict.label,
            self.rtt.rto().as_secs_f64(),
        );
        self.log_window(now, WindowReason::Timeout);
    }

    /// The next segment to put on the wire, if the windows allow one.
    pub fn poll_transmit(&mut self, now: Time) -> Option<DataSegment> {
        self.poll_transmit_with_kind(now).map(|(d, _)| d)
    }

    /// As `poll_transmit`, with what the transmission is: new data, or which kind of
    /// retransmission (the kind whose counter it incremented).
    pub fn poll_transmit_with_kind(&mut self, now: Time) -> Option<(DataSegment, TxKind)> {
        if let Some(idx) = self.sb.forced() {
            return Some(self.retransmit(now, idx, false));
        }
        if std::mem::take(&mut self.probe_pending) {
            if let Some(d) = self.probe(now) {
                return Some(d);
            }
        }
        let window = self.send_window().min(self.rwnd.max(self.cfg.mss as u64));
        let in_flight = self.rec.in_flight(&self.sb);
        if let Some(idx) = self.sb.next_pending().filter(|_| !self.frto_send_new) {
            let len = self.sb.seg(idx).map_or(0, |s| s.len as u64);
            if in_flight + len <= window {
                return Some(self.retransmit(now, idx, false));
            }
            return None;
        }
        let len = self.app_remaining().min(self.cfg.mss as u64);
        let una = self.snd_una();
        if len == 0
            || in_flight + len > window
            || (self.snd_nxt + len).0 > una.0.saturating_add(self.rwnd)
        {
            return None;
        }
        Some((self.send_new(now, len), TxKind::New))
    }

    fn send_new(&mut self, now: Time, len: u64) -> DataSegment {
        let seg = self.segment(now, self.snd_nxt, len as u32, 0);
        self.sb.on_send_new(now, len as u32);
        self.snd_nxt += len;
        self.after_send(now, self.sb.end() - 1, false);
        seg
    }

    /// A probe past the window: new data if the application and the receive window allow,
    /// else the highest segment sent (not SACKed).
    fn probe(&mut self, now: Time) -> Option<(DataSegment, TxKind)> {
        let len = self.app_remaining().min(self.cfg.mss as u64);
        if len > 0 && (self.snd_nxt + len).0 <= self.snd_una().0.saturating_add(self.rwnd) {
            return Some((self.send_new(now, len), TxKind::New));
        }
        let last = self.sb.highest_unsacked()?;
        Some(self.retransmit(now, last, true))
    }

    fn retransmit(&mut self, now: Time, idx: SegIdx, probe: bool) -> (DataSegment, TxKind) {
        let st = *self.sb.seg(idx).expect("retransmission inside the window");
        let seg = self.segment(now, self.sb.seq_of(idx), st.len, st.tx_count);
        self.sb.on_retransmit(idx, now);
        if let Some(u) = self.undo.as_mut() {
            u.on_retransmit(now);
        }
        let kind = if probe {
            TxKind::Probe
        } else if std::mem::take(&mut self.fast_pending) {
            TxKind::Fast
        } else if self.rec.in_recovery() {
            TxKind::Recovery
        } else {
            TxKind::Timeout
        };
        let c = &mut self.counters;
        c.retransmits += 1;
        *match kind {
            TxKind::Probe => &mut c.retransmits_probe,
            TxKind::Fast => &mut c.retransmits_fast,
            TxKind::Recovery => &mut c.retransmits_recovery,
            TxKind::Timeout | TxKind::New => &mut c.retransmits_timeout,
        } += 1;
        self.after_send(now, idx, true);
        (seg, kind)
    }

    fn segment(&mut self, now: Time, seq: Seq, len: u32, tx_before: u8) -> DataSegment {
        let cwr = std::mem::take(&mut self.cwr_pending);
        DataSegment {
            seq,
            len,
            ts_val: self.cfg.timestamps.then_some(now),
            retransmission: tx_before,
            // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
            ect: self.cfg.ecn && tx_before == 0,
            ce: false,
            cwr,
        }
    }

    fn after_send(&mut self, now: Time, idx: SegIdx, retransmission: bool) {
        let len = self.sb.seg(idx).map_or(0, |s| s.len as u64);
        self.counters.segments_sent += 1;
        self.counters.bytes_sent += len;
        self.rec.on_transmit(now, idx, retransmission, &self.sb);
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn note_loss_response(
        &mut self,
        now: Time,
        kind: CongestionKind,
        restart: bool,
        verdict: cc::Verdict,
        cwnd_before: u64,
    ) {
        self.loss_responses.push(LossResponse {
            time: now,
            kind,
            restart,
            label: verdict.label,
            value: verdict.value,
            seq: self.snd_una(),
            transmissions: self.sb.seg(self.sb.una()).map_or(0, |s| s.tx_count),
            cwnd_before,
            ssthresh_after: self.cc.ssthresh(),
            in_recovery: self.rec.in_recovery(),
            dupacks: self.dupacks_in_row,
        });
    }

    fn record(&mut self, now: Time, event: Event, label: &'static str, value: f64) {
        if self.logging {
            self.log.push(LogRecord {
                time: now,
                event,
                cwnd: self.send_window(),
                ssthresh: self.cc.ssthresh(),
                seq: self.snd_una(),
                label,
                value,
            });
        }
    }

    fn log_window(&mut self, now: Time, reason: WindowReason) {
        let w = (self.send_window(), self.cc.ssthresh());
        if w != self.logged_window {
            self.logged_window = w;
            self.record(now, Event::Window(reason), "", 0.0);
        }
    }
}

/// RFC 2883 §4: the first SACK block is a DSACK report when it lies below the cumulative
/// ACK or inside the second block (a receiver's ordinary blocks lie above the cumulative
/// ACK and are disjoint, so this never mistakes one for a DSACK).
fn is_dsack(ack: &AckSegment) -> bool {
    let b = ack.sack.as_slice();
    match b {
        [] => false,
        [first, rest @ ..] => {
            first.start < ack.ack
                || rest
                    .first()
                    .is_some_and(|s| s.start <= first.start && first.end <= s.end)
        }
    }
}
