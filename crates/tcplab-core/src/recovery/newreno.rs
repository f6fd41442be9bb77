//! NewReno (RFC 6582): Reno's fast recovery, but a partial ACK (one that does not cover
//! everything sent before recovery began) retransmits the next hole at once and keeps the
//! sender in recovery, so several losses in one window cost one reduction and one RTT each.
//!
//! The retransmission timer at partial ACKs (RFC 6582 §3.2 step 5, §4): `timer =
//! "impatient"` (default, as §4 recommends) restarts it at the first partial ACK of a
//! recovery only, so a recovery with many holes ends in a timeout after one RTO instead of
//! repairing one hole per RTT; `timer = "slow_but_steady"` restarts it at every partial ACK.

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
    /// Restart the timer at every partial ACK (Slow-but-Steady) or at the first (Impatient).
    slow_but_steady: bool,
    /// Partial ACKs in the current recovery.
    partial_acks: u32,
    /// The last ACK was a partial ACK after the first (Impatient: no timer restart).
    hold_timer: bool,
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
            slow_but_steady: false,
            partial_acks: 0,
            hold_timer: false,
        }
    }
    /// Parameter `timer`: "impatient" (default) or "slow_but_steady".
    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("recovery newreno", params);
        let timer = r.choice("timer", "impatient", &["impatient", "slow_but_steady"])?;
        r.finish()?;
        let mut n = Self::new(ctx);
        n.slow_but_steady = timer == "slow_but_steady";
        Ok(n)
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
        self.hold_timer = false;
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
                self.partial_acks += 1;
                self.hold_timer = !self.slow_but_steady && self.partial_acks > 1;
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
        self.partial_acks = 0;
        self.window = ssthresh.saturating_add(self.dupthresh as u64 * self.mss);
        sb.force_retransmit(sb.una());
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn restarts_timer(&self) -> bool {
        !self.hold_timer
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(snd_max);
    }
}
