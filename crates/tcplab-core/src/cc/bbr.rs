//! BBR v1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//! 2016; draft-cardwell-iccrg-bbr-congestion-control-00; Linux `net/ipv4/tcp_bbr.c`).
//!
//! BBR builds a model of the path from the ACK stream instead of reacting to loss: the
//! bottleneck bandwidth `BtlBw`, the maximum delivery rate ([`crate::rate`]) over the last
//! `bw_window` round trips (application-limited samples count only when they raise it), and
//! the round-trip propagation time `RTprop`, the minimum RTT over `min_rtt_window`. It paces
//! at `pacing_gain * BtlBw` and caps the data in flight at `cwnd_gain * BDP` plus a
//! quantization budget, BDP = BtlBw * RTprop. A state machine sets the gains:
//! - **Startup**: both gains 2/ln 2 (the smallest gain that doubles the delivery rate each
//!   round); left when BtlBw grew by less than `startup_growth` (25 %) in `startup_rounds`
//!   (3) consecutive rounds that were not application-limited: the pipe is full.
//! - **Drain**: pacing gain ln 2 / 2 (the inverse), cwnd gain 2/ln 2, until the data in
//!   flight is at most one BDP (with its quantization budget); ssthresh becomes that BDP.
//! - **ProbeBW**: cwnd gain `cwnd_gain` (2); the pacing gain cycles through 8 phases of
//!   about one RTprop each, 5/4, 3/4, 1, 1, 1, 1, 1, 1, starting at a random phase other
//!   than 3/4 (drawn from the flow's seeded stream). The 5/4 phase lasts at least RTprop and
//!   until the data in flight reaches 5/4 BDP (with its budget) or a loss is declared (the
//!   rate sample's `losses`, which count what the previous ACK revealed: Linux counts this
//!   ACK's); the 3/4 phase ends after RTprop or as soon as the data in flight is down to one
//!   BDP.
//! - **ProbeRTT**: entered from any state when RTprop was not refreshed (a sample at most
//!   the current minimum) for `min_rtt_window` (10 s): cwnd 4 segments until `probe_rtt_time`
//!   (200 ms) and one round have passed since the data in flight fell to 4 segments; then
//!   back to Startup (pipe never filled) or ProbeBW, and RTprop's timestamp is refreshed.
//!   Samples sent in ProbeRTT count as application-limited.
//!
//! Window: on every ACK that may grow it, `cwnd = min(cwnd + delivered, target)` once the
//! pipe was filled, `cwnd + delivered` before (while below target or before 10 segments were
//! delivered), at least 4 segments; target = `ceil(cwnd_gain * BDP / MSS)` segments + 3 send
//! quanta, rounded up to an even number, + 2 in the 5/4 phase (tcp_bbr.c
//! `bbr_quantization_budget`; a send quantum is Linux's TSO goal, `pacing_rate * 1 ms`
//! bytes in whole segments, at least 1 segment below 1.2 Mb/s and 2 above, at most 127).
//! Before an RTprop sample the BDP is 10 segments (TCP_INIT_CWND).
//!
//! Pacing rate: `pacing_gain * BtlBw * (1 - pacing_margin)` (1 %), applied once the pipe
//! was filled or when it raises the rate; before any bandwidth sample, `2/ln 2 * cwnd /
//! RTT` with the smoothed RTT (1 ms before one is known), as `bbr_init_pacing_rate_from_rtt`.
//!
//! Losses (as Linux, BBR does not treat loss as a congestion signal, and sets the window in
//! recovery itself: [`CongestionControl::owns_recovery_window`], Linux's `cong_control`, so
//! PRR does not apply): at a fast retransmit cwnd is saved and ssthresh set to cwnd (Linux
//! leaves it; the recovery strategies, whose windows BBR does not use, need it finite). On every ACK that delivered data (bbr_set_cwnd_to_recover_or_restore):
//! cwnd falls by the bytes newly marked lost (at least one segment); the first ACK of
//! recovery starts a round and sets cwnd to the data in flight plus the bytes delivered,
//! and until that round ends cwnd is at least that (packet conservation); then cwnd grows
//! toward the target as outside recovery (at most 2 segments sent per segment delivered);
//! the first ACK after recovery restores cwnd to at least the saved one. A timeout sets cwnd
//! to one segment and restarts the search for a full pipe's bandwidth growth; an undo
//! restores the saved cwnd. ECN echoes are ignored (BBR v1 has no ECN response).
//!
//! Not modelled: the restore after a timeout's recovery (Linux restores the saved cwnd when
//! its Loss state ends); on purpose: Linux's long-term bandwidth sampling for token-bucket policers
//! (`lt_bw`, not in the draft), the ACK-aggregation cwnd bonus (`extra_acked`, added to Linux
//! in 4.19, not in the draft) and the restart from idle (`CA_EVENT_TX_START`).
//! The phase and Drain checks take the data in flight as Linux does
//! (`bbr_packets_in_net_at_edt`): the 5/4 and 3/4 phases the count before the ACK
//! (`rs->prior_in_flight`), Drain the count after it, each projected to the pacing
//! release (plus the send quantum about to leave while probing, less what BtlBw delivers
//! until then). BBR v3 (draft-ietf-ccwg-bbr) is a different algorithm with loss and ECN
//! bounds: `cc::bbr3`, registered as `bbr3`.

