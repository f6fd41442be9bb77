//! RACK-TLP (RFC 8985): time-based loss detection with tail loss probes.
//!
//! RACK remembers the most recently sent segment that has been delivered (RACK.xmit_ts,
//! RACK.end_seq) and RACK.rtt = now - its send time; retransmissions count only when their
//! ACK came at least min_RTT after them (it may be for the original). A segment sent before
//! it is lost once `xmit_ts + RACK.rtt + reo_wnd <= now`; segments not yet expired arm the
//! reordering timer for the latest of them (§6.2 step 5). reo_wnd = min(min_RTT/4, SRTT),
//! or 0 while no reordering has been seen and the sender is in recovery or `dupthresh`
//! segments are SACKed; reordering is seen when an original segment is delivered below the
//! highest delivered one (§6.2 step 3). Lost retransmissions are found the same way.
//! DSACK adaptation (§6.2 step 4): the first ACK with a DSACK block in a round trip
//! (until snd.una passes snd.nxt of that moment) multiplies min_RTT/4 by one more
//! (`reo_wnd_mult` += 1) and gives it 16 recoveries to live; every exit from fast or RTO
//! recovery without a fresh DSACK uses one up, and after 16 the multiplier is 1 again. The
//! receiver sends DSACK blocks only with `TcpConfig::dsack`.
//!
//! Any segment marked lost outside recovery starts recovery (the controller reduces; the
//! first lost segment is retransmitted at once). During recovery the sender keeps
//! pipe <= window, with `window = "rfc6675"` (default: cwnd = ssthresh, as `sack`) or
//! `"prr"` (RFC 6937, `bound` as in `prr`); recovery ends at the RFC 6675 recovery point.
//!
//! Tail loss probe (`tlp`, on by default): outside recovery, after new data is sent or an ACK
//! advances snd.una, the PTO is armed at 2*SRTT (+ `wc_delack_ms`, 200 ms, when one segment
//! is in flight; 1 s without SRTT), unless the reordering timer runs or a probe is
//! outstanding. When it fires the sender sends one segment past the window (new data if any,
//! else the highest un-SACKed segment again) and restarts the RTO. The probe's ACK lets RACK
//! detect the tail losses. The PTO never fires later than the retransmission timer would
//! (§7.2; Linux tcp_schedule_loss_probe caps it at tcp_rto_delta_us): when both are due
//! together the probe goes out and the RTO restarts. A retransmitted probe's episode
//! (§7.4, Linux tcp_process_tlp_ack) ends without a reduction when an ACK carries a DSACK
//! (the original and the probe both arrived) or is a pure duplicate ACK of exactly the
//! probe's end (the same, from a receiver without DSACK); it ends with one reduction when an
//! ACK goes beyond the data sent before the probe with neither seen and no recovery started:
//! the probe repaired a loss, so recovery is entered with nothing to retransmit.

use super::detect::{require_sack, Episode};
use super::reduction::{PrrBound, PrrWindow};
use super::{AckInfo, LossRecovery, RecoveryAction, RecoveryContext};
use crate::scoreboard::{Scoreboard, SegIdx};
use crate::{ConfigError, Dur, ParamReader, Params, Seq, Time};
use std::collections::BTreeSet;

/// Recoveries a DSACK-widened reordering window lasts (RFC 8985 §6.2 step 4).
const REO_WND_PERSIST: u32 = 16;

