//! NewReno (RFC 6582): Reno's fast recovery, but a partial ACK (one that does not cover
//! everything sent before recovery began) retransmits the next hole at once and keeps the
//! sender in recovery, so several losses in one window cost one reduction and one RTT each.

use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::Scoreboard;
use crate::{ConfigError, ParamReader, Params, Seq, Time};

#[derive(Clone, Debug)]
pub struct NewReno {
    mss: u64,
    dupthresh: u32,
    dupacks: u32,
    in_recovery: bool,
    window: u64,
    /// snd.max when recovery (or the last timeout) began; a new recovery may start only
    /// once the cumulative ACK reaches it (RFC 6582 step 2).
    recover: Option<Seq>,
}

impl NewReno {
    pub fn new(ctx: &RecoveryContext) -> Self {
        NewReno {
            mss: ctx.mss as u64,
            dupthresh: ctx.dupthresh,
            dupacks: 0,
            in_recovery: false,
            window: 0,
            recover: None,
        }
    }
    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        ParamReader::new("recovery newreno", params).finish()?;
        Ok(Self::new(ctx))
    }
}

impl LossRecovery for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        if self.in_recovery {
            if ack.acked_bytes > 0 {
                if self.recover.is_some_and(|r| ack.snd_una >= r) {
                    self.in_recovery = false;
                    self.dupacks = 0;
                    return RecoveryAction::Exit { cwnd: None };
                }
                // Partial ACK: retransmit the next hole, deflate by what was acked and
                // add back one MSS if at least one MSS was acked.
                sb.force_retransmit(sb.una());
                self.window = self.window.saturating_sub(ack.acked_bytes);
                if ack.acked_bytes >= self.mss {
                    self.window += self.mss;
                }
                self.window = self.window.max(self.mss);
            } else if ack.is_duplicate {
                self.window += self.mss;
            }
            return RecoveryAction::None;
        }
        if ack.acked_bytes > 0 {
            self.dupacks = 0;
        } else if ack.is_duplicate {
            self.dupacks += 1;
            let allowed = self.recover.is_none_or(|r| ack.snd_una >= r);
            if self.dupacks == self.dupthresh && allowed {
                return RecoveryAction::Enter;
            }
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, _cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.in_recovery = true;
        self.recover = Some(snd_max);
        self.window = ssthresh + self.dupthresh as u64 * self.mss;
        sb.force_retransmit(sb.una());
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(snd_max);
    }
}
