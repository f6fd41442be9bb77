//! Spurious window reductions: detecting them and undoing them, as Linux does
//! (net/ipv4/tcp_input.c: `tcp_init_undo`, `tcp_may_undo`, `tcp_packet_delayed`,
//! `tcp_try_undo_loss`, `tcp_try_undo_recovery`, `tcp_try_undo_dsack`, `tcp_process_loss`).
//!
//! - [`Undo`] remembers, at a reduction, the window before it and what the episode
//!   retransmitted. The reduction was unnecessary when every retransmission came back as a
//!   duplicate (DSACK, RFC 2883/3708) or when an ACK echoes a timestamp older than the first
//!   retransmission (the original got through: Eifel detection, RFC 3522); the sender then
//!   hands the old window back to the controller (`CongestionControl::on_undo`).
//! - [`Frto`] is F-RTO (RFC 5682, the SACK-enhanced variant of §3 as Linux implements it):
//!   after a timeout, the first ACK that advances snd.una makes the sender send new data
//!   instead of retransmitting more; if the next ACKs acknowledge data that was never
//!   retransmitted, the timeout was spurious.
//!
//! Both are off by default (`tcp.undo`, `tcp.frto`); `tcp.profile = "linux"` turns them on.

use crate::{Seq, Time};

/// The state of one reduction that may be undone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Undo {
    /// cwnd before the reduction.
    pub prior_cwnd: u64,
    /// ssthresh to restore: Linux `tcp_current_ssthresh`, max(ssthresh, 3/4 cwnd).
    pub prior_ssthresh: u64,
    /// When the first retransmission of the episode left (Linux `retrans_stamp`).
    retrans_stamp: Option<Time>,
    /// Retransmissions of the episode not yet reported as duplicates; None before the first
    /// (Linux `undo_retrans`, -1 until a retransmission).
    undo_retrans: Option<u32>,
}

impl Undo {
    /// A reduction starts, from `cwnd` and `ssthresh` (bytes) as they were before it.
    pub fn start(cwnd: u64, ssthresh: u64) -> Self {
        let three_quarters = (cwnd / 2) + (cwnd / 4);
        Undo {
            prior_cwnd: cwnd,
            prior_ssthresh: if ssthresh == u64::MAX {
                ssthresh
            } else {
                ssthresh.max(three_quarters)
            },
            retrans_stamp: None,
            undo_retrans: None,
        }
    }

    /// A retransmission of the episode left at `now`.
    pub fn on_retransmit(&mut self, now: Time) {
        self.retrans_stamp.get_or_insert(now);
        self.undo_retrans = Some(self.undo_retrans.unwrap_or(0) + 1);
    }

    /// A DSACK reported `segments` duplicate segments.
    pub fn on_dsack(&mut self, segments: u32) {
        if let Some(n) = self.undo_retrans.as_mut() {
            *n = n.saturating_sub(segments);
        }
    }

    /// Every retransmission of the episode came back as a duplicate.
    pub fn all_retransmissions_duplicated(&self) -> bool {
        self.undo_retrans == Some(0)
    }

    /// Linux `tcp_may_undo`: all retransmissions duplicated, or the ACK echoes a timestamp
    /// sent before the first retransmission (`tcp_packet_delayed`).
    pub fn may_undo(&self, ts_ecr: Option<Time>) -> bool {
        self.all_retransmissions_duplicated()
            || matches!((ts_ecr, self.retrans_stamp), (Some(e), Some(r)) if e < r)
    }
}

/// What F-RTO decided on an ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrtoStep {
    /// Data never retransmitted was acknowledged: the timeout was spurious (step 3b).
    Spurious,
    /// Send new data before any further retransmission, on this ACK (step 2b).
    SendNew,
    /// Retransmit what is marked lost, as after any timeout; F-RTO goes on.
    Retransmit,
    /// F-RTO is over for this timeout: the loss was real (step 3a), everything sent before
    /// the timeout is acknowledged (step 2a), or there is no new data to probe with.
    Off,
}

/// F-RTO after one timeout (RFC 5682 §3, Linux `tcp_process_loss`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frto {
    /// Linux `high_seq`: snd.nxt at the timeout, then at step 2b.
    high: Seq,
    /// New data was sent after the timeout (snd.nxt moved past `high` at step 2b).
    new_data_sent: bool,
}

