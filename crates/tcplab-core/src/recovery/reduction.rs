//! Window reduction during recovery, shared by strategies that detect losses differently:
//! the proportional share of RFC 6937 (used by PRR, by RACK's PRR window, and by
//! Rate-Halving with ssthresh/cwnd as the share) and PRR's per-ACK window ([`PrrWindow`]).
//! Loss detection lives in `detect` and `lost_rtx`; this module only sizes the window.

use crate::{ConfigError, ParamReader};

/// The reduction bounds used when pipe falls to ssthresh or below: RFC 6937's two, and
/// RFC 6937bis's (Linux's tcp_cwnd_reduction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrrBound {
    /// Slow-start reduction bound: may send one MSS more than delivered per ACK.
    Ssrb,
    /// Conservative reduction bound: never more than was delivered.
    Crb,
    /// The slow-start bound's extra MSS only on a SafeACK: an ACK that advanced snd.una and
    /// marked no new loss (RFC 6937bis; Linux: `FLAG_SND_UNA_ADVANCED && !newly_lost`).
    SafeAck,
}

impl PrrBound {
    pub fn parse(r: &mut ParamReader) -> Result<Self, ConfigError> {
        Ok(
            match r.choice("bound", "ssrb", &["ssrb", "crb", "safe_ack"])? {
                "ssrb" => PrrBound::Ssrb,
                "safe_ack" => PrrBound::SafeAck,
                _ => PrrBound::Crb,
            },
        )
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
    /// One ACK in recovery: `delivered` bytes newly delivered, `pipe` after loss marking,
    /// `safe`: the ACK advanced snd.una and marked no new loss (for [`PrrBound::SafeAck`]).
    pub fn on_ack(&mut self, delivered: u64, pipe: u64, safe: bool) {
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
                PrrBound::SafeAck => {
                    owed.max(delivered as i128) + if safe { self.mss as i128 } else { 0 }
                }
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
        w.on_ack(100, 1900, true);
        assert_eq!(w.window(), 1900 + 100, "ceil(0.5) segment");
        w.on_transmit(100);
        w.on_ack(100, 1900, true);
        assert_eq!(w.window(), 1900, "ceil(1) - 1 = 0");
        // Heavy loss: pipe far below ssthresh. SSRB catches up by what is owed (400 > this
        // ACK's 300) plus one MSS.
        w.on_ack(300, 400, true);
        assert_eq!(w.window(), 400 + 400 + 100);
        for (bound, extra) in [(PrrBound::Ssrb, 100), (PrrBound::Crb, 0)] {
            let mut c = PrrWindow::new(bound, mss);
            c.start(1000, 2000);
            c.on_ack(100, 400, true);
            assert_eq!(c.window(), 400 + 100 + extra, "{bound:?}");
            c.on_ack(900, 400, true);
            assert_eq!(c.window(), 1000, "{bound:?}: up to ssthresh only");
        }
    }

    /// RFC 6937bis / Linux tcp_cwnd_reduction: the slow-start bound's extra MSS only on an
    /// ACK that advanced snd.una and marked no new loss; RFC 6937's SSRB adds it always.
    #[test]
    fn the_extra_segment_needs_a_safe_ack() {
        for (bound, safe, extra) in [
            (PrrBound::SafeAck, true, 100),
            (PrrBound::SafeAck, false, 0),
            (PrrBound::Ssrb, false, 100),
        ] {
            let mut c = PrrWindow::new(bound, 100);
            c.start(1000, 2000);
            c.on_ack(100, 400, safe);
            assert_eq!(c.window(), 400 + 100 + extra, "{bound:?}, safe {safe}");
        }
    }
}
