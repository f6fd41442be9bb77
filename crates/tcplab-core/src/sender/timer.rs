//! The sender's timers: the retransmission timeout (RFC 6298) and the recovery strategy's
//! own timer (e.g. RACK's reordering window, a tail-loss probe).

use super::Sender;
use crate::cc::{self, CongestionKind};
use crate::log::{Event, WindowReason};
use crate::spurious::{Frto, Undo};
use crate::{RepeatedRto, Time};

impl Sender {
    /// When `on_timeout` is due: the retransmission timer, the recovery strategy's timer, or
    /// the release time of a sender held back by pacing (see `pacing`).
    pub fn poll_timeout(&self) -> Option<Time> {
        // The earlier of two optional deadlines (written out: an iterator over the three
        // costs several times more on every ACK).
        fn earlier(a: Option<Time>, b: Option<Time>) -> Option<Time> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, None) => a,
                (None, b) => b,
            }
        }
        let rto = self.rto_deadline;
        earlier(
            earlier(rto, self.rec.poll_timeout(rto)),
            self.pacer.poll_timeout(),
        )
    }

    /// A timer expired (call at or after `poll_timeout`; early calls do nothing).
    pub fn on_timeout(&mut self, now: Time) {
        if self
            .rec
            .poll_timeout(self.rto_deadline)
            .is_some_and(|t| t <= now)
        {
            let action = self.rec.on_timer(now, self.rto_deadline, &mut self.sb);
            if let Some(reason) = self.apply(now, action, None) {
                self.log_window(now, reason);
            }
        }
        if self.rto_deadline.is_none_or(|d| now < d) {
            return;
        }
        self.counters.timeouts += 1;
        self.rtt.back_off();
        self.sb.mark_all_lost();
        let ev = self.congestion_event(now, CongestionKind::Timeout);
        let cwnd_before = self.cc.cwnd();
        let una = self.snd_una();
        let repeated = self.rto_una.replace(una) == Some(una);
        let was_in_recovery = self.rec.in_recovery();
        let verdict = if repeated && self.cfg.repeated_rto == RepeatedRto::Rfc5681 {
            self.counters.timeouts_repeated += 1;
            self.cc.on_repeated_timeout(now);
            cc::Verdict {
                label: "held",
                value: 1.0,
            }
        } else {
            // Linux tcp_enter_loss: a timeout that interrupts a fast recovery keeps that
            // episode's undo state (the window before it, and retrans_stamp: the first
            // retransmission, so an ACK of data sent during the recovery is not taken for
            // proof that the timeout was spurious).
            let keeps_episode = was_in_recovery && self.undo.is_some();
            if !(repeated || keeps_episode) {
                let (cwnd, ssthresh) = (cwnd_before, self.cc.ssthresh());
                self.undo = (self.cfg.undo || self.cfg.frto).then(|| Undo::start(cwnd, ssthresh));
            }
            self.cc.on_congestion(&ev)
        };
        // RFC 5682 §3.1 step 1 (Linux tcp_enter_loss): F-RTO unless the timeout interrupts a
        // fast recovery, also for a repeated timeout of the same segment (§3.2).
        self.frto =
            (self.cfg.frto && (!was_in_recovery || repeated)).then(|| Frto::start(self.snd_nxt));
        self.note_loss_response(now, ev.kind, false, verdict, cwnd_before);
        self.rec.on_timeout(now, self.snd_nxt);
        self.rto_recover = Some(self.snd_nxt);
        self.fast_pending = false;
        self.probe_pending = false;
        self.rto_deadline = None; // restarted by the retransmission (RFC 6298 §5.5-5.6)
        self.record(
            now,
            Event::Timeout,
            verdict.label,
            self.rtt.rto().as_secs_f64(),
        );
        self.log_window(now, WindowReason::Timeout);
    }
}
