//! The sender's record of every outstanding segment: SACKed, presumed lost, retransmitted.
//!
//! Segments have fixed boundaries (every segment is one MSS except possibly the last of the
//! application's data, and retransmissions reuse the boundaries), so segment `i` covers
//! `[i*mss, i*mss + len)`. State is kept per segment in a ring from the cumulative ACK
//! point (`una`) to the highest segment sent; SACKed ranges are also kept as a set of
//! disjoint intervals so that a repeated SACK block costs O(log n), not O(block length).
//! Byte totals are maintained incrementally, so `pipe()` (RFC 6675) is O(1). Every other
//! operation is O(log n) per segment whose state changes, hence amortized O(log n) per
//! segment over a connection, independent of the window size.

use crate::{Seq, Time};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Index of a segment: its sequence number divided by the MSS.
pub type SegIdx = u64;

const SACKED: u8 = 1;
const LOST: u8 = 2;
/// A retransmission of this segment is in flight (sent, not yet SACKed or declared lost).
const RETX_OUT: u8 = 4;

/// What the scoreboard knows about one outstanding segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegState {
    pub len: u32,
    flags: u8,
    /// Transmissions so far (1 for an original that was never retransmitted).
    pub tx_count: u8,
    /// When the latest copy was sent.
    pub sent_at: Time,
    /// Highest segment index sent (exclusive) when the latest retransmission left: a SACK
    /// at or beyond it while this segment is still missing means the retransmission was lost.
    pub rtx_mark: SegIdx,
}

impl SegState {
    pub fn sacked(&self) -> bool {
        self.flags & SACKED != 0
    }
    pub fn lost(&self) -> bool {
        self.flags & LOST != 0
    }
    pub fn retransmission_in_flight(&self) -> bool {
        self.flags & RETX_OUT != 0
    }
    pub fn retransmitted(&self) -> bool {
        self.tx_count > 1
    }
}

/// What the ACK being processed newly delivered: segments newly SACKed, or cumulatively
/// acknowledged without having been SACKed before. Gathered by `sack` and `ack_to` until
/// `take_delivery`; the sender hands it to the recovery strategy in `AckInfo`. RACK (RFC 8985)
/// needs the most recently sent delivered segment and whether delivery was out of order;
/// Rate-Halving needs the highest segment an ACK newly SACKs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivery {
    /// Highest segment newly SACKed.
    pub highest_sacked: Option<SegIdx>,
    /// Lowest newly delivered segment that was never retransmitted.
    pub lowest_original: Option<SegIdx>,
    /// The most recently sent newly delivered segment that was never retransmitted:
    /// `(sent_at, index)`, later index first among equal times.
    pub newest_original: Option<(Time, SegIdx)>,
    /// The same among retransmitted segments (the ACK may be for an earlier copy).
    pub newest_retransmitted: Option<(Time, SegIdx)>,
}

impl Delivery {
    fn record(&mut self, idx: SegIdx, s: &SegState) {
        let key = Some((s.sent_at, idx));
        if s.retransmitted() {
            self.newest_retransmitted = self.newest_retransmitted.max(key);
        } else {
            self.newest_original = self.newest_original.max(key);
            self.lowest_original = Some(self.lowest_original.map_or(idx, |l| l.min(idx)));
        }
    }
}

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Acked {
    pub bytes: u64,
    pub segments: u64,
    /// Bytes among them that had already been SACKed.
    pub previously_sacked_bytes: u64,
    /// Some segment removed had been retransmitted (Karn: the ACK may be for either copy).
    pub retransmitted: bool,
    /// When the newest removed segment that was neither retransmitted nor SACKed earlier
    /// was sent: the one RTT sample such an ACK gives without timestamps.
    pub timed: Option<Time>,
}

