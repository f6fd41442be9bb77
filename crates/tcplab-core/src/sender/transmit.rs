//! What the sender puts on the wire: new data, retransmissions and probes, as the windows
//! allow, with the counters each transmission increments.

use super::Sender;
use crate::log::TxKind;
use crate::scoreboard::SegIdx;
use crate::{DataSegment, Seq, Time};

/// What `poll_transmit` sends next.
enum Next {
    /// The retransmission a recovery strategy forces past the window.
    Forced(SegIdx),
    /// The probe a recovery strategy asked for.
    Probe,
    /// A segment marked lost.
    Retransmit(SegIdx),
    /// New data, `len` bytes.
    New(u64),
}

impl Sender {
    /// The next segment to put on the wire, if the windows allow one.
    pub fn poll_transmit(&mut self, now: Time) -> Option<DataSegment> {
        self.poll_transmit_with_kind(now).map(|(d, _)| d)
    }

    /// As `poll_transmit`, with what the transmission is: new data, or which kind of
    /// retransmission (the kind whose counter it incremented).
    #[inline(always)]
    pub fn poll_transmit_with_kind(&mut self, now: Time) -> Option<(DataSegment, TxKind)> {
        let next = self.next_transmission();
        // Only a paced sender is ever held (an unpaced one's pacer never waits).
        if self.paced && self.pacer.holds(now, self.cc.pacing_rate(), next.is_some()) {
            return None;
        }
        Some(match next? {
            Next::Forced(idx) => self.retransmit(now, idx, false),
            Next::Probe => {
                self.probe_pending = false;
                self.probe(now)?
            }
            Next::Retransmit(idx) => self.retransmit(now, idx, false),
            Next::New(len) => (self.send_new(now, len), TxKind::New),
        })
    }

    /// What the windows allow next, lost segments first. A pending probe that finds nothing
    /// to send is dropped; room in the windows with nothing to send marks the connection
    /// application-limited for the delivery-rate estimator.
    fn next_transmission(&mut self) -> Option<Next> {
        if let Some(idx) = self.sb.forced() {
            return Some(Next::Forced(idx));
        }
        if self.probe_pending {
            if self.can_send_new() || self.sb.highest_unsacked().is_some() {
                return Some(Next::Probe);
            }
            self.probe_pending = false;
        }
        let window = self.send_window().min(self.rwnd.max(self.cfg.mss as u64));
        let in_flight = self.rec.in_flight(&self.sb);
        if let Some(idx) = self.sb.next_pending().filter(|_| !self.frto_send_new) {
            let len = self.sb.seg(idx).map_or(0, |s| s.len as u64);
            return (in_flight + len <= window).then_some(Next::Retransmit(idx));
        }
        let len = self.app_remaining().min(self.cfg.mss as u64);
        if len == 0 {
            if let Some(r) = self.rate.as_mut().filter(|_| in_flight < window) {
                r.mark_app_limited(in_flight);
            }
            return None;
        }
        let una = self.snd_una();
        if in_flight + len > window || (self.snd_nxt + len).0 > una.0.saturating_add(self.rwnd) {
            return None;
        }
        Some(Next::New(len))
    }

    /// New data is waiting and the receive window takes a segment of it.
    pub(super) fn can_send_new(&self) -> bool {
        let len = self.app_remaining().min(self.cfg.mss as u64);
        len > 0 && (self.snd_nxt + len).0 <= self.snd_una().0.saturating_add(self.rwnd)
    }

    pub(super) fn send_new(&mut self, now: Time, len: u64) -> DataSegment {
        let seg = self.segment(now, self.snd_nxt, len as u32, 0);
        self.sb.on_send_new(now, len as u32);
        self.snd_nxt += len;
        self.after_send(now, self.sb.end() - 1, false);
        seg
    }

    /// A probe past the window: new data if the application and the receive window allow,
    /// else the highest segment sent (not SACKed).
    fn probe(&mut self, now: Time) -> Option<(DataSegment, TxKind)> {
        if self.can_send_new() {
            let len = self.app_remaining().min(self.cfg.mss as u64);
            return Some((self.send_new(now, len), TxKind::New));
        }
        let last = self.sb.highest_unsacked()?;
        Some(self.retransmit(now, last, true))
    }

    pub(super) fn retransmit(
        &mut self,
        now: Time,
        idx: SegIdx,
        probe: bool,
    ) -> (DataSegment, TxKind) {
        let st = *self.sb.seg(idx).expect("retransmission inside the window");
        let seg = self.segment(now, self.sb.seq_of(idx), st.len, st.tx_count);
        self.sb.on_retransmit(idx, now);
        if let Some(u) = self.undo.as_mut() {
            // The send time as the segment's TSval tells it (see `set_timestamp_tick`).
            let tick = self.ts_tick_ns;
            u.on_retransmit(Time::from_nanos(now.as_nanos() / tick * tick));
        }
        let kind = if probe {
            TxKind::Probe
        } else if std::mem::take(&mut self.fast_pending) {
            TxKind::Fast
        } else if self.rec.in_recovery() {
            TxKind::Recovery
        } else {
            TxKind::Timeout
        };
        let c = &mut self.counters;
        c.retransmits += 1;
        *match kind {
            TxKind::Probe => &mut c.retransmits_probe,
            TxKind::Fast => &mut c.retransmits_fast,
            TxKind::Recovery => &mut c.retransmits_recovery,
            TxKind::Timeout | TxKind::New => &mut c.retransmits_timeout,
        } += 1;
        self.after_send(now, idx, true);
        (seg, kind)
    }

    pub(super) fn segment(&mut self, now: Time, seq: Seq, len: u32, tx_before: u8) -> DataSegment {
        let cwr = std::mem::take(&mut self.cwr_pending);
        DataSegment {
            seq,
            len,
            ts_val: self.cfg.timestamps.then_some(now),
            ts_ecr: if self.cfg.timestamps {
                self.ts_recent
            } else {
                None
            },
            retransmission: tx_before,
            // RFC 3168 §6.1.5: retransmissions are not ECN-capable.
            ect: self.cfg.ecn && tx_before == 0,
            ce: false,
            cwr,
        }
    }

    #[inline(always)]
    pub(super) fn after_send(&mut self, now: Time, idx: SegIdx, retransmission: bool) {
        let len = self.sb.seg(idx).map_or(0, |s| s.len as u64);
        self.counters.segments_sent += 1;
        self.counters.bytes_sent += len;
        self.rec.on_transmit(now, idx, retransmission, &self.sb);
        if let Some(r) = self.rate.as_mut() {
            let outstanding_before = self.sb.outstanding() - if retransmission { 0 } else { len };
            let in_flight = self.rec.in_flight(&self.sb);
            r.on_send(
                now,
                idx,
                outstanding_before,
                in_flight,
                self.sb.lost_total(),
            );
        }
        if self.paced {
            self.pacer
                .on_send(now, len, self.cc.pacing_rate(), self.cc.send_quantum());
        }
        if self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }
}
