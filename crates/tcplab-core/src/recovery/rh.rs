//! Rate-Halving (Mathis & Mahdavi, "TCP Rate-Halving with Bounding Parameters", 1996, as the
//! ETH study ran it; PSC's later ns-2 `Agent/TCP/SackRH` for the details the report omits):
//!
//! - Data in flight is FACK's awnd during recovery, FlightSize outside it (see `fack`).
//! - Recovery begins on the first ACK that newly SACKs data, i.e. the first duplicate ACK
//!   that reveals a hole (PSC: a "new hole"), not on the third.
//! - Retransmission: a hole becomes eligible once `dupthresh` ACKs have newly SACKed data
//!   above it ([`super::detect::SackCounter`]); eligible holes go first, lowest first, then
//!   new data.
//! - Window: over the adjustment interval (from entry until a segment sent after entry is
//!   SACKed, about one RTT) the sender may have sent CEIL(delivered * b) segments when
//!   `delivered` segments have left the network since entry (the entering ACK included), with
//!   b = ssthresh / cwnd at entry (1/2 for Reno): one transmission per two ACKs, starting
//!   with the first, so the window is halved after one RTT. Lost segments are not delivered,
//!   so each loss lowers the final window by b segments (PSC: cwnd -= 1/2 per segment snd.fack
//!   passes and 1/2 per new hole). After the interval the window stays fixed: one
//!   transmission per segment that leaves the network. Like any TCP window it is never below
//!   one segment, so an empty pipe can always be refilled.
//! - Exit (everything sent before entry acknowledged), bounding parameters
//!   ([`exit_bound`]): cwnd = min(RH window, ssthresh, awnd + 1 segment), at least one
//!   segment: never more than the reduction allows, and no burst when the exit ACK leaves
//!   little in flight (Mathis' "pipe + 1"). PSC also lowers ssthresh to that cwnd (not below
//!   prior/4); here ssthresh stays the controller's, so a window that ended below it grows
//!   back in slow start (as Linux's rate-halving does at the end of recovery). A restart
//!   (LRD) starts its new reduction from min(RH window, ssthresh).
//! - RH survives a single loss in a window of three: the first duplicate ACK already sends a
//!   new segment, whose ACK is the third SACK above the hole.
//! - `lrd` adds lost retransmission detection ([`super::lrd`]).

use super::detect::{awnd, fack, flight, require_sack, Episode, SackCounter};
use super::lost_rtx::LostRetransmissions;
use super::reduction::proportional_share;
use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::{ConfigError, ParamReader, Params, Seq, Time};

/// The bounding parameters at the end of recovery: the window the RH reduction reached,
/// but no more than ssthresh (the reduction the controller asked for, reached even when
/// fewer ACKs came back than segments left) and no more than one segment above the data in
/// flight `pipe` (no burst), and never below one segment.
pub fn exit_bound(window: u64, ssthresh: u64, pipe: u64, mss: u64) -> u64 {
    window.min(ssthresh).min(pipe + mss).max(mss)
}

#[derive(Clone, Debug)]
pub struct RateHalving {
    mss: u64,
    sacks: SackCounter,
    episode: Episode,
    /// LRD's detector, when this is `lrd`.
    lrd: Option<LostRetransmissions>,
    /// The adjustment interval lasts until a segment at or above `interval_end` is SACKed.
    adjusting: bool,
    interval_end: SegIdx,
    /// cwnd and ssthresh at entry; bytes delivered and sent since entry.
    prior: u64,
    ssthresh: u64,
    delivered: u64,
    sent: u64,
    window: u64,
    /// DeliveredData of the ACK that (re)starts recovery, for `enter`.
    entry_delivered: u64,
}