#[derive(Clone, Debug)]
pub struct Scoreboard {
    mss: u32,
    una: SegIdx,
    segs: VecDeque<SegState>,
    /// Disjoint, non-adjacent SACKed intervals `[start, end)` of segment indices >= una.
    sacked: BTreeMap<SegIdx, SegIdx>,
    outstanding_bytes: u64,
    sacked_bytes: u64,
    /// Bytes of segments marked lost and not SACKed (retransmitted or not).
    lost_bytes: u64,
    /// Bytes of retransmissions in flight.
    retx_out_bytes: u64,
    /// Bytes ever declared lost (each declaration counts; never decreases: Linux `tp->lost`).
    lost_total: u64,
    /// Lost segments waiting for (re)transmission.
    pending: BTreeSet<SegIdx>,
    /// Segments below this index have been considered by `mark_lost_below`.
    lost_scan: SegIdx,
    forced: Option<SegIdx>,
    delivery: Delivery,
}

impl Scoreboard {
    pub fn new(mss: u32) -> Self {
        Scoreboard {
            mss,
            una: 0,
            segs: VecDeque::new(),
            sacked: BTreeMap::new(),
            outstanding_bytes: 0,
            sacked_bytes: 0,
            lost_bytes: 0,
            retx_out_bytes: 0,
            lost_total: 0,
            pending: BTreeSet::new(),
            lost_scan: 0,
            forced: None,
            delivery: Delivery::default(),
        }
    }

