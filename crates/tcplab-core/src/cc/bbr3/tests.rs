//! Scripted tests of BBRv3's rules, one per rule of draft-ietf-ccwg-bbr-04: samples are
//! built by hand (1000-byte segments, RTT 40 ms).

use super::*;
use crate::cc::testutil::{self, AckBuilder, MSS};
use crate::cc::Growth;

const M: u64 = MSS as u64;
const RTT: Dur = Dur::from_millis(40);
/// The bandwidth the scripts settle on: 400 kB/s, a BDP of 16 segments at 40 ms.
const BW: u64 = 400_000;
const BDP: u64 = 16 * M;

/// One ACK of a script.
#[derive(Clone, Copy)]
struct Ack {
    rate: u64,
    bytes: u64,
    in_flight: u64,
    new_round: bool,
    lost: u64,
    tx_in_flight: u64,
    losses: u64,
    in_recovery: bool,
}

impl Ack {
    /// A new round at `rate`, one RTT's worth of bytes delivered, nothing lost.
    fn round(rate: u64, in_flight: u64) -> Self {
        Ack {
            rate,
            bytes: (rate * RTT.as_nanos() / 1_000_000_000).max(M),
            in_flight,
            new_round: true,
            lost: 0,
            tx_in_flight: in_flight,
            losses: 0,
            in_recovery: false,
        }
    }
    /// One segment in the middle of a round.
    fn segment(rate: u64, in_flight: u64) -> Self {
        Ack {
            bytes: M,
            new_round: false,
            ..Self::round(rate, in_flight)
        }
    }
    fn lost(self, lost: u64, tx_in_flight: u64) -> Self {
        Ack {
            lost,
            tx_in_flight,
            losses: lost,
            ..self
        }
    }
}

struct Script {
    b: Bbr3,
    now: Time,
    delivered: u64,
}

impl Script {
    fn new() -> Self {
        let ctx = CcContext {
            seed: 7,
            ..testutil::ctx(Growth::PerAck)
        };
        Script {
            b: Bbr3::new(&ctx, Bbr3Params::default()),
            now: Time::ZERO,
            delivered: 0,
        }
    }

    fn ack(&mut self, a: Ack) {
        // A new round: the sample's segment was sent after the last round began.
        let prior = if a.new_round { self.delivered } else { 0 };
        self.now += if a.new_round {
            RTT
        } else {
            Dur::from_millis(1)
        };
        self.delivered += a.bytes;
        let mut s = AckBuilder::at(self.now)
            .acked(a.bytes)
            .rtt(RTT)
            .delivered(self.delivered)
            .in_flight(a.in_flight)
            .rate(RateSample {
                prior_delivered: prior,
                delivered: a.rate * RTT.as_nanos() / 1_000_000_000,
                interval: Some(RTT),
                is_app_limited: false,
                rtt: Some(RTT),
                tx_in_flight: a.tx_in_flight,
                lost: a.lost,
                losses: a.losses,
            })
            .build();
        s.in_recovery = a.in_recovery;
        self.b.observe(&s);
        self.b.on_ack(&s);
    }

    fn rounds(&mut self, n: usize, rate: u64, in_flight: u64) {
        for _ in 0..n {
            self.ack(Ack::round(rate, in_flight));
        }
    }

    /// Startup at 100, 200, 400 kB/s, then three rounds at 400 kB/s: the pipe is full.
    fn fill_pipe(&mut self) {
        for rate in [100_000, 200_000, BW] {
            self.ack(Ack::round(rate, 100 * M));
        }
        self.rounds(3, BW, 100 * M);
    }

    /// Startup, Drain, then ProbeBW (DOWN and at once CRUISE, nothing bounding it).
    fn to_cruise() -> Self {
        let mut s = Script::new();
        s.fill_pipe();
        assert_eq!(s.b.state(), State::Drain);
        s.ack(Ack::round(BW, BDP));
        assert_eq!(s.b.state(), State::ProbeBwCruise);
        s
    }

