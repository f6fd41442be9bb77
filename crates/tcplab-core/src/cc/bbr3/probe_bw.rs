//! BBRv3's ProbeBW cycle (draft-ietf-ccwg-bbr-04 §"ProbeBW Algorithm Details") and the
//! long-term bound `inflight_hi` it adapts.
//!
//! DOWN (pacing 0.9) lasts until the data in flight is at most one BDP at `max_bw` and
//! below `inflight_hi` less its 15 % headroom, then CRUISE (1.0); from either, REFILL
//! starts when the probe wait has passed: a random 2-3 s of wall clock, or
//! min(BDP in segments, 63) rounds (less a random 0 or 1) for coexistence with Reno and
//! CUBIC. REFILL (1.0) forgets the short-term bounds and lasts one round; UP (1.25, cwnd
//! gain 2.25) lasts until the delivery rate stopped growing by 25 % for 3 rounds, or until a
//! sample shows more than 2 % of its flight lost. The `max_bw` filter's clock, a count of
//! cycles, advances one round after UP ends.

use super::{AckPhase, Bbr3, State, UNBOUNDED};
use crate::cc::AckSample;
use crate::rate::RateSample;
use crate::{Dur, Time};

/// The Reno-coexistence bound on the rounds between probes (draft T_reno_bound 62-63).
const MAX_PROBE_ROUNDS: u64 = 63;

impl Bbr3 {
    pub(super) fn enter_probe_bw(&mut self, now: Time) {
        self.cwnd_gain = self.p.cwnd_gain;
        self.start_probe_bw_down(now);
    }

