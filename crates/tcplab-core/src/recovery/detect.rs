//! Detection and marking helpers shared by the SACK-based strategies: the recovery episode
//! (RFC 6675 RecoveryPoint), RFC 6675's duplicate-ACK count and IsLost rule (`sack`, `prr`),
//! FACK's in-flight estimate and trigger distance (`fack`, `rh`, `lrd`), and the SACK counter
//! that makes a hole eligible for retransmission (`rh`, `lrd`).

use super::{AckInfo, RecoveryContext};
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::{ConfigError, Seq};

/// Strategies that read SACK blocks refuse to run without them.
pub(crate) fn require_sack(ctx: &RecoveryContext, name: &str) -> Result<(), ConfigError> {
    if ctx.sack {
        Ok(())
    } else {
        Err(ConfigError::new(format!(
            "recovery = {name:?} needs SACK blocks from the receiver: set tcp.sack_blocks >= 1"
        )))
    }
}

/// One loss-recovery episode: it lasts until the cumulative ACK reaches the highest byte
/// sent when it began (RFC 6675 RecoveryPoint, RFC 6582 `recover`), and no new episode may
/// begin before that point is reached, nor before everything sent before a timeout is
/// acknowledged.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Episode {
    active: bool,
    recovery_point: Option<Seq>,
}

impl Episode {
    pub fn active(&self) -> bool {
        self.active
    }
    /// A new episode may begin now.
    pub fn may_start(&self, snd_una: Seq) -> bool {
        self.recovery_point.is_none_or(|r| snd_una >= r)
    }
    pub fn start(&mut self, snd_max: Seq) {
        self.active = true;
        self.recovery_point = Some(snd_max);
    }
    /// The cumulative ACK covers the recovery point: the episode is over (and ends).
    pub fn ends(&mut self, snd_una: Seq) -> bool {
        if self.active && self.recovery_point.is_some_and(|r| snd_una >= r) {
            self.active = false;
            return true;
        }
        false
    }
    /// A timeout abandons the episode; none starts before `snd_max` is acknowledged.
    pub fn timeout(&mut self, snd_max: Seq) {
        self.active = false;
        self.recovery_point = Some(snd_max);
    }
}

/// RFC 6675 loss detection: duplicate ACKs are those carrying new SACK information (§2);
/// a segment IsLost once `dupthresh` segments above it are SACKed; recovery begins on the
/// `dupthresh`-th duplicate ACK or when the first unacknowledged segment IsLost (§5).
#[derive(Clone, Debug)]
pub(crate) struct Rfc6675 {
    dupthresh: u32,
    dupacks: u32,
    pub episode: Episode,
}

impl Rfc6675 {
    pub fn new(dupthresh: u32) -> Self {
        Rfc6675 {
            dupthresh,
            dupacks: 0,
            episode: Episode::default(),
        }
    }

    /// IsLost for every segment: those below the `dupthresh`-th highest SACKed one.
    pub fn mark_lost(&self, sb: &mut Scoreboard) {
        if let Some(bound) = sb.nth_highest_sacked(self.dupthresh as u64) {
            sb.mark_lost_below(bound);
        }
    }

    /// Outside recovery: counts duplicate ACKs; true when recovery should begin.
    #[inline]
    pub fn should_enter(&mut self, ack: &AckInfo, sb: &Scoreboard) -> bool {
        if ack.acked_bytes > 0 {
            self.dupacks = 0;
        }
        if ack.is_duplicate && ack.sacked_bytes > 0 {
            self.dupacks += 1;
        }
        if sb.is_empty() || !self.episode.may_start(ack.snd_una) {
            return false;
        }
        let first_lost = sb
            .nth_highest_sacked(self.dupthresh as u64)
            .is_some_and(|b| b > sb.una());
        self.dupacks >= self.dupthresh || first_lost
    }

    /// In recovery: true (and the episode ends) once the recovery point is acknowledged.
    pub fn recovery_ends(&mut self, ack: &AckInfo) -> bool {
        if self.episode.ends(ack.snd_una) {
            self.dupacks = 0;
            return true;
        }
        false
    }

    /// Recovery begins: RecoveryPoint = HighData, mark what IsLost, fast-retransmit the
    /// first unacknowledged segment ([`entry_retransmission`]).
    pub fn enter(&mut self, snd_max: Seq, sb: &mut Scoreboard) {
        self.episode.start(snd_max);
        self.mark_lost(sb);
        entry_retransmission(sb);
    }