    /// On to REFILL (the Reno-coexistence round count) and UP.
    fn to_up() -> Self {
        let mut s = Script::to_cruise();
        for _ in 0..64 {
            s.ack(Ack::round(BW, BDP));
            if s.b.state() != State::ProbeBwCruise {
                break;
            }
        }
        assert_eq!(s.b.state(), State::ProbeBwRefill);
        s.ack(Ack::round(BW, BDP));
        assert_eq!(s.b.state(), State::ProbeBwUp);
        s
    }
}

#[test]
fn startup_paces_at_2_77_with_cwnd_gain_2() {
    let mut s = Script::new();
    assert_eq!(s.b.state(), State::Startup);
    s.ack(Ack::round(100_000, 10 * M));
    assert_eq!((s.b.pacing_gain(), s.b.cwnd_gain()), (2.77, 2.0));
    assert_eq!(s.b.max_bw(), 100_000);
    assert_eq!(s.b.pacing_rate(), Some((2.77 * 100_000.0 * 0.99) as u64));
    assert_eq!(s.b.min_rtt(), Some(RTT));
}

#[test]
fn startup_exits_after_three_rounds_without_25_percent_growth() {
    let mut s = Script::new();
    for rate in [100_000, 200_000, BW] {
        s.ack(Ack::round(rate, 100 * M));
    }
    // +24 % is not growth: three such rounds fill the pipe.
    s.rounds(2, BW * 124 / 100, 100 * M);
    assert_eq!(s.b.state(), State::Startup);
    s.ack(Ack::round(BW, 100 * M));
    assert_eq!(s.b.state(), State::Drain);
    assert!(s.b.full_bw_reached());
    assert_eq!((s.b.pacing_gain(), s.b.cwnd_gain()), (0.35, 2.0));
    // ssthresh: one BDP at max_bw (the best sample, 496 kB/s) with the budget.
    assert_eq!(s.b.ssthresh(), 496_000 * 40 / 1000);
}

/// Startup with 6 loss-revealing ACKs in a round while in recovery, `lost` of 100 segments
/// in flight each: does it leave Startup at the round's end?
fn startup_with_losses(lost: u64) -> Script {
    let mut s = Script::new();
    for rate in [100_000, 200_000, BW] {
        s.ack(Ack::round(rate, 100 * M));
    }
    let in_loss = |a: Ack| Ack {
        in_recovery: true,
        ..a.lost(lost, 100 * M)
    };
    for _ in 0..6 {
        s.ack(in_loss(Ack::segment(2 * BW, 100 * M)));
    }
    // The round that saw the losses ends; the rate still grows.
    s.ack(in_loss(Ack::round(2 * BW, 100 * M)));
    s
}

#[test]
fn startup_exits_on_loss_above_two_percent_only() {
    // 2 % of 100 segments is 2 segments: not above the threshold.
    let s = startup_with_losses(2 * M);
    assert_eq!(s.b.state(), State::Startup);
    assert_eq!(s.b.inflight_hi(), None);
    // One byte more is: Drain, and inflight_hi = max(BDP, the round's largest delivery),
    // both 2 x 16 segments at 800 kB/s.
    let s = startup_with_losses(2 * M + 1);
    assert_eq!(s.b.state(), State::Drain);
    assert!(s.b.full_bw_reached());
    assert_eq!(s.b.inflight_hi(), Some(2 * BDP));
}

#[test]
fn startup_ignores_losses_outside_recovery_or_in_fewer_than_six_acks() {
    let mut s = Script::new();
    for rate in [100_000, 200_000] {
        s.ack(Ack::round(rate, 100 * M));
    }
    for _ in 0..5 {
        s.ack(Ack {
            in_recovery: true,
            ..Ack::segment(BW, 100 * M).lost(10 * M, 100 * M)
        });
    }
    s.ack(Ack::round(BW, 100 * M).lost(10 * M, 100 * M));
    s.ack(Ack::round(2 * BW, 100 * M).lost(10 * M, 100 * M));
    assert_eq!(s.b.state(), State::Startup);
}

