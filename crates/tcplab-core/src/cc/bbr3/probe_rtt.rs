//! BBRv3's `min_rtt` estimate and ProbeRTT state (draft-ietf-ccwg-bbr-04 §"ProbeRTT"):
//! the minimum RTT of the last 5 s schedules ProbeRTT, which holds cwnd at half a BDP for
//! 200 ms and a round; `min_rtt` is the minimum over 10 s.

use super::{AckPhase, Bbr3, State, MIN_PIPE_CWND};
use crate::cc::AckSample;
use crate::rate::RateSample;
use crate::Time;

impl Bbr3 {
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        let c = self.bdp_multiple(self.bw, self.p.probe_rtt_cwnd_gain);
        c.max(MIN_PIPE_CWND * self.mss)
    }

    /// ProbeRTT's schedule and `min_rtt` (draft `BBRUpdateMinRTT`).
    pub(super) fn update_min_rtt(&mut self, now: Time, rs: &RateSample) {
        self.probe_rtt_expired = now > self.probe_rtt_min_stamp + self.p.probe_rtt_interval;
        if let Some(rtt) = rs.rtt {
            if self.probe_rtt_min_delay.is_none_or(|m| rtt < m) || self.probe_rtt_expired {
                self.probe_rtt_min_delay = Some(rtt);
                self.probe_rtt_min_stamp = now;
            }
        }
        let expired = now > self.min_rtt_stamp + self.p.min_rtt_window;
        if let Some(d) = self.probe_rtt_min_delay {
            if self.min_rtt.is_none_or(|m| d < m) || expired {
                self.min_rtt = Some(d);
                self.min_rtt_stamp = self.probe_rtt_min_stamp;
            }
        }
    }

    pub(super) fn save_cwnd(&mut self, in_recovery: bool) {
        self.prior_cwnd = if !in_recovery && self.state != State::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    pub(super) fn check_probe_rtt(&mut self, s: &AckSample) {
        if self.state != State::ProbeRtt && self.probe_rtt_expired {
            self.save_cwnd(s.in_recovery);
            self.state = State::ProbeRtt;
            self.set_gains(1.0, self.p.probe_rtt_cwnd_gain);
            self.probe_rtt_done = None;
            self.probe_rtt_app_limited = Some((self.delivered, self.delivered));
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state != State::ProbeRtt {
            return;
        }
        if let Some((from, _)) = self.probe_rtt_app_limited {
            self.probe_rtt_app_limited = Some((from, (self.delivered + s.in_flight).max(from + 1)));
        }
        match self.probe_rtt_done {
            None if s.in_flight <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done = Some(s.now + self.p.probe_rtt_time);
                self.probe_rtt_round_done = false;
                self.start_round();
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && s.now > done {
                    self.probe_rtt_min_stamp = s.now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    self.exit_probe_rtt(s.now);
                }
            }
        }
    }

    pub(super) fn exit_probe_rtt(&mut self, now: Time) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(now);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }
}