    pub fn mss(&self) -> u32 {
        self.mss
    }
    /// First unacknowledged segment.
    pub fn una(&self) -> SegIdx {
        self.una
    }
    /// One past the highest segment sent.
    pub fn end(&self) -> SegIdx {
        self.una + self.segs.len() as u64
    }
    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }
    pub fn seq_of(&self, idx: SegIdx) -> Seq {
        Seq(idx * self.mss as u64)
    }
    pub fn seg(&self, idx: SegIdx) -> Option<&SegState> {
        idx.checked_sub(self.una)
            .and_then(|o| self.segs.get(o as usize))
    }
    fn seg_mut(&mut self, idx: SegIdx) -> Option<&mut SegState> {
        idx.checked_sub(self.una)
            .and_then(|o| self.segs.get_mut(o as usize))
    }

    /// Bytes sent and not cumulatively acknowledged (RFC 5681 FlightSize).
    pub fn outstanding(&self) -> u64 {
        self.outstanding_bytes
    }
    pub fn sacked_bytes(&self) -> u64 {
        self.sacked_bytes
    }
    pub fn lost_bytes(&self) -> u64 {
        self.lost_bytes
    }
    /// Bytes declared lost since the start (a retransmission declared lost counts again).
    pub fn lost_total(&self) -> u64 {
        self.lost_total
    }
    pub fn retransmissions_in_flight(&self) -> u64 {
        self.retx_out_bytes
    }
    /// RFC 6675 pipe: outstanding bytes neither SACKed nor presumed lost, plus
    /// retransmissions in flight.
    pub fn pipe(&self) -> u64 {
        self.outstanding_bytes - self.sacked_bytes - self.lost_bytes + self.retx_out_bytes
    }

    /// Records a new segment of `len` bytes sent at `now`; returns its index.
    pub fn on_send_new(&mut self, now: Time, len: u32) -> SegIdx {
        let idx = self.end();
        self.segs.push_back(SegState {
            len,
            flags: 0,
            tx_count: 1,
            sent_at: now,
            rtx_mark: 0,
        });
        self.outstanding_bytes += len as u64;
        idx
    }

    /// Records a retransmission of segment `idx` at `now`.
    pub fn on_retransmit(&mut self, idx: SegIdx, now: Time) {
        let end = self.end();
        self.pending.remove(&idx);
        if self.forced == Some(idx) {
            self.forced = None;
        }
        let s = self
            .seg_mut(idx)
            .expect("retransmitting a segment outside the window");
        let len = s.len as u64;
        let newly_out = s.flags & RETX_OUT == 0;
        s.flags |= RETX_OUT;
        s.tx_count = s.tx_count.saturating_add(1);
        s.sent_at = now;
        s.rtx_mark = end;
        if newly_out {
            self.retx_out_bytes += len;
        }
    }

    /// Advances the cumulative ACK point to segment `new_una` (exclusive).
    pub fn ack_to(&mut self, new_una: SegIdx) -> Acked {
        let mut out = Acked::default();
        while self.una < new_una {
            let Some(s) = self.segs.pop_front() else {
                break;
            };
            let len = s.len as u64;
            out.bytes += len;
            out.segments += 1;
            self.outstanding_bytes -= len;
            out.retransmitted |= s.retransmitted();
            if s.sacked() {
                self.sacked_bytes -= len;
                out.previously_sacked_bytes += len;
            } else {
                if !s.retransmitted() {
                    out.timed = Some(s.sent_at);
                }
                self.delivery.record(self.una, &s);
                if s.lost() {
                    self.lost_bytes -= len;
                }
                if s.retransmission_in_flight() {
                    self.retx_out_bytes -= len;
                } else if s.lost() {
                    self.pending.remove(&self.una);
                }
            }
            self.una += 1;
        }
        if self.forced.is_some_and(|f| f < self.una) {
            self.forced = None;
        }
        // Drop SACK intervals now below una.
        while let Some((&s, &e)) = self.sacked.first_key_value() {
            if e <= self.una {
                self.sacked.remove(&s);
            } else {
                if s < self.una {
                    self.sacked.remove(&s);
                    self.sacked.insert(self.una, e);
                }
                break;
            }
        }
        out
    }

    /// Index one past the last segment that lies wholly below `seq`.
    pub fn idx_covered_below(&self, seq: Seq) -> SegIdx {
        let mss = self.mss as u64;
        let i = seq.0 / mss;
        match self.seg(i) {
            Some(s) if self.seq_of(i).0 + s.len as u64 <= seq.0 => i + 1,
            _ => i,
        }
    }

    /// Index of the first segment starting at or above `seq`.
    pub fn idx_at_or_above(&self, seq: Seq) -> SegIdx {
        seq.0.div_ceil(self.mss as u64)
    }

    /// Marks the segments wholly inside `[start, end)` SACKed; returns bytes newly SACKed.
    pub fn sack(&mut self, start: Seq, end: Seq) -> u64 {
        let lo = self.idx_at_or_above(start).max(self.una);
        let hi = self.idx_covered_below(end).min(self.end());
        if lo >= hi {
            return 0;
        }
        // The common cases, found with one look-up: the interval starting last at or below
        // `hi` is the only one `[lo, hi)` can reach when it starts at or below `lo`
        // (intervals are disjoint and non-adjacent). A block already SACKed changes nothing;
        // one that reaches it extends it in place; one past its end stands alone.
        match self.sacked.range_mut(..=hi).next_back() {
            Some((&s, e)) if s <= lo && *e >= lo => {
                let from = *e;
                if from >= hi {
                    return 0;
                }
                *e = hi;
                return self.set_sacked(from, hi);
            }
            Some((&s, &mut e)) if s < lo && e < lo => {}
            Some(_) => return self.sack_merging(lo, hi),
            None => {}
        }
        self.sacked.insert(lo, hi);
        self.set_sacked(lo, hi)
    }

    /// [`sack`](Self::sack) when `[lo, hi)` reaches intervals starting inside it.
    #[inline(never)]
    fn sack_merging(&mut self, lo: SegIdx, hi: SegIdx) -> u64 {
        // Merge the intervals that overlap or touch [lo, hi), in order, and mark the gaps
        // between them (one at a time, taken out as they are merged: no list to allocate).
        let mut new_lo = lo;
        let mut new_hi = hi;
        let mut next = self
            .sacked
            .range(..lo)
            .next_back()
            .filter(|(_, &e)| e >= lo)
            .or_else(|| self.sacked.range(lo..=hi).next())
            .map(|(&s, &e)| (s, e));
        let mut newly = 0;
        let mut cursor = lo;
        while let Some((s, e)) = next {
            if s > cursor {
                newly += self.set_sacked(cursor, s.min(hi));
            }
            cursor = cursor.max(e);
            new_lo = new_lo.min(s);
            new_hi = new_hi.max(e);
            self.sacked.remove(&s);
            next = self.sacked.range(lo..=hi).next().map(|(&s, &e)| (s, e));
        }
        if cursor < hi {
            newly += self.set_sacked(cursor, hi);
        }
        self.sacked.insert(new_lo, new_hi);
        newly
    }

    fn set_sacked(&mut self, lo: SegIdx, hi: SegIdx) -> u64 {
        let mut newly = 0;
        for i in lo..hi {
            let s = self.seg_mut(i).expect("sacked segment in window");
            debug_assert!(!s.sacked());
            let len = s.len as u64;
            let flags = s.flags;
            s.flags = SACKED;
            let st = *s;
            self.delivery.record(i, &st);
            self.delivery.highest_sacked = self.delivery.highest_sacked.max(Some(i));
            newly += len;
            if flags & LOST != 0 {
                self.lost_bytes -= len;
            }
            if flags & RETX_OUT != 0 {
                self.retx_out_bytes -= len;
            }
            self.pending.remove(&i);
            if self.forced == Some(i) {
                self.forced = None;
            }
        }
        self.sacked_bytes += newly;
        newly
    }

    /// What was newly delivered since the previous call (see [`Delivery`]); starts afresh.
    pub fn take_delivery(&mut self) -> Delivery {
        std::mem::take(&mut self.delivery)
    }

    /// One past the highest byte sent (snd.nxt): every outstanding byte lies in
    /// `[seq_of(una), snd_nxt)`.
    pub fn snd_nxt(&self) -> Seq {
        self.seq_of(self.una) + self.outstanding_bytes
    }

    /// The cumulative ACK point in bytes (snd.una).
    pub fn snd_una(&self) -> Seq {
        self.seq_of(self.una).min(self.snd_nxt())
    }

    pub fn is_sacked(&self, idx: SegIdx) -> bool {
        self.seg(idx).is_some_and(|s| s.sacked())
    }

    /// One past the highest SACKed segment (FACK's snd.fack, in segments).
    pub fn highest_sacked_end(&self) -> Option<SegIdx> {
        self.sacked.last_key_value().map(|(_, &e)| e)
    }

    /// The highest outstanding segment not SACKed (what a tail loss probe resends).
    pub fn highest_unsacked(&self) -> Option<SegIdx> {
        let top = match self.sacked.last_key_value() {
            Some((&s, &e)) if e == self.end() => s,
            _ => self.end(),
        };
        top.checked_sub(1).filter(|&i| i >= self.una)
    }

    /// The `n`-th highest SACKed segment (n = 1 is the highest). Segments below it have at
    /// least `n` SACKed segments above them: RFC 6675's IsLost with DupThresh = n.
    pub fn nth_highest_sacked(&self, n: u64) -> Option<SegIdx> {
        let mut left = n;
        for (&s, &e) in self.sacked.iter().rev() {
            if e - s >= left {
                return Some(e - left);
            }
            left -= e - s;
        }
        None
    }

    /// SACKed segments at or above `idx`. O(number of intervals above idx).
    pub fn sacked_at_or_above(&self, idx: SegIdx) -> u64 {
        let mut n = 0;
        for (&s, &e) in self.sacked.iter().rev() {
            if e <= idx {
                break;
            }
            n += e - s.max(idx);
        }
        n
    }

    /// Declares segment `idx` lost (first time): it counts out of the pipe and waits for
    /// retransmission. No effect on SACKed or already-lost segments.
    pub fn mark_lost(&mut self, idx: SegIdx) {
        let Some(s) = self.seg_mut(idx) else {
            return;
        };
        if s.flags & (SACKED | LOST) != 0 {
            return;
        }
        s.flags |= LOST;
        let len = s.len as u64;
        self.lost_bytes += len;
        self.lost_total += len;
        self.pending.insert(idx);
    }

    /// Declares every un-SACKed segment below `bound` lost. Amortized: each segment is looked
    /// at once between retransmission timeouts.
    pub fn mark_lost_below(&mut self, bound: SegIdx) {
        let bound = bound.min(self.end());
        let mut i = self.lost_scan.max(self.una);
        while i < bound {
            self.mark_lost(i);
            i += 1;
        }
        self.lost_scan = self.lost_scan.max(bound);
    }

    /// Declares the retransmission of `idx` lost too: it waits for another retransmission.
    pub fn mark_retransmission_lost(&mut self, idx: SegIdx) {
        let Some(s) = self.seg_mut(idx) else {
            return;
        };
        if s.flags & SACKED != 0 {
            return;
        }
        let len = s.len as u64;
        let was_lost = s.flags & LOST != 0;
        let was_out = s.flags & RETX_OUT != 0;
        s.flags = LOST;
        if !was_lost {
            self.lost_bytes += len;
        }
        if !was_lost || was_out {
            // The segment, or its retransmission in flight, is newly declared lost.
            self.lost_total += len;
        }
        if was_out {
            self.retx_out_bytes -= len;
        }
        self.pending.insert(idx);
    }

    /// Retransmission timeout: every un-SACKed outstanding segment, retransmitted or not, is
    /// presumed lost and will be sent again in order. O(window), once per timeout.
    pub fn mark_all_lost(&mut self) {
        for i in self.una..self.end() {
            self.mark_retransmission_lost(i);
        }
        self.lost_scan = self.end();
        self.forced = None;
    }

    /// A timeout turned out spurious: no segment is presumed lost any more (Linux
    /// `tcp_undo_cwnd_reduction(sk, true)` clears every LOST mark). Retransmissions in flight
    /// stay counted. O(window), once per undo.
    pub fn unmark_lost(&mut self) {
        for s in self.segs.iter_mut() {
            s.flags &= !LOST;
        }
        self.lost_bytes = 0;
        self.pending.clear();
        self.lost_scan = self.una;
        self.forced = None;
    }

    /// Lowest segment presumed lost and not yet retransmitted.
    pub fn next_pending(&self) -> Option<SegIdx> {
        self.pending.first().copied()
    }
    pub fn pending_count(&self) -> usize {
        self.pending.len()
    }

    /// Asks for segment `idx` to be retransmitted at once, whatever the window (the fast
    /// retransmission at recovery entry, NewReno's retransmission on a partial ACK).
    pub fn force_retransmit(&mut self, idx: SegIdx) {
        if self.seg(idx).is_some_and(|s| !s.sacked()) {
            self.mark_lost(idx);
            self.forced = Some(idx);
        }
    }
    pub fn forced(&self) -> Option<SegIdx> {
        self.forced
    }

    /// Debug check of the incremental totals against a full recount. O(window).
    pub fn check_invariants(&self) {
        let (mut out, mut sack, mut lost, mut rx) = (0, 0, 0, 0);
        for (o, s) in self.segs.iter().enumerate() {
            let i = self.una + o as u64;
            let len = s.len as u64;
            out += len;
            let in_set = self
                .sacked
                .range(..=i)
                .next_back()
                .is_some_and(|(_, &e)| e > i);
            assert_eq!(s.sacked(), in_set, "segment {i}: flag vs interval set");
            if s.sacked() {
                sack += len;
            } else {
                if s.lost() {
                    lost += len;
                }
                if s.retransmission_in_flight() {
                    rx += len;
                }
            }
            assert_eq!(
                self.pending.contains(&i),
                s.lost() && !s.sacked() && !s.retransmission_in_flight(),
                "segment {i}: pending set"
            );
        }
        assert_eq!(out, self.outstanding_bytes);
        assert_eq!(sack, self.sacked_bytes);
        assert_eq!(lost, self.lost_bytes);
        assert_eq!(rx, self.retx_out_bytes);
        let mut prev_end = None;
        for (&s, &e) in &self.sacked {
            assert!(s < e && s >= self.una && e <= self.end());
            if let Some(pe) = prev_end {
                assert!(s > pe, "intervals must not touch");
            }
            prev_end = Some(e);
        }
    }
}