use super::filter::WindowedMax;
use super::{AckSample, CcContext, CongestionControl, CongestionEvent, CongestionKind, Verdict};
use crate::{ConfigError, Dur, ParamReader, Params, Time};

/// The next number of a splitmix64 stream: BBR's random choices come from the flow's own
/// stream, seeded from the scenario (`CcContext::seed`).
/// The handshake's RTT sample as the first minimum RTT, stamped when the connection was
/// established (`bbr_init`: `min_rtt_us = tcp_min_rtt(tp)`, `min_rtt_stamp = tcp_jiffies32`).
pub(super) fn handshake_min_rtt(min_rtt: &mut Option<Dur>, stamp: &mut Time, now: Time, rtt: Dur) {
    if min_rtt.is_none_or(|m| rtt < m) {
        *min_rtt = Some(rtt);
        *stamp = now;
    }
}

pub(super) fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// BBR's cwnd step on an ACK that delivered `acked` bytes (v1, and v3's `BBRSetCwnd`): once
/// the pipe was full, `cwnd + acked` up to `target`; before, `cwnd + acked` while below
/// `target` or while `early` (less than an initial window delivered); at least `floor`.
pub(super) fn grow_cwnd(
    cwnd: u64,
    acked: u64,
    target: u64,
    full_pipe: bool,
    early: bool,
    floor: u64,
) -> u64 {
    let grown = if full_pipe {
        (cwnd + acked).min(target)
    } else if cwnd < target || early {
        cwnd + acked
    } else {
        cwnd
    };
    grown.max(floor)
}

/// Send quantum in segments at `pacing_rate` bytes/s (Linux bbr_tso_segs_goal, the same in
/// BBR v1 and v3): about 1 ms of data, at most 64 KB and 127 segments, at least 2 segments
/// (1 below 1.2 Mb/s).
pub(super) fn send_quantum_segments(pacing_rate: u64, mss: u64) -> u64 {
    let bytes = (pacing_rate >> 10).min(65_536);
    let floor = if pacing_rate < 150_000 { 1 } else { 2 };
    (bytes / mss).max(floor).min(127)
}

