//! BBRv3's congestion signals (draft-ietf-ccwg-bbr-04 §"Updating the Model Upon Packet
//! Loss"): the per-round delivery signals, losses and CE marks noted per round, the
//! short-term bounds `bw_lo` and `inflight_lo` they cut when not probing, the loss-rate
//! test of a sample, and Startup's exit on excessive loss.

use super::{Bbr3, UNBOUNDED};
use crate::cc::AckSample;
use crate::rate::RateSample;

impl Bbr3 {
    /// The losses of a sample exceed `loss_thresh` of its flight (draft `IsInflightTooHigh`).
    pub(super) fn inflight_too_high(&self, rs: &RateSample) -> bool {
        rs.lost as f64 > rs.tx_in_flight as f64 * self.p.loss_thresh
    }

    /// A loss or a CE mark in this round (draft `BBRNoteLoss`).
    pub(super) fn note_congestion(&mut self) {
        if !self.loss_in_round {
            self.loss_round_delivered = self.delivered;
        }
        self.loss_in_round = true;
    }

    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample, rate: u64) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    pub(super) fn advance_latest_delivery_signals(&mut self, rs: &RateSample, rate: u64) {
        if self.loss_round_start {
            self.bw_latest = rate;
            self.inflight_latest = rs.delivered;
        }
    }

    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_lo = UNBOUNDED;
        self.inflight_lo = UNBOUNDED;
    }

    /// Once per round: the short-term bounds follow the latest delivery after a congested
    /// round when not probing (draft `BBRAdaptLowerBoundsFromCongestion`).
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample, rate: u64) {
        if rate > 0 && (rate >= self.max_bw.get() || !self.app_limited(rs)) {
            self.max_bw.update(1, self.cycle_count, rate);
        }
        if !self.loss_round_start {
            return;
        }
        if !self.state.is_probing() && self.loss_in_round {
            if self.bw_lo == UNBOUNDED {
                self.bw_lo = self.max_bw.get();
            }
            if self.inflight_lo == UNBOUNDED {
                self.inflight_lo = self.cwnd;
            }
            let beta = self.p.beta;
            self.bw_lo = self.bw_latest.max((beta * self.bw_lo as f64) as u64);
            self.inflight_lo = self
                .inflight_latest
                .max((beta * self.inflight_lo as f64) as u64);
        }
        self.loss_in_round = false;
    }

    /// Startup's exit on loss (draft `BBRCheckStartupHighLoss`, counted as Linux does: ACKs
    /// that revealed losses stand for the lost ranges).
    pub(super) fn check_startup_high_loss(&mut self, s: &AckSample, rs: &RateSample) {
        if self.full_bw_reached {
            return;
        }
        if rs.losses > 0 {
            self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
        }
        if self.loss_round_start
            && s.in_recovery
            && self.loss_events_in_round >= self.p.startup_full_loss_count
            && self.inflight_too_high(rs)
        {
            self.full_bw_reached = true;
            self.inflight_hi = self.bdp_multiple(self.bw, 1.0).max(self.inflight_latest);
        }
        if self.loss_round_start {
            self.loss_events_in_round = 0;
        }
    }
}