#[test]
fn drain_ends_at_one_bdp_in_flight() {
    let mut s = Script::new();
    s.fill_pipe();
    assert_eq!(s.b.state(), State::Drain);
    s.ack(Ack::round(BW, BDP + M));
    assert_eq!(s.b.state(), State::Drain);
    s.ack(Ack::round(BW, BDP));
    // ProbeBW starts in DOWN; with no inflight_hi and one BDP in flight it cruises at once.
    assert_eq!(s.b.state(), State::ProbeBwCruise);
    assert_eq!((s.b.pacing_gain(), s.b.cwnd_gain()), (1.0, 2.0));
}

#[test]
fn cruise_probes_after_the_reno_coexistence_rounds_and_refill_lasts_one_round() {
    let mut s = Script::to_cruise();
    // min(BDP in segments, 63) = 16 rounds, less the random 0 or 1 already counted.
    let mut rounds = 0;
    while s.b.state() == State::ProbeBwCruise {
        s.ack(Ack::round(BW, BDP));
        rounds += 1;
        assert!(rounds <= 17);
    }
    assert!(rounds >= 15, "{rounds}");
    assert_eq!(s.b.state(), State::ProbeBwRefill);
    assert_eq!((s.b.pacing_gain(), s.b.cwnd_gain()), (1.0, 2.0));
    s.ack(Ack::round(BW, BDP));
    assert_eq!(s.b.state(), State::ProbeBwUp);
    assert_eq!((s.b.pacing_gain(), s.b.cwnd_gain()), (1.25, 2.25));
}

#[test]
fn a_long_cruise_probes_after_two_to_three_seconds_of_wall_clock() {
    let mut s = Script::to_cruise();
    // ACKs within one round only: the round count does not move, the clock does.
    let start = s.now;
    while s.b.state() == State::ProbeBwCruise {
        s.ack(Ack::segment(BW, BDP));
        assert!(s.now.saturating_since(start) <= Dur::from_millis(3100));
    }
    assert!(s.now.saturating_since(start) >= Dur::from_secs(2));
    assert_eq!(s.b.state(), State::ProbeBwRefill);
}

#[test]
fn up_ends_on_a_plateau_of_three_rounds() {
    let mut s = Script::to_up();
    s.rounds(2, BW, 20 * M);
    assert_eq!(s.b.state(), State::ProbeBwUp);
    s.ack(Ack::round(BW, 20 * M));
    assert_eq!(s.b.state(), State::ProbeBwDown);
    assert_eq!(s.b.pacing_gain(), 0.9);
    assert_eq!(s.b.inflight_hi(), None, "no loss: no long-term bound");
}

#[test]
fn up_ends_when_more_than_two_percent_of_the_flight_is_lost() {
    let mut s = Script::to_up();
    // 2 % of 30 segments is 600 bytes: not too high.
    s.ack(Ack::segment(BW, 30 * M).lost(600, 30 * M));
    assert_eq!(s.b.state(), State::ProbeBwUp);
    s.ack(Ack::segment(BW, 30 * M).lost(601, 30 * M));
    assert_eq!(s.b.state(), State::ProbeBwDown);
    // inflight_hi = max(the sample's flight, 0.7 x min(BDP, cwnd)).
    assert_eq!(s.b.inflight_hi(), Some(30 * M));
    // Once per probe: a second sample does not lower it.
    s.ack(Ack::segment(BW, 30 * M).lost(10 * M, 10 * M));
    assert_eq!(s.b.inflight_hi(), Some(30 * M));
}