/// Phases of ProbeBW's pacing-gain cycle (Linux CYCLE_LEN).
const CYCLE_LEN: usize = 8;
/// Segments delivered before which Startup grows cwnd whatever the target (TCP_INIT_CWND).
const INIT_CWND: u64 = 10;
/// Smallest cwnd, segments (bbr_cwnd_min_target).
const MIN_CWND: u64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// The parameters, with Linux's defaults (docs/controllers/bbr.md gives each source).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrParams {
    pub high_gain: f64,
    pub cwnd_gain: f64,
    pub probe_gain: f64,
    pub bw_window: u64,
    pub min_rtt_window: Dur,
    pub probe_rtt_time: Dur,
    pub startup_growth: f64,
    pub startup_rounds: u32,
    pub pacing_margin: f64,
}

impl Default for BbrParams {
    fn default() -> Self {
        BbrParams {
            high_gain: 2885.0 / 1000.0 + 1.0 / 256.0,
            cwnd_gain: 2.0,
            probe_gain: 1.25,
            bw_window: CYCLE_LEN as u64 + 2,
            min_rtt_window: Dur::from_secs(10),
            probe_rtt_time: Dur::from_millis(200),
            startup_growth: 1.25,
            startup_rounds: 3,
            pacing_margin: 0.01,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    mss: u64,
    mode: Mode,
    /// Bytes; the ProbeRTT cap is applied by `cwnd()`.
    cwnd: u64,
    ssthresh: u64,
    prior_cwnd: u64,
    /// The previous ACK that delivered data came in recovery (Linux `prev_ca_state`).
    prev_in_recovery: bool,
    /// The first round of recovery: cwnd at least what is in flight plus what was delivered.
    packet_conservation: bool,
    pacing_rate: u64,
    has_seen_rtt: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    /// BtlBw, bytes/s, over rounds.
    bw: WindowedMax,
    rounds: u64,
    next_round_delivered: u64,
    round_start: bool,
    min_rtt: Option<Dur>,
    min_rtt_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Samples sent while `delivered` lay in this range count as application-limited
    /// (ProbeRTT; Linux marks the socket application-limited instead).
    probe_rtt_app_limited: Option<(u64, u64)>,
    full_bw: u64,
    full_bw_count: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: Time,
    /// Bytes delivered so far, and by the latest ACK.
    delivered: u64,
    acked: u64,
    /// splitmix64 state of the flow's stream.
    rng: u64,
}

impl Bbr {
    pub fn new(ctx: &CcContext, p: BbrParams) -> Self {
        let mss = ctx.mss as u64;
        let mut b = Bbr {
            p,
            mss,
            mode: Mode::Startup,
            cwnd: ctx.initial_cwnd.max(mss),
            ssthresh: ctx.initial_ssthresh,
            prior_cwnd: 0,
            prev_in_recovery: false,
            packet_conservation: false,
            pacing_rate: 0,
            has_seen_rtt: false,
            pacing_gain: p.high_gain,
            cwnd_gain: p.high_gain,
            bw: WindowedMax::new(),
            rounds: 0,
            next_round_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            probe_rtt_app_limited: None,
            full_bw: 0,
            full_bw_count: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: Time::ZERO,
            delivered: 0,
            acked: 0,
            rng: ctx.seed,
        };
        b.init_pacing_rate(None);
        b
    }

    /// Parameters: see [`BbrParams`] and docs/controllers/bbr.md.
    pub fn from_params(ctx: &CcContext, params: &Params) -> Result<Self, ConfigError> {
        let d = BbrParams::default();
        let mut r = ParamReader::new("bbr", params);
        let p = BbrParams {
            high_gain: r.num("high_gain", d.high_gain, 1.0, 10.0)?,
            cwnd_gain: r.num("cwnd_gain", d.cwnd_gain, 1.0, 10.0)?,
            probe_gain: r.num("probe_gain", d.probe_gain, 1.0, 4.0)?,
            bw_window: r.num("bw_window", d.bw_window as f64, 1.0, 1000.0)?.round() as u64,
            min_rtt_window: Dur::from_secs_f64(r.num("min_rtt_window", 10.0, 0.001, 3600.0)?),
            probe_rtt_time: Dur::from_secs_f64(r.num("probe_rtt_time", 0.2, 0.0, 60.0)?),
            startup_growth: r.num("startup_growth", d.startup_growth, 1.0, 10.0)?,
            startup_rounds: r.num("startup_rounds", 3.0, 1.0, 100.0)?.round() as u32,
            pacing_margin: r.num("pacing_margin", d.pacing_margin, 0.0, 0.5)?,
        };
        r.finish()?;
        Ok(Self::new(ctx, p))
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }
    /// BtlBw, bytes per second (0 before a sample).
    pub fn btl_bw(&self) -> u64 {
        self.bw.get()
    }
    pub fn rt_prop(&self) -> Option<Dur> {
        self.min_rtt
    }
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }
    pub fn cycle_index(&self) -> usize {
        self.cycle_idx
    }
    pub fn full_pipe(&self) -> bool {
        self.full_bw_reached
    }
    pub fn rounds(&self) -> u64 {
        self.rounds
    }

    fn next_random(&mut self) -> u64 {
        splitmix64(&mut self.rng)
    }

    /// Pacing gain of ProbeBW phase `i`.
    fn cycle_gain(&self, i: usize) -> f64 {
        match i {
            0 => self.p.probe_gain,
            1 => 2.0 - self.p.probe_gain,
            _ => 1.0,
        }
    }

    fn quantum_segments(&self) -> u64 {
        send_quantum_segments(self.pacing_rate, self.mss)
    }

    /// `gain` BDPs at `bw`, in whole segments (bbr_bdp).
    fn bdp_segments(&self, bw: u64, gain: f64) -> u64 {
        match self.min_rtt {
            None => INIT_CWND,
            Some(rtt) => (bw as f64 * rtt.as_secs_f64() * gain / self.mss as f64).ceil() as u64,
        }
    }

    /// `gain` BDPs plus the quantization budget, bytes (bbr_inflight).
    fn inflight_target(&self, bw: u64, gain: f64) -> u64 {
        let mut segs = self.bdp_segments(bw, gain) + 3 * self.quantum_segments();
        segs += segs % 2;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            segs += 2;
        }
        segs * self.mss
    }

