//! Reno fast retransmit / fast recovery (RFC 5681 §3.2): retransmit after `dupthresh`
//! duplicate ACKs, inflate the window by one MSS per further duplicate ACK, leave recovery
//! on the first ACK that advances (deflating to ssthresh). Several losses in one window
//! therefore mean several reductions or a timeout.

use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::Scoreboard;
use crate::{ConfigError, ParamReader, Params, Seq, Time};

#[derive(Clone, Debug)]
pub struct RenoRecovery {
    mss: u64,
    dupthresh: u32,
    dupacks: u32,
    in_recovery: bool,
    window: u64,
}

impl RenoRecovery {
    pub fn new(ctx: &RecoveryContext) -> Self {
        RenoRecovery {
            mss: ctx.mss as u64,
            dupthresh: ctx.dupthresh,
            dupacks: 0,
            in_recovery: false,
            window: 0,
        }
    }
    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        ParamReader::new("recovery reno", params).finish()?;
        Ok(Self::new(ctx))
    }
}

impl LossRecovery for RenoRecovery {
    fn name(&self) -> &'static str {
        "reno"
    }
    fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    fn on_ack(&mut self, ack: &AckInfo, _sb: &mut Scoreboard) -> RecoveryAction {
        if ack.acked_bytes > 0 {
            self.dupacks = 0;
            if self.in_recovery {
                self.in_recovery = false;
                return RecoveryAction::Exit { cwnd: None };
            }
        } else if ack.is_duplicate {
            self.dupacks += 1;
            if self.in_recovery {
                self.window += self.mss;
            } else if self.dupacks == self.dupthresh {
                return RecoveryAction::Enter;
            }
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, _cwnd: u64, ssthresh: u64, _snd_max: Seq, sb: &mut Scoreboard) {
        self.in_recovery = true;
        self.window = ssthresh.saturating_add(self.dupthresh as u64 * self.mss);
        sb.force_retransmit(sb.una());
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn on_timeout(&mut self, _now: Time, _snd_max: Seq) {
        self.in_recovery = false;
        self.dupacks = 0;
    }
}
