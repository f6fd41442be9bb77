//! Scripted exchanges for rules where tcplab once deviated from the RFCs in ways that
//! changed results: repeated RTOs, NewReno's timer at partial ACKs, Karn's rule
//! without timestamps, and the end of a tail-loss-probe episode. Each test fails on the
//! earlier code. MSS 1000, so sequence numbers read as segments.

use tcplab_core::cc::{Growth, CONTROLLERS};
use tcplab_core::{ControllerSpec, Dur, ParamValue, RecoverySpec, RepeatedRto, Sender, TcpConfig};

use crate::common;

use common::{new, Script, MSS};

fn cfg() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        initial_cwnd: 10,
        growth: Growth::PerAck,
        timestamps: false,
        rto_min: Dur::from_millis(200),
        rto_initial: Dur::from_secs(1),
        ..TcpConfig::default()
    }
}

fn script_with(
    cfg: &TcpConfig,
    controller: &str,
    recovery: RecoverySpec,
    app: Option<u64>,
) -> Script {
    Script::with(
        Sender::build(
            cfg,
            &ControllerSpec::named(controller),
            &recovery,
            app.map(|n| n * MSS),
        )
        .unwrap(),
    )
}

/// Ten segments sent, none acknowledged, then `n` timer expiries: ssthresh after each.
fn ssthresh_after_timeouts(cfg: &TcpConfig, controller: &str, n: usize) -> Vec<f64> {
    let mut t = script_with(cfg, controller, RecoverySpec::named("newreno"), None);
    assert_eq!(t.sent(), new(0..10));
    let mut out = vec![];
    for _ in 0..n {
        t.now = t.s.poll_timeout().unwrap();
        t.timer();
        assert_eq!(t.sent(), vec![(0, out.len() as u8 + 1)], "{controller}");
        assert_eq!(t.cwnd_segments(), 1.0, "{controller}: loss window");
        out.push(t.ssthresh_segments());
    }
    out
}

#[test]
fn a_repeated_timeout_holds_ssthresh_for_every_controller() {
    // RFC 5681 §3.1: "if the segment has already been retransmitted via the retransmission
    // timer at least once, then ssthresh is held constant".
    for name in CONTROLLERS {
        // A paced controller (bbr) sends its first window over time, not at one instant as
        // this script expects; BBR keeps no ssthresh rule of its own at timeouts.
        let paced = script_with(&cfg(), name, RecoverySpec::named("newreno"), None)
            .s
            .controller()
            .pacing_rate()
            .is_some();
        if paced {
            continue;
        }
        let s = ssthresh_after_timeouts(&cfg(), name, 3);
        assert!(s[0] > 2.0, "{name}: first timeout {s:?}");
        assert_eq!(s[1], s[0], "{name}: second timeout must hold ssthresh");
        assert_eq!(s[2], s[0], "{name}: third timeout too");
    }
    // Reno: 10 -> 5, held at 5 (was 5 -> 2).
    assert_eq!(ssthresh_after_timeouts(&cfg(), "reno", 2), vec![5.0, 5.0]);
}

#[test]
fn the_bsd_option_recomputes_ssthresh_at_every_expiry() {
    let bsd = TcpConfig {
        repeated_rto: RepeatedRto::Bsd,
        ..cfg()
    };
    assert_eq!(ssthresh_after_timeouts(&bsd, "reno", 2), vec![5.0, 2.0]);
}

#[test]
fn a_timeout_after_the_ack_moved_reduces_again() {
    let mut t = script_with(&cfg(), "reno", RecoverySpec::named("newreno"), None);
    t.sent();
    t.now = t.s.poll_timeout().unwrap();
    t.timer();
    assert_eq!(t.sent(), vec![(0, 1)]);
    assert_eq!(t.ssthresh_segments(), 5.0);
    t.advance(100);
    t.ack(1, &[]); // the retransmission arrived; cwnd 2
    assert_eq!(t.sent(), vec![(1, 1), (2, 1)]);
    t.now = t.s.poll_timeout().unwrap();
    t.timer(); // segment 1 was never retransmitted by the timer: a fresh timeout
    assert_eq!(t.ssthresh_segments(), 2.0, "cwnd 2 / 2, at least 2");
    assert_eq!(t.s.counters().timeouts_repeated, 0);
}

/// NewReno with three holes (2, 4, 6) in a window of ten; returns the script after the
/// fast retransmission of 2.
fn three_holes(timer: Option<&str>) -> Script {
    let mut spec = RecoverySpec::named("newreno");
    if let Some(v) = timer {
        spec.params
            .insert("timer".into(), ParamValue::Str(v.into()));
    }
    let mut t = script_with(&cfg(), "reno", spec, Some(10));
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(2, &[]);
    for _ in 0..3 {
        t.ack(2, &[]);
    }
    assert_eq!(t.sent(), vec![(2, 1)]);
    t
}