    /// The data in flight when the next segment departs (bbr_packets_in_net_at_edt):
    /// `in_flight`, plus the send quantum about to leave while probing (pacing gain above
    /// 1), less what the estimated bandwidth delivers until the pacing release.
    fn in_net_at_edt(&self, s: &AckSample, in_flight: u64) -> u64 {
        let wait = s.next_departure.saturating_since(s.now).as_nanos() as u128;
        let delivered = (self.bw.get() as u128 * wait / 1_000_000_000) as u64;
        let mut at_edt = in_flight;
        if self.pacing_gain > 1.0 {
            at_edt += self.quantum_segments() * self.mss;
        }
        at_edt.saturating_sub(delivered)
    }

    fn init_pacing_rate(&mut self, srtt: Option<Dur>) {
        let rtt = srtt.unwrap_or(Dur::from_millis(1)).max(Dur::from_nanos(1));
        self.has_seen_rtt = srtt.is_some();
        let bw = self.cwnd as f64 / rtt.as_secs_f64();
        self.pacing_rate = (bw * self.p.high_gain * (1.0 - self.p.pacing_margin)) as u64;
    }

    fn set_pacing_rate(&mut self) {
        let rate = (self.bw.get() as f64 * self.pacing_gain * (1.0 - self.p.pacing_margin)) as u64;
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    fn update_bw(&mut self, s: &AckSample) {
        self.round_start = false;
        let Some(rs) = s.rate else { return };
        let Some(bw) = rs.bytes_per_sec() else {
            return; // not a valid observation
        };
        if rs.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.delivered;
            self.rounds += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        let app_limited = rs.is_app_limited
            || self
                .probe_rtt_app_limited
                .is_some_and(|(a, b)| (a..=b).contains(&rs.prior_delivered));
        if !app_limited || bw >= self.bw.get() {
            self.bw.update(self.p.bw_window, self.rounds, bw);
        }
    }

    fn advance_cycle_phase(&mut self, now: Time) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = now;
    }

