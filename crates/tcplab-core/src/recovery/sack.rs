//! SACK-based loss recovery (RFC 6675, "conservative"): a segment is lost once `dupthresh`
//! segments above it are SACKed (IsLost); recovery starts on `dupthresh` duplicate ACKs
//! carrying new SACK information or when the first unacknowledged segment IsLost; during
//! recovery cwnd = ssthresh and the sender transmits while pipe < cwnd, lost segments first
//! (NextSeg rule 1), then new data (rule 2). Rules 3 and 4 (retransmitting un-SACKed data
//! not yet deemed lost when no new data can be sent, and the rescue retransmission) are not
//! implemented: with bulk transfers there is always new data.

use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::Scoreboard;
use crate::{ConfigError, ParamReader, Params, Seq, Time};

#[derive(Clone, Debug)]
pub struct SackRecovery {
    dupthresh: u32,
    dupacks: u32,
    in_recovery: bool,
    window: u64,
    /// RFC 6675 RecoveryPoint: HighData when recovery (or the last timeout) began.
    recovery_point: Option<Seq>,
}

impl SackRecovery {
    pub fn new(ctx: &RecoveryContext) -> Self {
        SackRecovery {
            dupthresh: ctx.dupthresh,
            dupacks: 0,
            in_recovery: false,
            window: 0,
            recovery_point: None,
        }
    }
    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        ParamReader::new("recovery sack", params).finish()?;
        if !ctx.sack {
            return Err(ConfigError::new(
                "recovery = \"sack\" needs SACK blocks from the receiver: set tcp.sack_blocks >= 1",
            ));
        }
        Ok(Self::new(ctx))
    }

    /// RFC 6675 IsLost for every segment: those below the dupthresh-th highest SACKed one.
    fn mark_lost(&self, sb: &mut Scoreboard) {
        if let Some(bound) = sb.nth_highest_sacked(self.dupthresh as u64) {
            sb.mark_lost_below(bound);
        }
    }
}

impl LossRecovery for SackRecovery {
    fn name(&self) -> &'static str {
        "sack"
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        if self.in_recovery {
            if self.recovery_point.is_some_and(|r| ack.snd_una >= r) {
                self.in_recovery = false;
                self.dupacks = 0;
                return RecoveryAction::Exit { cwnd: None };
            }
            self.mark_lost(sb);
            return RecoveryAction::None;
        }
        if ack.acked_bytes > 0 {
            self.dupacks = 0;
        }
        // RFC 6675 §2: a duplicate ACK is one that carries new SACK information.
        if ack.is_duplicate && ack.sacked_bytes > 0 {
            self.dupacks += 1;
        }
        if sb.is_empty() || self.recovery_point.is_some_and(|r| ack.snd_una < r) {
            return RecoveryAction::None;
        }
        let first_lost = sb
            .nth_highest_sacked(self.dupthresh as u64)
            .is_some_and(|b| b > sb.una());
        if self.dupacks >= self.dupthresh || first_lost {
            return RecoveryAction::Enter;
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, _cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.in_recovery = true;
        self.recovery_point = Some(snd_max);
        self.window = ssthresh;
        self.mark_lost(sb);
        sb.force_retransmit(sb.una());
    }
    fn uses_sack(&self) -> bool {
        true
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recovery_point = Some(snd_max);
    }
}