#[derive(Clone, Debug)]
pub struct Rack {
    mss: u64,
    dupthresh: u32,
    episode: Episode,
    ssthresh: u64,
    prr: Option<PrrWindow>,
    entry_delivered: u64,
    /// RACK.xmit_ts and RACK.end_seq (as a segment index) of the newest delivered segment.
    xmit: Option<(Time, SegIdx)>,
    rtt: Dur,
    rack_min_rtt: Option<Dur>,
    min_rtt: Option<Dur>,
    srtt: Option<Dur>,
    /// RACK.fack: one past the highest delivered segment.
    fack: SegIdx,
    reordering_seen: bool,
    /// §6.2 step 4: RACK.reo_wnd_mult, RACK.reo_wnd_persist, RACK.dsack_round.
    reo_wnd_mult: u64,
    reo_wnd_persist: u32,
    dsack_round: Option<Seq>,
    /// Recovering after a retransmission timeout (until snd.una passes snd.max of then).
    rto_recovering: bool,
    /// Transmissions by (send time, segment): the time order RACK scans. Stale entries
    /// (delivered, declared lost and not resent, or resent later) are dropped when met.
    sent: BTreeSet<(Time, SegIdx)>,
    reo_timer: Option<Time>,
    tlp: bool,
    wc_delack: Dur,
    pto: Option<Time>,
    probe_requested: bool,
    /// TLP.end_seq (segment index) and TLP.is_retrans of the outstanding probe.
    tlp_end: Option<SegIdx>,
    tlp_retrans: bool,
}

impl Rack {
    pub fn new(ctx: &RecoveryContext, prr: Option<PrrBound>, tlp: bool, wc_delack: Dur) -> Self {
        Rack {
            mss: ctx.mss as u64,
            dupthresh: ctx.dupthresh,
            episode: Episode::default(),
            ssthresh: 0,
            prr: prr.map(|b| PrrWindow::new(b, ctx.mss as u64)),
            entry_delivered: 0,
            xmit: None,
            rtt: Dur::ZERO,
            rack_min_rtt: None,
            min_rtt: None,
            srtt: None,
            fack: 0,
            reordering_seen: false,
            reo_wnd_mult: 1,
            reo_wnd_persist: REO_WND_PERSIST,
            dsack_round: None,
            rto_recovering: false,
            sent: BTreeSet::new(),
            reo_timer: None,
            tlp,
            wc_delack,
            pto: None,
            probe_requested: false,
            tlp_end: None,
            tlp_retrans: false,
        }
    }

    pub fn from_params(ctx: &RecoveryContext, params: &Params) -> Result<Self, ConfigError> {
        let mut r = ParamReader::new("recovery rack", params);
        let prr = r.choice("window", "rfc6675", &["rfc6675", "prr"])? == "prr";
        let bound = PrrBound::parse(&mut r)?;
        let tlp = r.flag("tlp", true)?;
        let delack = r.num("wc_delack_ms", 200.0, 0.0, 10_000.0)?;
        r.finish()?;
        require_sack(ctx, "rack")?;
        let wc = Dur::from_secs_f64(delack / 1000.0);
        Ok(Self::new(ctx, prr.then_some(bound), tlp, wc))
    }