#[test]
fn inflight_hi_is_at_least_beta_times_the_target() {
    let mut s = Script::to_up();
    let target = BDP.min(s.b.cwnd);
    s.ack(Ack::segment(BW, 4 * M).lost(2 * M, 4 * M));
    // UP ended (DOWN, and with 4 segments in flight at once CRUISE).
    assert_eq!(s.b.state(), State::ProbeBwCruise);
    assert_eq!(s.b.inflight_hi(), Some((0.7 * target as f64) as u64));
}

#[test]
fn down_waits_for_headroom_under_inflight_hi_then_cruises() {
    let mut s = Script::to_up();
    s.ack(Ack::segment(BW, 15 * M).lost(M, 15 * M));
    assert_eq!(s.b.inflight_hi(), Some(15 * M));
    // One BDP in flight is too much: the headroom asks for 15 - 2.25 = 12.75 segments.
    s.ack(Ack::segment(BW, 13 * M));
    assert_eq!(s.b.state(), State::ProbeBwDown);
    s.ack(Ack::segment(BW, 12 * M));
    assert_eq!(s.b.state(), State::ProbeBwCruise);
    // CRUISE caps cwnd at inflight_hi less the headroom.
    assert_eq!(s.b.cwnd(), 15 * M - 2250);
}

#[test]
fn up_raises_inflight_hi_by_1_2_4_segments_per_round() {
    let mut s = Script::to_up();
    s.ack(Ack::segment(BW, 20 * M).lost(M, 20 * M));
    assert_eq!(s.b.inflight_hi(), Some(20 * M));
    // Back to UP, cwnd-limited at inflight_hi.
    while s.b.state() != State::ProbeBwRefill {
        s.ack(Ack::round(BW, 16 * M));
    }
    s.ack(Ack::round(BW, 19 * M));
    assert_eq!(s.b.state(), State::ProbeBwUp);
    for want in [1u64, 2, 4] {
        let hi = s.b.inflight_hi().unwrap();
        let cnt = s.b.probe_up_cnt.unwrap();
        assert_eq!(cnt, (s.b.cwnd / (M << (want.trailing_zeros()))).max(1));
        for _ in 0..cnt * want {
            s.ack(Ack::segment(BW, s.b.cwnd - M));
        }
        // `want` x `cnt` segments delivered, one segment of growth per `cnt`.
        assert_eq!(
            s.b.inflight_hi().unwrap() - hi,
            want * M,
            "round growing {want}"
        );
        // The next round (one segment delivered: its own share of the growth is < 1).
        s.ack(Ack {
            bytes: M,
            ..Ack::round(BW, s.b.cwnd - M)
        });
    }
}

#[test]
fn when_not_probing_a_lossy_round_cuts_the_short_term_bounds_by_beta() {
    let mut s = Script::to_cruise();
    // The delivery rate falls to half; then a loss, noted in the middle of a round.
    s.rounds(2, BW / 2, BDP);
    let cwnd = s.b.cwnd;
    s.ack(Ack::segment(BW / 2, BDP).lost(M, BDP));
    assert_eq!(s.b.bw_lo(), None);
    // The round ends: bw_lo = max(bw_latest, 0.7 max_bw), inflight_lo = max(the round's
    // largest delivery, 0.7 cwnd).
    s.ack(Ack::round(BW / 2, BDP));
    assert_eq!(s.b.max_bw(), BW);
    assert_eq!(s.b.bw_lo(), Some((0.7 * BW as f64) as u64));
    assert_eq!(s.b.inflight_lo(), Some((0.7 * cwnd as f64) as u64));
    assert_eq!(s.b.bw(), (0.7 * BW as f64) as u64);
    assert!(s.b.cwnd() <= s.b.inflight_lo().unwrap());
    // A second lossy round: 0.7 again, down to the latest delivery rate at most.
    s.ack(Ack::segment(BW / 2, BDP).lost(M, BDP));
    s.ack(Ack::round(BW / 2, BDP));
    assert_eq!(s.b.bw_lo(), Some(BW / 2));
    // Rounds without loss leave them; REFILL forgets them.
    s.ack(Ack::round(BW, BDP));
    assert_eq!(s.b.bw_lo(), Some(BW / 2));
    while s.b.state() == State::ProbeBwCruise {
        s.ack(Ack::round(BW, BDP));
    }
    assert_eq!(s.b.state(), State::ProbeBwRefill);
    assert_eq!((s.b.bw_lo(), s.b.inflight_lo()), (None, None));
}

