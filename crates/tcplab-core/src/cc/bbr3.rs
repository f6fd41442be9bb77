//! BBR v3, as draft-ietf-ccwg-bbr-04 (Cardwell, Swett, Beshay, IETF CCWG, 2025) specifies
//! it in pseudocode; Linux's v3 branch (google/bbr, `net/ipv4/tcp_bbr.c`) was read where the
//! draft leaves a choice. docs/controllers/bbr.md lists every deviation.
//!
//! Like v1 ([`super::bbr`]) it models the path from delivery-rate samples ([`crate::rate`]):
//! `max_bw`, the windowed maximum delivery rate (now over the current and the previous
//! ProbeBW cycle, [`super::filter::WindowedMax`] with cycles as time), and `min_rtt`. Unlike
//! v1 it also reacts to loss and ECN, with two time scales of bounds:
//! - **long term**, `inflight_hi` (the draft's `inflight_longterm`): the data in flight at
//!   which a bandwidth probe saw more than `loss_thresh` (2 %) of the data in flight lost
//!   (`RS.lost > loss_thresh * RS.tx_in_flight`), at least `beta` (0.7) times the target;
//!   raised again, slowly then exponentially faster, while probing without such losses;
//! - **short term**, `bw_lo` and `inflight_lo` (`bw_shortterm`, `inflight_shortterm`): when
//!   not probing, at the end of each round with a loss or a CE mark both fall to
//!   max(the latest round's delivery, `beta` times themselves); they are forgotten when a
//!   probe starts (REFILL) and after ProbeRTT.
//!
//! The bandwidth used is `bw = min(max_bw, bw_lo)`; BDP = bw × min_rtt. States and gains
//! (pacing, cwnd): Startup (2.77, 2), left when the delivery rate grew by less than 25 % in
//! 3 rounds or on excessive loss (in recovery at a round's end, at least 6 ACKs revealed
//! losses in the round and the loss rate exceeds 2 %); Drain (0.35, 2) until the data in
//! flight is at most one BDP; then ProbeBW cycling DOWN (0.9, 2) → CRUISE (1, 2) → REFILL
//! (1, 2, one round) → UP (1.25, 2.25) → DOWN; ProbeRTT (1, 0.5) every 5 s for 200 ms and a
//! round. Files: this one (model, Startup, Drain, cwnd, pacing, events), `bbr3/probe_bw.rs`
//! (the ProbeBW cycle, `inflight_hi`), `bbr3/signals.rs` (loss and CE signals, `bw_lo`,
//! `inflight_lo`), `bbr3/probe_rtt.rs` (`min_rtt`, ProbeRTT).
//!
//! cwnd: `max_inflight` = max(cwnd_gain × BDP, 3 send quanta, 4 segments), + 2 segments in
//! UP; grown by the bytes each ACK delivers up to it (unbounded in Startup), then capped: by
//! `inflight_hi` in DOWN, REFILL and UP, by `inflight_hi` less 15 % headroom in CRUISE and
//! ProbeRTT, by `inflight_lo` everywhere, by 0.5 BDP in ProbeRTT; never below 4 segments.
//! Pacing: `pacing_gain × bw × 0.99`, applied once the pipe was full or when it raises the
//! rate; 2.77 × initial window / srtt before a bandwidth sample.

#[path = "bbr3/probe_bw.rs"]
mod probe_bw;
#[path = "bbr3/probe_rtt.rs"]
mod probe_rtt;
#[path = "bbr3/signals.rs"]
mod signals;

use super::bbr::{grow_cwnd, handshake_min_rtt, send_quantum_segments, splitmix64};
use super::filter::WindowedMax;
use super::{AckSample, CcContext, CongestionControl, CongestionEvent, CongestionKind, Verdict};
use crate::rate::RateSample;
use crate::{ConfigError, Dur, ParamReader, Params, Time};

/// Smallest cwnd, segments (draft `BBR.MinPipeCwnd`).
const MIN_PIPE_CWND: u64 = 4;
/// "Infinity" of the draft's bounds.
const UNBOUNDED: u64 = u64::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    ProbeBwDown,
    ProbeBwCruise,
    ProbeBwRefill,
    ProbeBwUp,
    ProbeRtt,
}