    pub fn on_timeout(&mut self, snd_max: Seq) {
        self.dupacks = 0;
        self.episode.timeout(snd_max);
    }
}

/// The fast retransmission at the entry of a SACK-based recovery: the first unacknowledged
/// segment (RFC 6675 §5 step 4.3), unless its retransmission is still in flight, as when a
/// recovery begins after the previous one ended but before that one's retransmission of it
/// was acknowledged: then the lowest segment presumed lost and not yet retransmitted, if any.
/// Sending the first again would duplicate a retransmission the scoreboard still counts in
/// the pipe; Linux's `tcp_xmit_retransmit_queue` likewise skips a segment marked
/// TCPCB_SACKED_RETRANS. (Reno and NewReno keep BSD's unconditional retransmission of
/// snd.una at three duplicate ACKs.)
pub(crate) fn entry_retransmission(sb: &mut Scoreboard) {
    let una = sb.una();
    let in_flight = sb.seg(una).is_some_and(|s| s.retransmission_in_flight());
    match (in_flight, sb.next_pending()) {
        (false, _) => sb.force_retransmit(una),
        (true, Some(next)) => sb.force_retransmit(next),
        (true, None) => {}
    }
}

/// FACK's snd.fack in segments: one past the highest SACKed segment, or snd.una.
pub(crate) fn fack(sb: &Scoreboard) -> SegIdx {
    sb.highest_sacked_end().unwrap_or(sb.una()).max(sb.una())
}

/// Segments from snd.una to snd.fack (FACK's trigger compares it with dupthresh).
pub(crate) fn fack_distance(sb: &Scoreboard) -> u64 {
    fack(sb) - sb.una()
}

/// FACK's awnd = snd.nxt - snd.fack + retran_data: everything below the highest SACKed
/// segment has left the network except retransmissions. Segments above snd.fack are never
/// marked lost except by a timeout, after which strategies count [`flight`] instead.
pub(crate) fn awnd(sb: &Scoreboard) -> u64 {
    // seq_of(end) overshoots snd.nxt when the last segment is short.
    let above = sb.snd_nxt().0.saturating_sub(sb.seq_of(fack(sb)).0);
    above + sb.retransmissions_in_flight()
}

/// What Reno-style senders compare with cwnd outside recovery: RFC 5681 FlightSize, SACKed
/// segments included, so duplicate ACKs release no new data. Once segments are declared lost
/// (after a timeout) it is the RFC 6675 pipe: neither lost nor SACKed segments count, or a
/// one-segment window behind SACKed data could never retransmit.
pub(crate) fn flight(sb: &Scoreboard) -> u64 {
    if sb.lost_bytes() > 0 {
        sb.pipe()
    } else {
        sb.pipe() + sb.sacked_bytes()
    }
}

/// Counts, for every hole, the ACKs that newly SACKed data above it; a hole becomes eligible
/// for retransmission once `n` such ACKs arrived (Rate-Halving: "three SACKs above it").
///
/// An ACK whose highest newly SACKed segment is `m` counts for every hole below `m`, and only
/// ACKs sent after a hole's segment can SACK data above it, so the holes with `n` counts are
/// exactly those below the `n`-th largest `m` seen so far: the counter keeps the `n` largest.
#[derive(Clone, Debug)]
pub(crate) struct SackCounter {
    n: usize,
    /// The largest `m` seen, in descending order, at most `n` of them.
    top: Vec<SegIdx>,
}

