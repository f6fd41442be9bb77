//! Detection of lost retransmissions (LRD, see [`super::lrd`]): a retransmission is lost
//! when a segment sent after it is SACKed while it is still outstanding. Used by
//! Rate-Halving when it runs as `lrd`.

use crate::scoreboard::{Scoreboard, SegIdx};

/// Retransmissions in flight, by the mark a SACK must reach to prove them lost. Entries are
/// dropped when examined once the segment was delivered or retransmitted again, so each
/// retransmission costs O(log n).
#[derive(Clone, Debug, Default)]
pub(crate) struct LostRetransmissions {
    watch: std::collections::BTreeSet<(SegIdx, SegIdx)>,
}

impl LostRetransmissions {
    /// Segment `idx` was just retransmitted.
    pub fn watch(&mut self, idx: SegIdx, sb: &Scoreboard) {
        if let Some(s) = sb.seg(idx) {
            self.watch.insert((s.rtx_mark, idx));
        }
    }

    /// Declares lost every watched retransmission whose mark the SACKs have reached; returns
    /// how many.
    pub fn detect(&mut self, sb: &mut Scoreboard) -> usize {
        let Some(fack) = sb.highest_sacked_end() else {
            return 0;
        };
        let mut lost = 0;
        while let Some(&(mark, idx)) = self.watch.first() {
            if mark >= fack {
                break;
            }
            self.watch.pop_first();
            let still_out = sb
                .seg(idx)
                .is_some_and(|s| !s.sacked() && s.retransmission_in_flight() && s.rtx_mark == mark);
            if still_out {
                sb.mark_retransmission_lost(idx);
                lost += 1;
            }
        }
        lost
    }

    pub fn clear(&mut self) {
        self.watch.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Seq, Time};

    #[test]
    fn a_sack_beyond_the_mark_proves_the_retransmission_lost() {
        let mut sb = Scoreboard::new(100);
        for _ in 0..6 {
            sb.on_send_new(Time::ZERO, 100);
        }
        sb.force_retransmit(1);
        sb.on_retransmit(1, Time::ZERO);
        let mut l = LostRetransmissions::default();
        l.watch(1, &sb);
        sb.on_send_new(Time::ZERO, 100); // segment 6, the mark
        sb.sack(Seq(200), Seq(600));
        assert_eq!(l.detect(&mut sb), 0, "SACKs below the mark prove nothing");
        sb.sack(Seq(600), Seq(700));
        assert_eq!(l.detect(&mut sb), 1);
        assert_eq!(sb.next_pending(), Some(1));
        sb.check_invariants();
        assert_eq!(l.detect(&mut sb), 0, "reported once");
    }
}
