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
//! cwnd = pipe + sndcnt;  prr_out += every byte (re)transmitted
//! ```
//!
//! Choices where RFC 6937 leaves room (the same as Linux's tcp_cwnd_reduction): CEIL rounds up
//! to whole segments, as in the RFC's examples, so the first ACK of a halving already sends;
//! the ACK that triggers recovery is the first ACK of recovery (its DeliveredData counts);
//! the fast retransmission is sent even when sndcnt is zero. Recovery ends when the RFC 6675
//! recovery point is acknowledged, with cwnd = ssthresh.

use super::detect::{require_sack, Rfc6675};
use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::{ConfigError, ParamReader, Params, Seq, Time};

/// RFC 6937's two reduction bounds, used when pipe falls to ssthresh or below.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// Slow-start reduction bound: may send one MSS more than delivered per ACK.
    Ssrb,
    /// Conservative reduction bound: never more than was delivered.
    Crb,
}

impl PrrBound {
    pub fn parse(r: &mut ParamReader) -> Result<Self, ConfigError> {
        Ok(match r.choice("bound", "ssrb", &["ssrb", "crb"])? {
            "ssrb" => PrrBound::Ssrb,
            _ => PrrBound::Crb,
        })
    }
}

/// `CEIL(delivered * ssthresh / recover_fs)` rounded up to whole segments of `mss` bytes: what
/// may have been sent once `delivered` bytes left the network, when a window of `recover_fs`
/// is to shrink to `ssthresh` in proportion (PRR; Rate-Halving with ssthresh = recover_fs/2).
pub(crate) fn proportional_share(delivered: u64, ssthresh: u64, recover_fs: u64, mss: u64) -> u64 {
    let num = delivered as u128 * ssthresh as u128;
    let den = recover_fs.max(1) as u128 * mss.max(1) as u128;
    (num.div_ceil(den) * mss as u128) as u64
}

/// The PRR state of one recovery episode; its window is `pipe + sndcnt` of the latest ACK.
#[derive(Clone, Debug)]
pub(crate) struct PrrWindow {
    bound: PrrBound,
    mss: u64,
    ssthresh: u64,
    recover_fs: u64,
    delivered: u64,
    out: u64,
    window: u64,
}

impl PrrWindow {
    pub fn new(bound: PrrBound, mss: u64) -> Self {
        PrrWindow {
            bound,
            mss,
            ssthresh: 0,
            recover_fs: 0,
            delivered: 0,
            out: 0,
            window: 0,
        }
    }
    /// Recovery begins.
    pub fn start(&mut self, ssthresh: u64, recover_fs: u64) {
        self.ssthresh = ssthresh;
        self.recover_fs = recover_fs.max(1);
        self.delivered = 0;
        self.out = 0;
    }
    /// One ACK in recovery: `delivered` bytes newly delivered, `pipe` after loss marking.
    pub fn on_ack(&mut self, delivered: u64, pipe: u64) {
        self.delivered += delivered;
        let sndcnt = if pipe > self.ssthresh {
            let share =
                proportional_share(self.delivered, self.ssthresh, self.recover_fs, self.mss);
            share as i128 - self.out as i128
        } else {
            let owed = self.delivered as i128 - self.out as i128;
            let limit = match self.bound {
                PrrBound::Crb => owed,
                PrrBound::Ssrb => owed.max(delivered as i128) + self.mss as i128,
            };
            (self.ssthresh as i128 - pipe as i128).min(limit)
        };
        self.window = (pipe as i128 + sndcnt).max(0) as u64;
    }
    pub fn on_transmit(&mut self, len: u64) {
        self.out += len;
    }
    pub fn window(&self) -> u64 {
        self.window
    }
}

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
            self.det.mark_lost(sb);
            self.prr.on_ack(ack.delivered_bytes, sb.pipe());
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
        self.prr.on_ack(delivered, sb.pipe());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_share_rounds_up_to_whole_segments() {
        // RFC 6937's example: RecoverFS 20 segments, ssthresh 10, one segment per ACK.
        let s = |d: u64| proportional_share(d * 100, 1000, 2000, 100) / 100;
        assert_eq!([s(0), s(1), s(2), s(3), s(4)], [0, 1, 1, 2, 2]);
    }

    #[test]
    fn prr_proportional_then_bounded() {
        let mss = 100;
        let mut w = PrrWindow::new(PrrBound::Ssrb, mss);
        w.start(1000, 2000);
        w.on_ack(100, 1900);
        assert_eq!(w.window(), 1900 + 100, "ceil(0.5) segment");
        w.on_transmit(100);
        w.on_ack(100, 1900);
        assert_eq!(w.window(), 1900, "ceil(1) - 1 = 0");
        // Heavy loss: pipe far below ssthresh. SSRB catches up by what is owed (400 > this
        // ACK's 300) plus one MSS.
        w.on_ack(300, 400);
        assert_eq!(w.window(), 400 + 400 + 100);
        for (bound, extra) in [(PrrBound::Ssrb, 100), (PrrBound::Crb, 0)] {
            let mut c = PrrWindow::new(bound, mss);
            c.start(1000, 2000);
            c.on_ack(100, 400);
            assert_eq!(c.window(), 400 + 100 + extra, "{bound:?}");
            c.on_ack(900, 400);
            assert_eq!(c.window(), 1000, "{bound:?}: up to ssthresh only");
        }
    }
}