impl State {
    /// One of the four ProbeBW phases (draft `IsInAProbeBWState`).
    pub fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }
    /// Accelerating to find more bandwidth (draft `BBRIsProbingBW`).
    pub fn is_probing(self) -> bool {
        matches!(
            self,
            State::Startup | State::ProbeBwRefill | State::ProbeBwUp
        )
    }
}

/// Where the ACKs stand relative to a bandwidth probe (draft `BBR.ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    ProbeStopping,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
}

/// The draft's constants (docs/controllers/bbr.md gives each source).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bbr3Params {
    pub startup_pacing_gain: f64,
    pub drain_pacing_gain: f64,
    pub cwnd_gain: f64,
    pub probe_up_pacing_gain: f64,
    pub probe_up_cwnd_gain: f64,
    pub probe_down_pacing_gain: f64,
    pub loss_thresh: f64,
    pub beta: f64,
    pub headroom: f64,
    pub startup_full_loss_count: u32,
    pub min_rtt_window: Dur,
    pub probe_rtt_interval: Dur,
    pub probe_rtt_time: Dur,
    pub probe_rtt_cwnd_gain: f64,
    pub pacing_margin: f64,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Bbr3Params {
            startup_pacing_gain: 2.77,
            drain_pacing_gain: 0.35,
            cwnd_gain: 2.0,
            probe_up_pacing_gain: 1.25,
            probe_up_cwnd_gain: 2.25,
            probe_down_pacing_gain: 0.9,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            startup_full_loss_count: 6,
            min_rtt_window: Dur::from_secs(10),
            probe_rtt_interval: Dur::from_secs(5),
            probe_rtt_time: Dur::from_millis(200),
            probe_rtt_cwnd_gain: 0.5,
            pacing_margin: 0.01,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bbr3 {
    p: Bbr3Params,
    mss: u64,
    initial_cwnd: u64,
    state: State,
    cwnd: u64,
    ssthresh: u64,
    prior_cwnd: u64,
    pacing_rate: u64,
    has_seen_rtt: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    // Round counting.
    delivered: u64,
    newly_acked: u64,
    round_count: u64,
    next_round_delivered: u64,
    round_start: bool,
    // Bandwidth and its bounds, bytes/s.
    max_bw: WindowedMax,
    cycle_count: u64,
    bw_lo: u64,
    bw: u64,
    bw_latest: u64,
    // Volumes, bytes.
    inflight_hi: u64,
    inflight_lo: u64,
    inflight_latest: u64,
    // Congestion signals.
    loss_round_delivered: u64,
    loss_round_start: bool,
    loss_in_round: bool,
    loss_events_in_round: u32,
    // Full pipe.
    full_bw: u64,
    full_bw_count: u32,
    full_bw_now: bool,
    full_bw_reached: bool,
    // ProbeBW cycle (probe_bw.rs).
    ack_phase: AckPhase,
    cycle_stamp: Time,
    bw_probe_wait: Dur,
    rounds_since_bw_probe: u64,
    bw_probe_samples: bool,
    bw_probe_up_rounds: u32,
    bw_probe_up_acks: u64,
    /// Segments acknowledged per segment of `inflight_hi` growth in UP (None: not growing).
    probe_up_cnt: Option<u64>,
    // min_rtt and ProbeRTT.
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_min_delay: Option<Dur>,
    probe_rtt_min_stamp: Time,
    probe_rtt_expired: bool,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Samples whose `prior_delivered` lies in this range count as application-limited
    /// (ProbeRTT's `MarkConnectionAppLimited`, which a controller cannot do to the sender).
    probe_rtt_app_limited: Option<(u64, u64)>,
    rng: u64,
}

impl Bbr3 {
    pub fn new(ctx: &CcContext, p: Bbr3Params) -> Self {
        let mss = ctx.mss as u64;
        let initial_cwnd = ctx.initial_cwnd.max(mss);
        let mut b = Bbr3 {
            p,
            mss,
            initial_cwnd,
            state: State::Startup,
            cwnd: initial_cwnd,
            ssthresh: ctx.initial_ssthresh,
            prior_cwnd: 0,
            pacing_rate: 0,
            has_seen_rtt: false,
            pacing_gain: p.startup_pacing_gain,
            cwnd_gain: p.cwnd_gain,
            delivered: 0,
            newly_acked: 0,
            round_count: 0,
            next_round_delivered: 0,
            round_start: false,
            max_bw: WindowedMax::new(),
            cycle_count: 0,
            bw_lo: UNBOUNDED,
            bw: 0,
            bw_latest: 0,
            inflight_hi: UNBOUNDED,
            inflight_lo: UNBOUNDED,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            loss_in_round: false,
            loss_events_in_round: 0,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_now: false,
            full_bw_reached: false,
            ack_phase: AckPhase::Init,
            cycle_stamp: Time::ZERO,
            bw_probe_wait: Dur::ZERO,
            rounds_since_bw_probe: 0,
            bw_probe_samples: false,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks: 0,
            probe_up_cnt: None,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: Time::ZERO,
            probe_rtt_expired: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: None,
            rng: ctx.seed,
        };
        b.init_pacing_rate(None);
        b
    }

    /// Parameters: see [`Bbr3Params`] and docs/controllers/bbr.md.
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let d = Bbr3Params::default();
        let mut r = ParamReader::new("bbr3", params);
        let secs = |d: Dur| d.as_secs_f64();
        let p = Bbr3Params {
            startup_pacing_gain: r.num("startup_pacing_gain", d.startup_pacing_gain, 1.0, 10.0)?,
            drain_pacing_gain: r.num("drain_pacing_gain", d.drain_pacing_gain, 0.05, 1.0)?,
            cwnd_gain: r.num("cwnd_gain", d.cwnd_gain, 1.0, 10.0)?,
            probe_up_pacing_gain: r.num("probe_up_pacing_gain", 1.25, 1.0, 4.0)?,
            probe_up_cwnd_gain: r.num("probe_up_cwnd_gain", 2.25, 1.0, 10.0)?,
            probe_down_pacing_gain: r.num("probe_down_pacing_gain", 0.9, 0.1, 1.0)?,
            loss_thresh: r.num("loss_thresh", d.loss_thresh, 0.0, 0.5)?,
            beta: r.num("beta", d.beta, 0.1, 1.0)?,
            headroom: r.num("headroom", d.headroom, 0.0, 0.9)?,
            startup_full_loss_count: r.num("startup_full_loss_count", 6.0, 1.0, 1000.0)?.round()
                as u32,
            min_rtt_window: Dur::from_secs_f64(r.num(
                "min_rtt_window",
                secs(d.min_rtt_window),
                0.001,
                3600.0,
            )?),
            probe_rtt_interval: Dur::from_secs_f64(r.num(
                "probe_rtt_interval",
                5.0,
                0.001,
                3600.0,
            )?),
            probe_rtt_time: Dur::from_secs_f64(r.num("probe_rtt_time", 0.2, 0.0, 60.0)?),
            probe_rtt_cwnd_gain: r.num("probe_rtt_cwnd_gain", 0.5, 0.0, 10.0)?,
            pacing_margin: r.num("pacing_margin", d.pacing_margin, 0.0, 0.5)?,
        };
        r.finish()?;
        Ok(Self::new(ctx, p))
    }

    pub fn state(&self) -> State {
        self.state
    }
    /// `max_bw`, bytes per second (0 before a sample).
    pub fn max_bw(&self) -> u64 {
        self.max_bw.get()
    }
    /// `bw` = min(max_bw, bw_lo), bytes per second.
    pub fn bw(&self) -> u64 {
        self.bw
    }
    /// `bw_lo` (draft `bw_shortterm`), None when unbounded.
    pub fn bw_lo(&self) -> Option<u64> {
        (self.bw_lo != UNBOUNDED).then_some(self.bw_lo)
    }
    /// `inflight_hi` (draft `inflight_longterm`), bytes; None when unbounded.
    pub fn inflight_hi(&self) -> Option<u64> {
        (self.inflight_hi != UNBOUNDED).then_some(self.inflight_hi)
    }
    /// `inflight_lo` (draft `inflight_shortterm`), bytes; None when unbounded.
    pub fn inflight_lo(&self) -> Option<u64> {
        (self.inflight_lo != UNBOUNDED).then_some(self.inflight_lo)
    }
    pub fn min_rtt(&self) -> Option<Dur> {
        self.min_rtt
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cwnd_gain(&self) -> f64 {
        self.cwnd_gain
    }
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    pub fn rounds(&self) -> u64 {
        self.round_count
    }

    fn random_unit(&mut self) -> f64 {
        (splitmix64(&mut self.rng) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `gain` BDPs at `bw`, bytes (draft `BBRBDPMultiple`; the initial window before an RTT).
    fn bdp_multiple(&self, bw: u64, gain: f64) -> u64 {
        match self.min_rtt {
            None => self.initial_cwnd,
            Some(rtt) => (gain * bw as f64 * rtt.as_secs_f64()) as u64,
        }
    }

    /// At least the offload budget (3 send quanta) and 4 segments, + 2 segments in UP
    /// (draft `BBRQuantizationBudget`).
    fn quantization_budget(&self, cap: u64) -> u64 {
        let offload = 3 * send_quantum_segments(self.pacing_rate, self.mss) * self.mss;
        let mut cap = cap.max(offload).max(MIN_PIPE_CWND * self.mss);
        if self.state == State::ProbeBwUp {
            cap += 2 * self.mss;
        }
        cap
    }

    /// `gain` BDPs at `bw` with the quantization budget (draft `BBRInflight`).
    fn inflight(&self, bw: u64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// The cwnd the model allows (draft `BBR.max_inflight`; no ACK-aggregation term).
    fn max_inflight(&self) -> u64 {
        self.quantization_budget(self.bdp_multiple(self.bw, self.cwnd_gain))
    }

    /// Our BDP, unless congestion cut cwnd (draft `BBRTargetInflight`).
    fn target_inflight(&self) -> u64 {
        self.bdp_multiple(self.bw, 1.0).min(self.cwnd)
    }

    fn init_pacing_rate(&mut self, srtt: Option<Dur>) {
        let rtt = srtt.unwrap_or(Dur::from_millis(1)).max(Dur::from_nanos(1));
        self.has_seen_rtt = srtt.is_some();
        let nominal = self.initial_cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = (self.p.startup_pacing_gain * nominal) as u64;
    }

    fn set_pacing_rate(&mut self) {
        let rate = self.pacing_gain * self.bw as f64 * (1.0 - self.p.pacing_margin);
        let rate = rate as u64;
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    fn set_gains(&mut self, pacing: f64, cwnd: f64) {
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    fn enter_startup(&mut self) {
        self.state = State::Startup;
        self.set_gains(self.p.startup_pacing_gain, self.p.cwnd_gain);
    }

    fn enter_drain(&mut self) {
        self.state = State::Drain;
        self.set_gains(self.p.drain_pacing_gain, self.p.cwnd_gain);
        self.ssthresh = self.inflight(self.max_bw.get(), 1.0);
    }

    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    fn update_round(&mut self, rs: &RateSample) {
        self.round_start = rs.prior_delivered >= self.next_round_delivered;
        if self.round_start {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_bw_probe += 1;
        }
    }

    fn app_limited(&self, rs: &RateSample) -> bool {
        rs.is_app_limited
            || self
                .probe_rtt_app_limited
                .is_some_and(|(a, b)| (a..b).contains(&rs.prior_delivered))
    }

    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    fn check_full_bw_reached(&mut self, rs: &RateSample, rate: u64) {
        if self.full_bw_now || !self.round_start || self.app_limited(rs) {
            return;
        }
        if rate as f64 >= self.full_bw as f64 * 1.25 {
            self.reset_full_bw();
            self.full_bw = rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= 3;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// The volume caps of the current state (draft `BBRBoundCwndForProbeRTT` and
    /// `BBRBoundCwndForModel`).
    fn bound_cwnd(&mut self) {
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        let cap = match self.state {
            State::ProbeBwCruise | State::ProbeRtt => self.inflight_with_headroom(),
            s if s.is_probe_bw() => self.inflight_hi,
            _ => UNBOUNDED,
        };
        let cap = cap.min(self.inflight_lo).max(MIN_PIPE_CWND * self.mss);
        self.cwnd = self.cwnd.min(cap);
    }
}

impl CongestionControl for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }
    fn uses_rate_samples(&self) -> bool {
        true
    }
    /// bbr_init: RTprop starts from the handshake's sample (`tcp_min_rtt`), stamped when the
    /// connection is established, and the initial pacing rate spreads the initial window over
    /// the SRTT (bbr_init_pacing_rate_from_rtt) instead of the nominal 1 ms.
    fn on_handshake_rtt(&mut self, now: Time, rtt: Dur) {
        handshake_min_rtt(&mut self.min_rtt, &mut self.min_rtt_stamp, now, rtt);
        if !self.has_seen_rtt {
            self.init_pacing_rate(Some(rtt));
        }
    }

    /// The model and the state machine (draft `BBRUpdateModelAndState`), the pacing rate,
    /// and the caps on cwnd (growth waits for `on_ack`).
    fn observe(&mut self, s: &AckSample) {
        self.newly_acked = s.delivered.saturating_sub(self.delivered);
        self.delivered = s.delivered;
        if !self.has_seen_rtt && s.srtt.is_some() && self.max_bw.get() == 0 {
            self.init_pacing_rate(s.srtt);
        }
        self.round_start = false;
        if let Some(rs) = s.rate {
            let rate = rs.bytes_per_sec().unwrap_or(0);
            if rs.losses > 0 {
                self.note_congestion();
            }
            self.update_latest_delivery_signals(&rs, rate);
            self.update_round(&rs);
            self.update_congestion_signals(&rs, rate);
            self.check_full_bw_reached(&rs, rate);
            self.check_startup_high_loss(s, &rs);
            if self.state == State::Startup && self.full_bw_reached {
                self.enter_drain();
            }
            if self.state == State::Drain && s.in_flight <= self.inflight(self.bw, 1.0) {
                self.enter_probe_bw(s.now);
            }
            self.update_probe_bw_cycle_phase(s, &rs, rate);
            self.update_min_rtt(s.now, &rs);
            self.check_probe_rtt(s);
            self.advance_latest_delivery_signals(&rs, rate);
            self.bw = self.max_bw.get().min(self.bw_lo);
        }
        self.set_pacing_rate();
        self.bound_cwnd();
    }

    /// Growth toward `max_inflight` by the bytes this ACK delivered (draft `BBRSetCwnd`).
    fn on_ack(&mut self, _s: &AckSample) {
        if self.newly_acked == 0 {
            return;
        }
        let (target, full) = (self.max_inflight(), self.full_bw_reached);
        let early = self.delivered < self.initial_cwnd;
        let floor = MIN_PIPE_CWND * self.mss;
        self.cwnd = grow_cwnd(self.cwnd, self.newly_acked, target, full, early, floor);
        self.bound_cwnd();
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) -> Verdict {
        match ev.kind {
            CongestionKind::FastRetransmit => {
                // The model's bounds answer the losses; recovery repairs within this window.
                self.save_cwnd(false);
                self.ssthresh = self.cwnd;
                Verdict {
                    label: "model",
                    value: 1.0,
                }
            }
            CongestionKind::Timeout => {
                self.save_cwnd(false);
                self.cwnd = self.mss;
                Verdict {
                    label: "timeout",
                    value: 0.0,
                }
            }
            CongestionKind::Ecn => {
                // CE marks are congestion (draft §"ECN"): a congested round for the
                // short-term bounds and, while a probe's samples are pending, a flight too
                // high for the long-term bound.
                self.note_congestion();
                if self.bw_probe_samples {
                    self.handle_inflight_too_high(ev.now, ev.flight_size, false);
                }
                self.bound_cwnd();
                self.ssthresh = self.cwnd;
                Verdict {
                    label: "model",
                    value: 1.0,
                }
            }
        }
    }

    fn on_repeated_timeout(&mut self, _now: Time) {
        self.cwnd = self.mss;
    }

    fn on_recovery_exit(&mut self, _now: Time, _cwnd: u64) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
        self.bound_cwnd();
    }

    fn on_undo(&mut self, _now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        // Linux v3 `bbr_undo_cwnd`: the full-pipe search and the short-term bounds restart.
        self.reset_full_bw();
        self.reset_short_term_model();
        self.cwnd = self.cwnd.max(prior_cwnd).max(self.prior_cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }
}

#[cfg(test)]
#[path = "bbr3/tests.rs"]
mod tests;