    fn update_cycle_phase(&mut self, s: &AckSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let full_length = self
            .min_rtt
            .is_some_and(|m| s.now.saturating_since(self.cycle_stamp) > m);
        let bw = self.bw.get();
        let in_flight = self.in_net_at_edt(s, s.prior_in_flight);
        let next = if self.pacing_gain > 1.0 {
            // tcp_bbr.c: "perhaps pacing_gain*BDP won't fit" when the probe met losses.
            let losses = s.rate.is_some_and(|r| r.losses > 0);
            full_length && (losses || in_flight >= self.inflight_target(bw, self.pacing_gain))
        } else if self.pacing_gain < 1.0 {
            full_length || in_flight <= self.inflight_target(bw, 1.0)
        } else {
            full_length
        };
        if next {
            self.advance_cycle_phase(s.now);
        }
    }

    fn reset_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        let r = (self.next_random() % (CYCLE_LEN as u64 - 1)) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase(now);
    }

    fn check_full_pipe(&mut self, s: &AckSample) {
        let app_limited = s.rate.is_some_and(|r| r.is_app_limited);
        if self.full_bw_reached || !self.round_start || app_limited {
            return;
        }
        let bw = self.bw.get();
        if bw as f64 >= self.full_bw as f64 * self.p.startup_growth {
            self.full_bw = bw;
            self.full_bw_count = 0;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_reached = self.full_bw_count >= self.p.startup_rounds;
    }

    fn check_drain(&mut self, s: &AckSample) {
        let bdp = self.inflight_target(self.bw.get(), 1.0);
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = bdp;
        }
        if self.mode == Mode::Drain && self.in_net_at_edt(s, s.in_flight) <= bdp {
            self.reset_probe_bw(s.now);
        }
    }

    fn update_min_rtt(&mut self, s: &AckSample) {
        let now = s.now;
        let expired = self.min_rtt.is_some() && now > self.min_rtt_stamp + self.p.min_rtt_window;
        let rtt = s.rate.and_then(|r| r.rtt).or(s.rtt);
        if let Some(r) = rtt {
            if self.min_rtt.is_none_or(|m| r < m) || expired {
                self.min_rtt = Some(r);
                self.min_rtt_stamp = now;
            }
        }
        if expired && self.mode != Mode::ProbeRtt {
            self.mode = Mode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
            self.probe_rtt_app_limited = Some((self.delivered, self.delivered));
        }
        if self.mode == Mode::ProbeRtt {
            if let Some((from, _)) = self.probe_rtt_app_limited {
                self.probe_rtt_app_limited = Some((from, self.delivered + s.in_flight));
            }
            if self.probe_rtt_done.is_none() && s.in_flight <= MIN_CWND * self.mss {
                self.probe_rtt_done = Some(now + self.p.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.delivered;
            } else if let Some(done) = self.probe_rtt_done {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now > done {
                    self.min_rtt_stamp = now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    if self.full_bw_reached {
                        self.reset_probe_bw(now);
                    } else {
                        self.mode = Mode::Startup;
                    }
                }
            }
        }
    }

    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (self.p.high_gain, self.p.high_gain),
            Mode::Drain => (1.0 / self.p.high_gain, self.p.high_gain),
            Mode::ProbeBw => (self.cycle_gain(self.cycle_idx), self.p.cwnd_gain),
            Mode::ProbeRtt => (1.0, 1.0),
        };
    }

    /// bbr_save_cwnd: loss recovery and ProbeRTT have cut cwnd for a while, keep the larger.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if self.mode == Mode::ProbeRtt || self.prev_in_recovery {
            self.prior_cwnd.max(self.cwnd)
        } else {
            self.cwnd
        };
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn cwnd(&self) -> u64 {
        match self.mode {
            Mode::ProbeRtt => self.cwnd.min(MIN_CWND * self.mss),
            _ => self.cwnd,
        }
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

    /// The model: bandwidth and RTprop filters, the state machine, the pacing rate.
    fn observe(&mut self, s: &AckSample) {
        self.acked = s.delivered.saturating_sub(self.delivered);
        self.delivered = s.delivered;
        if !self.has_seen_rtt && s.srtt.is_some() {
            self.init_pacing_rate(s.srtt);
        }
        self.update_bw(s);
        self.update_cycle_phase(s);
        self.check_full_pipe(s);
        self.check_drain(s);
        self.update_min_rtt(s);
        self.update_gains();
        self.set_pacing_rate();
    }

    fn owns_recovery_window(&self) -> bool {
        true
    }

    /// tcp_tso_autosize with bbr_min_tso_segs: the send quantum of the target's budget.
    fn send_quantum(&self) -> u64 {
        self.quantum_segments()
    }

    /// Every ACK (the window in recovery is BBR's): tcp_bbr.c bbr_set_cwnd with
    /// bbr_set_cwnd_to_recover_or_restore.
    fn on_ack(&mut self, s: &AckSample) {
        if self.acked == 0 {
            return;
        }
        if s.newly_lost > 0 {
            self.cwnd = self.cwnd.saturating_sub(s.newly_lost).max(self.mss);
        }
        if s.in_recovery && !self.prev_in_recovery {
            self.packet_conservation = true;
            self.next_round_delivered = self.delivered; // the round starts now
            self.cwnd = s.in_flight + self.acked;
        } else if !s.in_recovery && self.prev_in_recovery {
            self.cwnd = self.cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_in_recovery = s.in_recovery;
        if self.packet_conservation {
            self.cwnd = self.cwnd.max(s.in_flight + self.acked);
            return;
        }
        let target = self.inflight_target(self.bw.get(), self.cwnd_gain);
        let early = self.delivered < INIT_CWND * self.mss;
        let floor = MIN_CWND * self.mss;
        self.cwnd = grow_cwnd(
            self.cwnd,
            self.acked,
            target,
            self.full_bw_reached,
            early,
            floor,
        );
    }

    fn on_congestion(&mut self, ev: &CongestionEvent) -> Verdict {
        match ev.kind {
            CongestionKind::FastRetransmit => {
                self.save_cwnd();
                // Linux leaves ssthresh (bbr_ssthresh); tcplab's recovery strategies size
                // their own (unused: the window is BBR's) windows from it, so it is finite.
                self.ssthresh = self.cwnd();
                Verdict {
                    label: "model",
                    value: 1.0,
                }
            }
            CongestionKind::Timeout => {
                self.save_cwnd();
                self.cwnd = self.mss;
                self.full_bw = 0;
                self.round_start = true;
                Verdict {
                    label: "timeout",
                    value: 0.0,
                }
            }
            CongestionKind::Ecn => Verdict {
                label: "ignored",
                value: 1.0,
            },
        }
    }

    fn on_repeated_timeout(&mut self, _now: Time) {
        self.cwnd = self.mss;
    }

    /// Nothing: the first ACK after recovery restores the saved cwnd (`on_ack`). (A
    /// recovery the strategy restarts for a lost retransmission is one recovery for Linux.)
    fn on_recovery_exit(&mut self, _now: Time, _cwnd: u64) {}

    fn on_undo(&mut self, _now: Time, prior_cwnd: u64, prior_ssthresh: u64) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.cwnd = self.cwnd.max(prior_cwnd).max(self.prior_cwnd);
        self.ssthresh = self.ssthresh.max(prior_ssthresh);
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