    /// RFC 8985 §6.2 step 4, first half: the DSACK-driven multiplier. `exiting` is true on
    /// the ACK that ends a fast or RTO recovery.
    fn adapt_reo_wnd(&mut self, ack: &AckInfo, exiting: bool) {
        if self.dsack_round.is_some_and(|r| ack.snd_una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && ack.dsack {
            self.dsack_round = Some(ack.snd_max);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        } else if exiting {
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
    }

    /// The reordering window's multiplier of min_RTT/4 (1 until DSACKs raise it).
    pub fn reo_wnd_mult(&self) -> u64 {
        self.reo_wnd_mult
    }

    /// RFC 8985 §6.2 step 4, second half: the window itself.
    fn reo_wnd(&self, sb: &Scoreboard, snd_una: Seq) -> Dur {
        let rto_recovery = !self.in_recovery() && !self.episode.may_start(snd_una);
        if !self.reordering_seen
            && (self.in_recovery()
                || rto_recovery
                || sb.sacked_bytes() >= self.dupthresh as u64 * self.mss)
        {
            return Dur::ZERO;
        }
        let w = self
            .min_rtt
            .map_or(Dur::ZERO, |m| m / 4 * self.reo_wnd_mult);
        self.srtt.map_or(w, |s| w.min(s))
    }

    /// Steps 1-3: RACK.rtt, RACK.xmit_ts/end_seq, reordering, from what the ACK delivered.
    fn update(&mut self, ack: &AckInfo, sb: &Scoreboard) {
        let d = &ack.delivery;
        let spurious_ok = |&(t, _): &(Time, SegIdx)| {
            self.min_rtt
                .is_none_or(|m| ack.now.saturating_since(t) >= m)
        };
        let newest = d
            .newest_original
            .max(d.newest_retransmitted.filter(spurious_ok));
        if let Some(key) = newest {
            if self.xmit.is_none_or(|x| key > x) {
                self.xmit = Some(key);
                self.rtt = ack.now.saturating_since(key.0);
                self.rack_min_rtt = Some(self.rack_min_rtt.map_or(self.rtt, |m| m.min(self.rtt)));
            }
        }
        self.min_rtt = match (ack.min_rtt, self.rack_min_rtt) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.srtt = ack.srtt;
        if d.lowest_original.is_some_and(|l| l < self.fack) {
            self.reordering_seen = true;
        }
        let top = d.highest_sacked.map_or(0, |h| h + 1).max(sb.una());
        self.fack = self.fack.max(top);
    }

    /// Step 5: marks lost what expired; arms the reordering timer for the rest. True when
    /// something was newly declared lost.
    fn detect_loss(&mut self, now: Time, snd_una: Seq, sb: &mut Scoreboard) -> bool {
        self.reo_timer = None;
        let Some(rack) = self.xmit else {
            return false;
        };
        let reo = self.reo_wnd(sb, snd_una);
        let live = |sb: &Scoreboard, (t, i): (Time, SegIdx)| {
            sb.seg(i).is_some_and(|s| {
                s.sent_at == t && !s.sacked() && (!s.lost() || s.retransmission_in_flight())
            })
        };
        let mut lost = false;
        while let Some(&e) = self.sent.first() {
            if e >= rack {
                break; // not sent before the newest delivered segment
            }
            if !live(sb, e) {
                self.sent.pop_first();
                continue;
            }
            if e.0 + self.rtt + reo > now {
                break; // later entries were sent later still
            }
            self.sent.pop_first();
            if sb.seg(e.1).is_some_and(|s| s.retransmission_in_flight()) {
                sb.mark_retransmission_lost(e.1);
            } else {
                sb.mark_lost(e.1);
            }
            lost = true;
        }
        while let Some(&e) = self.sent.range(..rack).next_back() {
            if live(sb, e) {
                self.reo_timer = Some(e.0 + self.rtt + reo);
                break;
            }
            self.sent.remove(&e);
        }
        lost
    }

    fn arm_pto(&mut self, now: Time, sb: &Scoreboard) {
        let allowed = self.tlp
            && !self.in_recovery()
            && self
                .episode
                .may_start(sb.snd_nxt().min(sb.seq_of(sb.una())))
            && self.reo_timer.is_none()
            && self.tlp_end.is_none()
            && !sb.is_empty();
        self.pto = allowed.then(|| {
            let pto = match self.srtt {
                Some(s) if sb.outstanding() <= self.mss => s * 2 + self.wc_delack,
                Some(s) => s * 2,
                None => Dur::from_secs(1),
            };
            now + pto
        });
    }

    /// Steps after the ACK or timer: start recovery when something was declared lost.
    fn maybe_enter(&mut self, lost: bool, snd_una: Seq, delivered: u64) -> RecoveryAction {
        if lost && !self.in_recovery() && self.episode.may_start(snd_una) {
            self.entry_delivered = delivered;
            return RecoveryAction::Enter;
        }
        RecoveryAction::None
    }
}

impl LossRecovery for Rack {
    fn name(&self) -> &'static str {
        "rack"
    }
    fn in_recovery(&self) -> bool {
        self.episode.active()
    }
    fn on_ack(&mut self, ack: &AckInfo, sb: &mut Scoreboard) -> RecoveryAction {
        self.update(ack, sb);
        let rto_exit = self.rto_recovering && self.episode.may_start(ack.snd_una);
        if rto_exit {
            self.rto_recovering = false;
        }
        let fast_exit = self.in_recovery() && self.episode.may_start(ack.snd_una);
        self.adapt_reo_wnd(ack, rto_exit || fast_exit);
        if self.in_recovery() && self.episode.ends(ack.snd_una) {
            self.tlp_end = None;
            if sb.lost_bytes() > 0 {
                // Segments above the recovery point already presumed lost (retransmitted or
                // not): Linux starts a new recovery on this ACK (tcp_fastretrans_alert: the
                // state is Open again and tcp_time_to_recover finds lost_out).
                self.entry_delivered = ack.delivered_bytes;
                return RecoveryAction::Renew;
            }
            // Losses above the recovery point not yet declared are a new episode: the next
            // ACK (or the reordering timer, still armed) declares them.
            self.arm_pto(ack.now, sb);
            return RecoveryAction::Exit { cwnd: None };
        }
        let lost = self.detect_loss(ack.now, ack.snd_una, sb);
        if self.in_recovery() {
            if let Some(p) = self.prr.as_mut() {
                p.on_ack(
                    ack.delivered_bytes,
                    sb.pipe(),
                    ack.snd_una > ack.prev_una && !lost,
                );
            }
            return RecoveryAction::None;
        }
        // §7.4: the probe's episode ends; a retransmitted probe that repaired a loss with
        // no recovery started means one reduction.
        if let Some(e) = self.tlp_end {
            let una = sb.una();
            let pure_dupack =
                una == e && ack.snd_una == ack.prev_una && ack.sacked_bytes == 0 && !ack.dsack;
            if !self.tlp_retrans {
                if una >= e {
                    self.tlp_end = None;
                }
            } else if (ack.dsack && una >= e) || pure_dupack {
                self.tlp_end = None; // the probe was a duplicate: no loss
            } else if una > e {
                self.tlp_end = None;
                if !lost && self.episode.may_start(ack.snd_una) {
                    self.entry_delivered = ack.delivered_bytes;
                    return RecoveryAction::Enter;
                }
            }
        }
        let action = self.maybe_enter(lost, ack.snd_una, ack.delivered_bytes);
        if action == RecoveryAction::None && ack.acked_bytes > 0 {
            self.arm_pto(ack.now, sb);
        }
        if sb.is_empty() {
            self.pto = None;
        }
        action
    }
    fn enter(&mut self, _now: Time, _cwnd: u64, ssthresh: u64, snd_max: Seq, sb: &mut Scoreboard) {
        self.episode.start(snd_max);
        self.ssthresh = ssthresh;
        self.pto = None;
        if let Some(p) = self.prr.as_mut() {
            p.start(ssthresh, sb.outstanding());
        }
        if let Some(i) = sb.next_pending() {
            sb.force_retransmit(i);
        }
        let delivered = std::mem::take(&mut self.entry_delivered);
        if let Some(p) = self.prr.as_mut() {
            p.on_ack(delivered, sb.pipe(), false); // the entering ACK marked losses
        }
    }
    fn uses_sack(&self) -> bool {
        true
    }
    fn window(&self) -> u64 {
        self.prr.as_ref().map_or(self.ssthresh, |p| p.window())
    }
    fn on_transmit(&mut self, now: Time, idx: SegIdx, retransmission: bool, sb: &Scoreboard) {
        self.sent.insert((now, idx));
        if self.in_recovery() {
            if let Some(p) = self.prr.as_mut() {
                p.on_transmit(sb.seg(idx).map_or(0, |s| s.len as u64));
            }
        }
        if std::mem::take(&mut self.probe_requested) {
            self.tlp_end = Some(sb.end());
            self.tlp_retrans = retransmission;
        } else if !retransmission {
            self.arm_pto(now, sb);
        }
    }
    fn poll_timeout(&self, rto: Option<Time>) -> Option<Time> {
        let pto = match (self.pto, rto) {
            (Some(p), Some(r)) => Some(p.min(r)),
            (p, _) => p,
        };
        match (self.reo_timer, pto) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
    fn on_timer(&mut self, now: Time, rto: Option<Time>, sb: &mut Scoreboard) -> RecoveryAction {
        let una = sb.snd_una();
        if self.reo_timer.is_some_and(|t| t <= now) {
            let lost = self.detect_loss(now, una, sb);
            let action = self.maybe_enter(lost, una, 0);
            if action != RecoveryAction::None {
                return action;
            }
        }
        if self.pto.is_some_and(|t| t.min(rto.unwrap_or(t)) <= now) {
            self.pto = None;
            if !self.in_recovery() && !sb.is_empty() && self.tlp_end.is_none() {
                self.probe_requested = true;
                return RecoveryAction::Probe;
            }
        }
        RecoveryAction::None
    }
    fn on_timeout(&mut self, _now: Time, snd_max: Seq) {
        self.episode.timeout(snd_max);
        self.rto_recovering = true;
        self.reo_timer = None;
        self.pto = None;
        self.probe_requested = false;
        self.tlp_end = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scoreboard::Delivery;

    fn ack(una: u64, max: u64, dsack: bool) -> AckInfo {
        AckInfo {
            facts: crate::ack::AckFacts {
                now: Time::ZERO,
                mss: 1000,
                acked_bytes: 0,
                sacked_bytes: 0,
                is_duplicate: true,
                srtt: None,
                min_rtt: None,
                snd_una: Seq(una),
            },
            dupthresh: 3,
            prev_una: Seq(una),
            snd_max: Seq(max),
            delivered_bytes: 0,
            delivery: Delivery::default(),
            dsack,
        }
    }

    fn rack() -> Rack {
        let ctx = RecoveryContext {
            mss: 1000,
            dupthresh: 3,
            sack: true,
        };
        Rack::new(&ctx, None, true, Dur::ZERO)
    }

    #[test]
    fn one_dsack_round_raises_the_multiplier_once() {
        let mut r = rack();
        assert_eq!(r.reo_wnd_mult(), 1);
        r.adapt_reo_wnd(&ack(0, 10_000, true), false);
        // More DSACKs before snd.una passes 10 000 belong to the same round.
        r.adapt_reo_wnd(&ack(5_000, 12_000, true), false);
        assert_eq!(r.reo_wnd_mult(), 2);
        r.adapt_reo_wnd(&ack(10_000, 15_000, true), false);
        assert_eq!(r.reo_wnd_mult(), 3);
    }

    #[test]
    fn the_multiplier_resets_after_sixteen_recoveries_without_dsack() {
        let mut r = rack();
        r.adapt_reo_wnd(&ack(0, 10_000, true), false);
        assert_eq!(r.reo_wnd_mult(), 2);
        for i in 1..REO_WND_PERSIST {
            r.adapt_reo_wnd(
                &ack(10_000 * i as u64, 10_000 * (i as u64 + 1), false),
                true,
            );
            assert_eq!(r.reo_wnd_mult(), 2, "after {i} recoveries");
        }
        r.adapt_reo_wnd(&ack(1_000_000, 1_100_000, false), true);
        assert_eq!(r.reo_wnd_mult(), 1);
        // ACKs that end no recovery do not count.
        r.adapt_reo_wnd(&ack(2_000_000, 2_100_000, true), false);
        for _ in 0..40 {
            r.adapt_reo_wnd(&ack(3_000_000, 3_100_000, false), false);
        }
        assert_eq!(r.reo_wnd_mult(), 2);
    }
}