impl RateHalving {
    pub fn new(ctx: &RecoveryContext, lrd: bool) -> Self {
        RateHalving {
            mss: ctx.mss as u64,
            sacks: SackCounter::new(ctx.dupthresh),
            episode: Episode::default(),
            lrd: lrd.then(LostRetransmissions::default),
            adjusting: false,
            interval_end: 0,
            prior: 0,
            ssthresh: 0,
            delivered: 0,
            sent: 0,
            window: 0,
            entry_delivered: 0,
        }
    }

    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        ParamReader::new("recovery rh", params).finish()?;
        require_sack(ctx, "rh")?;
        Ok(Self::new(ctx, false))
    }

    /// The base of a restart's reduction: no more than ssthresh.
    fn bounded(&self) -> u64 {
        self.window.min(self.ssthresh)
    }

    fn update_window(&mut self, sb: &Scoreboard) {
        if !self.adjusting {
            return;
        }
        let share = proportional_share(self.delivered, self.ssthresh, self.prior, self.mss);
        self.window = (awnd(sb) + share.saturating_sub(self.sent)).max(self.mss);
        if fack(sb) > self.interval_end {
            self.adjusting = false;
        }
    }
}

impl LossRecovery for RateHalving {
    fn name(&self) -> &'static str {
        if self.lrd.is_some() {
            "lrd"
        } else {
            "rh"
        }
    }
    fn in_recovery(&self) -> bool {
        self.episode.active()
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        self.sacks.record(ack.delivery.highest_sacked);
        if self.in_recovery() {
            if self.episode.ends(ack.snd_una) {
                return RecoveryAction::Exit {
                    cwnd: Some(exit_bound(self.window, self.ssthresh, awnd(sb), self.mss)),
                };
            }
            self.sacks.mark_lost(sb);
            let relost = self.lrd.as_mut().map_or(0, |l| l.detect(sb));
            if relost > 0 && !self.adjusting {
                // A retransmission sent after the window was halved was lost as well: a new
                // congestion signal, answered by a new halving.
                self.entry_delivered = ack.delivered_bytes;
                return RecoveryAction::Restart {
                    cwnd: Some(self.bounded()),
                };
            }
            self.delivered += ack.delivered_bytes;
            self.update_window(sb);
            return RecoveryAction::None;
        }
        if sb.is_empty() || !self.episode.may_start(ack.snd_una) {
            return RecoveryAction::None;
        }
        if ack.delivery.highest_sacked.is_some() {
            self.entry_delivered = ack.delivered_bytes;
            return RecoveryAction::Enter;
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.episode.start(snd_max);
        self.prior = cwnd.max(self.mss);
        self.ssthresh = ssthresh;
        self.delivered = std::mem::take(&mut self.entry_delivered);
        self.sent = 0;
        self.adjusting = true;
        self.interval_end = sb.end();
        self.sacks.mark_lost(sb);
        self.update_window(sb);
    }
    fn uses_sack(&self) -> bool {
        true
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn in_flight(&self, sb: &Scoreboard) -> u64 {
        if self.in_recovery() {
            awnd(sb)
        } else {
            flight(sb)
        }
    }
    fn on_transmit(&mut self, _now: Time, idx: SegIdx, retransmission: bool, sb: &Scoreboard) {
        if self.in_recovery() {
            self.sent += sb.seg(idx).map_or(0, |s| s.len as u64);
        }
        if let (Some(l), true) = (self.lrd.as_mut(), retransmission) {
            l.watch(idx, sb);
        }
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.episode.timeout(snd_max);
        self.adjusting = false;
        if let Some(l) = self.lrd.as_mut() {
            l.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::exit_bound;

    const MSS: u64 = 1000;

    #[test]
    fn exit_keeps_the_rh_window_when_no_bound_applies() {
        assert_eq!(exit_bound(5 * MSS, 8 * MSS, 7 * MSS, MSS), 5 * MSS);
    }

    #[test]
    fn exit_bounds_the_window_by_ssthresh() {
        // Fewer losses than ACKs expected left the window above the reduction's target.
        assert_eq!(exit_bound(9 * MSS, 6 * MSS, 20 * MSS, MSS), 6 * MSS);
    }

    #[test]
    fn exit_bounds_the_window_by_pipe_plus_one() {
        // The exit ACK left two segments in flight: at most one more may follow at once.
        assert_eq!(exit_bound(6 * MSS, 6 * MSS, 2 * MSS, MSS), 3 * MSS);
    }

    #[test]
    fn exit_window_is_at_least_one_segment() {
        assert_eq!(exit_bound(0, 0, 0, MSS), MSS);
        assert_eq!(exit_bound(4 * MSS, 4 * MSS, 0, MSS), MSS);
    }
}