#[test]
fn an_ecn_echo_is_congestion_for_the_short_term_bounds() {
    let mut s = Script::to_cruise();
    s.rounds(2, BW / 2, BDP);
    let v = s.b.on_congestion(&CongestionEvent {
        flight_size: BDP,
        ..testutil::event(CongestionKind::Ecn, s.now)
    });
    assert_eq!(v.label, "model");
    s.ack(Ack::segment(BW / 2, BDP));
    assert_eq!(s.b.bw_lo(), None);
    s.ack(Ack::round(BW / 2, BDP));
    assert_eq!(s.b.bw_lo(), Some((0.7 * BW as f64) as u64));
}

#[test]
fn an_ecn_echo_during_a_probe_sets_inflight_hi_and_ends_up() {
    let mut s = Script::to_up();
    s.b.on_congestion(&CongestionEvent {
        flight_size: 20 * M,
        ..testutil::event(CongestionKind::Ecn, s.now)
    });
    assert_eq!(s.b.state(), State::ProbeBwDown);
    assert_eq!(s.b.inflight_hi(), Some(20 * M));
}

#[test]
fn probe_rtt_every_five_seconds_at_half_a_bdp() {
    let mut s = Script::to_cruise();
    let mut t = 0;
    while s.b.state() != State::ProbeRtt {
        s.ack(Ack::segment(BW, BDP));
        t += 1;
        assert!(t < 6000);
    }
    assert!(s.now > Time::from_secs(5));
    assert_eq!((s.b.pacing_gain(), s.b.cwnd_gain()), (1.0, 0.5));
    assert_eq!(s.b.cwnd(), BDP / 2);
    // 200 ms and a round after the flight fell to half a BDP: back to CRUISE.
    s.ack(Ack::round(BW, BDP / 2));
    let entered = s.now;
    while s.b.state() == State::ProbeRtt {
        s.ack(Ack::round(BW, BDP / 2));
    }
    assert!(s.now.saturating_since(entered) > Dur::from_millis(200));
    assert_eq!(s.b.state(), State::ProbeBwCruise);
    // Samples sent during ProbeRTT were application-limited: max_bw kept its value.
    assert_eq!(s.b.max_bw(), BW);
}

#[test]
fn fast_retransmit_keeps_the_window_and_recovery_exit_restores_it() {
    let mut s = Script::to_cruise();
    let cwnd = s.b.cwnd();
    let v =
        s.b.on_congestion(&testutil::event(CongestionKind::FastRetransmit, s.now));
    assert_eq!((v.label, s.b.ssthresh()), ("model", cwnd));
    let v =
        s.b.on_congestion(&testutil::event(CongestionKind::Timeout, s.now));
    assert_eq!((v.label, s.b.cwnd()), ("timeout", M));
    s.b.on_recovery_exit(s.now, 0);
    assert_eq!(s.b.cwnd(), cwnd);
}

#[test]
fn unknown_parameters_are_refused() {
    let ctx = testutil::ctx(Growth::PerAck);
    let mut p = Params::new();
    p.insert("loss_tresh".into(), crate::ParamValue::Num(0.1));
    let e = Bbr3::from_params(&ctx, &p).err().unwrap();
    assert!(e.0.contains("loss_tresh"), "{e}");
    let mut p = Params::new();
    p.insert("loss_thresh".into(), crate::ParamValue::Num(0.05));
    assert_eq!(Bbr3::from_params(&ctx, &p).unwrap().p.loss_thresh, 0.05);
}