impl SackCounter {
    pub fn new(n: u32) -> Self {
        SackCounter {
            n: n.max(1) as usize,
            top: Vec::new(),
        }
    }
    /// One ACK; `highest_newly_sacked` from its [`crate::scoreboard::Delivery`].
    pub fn record(&mut self, highest_newly_sacked: Option<SegIdx>) {
        let Some(m) = highest_newly_sacked else {
            return;
        };
        let at = self.top.partition_point(|&x| x >= m);
        if at < self.n {
            self.top.insert(at, m);
            self.top.truncate(self.n);
        }
    }
    /// Holes below this index have been reported `n` times.
    pub fn eligible_below(&self) -> Option<SegIdx> {
        (self.top.len() == self.n).then(|| self.top[self.n - 1])
    }
    /// Marks every eligible hole lost.
    pub fn mark_lost(&self, sb: &mut Scoreboard) {
        if let Some(b) = self.eligible_below() {
            sb.mark_lost_below(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Time;

    const MSS: u32 = 100;

    fn board(n: u64) -> Scoreboard {
        crate::scoreboard::test_board(MSS, n)
    }

    fn sack(sb: &mut Scoreboard, lo: u64, hi: u64) {
        sb.sack(Seq(lo * MSS as u64), Seq(hi * MSS as u64));
    }

    #[test]
    fn entry_retransmits_snd_una_unless_its_retransmission_is_in_flight() {
        let mut sb = board(10);
        entry_retransmission(&mut sb);
        assert_eq!(sb.forced(), Some(0), "the first unacknowledged segment");
        // Recovery retransmitted segment 0; it ended before that retransmission was ACKed,
        // and a new recovery begins with segments 0 and 3 presumed lost.
        sb.on_retransmit(0, Time::ZERO);
        sack(&mut sb, 4, 8);
        sb.mark_lost_below(4);
        assert!(sb.seg(0).unwrap().retransmission_in_flight());
        entry_retransmission(&mut sb);
        assert_eq!(
            sb.forced(),
            Some(1),
            "the lowest lost segment not yet retransmitted"
        );
        // Everything presumed lost is already retransmitted: nothing is forced.
        for i in 1..4 {
            sb.on_retransmit(i, Time::ZERO);
        }
        let mut fresh = sb.clone();
        entry_retransmission(&mut fresh);
        assert_eq!(fresh.next_pending(), None);
        assert_eq!(fresh.forced(), sb.forced(), "unchanged");
    }

    #[test]
    fn awnd_counts_data_above_fack_and_retransmissions() {
        let mut sb = board(10);
        assert_eq!(awnd(&sb), 1000, "no SACK: everything outstanding");
        sack(&mut sb, 3, 5);
        sack(&mut sb, 6, 7);
        assert_eq!((fack(&sb), fack_distance(&sb)), (7, 7));
        assert_eq!(awnd(&sb), 300, "segments 7, 8, 9");
        sb.force_retransmit(0);
        sb.on_retransmit(0, Time::ZERO);
        assert_eq!(awnd(&sb), 400);
        assert_eq!(
            flight(&sb),
            1000 - 300 - 100 + 100,
            "pipe once a segment is lost"
        );
        let mut sb = board(10);
        sack(&mut sb, 3, 5);
        assert_eq!(flight(&sb), 1000, "FlightSize before any loss is declared");
        let mut sb = board(3);
        sb.on_send_new(Time::ZERO, 40);
        sack(&mut sb, 1, 2);
        assert_eq!(awnd(&sb), 140, "a short last segment counts its length");
        sack(&mut sb, 3, 4);
        assert_eq!(awnd(&sb), 0, "SACKed up to a short last segment");
    }

    #[test]
    fn sack_counter_needs_n_acks_with_new_sacks_above_the_hole() {
        let mut c = SackCounter::new(3);
        c.record(Some(5));
        c.record(None);
        c.record(Some(7));
        assert_eq!(c.eligible_below(), None);
        c.record(Some(3)); // counts for holes 0..3 only
        assert_eq!(c.eligible_below(), Some(3));
        c.record(Some(9));
        assert_eq!(
            c.eligible_below(),
            Some(5),
            "holes below 5 have 9, 7, 5 above them"
        );
        let mut sb = board(10);
        sack(&mut sb, 1, 2);
        c.mark_lost(&mut sb);
        assert_eq!(sb.next_pending(), Some(0));
        assert_eq!(sb.pending_count(), 4, "0, 2, 3, 4");
    }

    #[test]
    fn episode_blocks_a_new_start_until_the_recovery_point() {
        let mut e = Episode::default();
        assert!(e.may_start(Seq(0)));
        e.start(Seq(1000));
        assert!(e.active() && !e.ends(Seq(999)) && !e.may_start(Seq(999)));
        assert!(e.ends(Seq(1000)) && !e.active() && e.may_start(Seq(1000)));
        e.timeout(Seq(5000));
        assert!(!e.may_start(Seq(4000)) && !e.ends(Seq(6000)));
    }
}
