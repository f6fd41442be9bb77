//! What the sender records for its caller: the event log (off by default) and the loss
//! responses (always, drained by the caller).

use super::Sender;
use crate::cc::{self, CongestionKind};
use crate::log::{Event, LogRecord, LossResponse, WindowReason};
use crate::Time;

impl Sender {
    /// Turns the event log on or off (off by default).
    pub fn set_logging(&mut self, on: bool) {
        if on && !self.logging {
            // Window records show changes from here on (not tracked while off).
            self.logged_window = (self.send_window(), self.cc.ssthresh());
        }
        self.logging = on;
    }
    /// Moves the log records gathered so far into `out`.
    pub fn drain_log(&mut self, out: &mut Vec<LogRecord>) {
        out.append(&mut self.log);
    }
    /// Moves the loss responses (fast-retransmit entries and timeouts with the controller's
    /// verdict) recorded so far into `out`. They are recorded whether or not logging is on;
    /// a caller that never drains them keeps one small record per loss signal.
    pub fn drain_loss_responses(&mut self, out: &mut Vec<LossResponse>) {
        out.append(&mut self.loss_responses);
    }

    pub(super) fn note_loss_response(
        &mut self,
        now: Time,
        kind: CongestionKind,
        restart: bool,
        verdict: cc::Verdict,
        cwnd_before: u64,
    ) {
        self.loss_responses.push(LossResponse {
            time: now,
            kind,
            restart,
            label: verdict.label,
            value: verdict.value,
            seq: self.snd_una(),
            transmissions: self.sb.seg(self.sb.una()).map_or(0, |s| s.tx_count),
            cwnd_before,
            ssthresh_after: self.cc.ssthresh(),
            in_recovery: self.rec.in_recovery(),
            dupacks: self.dupacks_in_row,
        });
    }

    pub(super) fn record(&mut self, now: Time, event: Event, label: &'static str, value: f64) {
        if self.logging {
            self.log.push(LogRecord {
                time: now,
                event,
                cwnd: self.send_window(),
                ssthresh: self.cc.ssthresh(),
                seq: self.snd_una(),
                label,
                value,
            });
        }
    }

    #[inline]
    pub(super) fn log_window(&mut self, now: Time, reason: WindowReason) {
        if !self.logging {
            return; // the windows are read only for the log (two calls per ACK)
        }
        let w = (self.send_window(), self.cc.ssthresh());
        if w != self.logged_window {
            self.logged_window = w;
            self.record(now, Event::Window(reason), "", 0.0);
        }
    }
}