/// A scoreboard with `n` segments of `mss` bytes sent at time zero, for unit tests.
#[cfg(test)]
pub(crate) fn test_board(mss: u32, n: u64) -> Scoreboard {
    let mut sb = Scoreboard::new(mss);
    for _ in 0..n {
        sb.on_send_new(Time::ZERO, mss);
    }
    sb
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 100;

    fn board(n: u64) -> Scoreboard {
        test_board(MSS, n)
    }

    fn sack(sb: &mut Scoreboard, lo: u64, hi: u64) -> u64 {
        sb.sack(Seq(lo * MSS as u64), Seq(hi * MSS as u64))
    }

    #[test]
    fn sack_merges_and_counts_only_new_segments() {
        let mut sb = board(20);
        assert_eq!(sack(&mut sb, 5, 8), 300);
        assert_eq!(sack(&mut sb, 5, 8), 0, "repeated block adds nothing");
        assert_eq!(sack(&mut sb, 10, 12), 200);
        assert_eq!(sack(&mut sb, 7, 11), 200, "fills 8..10 only");
        sb.check_invariants();
        assert_eq!(sb.sacked_bytes(), 700);
        assert_eq!(sb.highest_sacked_end(), Some(12));
        assert_eq!(sb.nth_highest_sacked(1), Some(11));
        assert_eq!(sb.nth_highest_sacked(3), Some(9));
        assert_eq!(sb.nth_highest_sacked(8), None);
        assert_eq!(sb.sacked_at_or_above(9), 3);
        assert_eq!(sb.highest_unsacked(), Some(19));
        sack(&mut sb, 14, 20);
        assert_eq!(sb.highest_unsacked(), Some(13));
    }

    #[test]
    fn pipe_follows_rfc6675() {
        let mut sb = board(10);
        assert_eq!(sb.pipe(), 1000);
        sack(&mut sb, 3, 6);
        // IsLost: segments with >= 3 SACKed above are 0, 1, 2.
        let bound = sb.nth_highest_sacked(3).unwrap();
        assert_eq!(bound, 3);
        sb.mark_lost_below(bound);
        sb.check_invariants();
        assert_eq!(sb.pipe(), 1000 - 300 - 300);
        assert_eq!(sb.next_pending(), Some(0));
        sb.on_retransmit(0, Time::ZERO);
        assert_eq!(sb.pipe(), 500);
        assert_eq!(sb.next_pending(), Some(1));
        sb.check_invariants();
        // Cumulative ACK through segment 6 removes everything below.
        let a = sb.ack_to(6);
        assert_eq!(
            (a.bytes, a.segments, a.previously_sacked_bytes),
            (600, 6, 300)
        );
        sb.check_invariants();
        assert_eq!(sb.pipe(), 400);
        assert_eq!(sb.next_pending(), None);
    }

    #[test]
    fn lost_retransmission_is_queued_again() {
        let mut sb = board(6);
        sb.force_retransmit(0);
        assert_eq!(sb.forced(), Some(0));
        sb.on_retransmit(0, Time::from_millis(1));
        assert_eq!(sb.forced(), None);
        assert_eq!(sb.seg(0).unwrap().rtx_mark, 6);
        sb.mark_retransmission_lost(0);
        assert_eq!(sb.next_pending(), Some(0));
        sb.check_invariants();
    }

    #[test]
    fn lost_total_counts_every_declaration_and_never_decreases() {
        let mut sb = board(6);
        sack(&mut sb, 3, 6);
        sb.mark_lost_below(2);
        assert_eq!(sb.lost_total(), 200);
        sb.mark_lost(0); // already lost: nothing new
        sb.on_retransmit(0, Time::ZERO);
        sb.mark_retransmission_lost(0); // the retransmission was lost too
        assert_eq!(sb.lost_total(), 300);
        sb.mark_all_lost(); // segment 2 is new; 0 and 1 wait, not in flight
        assert_eq!(sb.lost_total(), 400);
        sb.unmark_lost();
        sb.ack_to(6);
        assert_eq!((sb.lost_bytes(), sb.lost_total()), (0, 400));
    }

    #[test]
    fn timeout_marks_everything_unsacked_lost() {
        let mut sb = board(8);
        sack(&mut sb, 4, 6);
        sb.force_retransmit(0);
        sb.on_retransmit(0, Time::ZERO);
        sb.mark_all_lost();
        sb.check_invariants();
        assert_eq!(sb.pipe(), 0);
        assert_eq!(sb.pending_count(), 6);
    }

    #[test]
    fn delivery_reports_what_an_ack_newly_delivered() {
        let mut sb = Scoreboard::new(MSS);
        for i in 0..6 {
            sb.on_send_new(Time::from_millis(i), MSS);
        }
        sb.force_retransmit(0);
        sb.on_retransmit(0, Time::from_millis(10));
        sack(&mut sb, 2, 4);
        let d = sb.take_delivery();
        assert_eq!(d.highest_sacked, Some(3));
        assert_eq!(d.lowest_original, Some(2));
        assert_eq!(d.newest_original, Some((Time::from_millis(3), 3)));
        assert_eq!(d.newest_retransmitted, None);
        assert_eq!(sb.take_delivery(), Delivery::default(), "taken");
        // 0 (retransmitted), 1 and 4 are newly delivered; 2 and 3 were SACKed before.
        sb.ack_to(5);
        let d = sb.take_delivery();
        assert_eq!(d.highest_sacked, None);
        assert_eq!(d.lowest_original, Some(1));
        assert_eq!(d.newest_original, Some((Time::from_millis(4), 4)));
        assert_eq!(d.newest_retransmitted, Some((Time::from_millis(10), 0)));
        assert_eq!(sb.snd_nxt(), Seq(600));
    }

    #[test]
    fn short_last_segment_is_sackable() {
        let mut sb = board(3);
        sb.on_send_new(Time::ZERO, 40); // bytes 300..340
        assert_eq!(sb.sack(Seq(300), Seq(340)), 40);
        assert_eq!(sb.idx_covered_below(Seq(340)), 4);
        sb.check_invariants();
    }

    #[test]
    fn randomized_operations_keep_invariants() {
        let mut x: u64 = 0x9e3779b97f4a7c15;
        let mut next = move |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        let mut sb = Scoreboard::new(MSS);
        for step in 0..5000 {
            match next(6) {
                0 | 1 => {
                    sb.on_send_new(Time::ZERO, MSS);
                }
                2 => {
                    let lo = sb.una() + next(30);
                    sack(&mut sb, lo, lo + 1 + next(5));
                }
                3 => {
                    if let Some(b) = sb.nth_highest_sacked(3) {
                        sb.mark_lost_below(b);
                    }
                    if let Some(p) = sb.next_pending() {
                        sb.on_retransmit(p, Time::ZERO);
                    }
                }
                4 => {
                    let to = sb.una() + next(4);
                    sb.ack_to(to.min(sb.end()));
                }
                _ => {
                    if step % 50 == 0 {
                        sb.mark_all_lost();
                    }
                }
            }
            sb.check_invariants();
        }
    }
}
