//! Proportional Rate Reduction (RFC 6937) on RFC 6675 loss detection (shared with `sack`
//! through [`super::detect::Rfc6675`]).
//!
//! At entry: RecoverFS = snd.nxt - snd.una, prr_delivered = prr_out = 0. On every ACK in
//! recovery, with DeliveredData the bytes it newly delivered and pipe per RFC 6675:
//!
//! ```text
//! prr_delivered += DeliveredData
//! if pipe > ssthresh:  sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
//! else (bound = "ssrb"): sndcnt = MIN(ssthresh - pipe,
//!                                  MAX(prr_delivered - prr_out, DeliveredData) + MSS)
//!      (bound = "crb"):  sndcnt = MIN(ssthresh - pipe, prr_delivered - prr_out)
//!      (bound = "safe_ack"): as "ssrb", the + MSS only when the ACK advanced snd.una
//!                        and marked no new loss (RFC 6937bis SafeACK; Linux)
//! cwnd = pipe + sndcnt;  prr_out += every byte (re)transmitted
//! ```
//!
//! Choices where RFC 6937 leaves room (the same as Linux's tcp_cwnd_reduction): CEIL rounds up
//! to whole segments, as in the RFC's examples, so the first ACK of a halving already sends;
//! the ACK that triggers recovery is the first ACK of recovery (its DeliveredData counts);
//! the fast retransmission is sent even when sndcnt is zero. Recovery ends when the RFC 6675
//! recovery point is acknowledged, with cwnd = ssthresh.

use super::detect::{require_sack, Rfc6675};
pub use super::reduction::PrrBound;
use super::reduction::PrrWindow;
use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::{ConfigError, ParamReader, Params, Seq, Time};

#[derive(Clone, Debug)]
pub struct Prr {
    det: Rfc6675,
    prr: PrrWindow,
    /// DeliveredData of the ACK that triggers recovery, for `enter`.
    entry_delivered: u64,
}

impl Prr {
    pub fn new(ctx: &RecoveryContext, bound: PrrBound) -> Self {
        Prr {
            det: Rfc6675::new(ctx.dupthresh),
            prr: PrrWindow::new(bound, ctx.mss as u64),
            entry_delivered: 0,
        }
    }
    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("recovery prr", params);
        let bound = PrrBound::parse(&mut r)?;
        r.finish()?;
        require_sack(ctx, "prr")?;
        Ok(Self::new(ctx, bound))
    }
}

impl LossRecovery for Prr {
    fn name(&self) -> &'static str {
        "prr"
    }
    fn in_recovery(&self) -> bool {
        self.det.episode.active()
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        if self.in_recovery() {
            if self.det.recovery_ends(ack) {
                return RecoveryAction::Exit { cwnd: None };
            }
            let lost_before = sb.lost_total();
            self.det.mark_lost(sb);
            let safe = ack.snd_una > ack.prev_una && sb.lost_total() == lost_before;
            self.prr.on_ack(ack.delivered_bytes, sb.pipe(), safe);
            return RecoveryAction::None;
        }
        if self.det.should_enter(ack, sb) {
            self.entry_delivered = ack.delivered_bytes;
            return RecoveryAction::Enter;
        }
        RecoveryAction::None
    }
    fn enter(&mut self, _now: Time, _cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.prr.start(ssthresh, sb.outstanding());
        self.det.enter(snd_max, sb);
        let delivered = std::mem::take(&mut self.entry_delivered);
        self.prr.on_ack(delivered, sb.pipe(), false); // the entering ACK marked losses
    }
    fn uses_sack(&self) -> bool {
        true
    }
    fn window(&self) -> u64 {
        self.prr.window()
    }
    fn on_transmit(&mut self, _now: Time, idx: SegIdx, _rtx: bool, sb: &Scoreboard) {
        if self.in_recovery() {
            self.prr
                .on_transmit(sb.seg(idx).map_or(0, |s| s.len as u64));
        }
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.det.on_timeout(snd_max);
    }
}
