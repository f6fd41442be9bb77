//! SACK-based loss recovery (RFC 6675, "conservative"): a segment is lost once `dupthresh`
//! segments above it are SACKed (IsLost); recovery starts on `dupthresh` duplicate ACKs
//! carrying new SACK information or when the first unacknowledged segment IsLost; during
//! recovery cwnd = ssthresh and the sender transmits while pipe < cwnd, lost segments first
//! (NextSeg rule 1), then new data (rule 2). Rules 3 and 4 (retransmitting un-SACKed data
//! not yet deemed lost when no new data can be sent, and the rescue retransmission) are not
//! implemented: with bulk transfers there is always new data. The detection is shared with
//! `prr` ([`super::detect::Rfc6675`]).

use super::detect::{require_sack, Rfc6675};
use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::Scoreboard;
use crate::{ConfigError, ParamReader, Params, Seq, Time};

#[derive(Clone, Debug)]
pub struct SackRecovery {
    det: Rfc6675,
    window: u64,
}

impl SackRecovery {
    pub fn new(ctx: &RecoveryContext) -> Self {
        SackRecovery {
            det: Rfc6675::new(ctx.dupthresh),
            window: 0,
        }
    }
    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        ParamReader::new("recovery sack", params).finish()?;
        require_sack(ctx, "sack")?;
        Ok(Self::new(ctx))
    }
}

impl LossRecovery for SackRecovery {
    fn name(&self) -> &'static str {
        "sack"
    }
    fn in_recovery(&self) -> bool {
        self.det.episode.active()
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        if self.in_recovery() {
            if self.det.recovery_ends(ack) {
                return RecoveryAction::Exit { cwnd: None };
            }
            self.det.mark_lost(sb);
            return RecoveryAction::None;
        }
        if self.det.should_enter(ack, sb) {
            return RecoveryAction::Enter;
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, _cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.window = ssthresh;
        self.det.enter(snd_max, sb);
    }
    fn uses_sack(&self) -> bool {
        true
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.det.on_timeout(snd_max);
    }
}
