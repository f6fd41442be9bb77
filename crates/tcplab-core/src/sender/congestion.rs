//! The sender's answers to congestion signals: carrying out what the recovery strategy
//! asks for (entering, leaving, restarting recovery, probing), ECN echoes and cross-layer
//! reports, each handed to the controller.

use super::Sender;
use crate::cc::{self, CongestionEvent, CongestionKind, CrossLayerReport};
use crate::log::{Event, WindowReason};
use crate::recovery::RecoveryAction;
use crate::spurious::Undo;
use crate::Time;

impl Sender {
    /// Carries out what the recovery strategy asked for; the window reason when it acted.
    pub(super) fn apply(
        &mut self,
        now: Time,
        action: RecoveryAction,
        ts_ecr: Option<Time>,
    ) -> Option<WindowReason> {
        match action {
            RecoveryAction::None => None,
            RecoveryAction::Enter => {
                self.enter_recovery(now, false);
                Some(WindowReason::FastRetransmit)
            }
            RecoveryAction::Exit { cwnd } => {
                self.exit_recovery(now, cwnd);
                // Linux tcp_try_undo_recovery: at the end of recovery.
                if self.try_undo(now, ts_ecr, "timestamp") {
                    return Some(WindowReason::Undo);
                }
                Some(WindowReason::RecoveryExit)
            }
            RecoveryAction::Renew => {
                self.exit_recovery(now, None);
                if self.try_undo(now, ts_ecr, "timestamp") {
                    return Some(WindowReason::Undo);
                }
                self.enter_recovery(now, false);
                Some(WindowReason::FastRetransmit)
            }
            RecoveryAction::Restart { cwnd } => {
                self.exit_recovery(now, cwnd);
                self.enter_recovery(now, true);
                Some(WindowReason::FastRetransmit)
            }
            RecoveryAction::Probe => {
                self.counters.probes += 1;
                self.probe_pending = true;
                // RFC 8985 §7.3: the probe rearms the retransmission timer.
                self.rto_deadline = Some(now + self.rtt.rto());
                None
            }
        }
    }

    pub(super) fn enter_recovery(&mut self, now: Time, restart: bool) {
        if restart {
            self.counters.recovery_restarts += 1;
        } else {
            self.counters.recoveries += 1;
        }
        let ev = self.congestion_event(now, CongestionKind::FastRetransmit);
        let cwnd_before = self.cc.cwnd();
        // The hole (at snd.una) was sent before the ECN response: the same window.
        let same_window = self.reduced_until.is_some_and(|r| self.snd_una() < r);
        let verdict = if !restart && self.ecn_window && same_window {
            // Already reduced for this window by an ECN response (RFC 3168 §6.1.2).
            cc::Verdict {
                label: "ecn-held",
                value: 1.0,
            }
        } else {
            let ssthresh_before = self.cc.ssthresh();
            // A restart (a lost retransmission) proves a real loss: nothing to undo.
            self.undo =
                (self.cfg.undo && !restart).then(|| Undo::start(cwnd_before, ssthresh_before));
            self.cc.on_congestion(&ev)
        };
        self.reduced_until = Some(self.snd_nxt);
        self.ecn_window = false;
        self.note_loss_response(now, ev.kind, restart, verdict, cwnd_before);
        self.rec.enter(
            now,
            self.cc.cwnd(),
            self.cc.ssthresh(),
            self.snd_nxt,
            &mut self.sb,
        );
        self.fast_pending = !restart;
        self.record(now, Event::RecoveryEnter, verdict.label, verdict.value);
    }

    pub(super) fn exit_recovery(&mut self, now: Time, cwnd: Option<u64>) {
        let c = cwnd.unwrap_or(self.cc.ssthresh());
        self.cc.on_recovery_exit(now, c);
        self.fast_pending = false;
        self.record(now, Event::RecoveryExit, "", 0.0);
    }

    pub(super) fn on_ecn_echo(&mut self, now: Time) {
        // RFC 3168 §6.1.2: one reduction per window. ECE is ignored until an ACK covers data
        // sent after the last reduction (snd_una > recover): the ACK of exactly `recover` was
        // sent before the receiver saw our CWR, so its ECE still echoes the old mark.
        if self.rec.in_recovery() || self.reduced_until.is_some_and(|r| self.snd_una() <= r) {
            return;
        }
        self.counters.ecn_reductions += 1;
        self.undo = None;
        let ev = self.congestion_event(now, CongestionKind::Ecn);
        let verdict = self.cc.on_congestion(&ev);
        self.reduced_until = Some(self.snd_nxt);
        self.ecn_window = true;
        self.cwr_pending = true;
        self.record(now, Event::EcnResponse, verdict.label, verdict.value);
        self.log_window(now, WindowReason::Ecn);
    }

    pub(super) fn congestion_event(&self, now: Time, kind: CongestionKind) -> CongestionEvent {
        CongestionEvent {
            now,
            kind,
            mss: self.cfg.mss,
            flight_size: self.sb.outstanding(),
            latest_rtt: self.rtt.latest(),
            min_rtt: self.rtt.min_rtt(),
        }
    }

    /// A cross-layer report from a lossy hop (see [`CrossLayerReport`]): handed to the
    /// controller as is. Controllers that do not use such reports ignore it.
    pub fn on_cross_layer(&mut self, report: &CrossLayerReport) {
        self.cc.on_cross_layer(report);
    }
}
