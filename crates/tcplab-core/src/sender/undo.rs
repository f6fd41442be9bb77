//! The sender's side of undo and F-RTO (`crate::spurious` holds their rules): what it does
//! with an ACK during a timeout's recovery, and how an unnecessary reduction is undone.

use super::Sender;
use crate::log::{Event, WindowReason};
use crate::scoreboard::Delivery;
use crate::spurious::{FrtoAck, FrtoStep};
use crate::{AckSegment, Time};

impl Sender {
    /// During a timeout's recovery (Linux `tcp_process_loss`): undo when the timeout proves
    /// spurious, and run F-RTO.
    pub(super) fn after_timeout_ack(
        &mut self,
        now: Time,
        ack: &AckSegment,
        advanced: bool,
        delivery: &Delivery,
        dup_or_sacked: bool,
    ) {
        // tcp_try_undo_loss(sk, false): an advancing ACK, with every retransmission
        // duplicated or echoing a timestamp older than the first retransmission.
        if self.cfg.undo && advanced && self.try_undo(now, ack.ts_ecr, "timestamp") {
            return;
        }
        let Some(mut f) = self.frto else {
            return;
        };
        let step = f.on_ack(&FrtoAck {
            snd_una: self.snd_una(),
            snd_nxt: self.snd_nxt,
            advanced,
            lowest_original: delivery.lowest_original.map(|i| self.sb.seq_of(i)),
            dup_or_sacked,
            can_send_new: self.can_send_new(),
        });
        self.frto = Some(f);
        match step {
            FrtoStep::Spurious => {
                if self.undo.is_some() {
                    self.undo_with(now, "frto");
                }
                self.frto = None;
            }
            FrtoStep::SendNew => self.frto_send_new = true,
            FrtoStep::Retransmit => {}
            FrtoStep::Off => self.frto = None,
        }
    }

    /// Undoes the latest reduction if `Undo::may_undo` says it was unnecessary.
    pub(super) fn try_undo(&mut self, now: Time, ts_ecr: Option<Time>, how: &'static str) -> bool {
        let ts_ecr = if self.cfg.timestamps { ts_ecr } else { None };
        if !self.cfg.undo || !self.undo.is_some_and(|u| u.may_undo(ts_ecr)) {
            return false;
        }
        let how = match self
            .undo
            .is_some_and(|u| u.all_retransmissions_duplicated())
        {
            true => "dsack",
            false => how,
        };
        self.undo_with(now, how);
        true
    }

    /// Hands the window before the latest reduction back to the controller; after a timeout
    /// nothing is presumed lost any more.
    fn undo_with(&mut self, now: Time, how: &'static str) {
        let Some(u) = self.undo.take() else {
            return;
        };
        self.cc.on_undo(now, u.prior_cwnd, u.prior_ssthresh);
        if self.rto_recover.take().is_some() {
            self.sb.unmark_lost();
            self.frto = None;
            self.frto_send_new = false;
            self.counters.undos_timeout += 1;
        } else {
            self.counters.undos_recovery += 1;
        }
        self.record(now, Event::Undo, how, 0.0);
        self.log_window(now, WindowReason::Undo);
    }
}