    pub(super) fn start_probe_bw_down(&mut self, now: Time) {
        self.reset_congestion_signals();
        self.probe_up_cnt = None;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.state = State::ProbeBwDown;
        self.set_gains(self.p.probe_down_pacing_gain, self.p.cwnd_gain);
    }

    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.state = State::ProbeBwCruise;
        self.set_gains(1.0, self.p.cwnd_gain);
    }

    fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.state = State::ProbeBwRefill;
        self.set_gains(1.0, self.p.cwnd_gain);
    }

    fn start_probe_bw_up(&mut self, rate: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = rate;
        self.state = State::ProbeBwUp;
        self.set_gains(self.p.probe_up_pacing_gain, self.p.probe_up_cwnd_gain);
        self.raise_inflight_hi_slope();
    }

    /// Randomized wait before the next probe: 0 or 1 rounds already counted, 2-3 s of wall
    /// clock (draft `BBRPickProbeWait`).
    fn pick_probe_wait(&mut self) {
        self.rounds_since_bw_probe = (self.random_unit() * 2.0) as u64;
        self.bw_probe_wait = Dur::from_secs_f64(2.0 + self.random_unit());
    }

    /// Is it time to leave DOWN or CRUISE for REFILL? (draft `BBRIsTimeToProbeBW`)
    fn is_time_to_probe_bw(&mut self, now: Time) -> bool {
        let reno_rounds = (self.target_inflight() / self.mss).min(MAX_PROBE_ROUNDS);
        if now > self.cycle_stamp + self.bw_probe_wait || self.rounds_since_bw_probe >= reno_rounds
        {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// DOWN's exit: headroom left under `inflight_hi` and at most one BDP in flight.
    fn is_time_to_cruise(&self, in_flight: u64) -> bool {
        in_flight <= self.inflight_with_headroom()
            && in_flight <= self.inflight(self.max_bw.get(), 1.0)
    }

    /// UP's exit on a bandwidth plateau, unless `inflight_hi` limited the probe (draft
    /// `BBRIsTimeToGoDown`).
    fn is_time_to_go_down(&mut self, cwnd_limited: bool, rate: u64) -> bool {
        if cwnd_limited && self.cwnd >= self.inflight_hi {
            self.reset_full_bw();
            self.full_bw = rate;
            false
        } else {
            self.full_bw_now
        }
    }

    /// `inflight_hi` less the headroom left for other flows (draft
    /// `BBRInflightWithHeadroom`).
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_hi == UNBOUNDED {
            return UNBOUNDED;
        }
        let headroom = ((self.p.headroom * self.inflight_hi as f64) as u64).max(self.mss);
        self.inflight_hi
            .saturating_sub(headroom)
            .max(super::MIN_PIPE_CWND * self.mss)
    }

    /// UP raises `inflight_hi` by 1, 2, 4, ... segments per round (draft
    /// `BBRRaiseInflightLongtermSlope`).
    fn raise_inflight_hi_slope(&mut self) {
        let growth_this_round = self.mss << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_cnt = Some((self.cwnd / growth_this_round).max(1));
    }

    /// One segment of `inflight_hi` per `probe_up_cnt` segments delivered while cwnd-limited
    /// at `inflight_hi` (draft `BBRProbeInflightLongtermUpward`).
    fn probe_inflight_hi_upward(&mut self, cwnd_limited: bool) {
        if !cwnd_limited || self.cwnd < self.inflight_hi {
            return;
        }
        if let Some(cnt) = self.probe_up_cnt {
            self.bw_probe_up_acks += self.newly_acked;
            let per = cnt * self.mss;
            if self.bw_probe_up_acks >= per {
                let delta = self.bw_probe_up_acks / per;
                self.bw_probe_up_acks -= delta * per;
                self.inflight_hi += delta * self.mss;
            }
        }
        if self.round_start {
            self.raise_inflight_hi_slope();
        }
    }

    /// A probe put too much in flight: `inflight_hi` falls to the flight of the sample, at
    /// least `beta` times the target, and UP ends (draft `BBRHandleInflightTooHigh`).
    pub(super) fn handle_inflight_too_high(
        &mut self,
        now: Time,
        tx_in_flight: u64,
        app_limited: bool,
    ) {
        self.bw_probe_samples = false;
        if !app_limited {
            let floor = (self.target_inflight() as f64 * self.p.beta) as u64;
            self.inflight_hi = tx_in_flight.max(floor);
        }
        if self.state == State::ProbeBwUp {
            self.start_probe_bw_down(now);
        }
    }

    /// The `max_bw` filter's clock and `inflight_hi` (draft `BBRAdaptLongTermModel`; the
    /// reaction to a flight too high is taken here, per ACK, as Linux v3 does).
    fn adapt_long_term_model(&mut self, s: &AckSample, rs: &RateSample, cwnd_limited: bool) {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // The probe's samples are in: a new cycle for the max_bw filter. As Linux v3
            // (the draft omits it), the probe's samples end here and the phase is reset,
            // else the filter would advance every round.
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !self.app_limited(rs) {
                self.cycle_count += 1;
            }
        }
        if self.inflight_too_high(rs) {
            if self.bw_probe_samples {
                let app_limited = self.app_limited(rs);
                self.handle_inflight_too_high(s.now, rs.tx_in_flight, app_limited);
            }
            return;
        }
        if self.inflight_hi == UNBOUNDED {
            return;
        }
        if rs.tx_in_flight > self.inflight_hi {
            self.inflight_hi = rs.tx_in_flight;
        }
        if self.state == State::ProbeBwUp {
            self.probe_inflight_hi_upward(cwnd_limited);
        }
    }

    /// The ProbeBW state machine, on every ACK with a rate sample (draft
    /// `BBRUpdateProbeBWCyclePhase`).
    pub(super) fn update_probe_bw_cycle_phase(
        &mut self,
        s: &AckSample,
        rs: &RateSample,
        rate: u64,
    ) {
        if !self.full_bw_reached {
            return;
        }
        // The sender does not say whether cwnd limited it: the flight before this ACK
        // filled cwnd to within a segment.
        let cwnd_limited = s.in_flight + self.newly_acked + self.mss >= self.cwnd;
        self.adapt_long_term_model(s, rs, cwnd_limited);
        // DOWN and CRUISE check the probe wait first (it may start REFILL).
        let state = self.state;
        match state {
            State::ProbeBwDown
                if !self.is_time_to_probe_bw(s.now) && self.is_time_to_cruise(s.in_flight) =>
            {
                self.start_probe_bw_cruise()
            }
            State::ProbeBwCruise => {
                self.is_time_to_probe_bw(s.now);
            }
            // One round of REFILL, then UP.
            State::ProbeBwRefill if self.round_start => {
                self.bw_probe_samples = true;
                self.start_probe_bw_up(rate);
            }
            State::ProbeBwUp if self.is_time_to_go_down(cwnd_limited, rate) => {
                self.start_probe_bw_down(s.now)
            }
            _ => {}
        }
    }
}
