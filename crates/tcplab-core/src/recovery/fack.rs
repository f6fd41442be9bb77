//! Forward Acknowledgment (Mathis & Mahdavi, SIGCOMM '96), as the ETH study ran it:
//!
//! - snd.fack is one past the highest SACKed segment. During recovery the data in flight is
//!   awnd = snd.nxt - snd.fack + retran_data: everything below snd.fack that is not SACKed is
//!   presumed to have left the network, retransmissions in flight count. Outside recovery the
//!   sender counts FlightSize, so duplicate ACKs release no new data (as in ns-2's FACK and
//!   the ETH study, where FACK could not survive a loss in a window of three segments).
//! - Recovery begins on `dupthresh` duplicate ACKs or when snd.fack - snd.una > dupthresh
//!   segments (the extra trigger: one ACK that SACKs four segments above a hole suffices).
//! - On entry the window is the controller's ssthresh (halved for Reno) and the first
//!   unacknowledged segment is retransmitted at once. Since awnd is still about the old
//!   window, nothing else is sent for about half an RTT.
//! - Loss marking (`lost`): `"fack"` (default) declares every un-SACKed segment below
//!   snd.fack lost at once, as Mathis & Mahdavi, ns-2's `Agent/TCP/Fack` and the ETH report
//!   ("FACK retransmits not yet selectively acknowledged data immediately"); `"dupthresh"`
//!   only those more than `dupthresh` segments below snd.fack (Linux's FACK mode,
//!   tcp_update_scoreboard), which tolerates reordering.
//! - Rampdown (`rampdown`, off by default as in ns-2 and the ETH study, whose FACK "halves
//!   the congestion window on entry"): the window starts at ssthresh + (1 - b) awnd and the
//!   excess drains by (1 - b) per segment snd.fack advances, b = ssthresh / cwnd at entry
//!   (ns-2's wintrim with b = 1/2): one transmission per two ACKs until it reaches ssthresh.
//! - Recovery ends when everything sent before it is acknowledged; cwnd = ssthresh.
//!   A lost retransmission is not detected (ETH: only LRD avoids that timeout).

use super::detect::{
    awnd, entry_retransmission, fack, fack_distance, flight, require_sack, Episode,
};
use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::{ConfigError, ParamReader, Params, Seq, Time};

/// Which un-SACKed segments below snd.fack are lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FackLoss {
    /// All of them (Mathis & Mahdavi, ns-2, ETH).
    BelowFack,
    /// Those more than dupthresh segments below snd.fack (Linux).
    Dupthresh,
}

#[derive(Clone, Debug)]
pub struct Fack {
    mss: u64,
    dupthresh: u32,
    loss: FackLoss,
    rampdown: bool,
    dupacks: u32,
    episode: Episode,
    ssthresh: u64,
    /// Rampdown: the excess over ssthresh at entry, the awnd it drains over, and snd.fack
    /// at entry.
    trim0: u64,
    drain: u64,
    fack0: SegIdx,
    trim: u64,
}

impl Fack {
    pub fn new(ctx: &RecoveryContext, loss: FackLoss, rampdown: bool) -> Self {
        Fack {
            mss: ctx.mss as u64,
            dupthresh: ctx.dupthresh,
            loss,
            rampdown,
            dupacks: 0,
            episode: Episode::default(),
            ssthresh: 0,
            trim0: 0,
            drain: 1,
            fack0: 0,
            trim: 0,
        }
    }

    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("recovery fack", params);
        let loss = match r.choice("lost", "fack", &["fack", "dupthresh"])? {
            "fack" => FackLoss::BelowFack,
            _ => FackLoss::Dupthresh,
        };
        let rampdown = r.flag("rampdown", false)?;
        r.finish()?;
        require_sack(ctx, "fack")?;
        Ok(Self::new(ctx, loss, rampdown))
    }

    fn mark_lost(&self, sb: &mut Scoreboard) {
        let bound = match self.loss {
            FackLoss::BelowFack => fack(sb),
            FackLoss::Dupthresh => fack(sb).saturating_sub(self.dupthresh as u64),
        };
        sb.mark_lost_below(bound);
    }

    fn update_trim(&mut self, sb: &Scoreboard) {
        if !self.rampdown {
            return;
        }
        let advanced = (fack(sb) - self.fack0.min(fack(sb))) * self.mss;
        let left = self.drain.saturating_sub(advanced);
        self.trim = (self.trim0 as u128 * left as u128 / self.drain as u128) as u64;
    }
}

impl LossRecovery for Fack {
    fn name(&self) -> &'static str {
        "fack"
    }
    fn in_recovery(&self) -> bool {
        self.episode.active()
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        if self.in_recovery() {
            if self.episode.ends(ack.snd_una) {
                self.dupacks = 0;
                return RecoveryAction::Exit { cwnd: None };
            }
            self.mark_lost(sb);
            self.update_trim(sb);
            return RecoveryAction::None;
        }
        if ack.acked_bytes > 0 {
            self.dupacks = 0;
        } else if ack.is_duplicate {
            self.dupacks += 1;
        }
        if sb.is_empty() || !self.episode.may_start(ack.snd_una) {
            return RecoveryAction::None;
        }
        if self.dupacks >= self.dupthresh || fack_distance(sb) > self.dupthresh as u64 {
            return RecoveryAction::Enter;
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.episode.start(snd_max);
        self.ssthresh = ssthresh;
        // Rampdown: b = ssthresh / cwnd; the excess (1 - b) awnd drains over awnd.
        let a = awnd(sb).max(1);
        let cut = cwnd.saturating_sub(ssthresh);
        self.trim0 = (a as u128 * cut as u128 / cwnd.max(1) as u128) as u64;
        self.drain = a;
        self.fack0 = fack(sb);
        self.trim = if self.rampdown { self.trim0 } else { 0 };
        self.mark_lost(sb);
        entry_retransmission(sb);
    }
    fn uses_sack(&self) -> bool {
        true
    }
    fn window(&self) -> u64 {
        self.ssthresh.saturating_add(self.trim)
    }
    fn in_flight(&self, sb: &Scoreboard) -> u64 {
        if self.in_recovery() {
            awnd(sb)
        } else {
            flight(sb)
        }
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.dupacks = 0;
        self.episode.timeout(snd_max);
    }
}