/// The facts about one ACK that F-RTO reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrtoAck {
    pub snd_una: Seq,
    pub snd_nxt: Seq,
    /// The ACK advanced snd.una.
    pub advanced: bool,
    /// Start of the lowest segment this ACK newly acknowledged (cumulatively or by SACK)
    /// that was never retransmitted.
    pub lowest_original: Option<Seq>,
    /// It SACKed new data or was a duplicate ACK.
    pub dup_or_sacked: bool,
    /// New data can go out (the application has some and the receive window allows).
    pub can_send_new: bool,
}

impl Frto {
    pub fn start(snd_nxt: Seq) -> Self {
        Frto {
            high: snd_nxt,
            new_data_sent: false,
        }
    }

    /// One ACK during the timeout's recovery. After `Spurious` or `Off` the caller drops it.
    pub fn on_ack(&mut self, a: &FrtoAck) -> FrtoStep {
        // Linux FLAG_ORIG_SACK_ACKED: only data sent before `high` counts; the new data of
        // step 2b is above it.
        if a.lowest_original.is_some_and(|s| s < self.high) {
            return FrtoStep::Spurious;
        }
        if self.new_data_sent {
            return if a.dup_or_sacked {
                FrtoStep::Off
            } else {
                FrtoStep::Retransmit
            };
        }
        if a.advanced && a.snd_una < self.high {
            if !a.can_send_new {
                return FrtoStep::Off;
            }
            self.high = a.snd_nxt;
            self.new_data_sent = true;
            return FrtoStep::SendNew;
        }
        if a.snd_una >= self.high {
            return FrtoStep::Off;
        }
        FrtoStep::Retransmit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(una: u64, nxt: u64) -> FrtoAck {
        FrtoAck {
            snd_una: Seq(una),
            snd_nxt: Seq(nxt),
            advanced: true,
            lowest_original: None,
            dup_or_sacked: false,
            can_send_new: true,
        }
    }

    #[test]
    fn undo_needs_every_retransmission_duplicated_or_an_old_timestamp() {
        let mut u = Undo::start(10_000, 20_000);
        assert_eq!((u.prior_cwnd, u.prior_ssthresh), (10_000, 20_000));
        assert!(
            !u.may_undo(None),
            "nothing retransmitted: nothing to undo by DSACK"
        );
        u.on_retransmit(Time::from_millis(100));
        u.on_retransmit(Time::from_millis(110));
        u.on_dsack(1);
        assert!(!u.may_undo(None));
        assert!(
            !u.may_undo(Some(Time::from_millis(100))),
            "echo of the retransmission"
        );
        assert!(
            u.may_undo(Some(Time::from_millis(99))),
            "echo of the original"
        );
        u.on_dsack(1);
        assert!(u.may_undo(None));
        let u = Undo::start(10_000, 4_000);
        assert_eq!(u.prior_ssthresh, 7_500, "3/4 cwnd");
    }

    #[test]
    fn frto_spurious_when_originals_are_acknowledged() {
        let mut f = Frto::start(Seq(10));
        // The first ACK after the timeout covers the retransmission only: send new data.
        assert_eq!(f.on_ack(&ack(1, 10)), FrtoStep::SendNew);
        // The next covers originals sent before the timeout: spurious.
        let mut a = ack(1, 12);
        a.lowest_original = Some(Seq(10));
        assert_eq!(
            f.on_ack(&a),
            FrtoStep::Retransmit,
            "the new data is not evidence"
        );
        a.lowest_original = Some(Seq(1));
        assert_eq!(f.on_ack(&a), FrtoStep::Spurious);
    }

    #[test]
    fn frto_real_loss_on_a_duplicate_after_new_data() {
        let mut f = Frto::start(Seq(10));
        assert_eq!(f.on_ack(&ack(1, 10)), FrtoStep::SendNew);
        let mut a = ack(1, 12);
        a.advanced = false;
        a.dup_or_sacked = true;
        assert_eq!(f.on_ack(&a), FrtoStep::Off);
    }

    #[test]
    fn frto_ends_without_new_data_or_when_all_is_acknowledged() {
        let mut f = Frto::start(Seq(10));
        let mut a = ack(1, 10);
        a.can_send_new = false;
        assert_eq!(f.on_ack(&a), FrtoStep::Off);
        let mut f = Frto::start(Seq(10));
        let mut dup = ack(0, 10);
        dup.advanced = false;
        assert_eq!(f.on_ack(&dup), FrtoStep::Retransmit, "waits for an advance");
        assert_eq!(f.on_ack(&ack(10, 10)), FrtoStep::Off);
    }
}
