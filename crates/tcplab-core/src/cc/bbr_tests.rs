//! Scripted tests of BBR's state machine: samples are built by hand, one ACK per round.

use super::*;
use crate::cc::testutil::{self, AckBuilder, MSS};
use crate::cc::Growth;
use crate::rate::RateSample;

const M: u64 = MSS as u64;

fn bbr(seed: u64) -> Bbr {
    let ctx = CcContext {
        seed,
        ..testutil::ctx(Growth::PerAck)
    };
    Bbr::new(&ctx, BbrParams::default())
}

/// A script of ACKs: each call is one ACK that starts a new round (its sample's segment was
/// sent after the previous round began), delivering `rate` bytes/s over one RTT.
struct Script {
    b: Bbr,
    now: Time,
    delivered: u64,
    rtt: Dur,
    /// Bytes the next ACK's rate sample says were declared lost since the previous one.
    rate_losses: u64,
    /// For the next ACK only: the data in flight before it, and how long after it the
    /// sender's next segment may leave (by default: as after it, and at once).
    next: Option<(u64, Dur)>,
}

impl Script {
    fn new(b: Bbr) -> Self {
        Script {
            b,
            now: Time::ZERO,
            delivered: 0,
            rtt: Dur::from_millis(40),
            rate_losses: 0,
            next: None,
        }
    }
    /// One round at `rate` bytes/s with `in_flight` bytes after the ACK; RTT `rtt_ms`.
    fn round(&mut self, rate: u64, in_flight: u64, rtt_ms: u64) {
        let prior = self.delivered;
        let bytes = rate * self.rtt.as_nanos() / 1_000_000_000;
        self.ack(bytes, prior, in_flight, rtt_ms, (false, 0));
    }

    /// One ACK delivering `bytes` with `in_flight` bytes in flight before and after it,
    /// whose newest segment was sent when `prior` bytes had
    /// been delivered (a new round when that is at least the round's start), one RTT
    /// after the previous; `recovery`: in recovery, bytes newly marked lost.
    fn ack(&mut self, bytes: u64, prior: u64, in_flight: u64, rtt_ms: u64, recovery: (bool, u64)) {
        self.now += self.rtt;
        self.delivered += bytes;
        let (prior_in_flight, release_in) = self.next.take().unwrap_or((in_flight, Dur::ZERO));
        let s = AckBuilder::at(self.now)
            .acked(bytes)
            .rtt_ms(rtt_ms)
            .min_rtt(Dur::from_millis(40))
            .delivered(self.delivered)
            .in_flight(in_flight)
            .prior_in_flight(prior_in_flight)
            .next_departure(self.now + release_in)
            .recovery(recovery.0, recovery.1)
            .rate(RateSample {
                prior_delivered: prior,
                delivered: bytes,
                interval: Some(self.rtt),
                is_app_limited: false,
                rtt: Some(Dur::from_millis(rtt_ms)),
                tx_in_flight: 0,
                lost: 0,
                losses: std::mem::take(&mut self.rate_losses),
            })
            .build();
        self.b.observe(&s);
        self.b.on_ack(&s);
    }
}

