//! What the sender does with an acknowledgment: the scoreboard, the RTT estimator, the
//! facts handed to the controller and the recovery strategy, and the retransmission timer.

use super::Sender;
use crate::ack::AckFacts;
use crate::cc::{AckSample, Growth};
use crate::log::WindowReason;
use crate::recovery::AckInfo;
use crate::{AckSegment, Time};

impl Sender {
    /// An acknowledgment arrived.
    pub fn on_segment(&mut self, now: Time, ack: &AckSegment) {
        self.counters.acks_received += 1;
        if ack.ack > self.snd_nxt {
            return; // acknowledges data never sent: ignore (RFC 9293 §3.10.7.4)
        }
        let prev_una = self.snd_una();
        let prior_in_flight = self.rec.in_flight(&self.sb);
        self.rwnd = ack.window;
        // RFC 7323 §4.3: a pure ACK never lies beyond Last.ACK.sent; a newer TSval replaces.
        if ack.ts_val > self.ts_recent {
            self.ts_recent = ack.ts_val;
        }
        self.sb.take_delivery(); // what follows is this ACK's
        let acked = if ack.ack > prev_una {
            let to = self.sb.idx_covered_below(ack.ack);
            self.sb.ack_to(to)
        } else {
            Default::default()
        };
        let dsack = is_dsack(ack);
        if dsack {
            self.counters.dsacks_received += 1;
            if let (Some(u), Some(b)) = (self.undo.as_mut(), ack.sack.as_slice().first()) {
                let mss = self.cfg.mss as u64;
                u.on_dsack((b.end.0.saturating_sub(b.start.0)).div_ceil(mss) as u32);
            }
        }
        let mut sacked = 0;
        let uses_sack = self.rec.uses_sack();
        for (n, b) in ack.sack.iter().enumerate() {
            self.counters.sack_blocks_carried[n] += 1;
            if !uses_sack || (dsack && n == 0) || b.end <= ack.ack {
                continue; // a DSACK block reports a duplicate, nothing to record
            }
            let new = self.sb.sack(b.start.max(ack.ack), b.end);
            if new > 0 {
                self.counters.sack_blocks_used[n] += 1;
            }
            sacked += new;
        }
        let delivery = self.sb.take_delivery();
        let is_duplicate = acked.bytes == 0 && !self.sb.is_empty() && ack.ack == prev_una;
        if is_duplicate {
            self.counters.dup_acks += 1;
        }
        // Duplicate ACKs in a row as the strategy sees them: RFC 5681 duplicates, or, for
        // strategies that read SACK, ACKs that newly SACK data (RFC 6675 §2), the one that
        // also advances the cumulative ACK included.
        let dup = if uses_sack { sacked > 0 } else { is_duplicate };
        if acked.bytes > 0 {
            self.dupacks_in_row = 0;
        }
        if dup {
            self.dupacks_in_row += 1;
        }

        // RTT: timestamps on every ACK that advances; otherwise Karn's rule.
        let mut rtt = None;
        if acked.bytes > 0 {
            rtt = match (self.cfg.timestamps, ack.ts_ecr) {
                (true, Some(ecr)) => Some(now.saturating_since(ecr)),
                // Karn (RFC 6298 §3): no sample when the ACK covers retransmitted data, and
                // a segment SACKed earlier was delivered long before this ACK.
                (false, _) if !acked.retransmitted => {
                    acked.timed.map(|sent| now.saturating_since(sent))
                }
                _ => None,
            };
        }
        if let Some(r) = rtt {
            self.rtt.on_sample_at(r, self.snd_una(), self.snd_nxt);
            let c = &mut self.counters;
            c.rtt_samples += 1;
            c.rtt_sum_ns += r.as_nanos() as u128;
            c.rtt_min_ns = Some(c.rtt_min_ns.map_or(r.as_nanos(), |m| m.min(r.as_nanos())));
        }
        let delivered_bytes = acked.bytes - acked.previously_sacked_bytes + sacked;
        self.delivered += delivered_bytes;
        // The delivery-rate estimator's inputs, as they stand before any undo below (the
        // estimator itself takes them when the sample is built: nothing in between uses it).
        let (una, min_rtt, lost) = (self.sb.una(), self.rtt.min_rtt(), self.sb.lost_total());
        self.frto_send_new = false;
        if self.rto_recover.is_some() {
            self.after_timeout_ack(
                now,
                ack,
                acked.bytes > 0,
                &delivery,
                is_duplicate || sacked > 0,
            );
        }

        let facts = AckFacts {
            now,
            mss: self.cfg.mss,
            acked_bytes: acked.bytes,
            sacked_bytes: sacked,
            is_duplicate,
            srtt: self.rtt.srtt(),
            min_rtt: self.rtt.min_rtt(),
            snd_una: self.snd_una(),
        };
        let mut sample = AckSample {
            facts,
            rtt,
            snd_nxt: self.snd_nxt,
            in_flight: self.rec.in_flight(&self.sb),
            prior_in_flight,
            next_departure: self.pacer.release(),
            delivered: self.delivered,
            rate: None,
            in_recovery: self.rec.in_recovery(),
            newly_lost: 0,
        };
        // Set in place (a sample is ten words, and most controllers take none).
        if let Some(r) = self.rate.as_mut() {
            let newest = delivery
                .newest_original
                .max(delivery.newest_retransmitted)
                .map(|(_, idx)| idx);
            sample.rate = r.on_ack(now, delivered_bytes, newest, una, min_rtt, lost);
        }
        self.cc.observe(&sample);

        let info = AckInfo {
            facts,
            dupthresh: self.cfg.dupthresh,
            prev_una,
            snd_max: self.snd_nxt,
            delivered_bytes,
            delivery,
            dsack,
        };
        let was_in_recovery = self.rec.in_recovery();
        let owns_window = self.cc.owns_recovery_window();
        let action = self.rec.on_ack(&info, &mut self.sb);
        if dsack && !was_in_recovery && self.rto_recover.is_none() {
            self.try_undo(now, None, "dsack");
        }
        // RFC 3168 §6.1.2: an ACK that echoes congestion never grows the window.
        let grows = acked.bytes > 0 && !(ack.ece && self.cfg.ecn) && !owns_window;
        // Linux counts what the ACK newly delivered, SACKed segments included and those
        // SACKed before excluded (tcp_ack's acked_sacked), and grows on the ACK that ends
        // recovery too (tcp_cong_control runs after tcp_fastretrans_alert left Recovery).
        let linux = self.cfg.growth == Growth::Linux;
        let mut growth = sample;
        if linux {
            growth.facts.acked_bytes = delivered_bytes;
        }
        let reason = match self.apply(now, action, ack.ts_ecr) {
            Some(WindowReason::RecoveryExit) if linux && grows => {
                self.cc.on_ack(&growth);
                WindowReason::RecoveryExit
            }
            Some(reason) => reason,
            None if was_in_recovery => WindowReason::Recovery,
            None => {
                let reason = if self.cc.cwnd() < self.cc.ssthresh() {
                    WindowReason::SlowStart
                } else {
                    WindowReason::CongestionAvoidance
                };
                if grows {
                    self.cc.on_ack(&growth);
                }
                reason
            }
        };
        if owns_window {
            // Linux's cong_control: every ACK, after loss detection (tcp_ack calls it after
            // tcp_fastretrans_alert), with the losses this ACK revealed.
            sample.in_flight = self.rec.in_flight(&self.sb);
            sample.in_recovery = self.rec.in_recovery();
            sample.newly_lost = self.sb.lost_total().saturating_sub(lost);
            self.cc.on_ack(&sample);
        }
        if self.rto_recover.is_some_and(|r| self.snd_una() >= r) {
            self.rto_recover = None;
        }
        if ack.ece && self.cfg.ecn {
            self.on_ecn_echo(now);
        }

        // RFC 6298 §5.2-5.3: stop the timer when all is acknowledged, restart it on new ACKs.
        if self.sb.is_empty() {
            self.rto_deadline = None;
        } else if (acked.bytes > 0 && self.rec.restarts_timer()) || self.rto_deadline.is_none() {
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.log_window(now, reason);
    }
}

/// RFC 2883 §4: the first SACK block is a DSACK report when it lies below the cumulative
/// ACK or inside the second block (a receiver's ordinary blocks lie above the cumulative
/// ACK and are disjoint, so this never mistakes one for a DSACK).
fn is_dsack(ack: &AckSegment) -> bool {
    let b = ack.sack.as_slice();
    match b {
        [] => false,
        [first, rest @ ..] => {
            first.start < ack.ack
                || rest
                    .first()
                    .is_some_and(|s| s.start <= first.start && first.end <= s.end)
        }
    }
}