#[test]
fn newreno_restarts_the_timer_at_the_first_partial_ack_only() {
    // RFC 6582 §3.2 step 5 and §4 (the Impatient variant, recommended).
    let mut t = three_holes(None);
    t.advance(100);
    t.ack(4, &[]); // first partial ACK: restart
    let first = t.s.poll_timeout().unwrap();
    assert_eq!(first, t.now + t.s.rtt().rto());
    assert_eq!(t.sent(), vec![(4, 1)]);
    t.advance(100);
    t.ack(6, &[]); // second partial ACK: the timer keeps its deadline
    assert_eq!(t.sent(), vec![(6, 1)]);
    assert_eq!(t.s.poll_timeout(), Some(first), "Impatient: no restart");

    let mut t = three_holes(Some("slow_but_steady"));
    t.advance(100);
    t.ack(4, &[]);
    t.sent();
    t.advance(100);
    t.ack(6, &[]);
    assert_eq!(t.s.poll_timeout(), Some(t.now + t.s.rtt().rto()));
}

#[test]
fn newreno_refuses_an_unknown_timer_variant() {
    let mut spec = RecoverySpec::named("newreno");
    spec.params
        .insert("timer".into(), ParamValue::Str("lazy".into()));
    let e = Sender::build(&cfg(), &ControllerSpec::named("reno"), &spec, None)
        .err()
        .unwrap();
    assert!(
        e.message.contains("timer") && e.message.contains("lazy"),
        "{e}"
    );
}

#[test]
fn karn_no_rtt_sample_from_an_ack_that_covers_retransmitted_data() {
    // Go-back-N after a timeout: the ACK covering the retransmitted segment 0 also covers
    // originals sent a second earlier. Timing one of them would give SRTT ~1.1 s on a
    // 100 ms path.
    let mut t = script_with(&cfg(), "reno", RecoverySpec::named("newreno"), None);
    t.sent();
    t.advance(100);
    t.ack(1, &[]);
    let srtt = t.s.rtt().srtt();
    assert_eq!(srtt, Some(Dur::from_millis(100)));
    t.sent();
    t.now = t.s.poll_timeout().unwrap(); // segment 1 lost
    t.timer();
    assert_eq!(t.sent(), vec![(1, 1)]);
    t.advance(100);
    t.ack(12, &[]); // covers 1 (retransmitted) and 2..12 (originals sent at 100 ms)
    assert_eq!(t.s.counters().rtt_samples, 1, "no sample from this ACK");
    assert_eq!(t.s.rtt().srtt(), srtt);
}

/// RACK-TLP, a 10-segment transfer: 0..8 acknowledged after one RTT, 8 and 9 outstanding,
/// then the probe (9 again) goes out at the PTO.
fn probe_sent() -> Script {
    let mut t = script_with(&cfg(), "reno", RecoverySpec::named("rack"), Some(10));
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(8, &[]);
    t.now = t.s.poll_timeout().unwrap();
    t.timer();
    assert_eq!(t.sent(), vec![(9, 1)], "the probe");
    assert_eq!(t.s.counters().probes, 1);
    t
}

#[test]
fn tlp_a_dsack_for_the_probe_means_no_reduction() {
    // RFC 8985 §7.4: the original and the probe both arrived.
    let mut t = probe_sent();
    let ss = t.s.snapshot().ssthresh;
    t.advance(100);
    t.ack(10, &[(9, 10)]); // a DSACK: the block lies below the cumulative ACK
    assert_eq!(t.s.counters().recoveries, 0);
    assert_eq!(t.s.snapshot().ssthresh, ss);
}

#[test]
fn tlp_a_duplicate_ack_at_the_probe_end_means_no_reduction() {
    // Without DSACK (Linux tcp_process_tlp_ack): the ACK of the original, then a pure
    // duplicate ACK for the probe's copy.
    let mut t = probe_sent();
    let ss = t.s.snapshot().ssthresh;
    t.advance(100);
    t.ack(10, &[]);
    t.ack(10, &[]);
    assert_eq!(t.s.counters().recoveries, 0);
    assert_eq!(t.s.snapshot().ssthresh, ss);
}

#[test]
fn tlp_the_probe_timer_never_fires_after_the_rto() {
    // One segment outstanding: PTO = 2 SRTT + 200 ms (worst-case delayed ACK) = 400 ms after
    // the ACK, but the RTO (SRTT + 4 RTTVAR = 300 ms) is due first. RFC 8985 §7.2: the
    // probe goes out at the RTO's time instead of a timeout.
    let mut t = script_with(&cfg(), "reno", RecoverySpec::named("rack"), Some(10));
    t.sent();
    t.advance(100);
    t.ack(9, &[]);
    assert_eq!(t.s.rtt().rto(), Dur::from_millis(300));
    let due = t.s.poll_timeout().unwrap();
    assert_eq!(due, t.now + Dur::from_millis(300));
    t.now = due;
    t.timer();
    assert_eq!(t.sent(), vec![(9, 1)]);
    let c = t.s.counters();
    assert_eq!((c.probes, c.timeouts), (1, 0));
}