#[test]
fn startup_paces_at_2_over_ln2_and_measures_the_max_rate() {
    let mut s = Script::new(bbr(1));
    s.round(100_000, 10 * M, 40);
    assert_eq!(s.b.mode(), Mode::Startup);
    assert_eq!(s.b.btl_bw(), 100_000);
    assert!((s.b.pacing_gain() - 2.0 / std::f64::consts::LN_2).abs() < 0.005);
    let want = (100_000.0 * s.b.pacing_gain() * 0.99) as u64;
    // The rate from the initial window and the smoothed RTT (2000 B / 40 ms * 2.89) is
    // lower: the bandwidth rules.
    assert_eq!(s.b.pacing_rate(), Some(want));
    assert_eq!(s.b.rt_prop(), Some(Dur::from_millis(40)));
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth() {
    let mut s = Script::new(bbr(1));
    for rate in [100_000, 200_000, 400_000] {
        s.round(rate, 100 * M, 40);
    }
    // 450k < 1.25 x 400k: one, two rounds without growth.
    s.round(450_000, 100 * M, 40);
    s.round(460_000, 100 * M, 40);
    assert_eq!((s.b.mode(), s.b.full_pipe()), (Mode::Startup, false));
    // A round with 25 % growth resets the count.
    s.round(500_000, 100 * M, 40);
    s.round(510_000, 100 * M, 40);
    s.round(520_000, 100 * M, 40);
    assert_eq!(s.b.mode(), Mode::Startup);
    s.round(530_000, 100 * M, 40);
    assert_eq!((s.b.mode(), s.b.full_pipe()), (Mode::Drain, true));
    assert!((s.b.pacing_gain() - std::f64::consts::LN_2 / 2.0).abs() < 0.001);
    // ssthresh: one BDP (530 kB/s x 40 ms = 21.2 -> 22 segments) + 3 quanta of 2, even.
    assert_eq!(s.b.ssthresh(), 28 * M);
}

#[test]
fn drain_lasts_until_the_data_in_flight_is_one_bdp() {
    let mut s = Script::new(bbr(1));
    for rate in [100_000, 200_000, 200_000, 200_000, 200_000] {
        s.round(rate, 100 * M, 40);
    }
    assert_eq!(s.b.mode(), Mode::Drain);
    let bdp = s.b.inflight_target(s.b.btl_bw(), 1.0);
    s.round(200_000, bdp + 1, 40);
    assert_eq!(s.b.mode(), Mode::Drain);
    s.round(200_000, bdp, 40);
    assert_eq!(s.b.mode(), Mode::ProbeBw);
    assert_ne!(s.b.cycle_index(), 1, "never starts in the 3/4 phase");
}

#[test]
fn probe_bw_starts_at_a_random_phase_other_than_the_drain_phase() {
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..200 {
        let mut b = bbr(seed);
        b.reset_probe_bw(Time::ZERO);
        seen[b.cycle_index()] += 1;
    }
    assert_eq!(seen[1], 0);
    assert!(
        seen.iter().enumerate().all(|(i, &n)| i == 1 || n > 0),
        "{seen:?}"
    );
    // The same seed, the same phase.
    let (mut a, mut b) = (bbr(7), bbr(7));
    a.reset_probe_bw(Time::ZERO);
    b.reset_probe_bw(Time::ZERO);
    assert_eq!(a.cycle_index(), b.cycle_index());
}

#[test]
fn probe_bw_cycles_the_gains_one_rtprop_per_phase() {
    let mut s = Script::new(bbr(3));
    for rate in [100_000, 200_000, 200_000, 200_000, 200_000] {
        s.round(rate, 100 * M, 40);
    }
    s.round(200_000, 0, 40);
    assert_eq!(s.b.mode(), Mode::ProbeBw);
    let mut gains = Vec::new();
    // In flight always at 2 BDP: the 5/4 phase ends after RTprop (inflight reached), the
    // 3/4 phase after RTprop; each round is 40 ms, just not longer than RTprop, so phases
    // advance every other round.
    let high = 3 * s.b.inflight_target(200_000, 1.0);
    for _ in 0..32 {
        s.round(200_000, high, 40);
        gains.push(s.b.pacing_gain());
    }
    let probes = gains.iter().filter(|&&g| g == 1.25).count();
    let drains = gains.iter().filter(|&&g| g == 0.75).count();
    assert_eq!((probes, drains), (4, 4), "{gains:?}");
}

/// tcp_bbr.c bbr_is_next_cycle_phase: a probe that met losses ends after RTprop even though
/// the data in flight never reached 5/4 BDP ("perhaps pacing_gain*BDP won't fit").
#[test]
fn the_probing_phase_ends_after_rtprop_when_it_met_losses() {
    let mut s = full_pipe_at_400_kbps(5);
    while s.b.cycle_index() != 0 {
        s.round(400_000, 16 * M, 40);
    }
    // One BDP in flight: without losses the probe goes on round after round.
    for _ in 0..5 {
        s.round(400_000, 16 * M, 40);
        assert_eq!(s.b.cycle_index(), 0);
    }
    s.rate_losses = M;
    s.round(400_000, 16 * M, 40);
    assert_eq!((s.b.cycle_index(), s.b.pacing_gain()), (1, 0.75));
}

/// tcp_bbr.c bbr_is_next_cycle_phase with bbr_packets_in_net_at_edt: the 5/4 phase counts
/// the data in flight before the ACK (`rs->prior_in_flight`) and the send quantum about to
/// leave, less what BtlBw delivers until the pacing release (tp->tcp_wstamp_ns).
#[test]
fn the_probe_counts_the_data_in_flight_before_the_ack_at_the_next_departure() {
    // BDP 16 segments; the 5/4 target: ceil(1.25 x 16) = 20, + 3 quanta of 2 = 26, + 2 in
    // the 5/4 phase = 28 segments.
    let probe = |prior: u64, release_in_ms: u64| {
        let mut s = full_pipe_at_400_kbps(5);
        while s.b.cycle_index() != 0 {
            s.round(400_000, 16 * M, 40);
        }
        s.round(400_000, 16 * M, 40); // one RTprop not yet over
        assert_eq!(s.b.cycle_index(), 0);
        s.next = Some((prior, Dur::from_millis(release_in_ms)));
        s.round(400_000, 24 * M, 40); // after the ACK: 24 segments
        s.b.cycle_index()
    };
    assert_eq!(
        probe(26 * M, 0),
        1,
        "26 before the ACK and a quantum of 2 reach 28"
    );
    assert_eq!(probe(25 * M, 0), 0, "27 do not");
    assert_eq!(
        probe(26 * M, 5),
        0,
        "BtlBw delivers 2 segments in the 5 ms until the next departure"
    );
}

/// Startup at 400 kB/s until the pipe is full, then a round that drains it: ProbeBW.
fn full_pipe_at_400_kbps(seed: u64) -> Script {
    let mut s = Script::new(bbr(seed));
    for rate in [400_000; 5] {
        s.round(rate, 100 * M, 40);
    }
    s.round(400_000, 0, 40);
    s
}

#[test]
fn cwnd_grows_to_two_bdp_plus_quantization_once_the_pipe_is_full() {
    let mut s = full_pipe_at_400_kbps(5);
    for _ in 0..50 {
        s.round(400_000, 16 * M, 40);
    }
    // The 5/4 phase lasts until the data in flight reaches 5/4 BDP.
    while s.b.cycle_index() == 0 {
        s.round(400_000, 100 * M, 40);
    }
    // BDP 400 kB/s x 40 ms = 16 segments; 2 BDP = 32, + 3 send quanta of 2 segments (the
    // pacing rate is above 1.2 Mb/s even at gain 3/4) = 38 (40 in the 5/4 phase).
    assert_ne!(s.b.cycle_index(), 0);
    assert_eq!(s.b.cwnd(), 38 * M);
}

#[test]
fn probe_rtt_after_10_s_without_a_new_minimum_holds_4_segments_for_200_ms() {
    let mut s = Script::new(bbr(9));
    for rate in [200_000; 5] {
        s.round(rate, 100 * M, 40);
    }
    s.round(200_000, 0, 40);
    assert_eq!(s.b.mode(), Mode::ProbeBw);
    // RTT samples of 50 ms: no new minimum. The minimum was taken at 40 ms.
    while s.now <= Time::from_millis(40) + Dur::from_secs(10) {
        assert_ne!(s.b.mode(), Mode::ProbeRtt, "at {:?}", s.now);
        s.round(200_000, 16 * M, 50);
    }
    assert_eq!(s.b.mode(), Mode::ProbeRtt);
    assert_eq!(s.b.cwnd(), 4 * M);
    assert_eq!(s.b.pacing_gain(), 1.0);
    // In flight falls to 4 segments at t0: 200 ms and a round later it is over.
    s.round(200_000, 4 * M, 40);
    let t0 = s.now;
    while s.now <= t0 + Dur::from_millis(200) {
        assert_eq!(s.b.mode(), Mode::ProbeRtt);
        s.round(200_000, 4 * M, 40);
    }
    assert_eq!(s.b.mode(), Mode::ProbeBw);
    assert!(s.b.cwnd() > 4 * M);
}

/// tcp_bbr.c bbr_set_cwnd_to_recover_or_restore, step by step.
#[test]
fn recovery_conserves_packets_for_a_round_then_grows_and_its_end_restores() {
    let mut s = Script::new(bbr(1));
    for rate in [200_000; 3] {
        s.round(rate, 10 * M, 40);
    }
    assert!(s.b.owns_recovery_window());
    let before = s.b.cwnd();
    assert!(before > 12 * M, "a window to cut: {before}");
    let v =
        s.b.on_congestion(&testutil::event(CongestionKind::FastRetransmit, s.now));
    // The window is saved, nothing is reduced.
    assert_eq!(
        (v.label, s.b.ssthresh(), s.b.cwnd()),
        ("model", before, before)
    );
    // The first ACK of recovery: 2 segments delivered, 6 in flight, 1 newly lost. The
    // round restarts (the segment was sent in the old round) and cwnd = in flight + acked.
    let round_start = s.delivered;
    s.ack(2 * M, round_start - M, 6 * M, 40, (true, M));
    assert_eq!(s.b.cwnd(), 8 * M);
    // Still the first round: a loss cuts cwnd, but never below in flight + acked.
    s.ack(M, round_start - M, 8 * M, 40, (true, 3 * M));
    assert_eq!(s.b.cwnd(), 9 * M, "max(8 - 3, 8 + 1) segments");
    s.ack(M, round_start - M, 2 * M, 40, (true, 2 * M));
    assert_eq!(s.b.cwnd(), 7 * M, "max(9 - 2, 2 + 1) segments");
    // A segment sent after the round began is delivered: conservation ends, cwnd grows by
    // what was delivered (at most 2 segments sent per segment delivered).
    s.ack(M, round_start + 2 * M, 2 * M, 40, (true, 0));
    assert_eq!(s.b.cwnd(), 8 * M);
    s.ack(M, round_start + 3 * M, 2 * M, 40, (true, M));
    assert_eq!(s.b.cwnd(), 8 * M, "8 - 1 lost + 1 delivered");
    // The first ACK after recovery: back to the saved window.
    s.b.on_recovery_exit(s.now, 1);
    assert_eq!(s.b.cwnd(), 8 * M, "restored on the next ACK, not before");
    s.ack(M, round_start + 4 * M, 2 * M, 40, (false, 0));
    // Restored to the saved window, then capped by the target as on any ACK once the pipe
    // is full: ProbeBW, BDP 8 segments (200 kB/s over 40 ms) x 2 + 3 quanta of 2 segments.
    assert_eq!(s.b.mode(), Mode::ProbeBw);
    assert_eq!((before, s.b.cwnd()), (26 * M, 22 * M));
    s.b.on_congestion(&testutil::event(CongestionKind::Timeout, s.now));
    assert_eq!(s.b.cwnd(), M);
    let v =
        s.b.on_congestion(&testutil::event(CongestionKind::Ecn, s.now));
    assert_eq!((v.label, s.b.cwnd()), ("ignored", M));
}

#[test]
fn the_handshakes_sample_starts_rtprop_and_the_initial_pacing_rate() {
    let mut b = bbr(1);
    assert_eq!(b.rt_prop(), None);
    let nominal = b.pacing_rate().unwrap(); // the initial window over 1 ms
    let rtt = Dur::from_micros(40_600);
    b.on_handshake_rtt(Time::from_millis(41), rtt);
    assert_eq!(
        b.rt_prop(),
        Some(rtt),
        "bbr_init: min_rtt_us = tcp_min_rtt(tp)"
    );
    // bbr_init_pacing_rate_from_rtt: high_gain x the initial window over the SRTT.
    let p = BbrParams::default();
    let initial = b.cwnd() as f64;
    let want = (initial / rtt.as_secs_f64() * p.high_gain * (1.0 - p.pacing_margin)) as u64;
    assert_eq!(b.pacing_rate(), Some(want));
    assert!(want < nominal / 40, "{want} vs {nominal}");
}
