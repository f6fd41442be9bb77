//! Scripted exchanges with the sender: the test plays the receiver, segment by segment, and
//! checks what the sender transmits, for each loss-recovery strategy.
//! Sequence numbers are written in segments (MSS = 1000 bytes) to keep the scripts readable.

use tcplab_core::cc::Growth;
use tcplab_core::{
    AckSegment, ControllerSpec, DataSegment, Dur, RecoverySpec, SackList, Sender, Seq, TcpConfig,
    Time,
};

use crate::common;

use common::{new, Script, MSS};

fn script(recovery: &str, iw: u32) -> Script {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_cwnd: iw,
        growth: Growth::PerAck,
        timestamps: false,
        rto_min: Dur::from_millis(200),
        rto_initial: Dur::from_secs(1),
        ..TcpConfig::default()
    };
    Script::with(
        Sender::build(
            &cfg,
            &ControllerSpec::named("reno"),
            &RecoverySpec::named(recovery),
            None,
        )
        .unwrap(),
    )
}

/// Sends segments 0..10 with an initial window of 10.
fn ten_in_flight(recovery: &str) -> Script {
    let mut t = script(recovery, 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t
}

#[test]
fn slow_start_opens_one_segment_per_ack() {
    let mut t = script("newreno", 2);
    assert_eq!(t.sent(), new(0..2));
    t.advance(100);
    t.ack(1, &[]);
    assert_eq!(
        t.sent(),
        new(2..4),
        "ACK of one segment releases two (cwnd 2 -> 3)"
    );
    t.ack(2, &[]);
    assert_eq!(t.sent(), new(4..6));
    assert_eq!(t.cwnd_segments(), 4.0);
}

#[test]
fn two_duplicate_acks_do_not_retransmit_the_third_does() {
    for rec in ["reno", "newreno"] {
        let mut t = ten_in_flight(rec);
        t.ack(1, &[]); // segments 0 and 1 arrived; 2 lost
        t.ack(2, &[]);
        assert_eq!(t.sent(), new(10..14), "{rec}: cwnd 12 after two ACKs");
        t.ack(2, &[]);
        t.ack(2, &[]);
        assert_eq!(t.sent(), vec![], "{rec}: two dup ACKs are not enough");
        t.ack(2, &[]);
        assert_eq!(t.sent(), vec![(2, 1)], "{rec}: fast retransmit of the hole");
        assert_eq!(t.ssthresh_segments(), 6.0, "{rec}: ssthresh = cwnd/2");
        assert_eq!(
            t.cwnd_segments(),
            9.0,
            "{rec}: window ssthresh + 3 during recovery"
        );
        assert_eq!(t.s.counters().recoveries, 1);
        assert_eq!(t.s.counters().retransmits_fast, 1);
    }
}

#[test]
fn reno_inflates_per_dup_ack_and_deflates_on_new_ack() {
    let mut t = ten_in_flight("reno");
    t.ack(1, &[]);
    t.ack(2, &[]);
    assert_eq!(t.sent(), new(10..14)); // 12 outstanding: 2..14
    for _ in 0..3 {
        t.ack(2, &[]);
    }
    assert_eq!(t.sent(), vec![(2, 1)]);
    // Window 9 against 12 outstanding: four more dup ACKs bring it to 13 -> one new segment.
    for _ in 0..3 {
        t.ack(2, &[]);
    }
    assert_eq!(t.sent(), vec![]);
    t.ack(2, &[]);
    assert_eq!(t.sent(), new(14..15));
    assert_eq!(t.cwnd_segments(), 13.0);
    // The retransmission fills the hole: everything up to 14 is acknowledged.
    t.advance(100);
    t.ack(14, &[]);
    assert_eq!(t.cwnd_segments(), 6.0, "deflated to ssthresh");
    assert!(!t.s.snapshot().in_recovery);
    assert_eq!(t.sent(), new(15..20), "6 - 1 outstanding = 5 new segments");
}

#[test]
fn reno_leaves_recovery_on_a_partial_ack_newreno_retransmits_the_next_hole() {
    // Segments 2 and 5 are lost.
    for (rec, expect) in [("reno", vec![]), ("newreno", vec![(5, 1)])] {
        let mut t = ten_in_flight(rec);
        t.ack(1, &[]);
        t.ack(2, &[]);
        assert_eq!(t.sent(), new(10..14));
        for _ in 0..3 {
            t.ack(2, &[]);
        }
        assert_eq!(t.sent(), vec![(2, 1)], "{rec}");
        t.advance(100);
        t.ack(5, &[]); // partial ACK: 2,3,4 acknowledged, 5 still missing
        let sent = t.sent();
        assert_eq!(
            sent.iter().filter(|s| s.1 > 0).copied().collect::<Vec<_>>(),
            expect,
            "{rec}: retransmissions on the partial ACK"
        );
        assert_eq!(t.s.snapshot().in_recovery, rec == "newreno", "{rec}");
    }
}

#[test]
fn newreno_stays_in_recovery_until_recover_point_then_deflates() {
    let mut t = ten_in_flight("newreno");
    t.ack(1, &[]);
    t.ack(2, &[]);
    assert_eq!(t.sent(), new(10..14));
    for _ in 0..3 {
        t.ack(2, &[]);
    }
    assert_eq!(t.sent(), vec![(2, 1)]);
    t.ack(5, &[]);
    assert!(t.sent().contains(&(5, 1)));
    // Recovery point is 14 (snd.max at entry). An ACK of 13 is still partial.
    t.ack(13, &[]);
    assert!(t.s.snapshot().in_recovery);
    assert!(
        t.sent().contains(&(13, 1)),
        "each partial ACK retransmits the next hole"
    );
    t.ack(14, &[]);
    assert!(!t.s.snapshot().in_recovery);
    assert_eq!(t.cwnd_segments(), 6.0);
    assert_eq!(
        t.s.counters().recoveries,
        1,
        "one reduction for three holes"
    );
    assert_eq!(t.s.counters().retransmits_recovery, 2);
}

#[test]
fn sack_recovery_counts_pipe_and_retransmits_every_hole_in_one_rtt() {
    // Segments 2 and 5 lost out of 0..10; the receiver SACKs what it holds.
    let mut t = ten_in_flight("sack");
    t.ack(1, &[]);
    t.ack(2, &[]);
    assert_eq!(t.sent(), new(10..14)); // cwnd 12, 2..14 outstanding
                                       // SACKed segments leave the pipe, so the first two duplicate ACKs each release a new
                                       // segment (the effect of RFC 3042 limited transmit, as in Linux).
    t.ack(2, &[(3, 4)]);
    t.ack(2, &[(3, 5)]);
    assert_eq!(t.sent(), new(14..16));
    t.ack(2, &[(6, 7), (3, 5)]);
    // Third duplicate ACK: ssthresh = 6, IsLost(2) (3 SACKed above), forced retransmission.
    // pipe = 14 outstanding - 3 SACKed - 1 lost + 1 retransmitted = 11.
    assert_eq!(t.sent(), vec![(2, 1)]);
    assert_eq!(t.s.snapshot().in_flight, 11 * MSS);
    assert_eq!(t.s.snapshot().cwnd, 6 * MSS);
    // Segment 5 is lost once 3 segments above it are SACKed, but is sent only when the
    // pipe falls below cwnd: pipe = 14 - sacked - 2 lost + 1.
    for end in 8..=11 {
        t.ack(2, &[(6, end), (3, 5)]);
        assert_eq!(t.sent(), vec![], "SACK up to {end}");
    }
    assert_eq!(t.s.snapshot().in_flight, 6 * MSS);
    t.ack(2, &[(6, 12), (3, 5)]);
    assert_eq!(t.sent(), vec![(5, 1)], "lost segments go before new data");
    assert_eq!(t.s.snapshot().in_flight, 6 * MSS);
    t.ack(2, &[(6, 13), (3, 5)]);
    assert_eq!(
        t.sent(),
        new(16..17),
        "then new data, one per segment that left"
    );
    t.advance(100);
    t.ack(13, &[]);
    assert!(t.s.snapshot().in_recovery, "recovery point is 16");
    t.ack(16, &[]);
    assert!(!t.s.snapshot().in_recovery);
    assert_eq!(t.cwnd_segments(), 6.0);
    assert_eq!(t.s.counters().recoveries, 1);
    assert_eq!(t.s.counters().retransmits_recovery, 1);
    assert_eq!(t.s.counters().timeouts, 0);
}

#[test]
fn sack_enters_recovery_when_first_segment_is_lost_even_without_three_dup_acks() {
    // One ACK reports three SACKed segments above the hole (RFC 6675 IsLost).
    let mut t = ten_in_flight("sack");
    t.ack(0, &[(1, 4)]);
    assert_eq!(t.sent(), vec![(0, 1)]);
    assert_eq!(t.s.counters().recoveries, 1);
}

#[test]
fn rto_backs_off_exponentially_and_resets_on_new_ack() {
    let mut t = script("newreno", 2);
    assert_eq!(t.sent(), new(0..2));
    let d1 = t.s.poll_timeout().unwrap();
    assert_eq!(d1, Time::from_secs(1), "initial RTO 1 s");
    t.now = d1;
    t.s.on_timeout(t.now);
    assert_eq!(t.cwnd_segments(), 1.0);
    assert_eq!(t.ssthresh_segments(), 2.0, "max(cwnd/2, 2)");
    assert_eq!(
        t.sent(),
        vec![(0, 1)],
        "go back: one segment, the first unacknowledged"
    );
    let d2 = t.s.poll_timeout().unwrap();
    assert_eq!(d2 - d1, Dur::from_secs(2), "backed off to 2 s");
    t.now = d2;
    t.s.on_timeout(t.now);
    assert_eq!(t.sent(), vec![(0, 2)]);
    let d3 = t.s.poll_timeout().unwrap();
    assert_eq!(d3 - d2, Dur::from_secs(4));
    // An early call does nothing.
    t.s.on_timeout(d3 - Dur::from_millis(1));
    assert_eq!(t.s.counters().timeouts, 2);
    // The ACK of the retransmission: Karn's rule gives no sample, but the timer restarts
    // from the backed-off value; the next segment is sent in slow start.
    t.advance(50);
    t.ack(1, &[]);
    assert_eq!(
        t.sent(),
        vec![(1, 1), (2, 0)],
        "segment 1 was declared lost too"
    );
    assert_eq!(t.s.rtt().backoff(), 2, "no valid RTT sample yet (Karn)");
    assert_eq!(t.s.counters().retransmits_timeout, 3);
}

#[test]
fn dup_acks_after_a_timeout_do_not_start_a_second_reduction() {
    // RFC 6582 step 2: duplicate ACKs for data sent before the timeout don't retrigger.
    for rec in ["newreno", "sack"] {
        let mut t = ten_in_flight(rec);
        let d = t.s.poll_timeout().unwrap();
        t.now = d;
        t.s.on_timeout(t.now);
        assert_eq!(t.sent(), vec![(0, 1)]);
        for _ in 0..4 {
            t.ack(0, &[]);
        }
        assert_eq!(t.s.counters().recoveries, 0, "{rec}");
    }
}

#[test]
fn receive_window_limits_new_data() {
    let mut t = script("newreno", 10);
    let a = AckSegment {
        ack: Seq(0),
        sack: SackList::new(),
        ts_ecr: None,
        ts_val: None,
        window: 3 * MSS,
        ece: false,
    };
    t.s.on_segment(t.now, &a);
    assert_eq!(t.sent(), new(0..3));
}

#[test]
fn finite_transfer_ends_with_a_short_segment() {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_cwnd: 10,
        ..TcpConfig::default()
    };
    let mut s = Sender::build(
        &cfg,
        &ControllerSpec::named("reno"),
        &RecoverySpec::named("newreno"),
        Some(2500),
    )
    .unwrap();
    let segs: Vec<DataSegment> = std::iter::from_fn(|| s.poll_transmit(Time::ZERO)).collect();
    assert_eq!(
        segs.iter().map(|d| d.len).collect::<Vec<_>>(),
        [1000, 1000, 500]
    );
    assert!(!s.is_finished());
    let a = AckSegment {
        ack: Seq(2500),
        sack: SackList::new(),
        ts_ecr: Some(Time::ZERO),
        ts_val: None,
        window: 1 << 20,
        ece: false,
    };
    s.on_segment(Time::from_millis(10), &a);
    assert!(s.is_finished());
    assert_eq!(
        s.poll_timeout(),
        None,
        "timer stopped when all is acknowledged"
    );
    assert_eq!(
        s.rtt().srtt(),
        Some(Dur::from_millis(10)),
        "timestamp RTT sample"
    );
}

#[test]
fn loss_responses_are_recorded_with_the_log_off() {
    use tcplab_core::cc::CongestionKind;
    let mut t = ten_in_flight("newreno");
    t.ack(2, &[]); // segments 0 and 1 arrived (cwnd 11); 2 lost
    for _ in 0..3 {
        t.ack(2, &[]);
    }
    assert_eq!(t.sent(), vec![(2, 1)]);
    // Nothing is acknowledged any more: the retransmission timer expires.
    let rto = t.s.poll_timeout().unwrap();
    t.now = rto;
    t.s.on_timeout(t.now);
    let mut out = Vec::new();
    t.s.drain_loss_responses(&mut out);
    let seen: Vec<_> = out
        .iter()
        .map(|r| {
            (
                r.kind,
                r.label,
                r.seq.0 / MSS,
                r.transmissions,
                r.cwnd_before / MSS,
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (CongestionKind::FastRetransmit, "1/2", 2, 1, 11),
            (CongestionKind::Timeout, "1/2", 2, 2, 11)
        ],
        "{out:?}"
    );
    assert_eq!(out[0].ssthresh_after, 5500);
    assert_eq!(out[0].value, 0.5);
    let mut log = Vec::new();
    t.s.drain_log(&mut log);
    assert!(log.is_empty(), "the event log stays off");
    t.s.drain_loss_responses(&mut out);
    assert_eq!(out.len(), 2, "drained once");
}

/// A reno sender with Linux's growth (segments counted, as the `linux` profile), SACK recovery
/// (RFC 6675: three duplicate ACKs) and 10 segments in flight.
fn linux_growth_ten_in_flight() -> Script {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_cwnd: 10,
        growth: Growth::Linux,
        timestamps: false,
        ..TcpConfig::default()
    };
    let s = Sender::build(
        &cfg,
        &ControllerSpec::named("reno"),
        &RecoverySpec::named("sack"),
        None,
    )
    .unwrap();
    let mut t = Script::with(s);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t
}

/// Linux's tcp_ack grows the window by what an ACK newly delivered (acked_sacked): a segment
/// SACKed before, then covered by the cumulative ACK, is not counted again.
#[test]
fn linux_growth_counts_what_an_ack_newly_delivered() {
    let mut t = linux_growth_ten_in_flight();
    t.ack(0, &[(1, 2)]); // one duplicate ACK: segment 1 arrived, 0 not yet
    assert_eq!(
        t.cwnd_segments(),
        10.0,
        "no growth without snd.una advancing"
    );
    t.ack(2, &[]); // 0 arrives: the ACK covers 0 (new) and 1 (SACKed before)
    assert_eq!(
        t.cwnd_segments(),
        11.0,
        "slow start adds the one segment newly delivered"
    );
}

/// Linux's tcp_cong_control runs after tcp_fastretrans_alert: the ACK that ends recovery
/// sets cwnd to ssthresh and then counts what it delivered toward congestion avoidance.
#[test]
fn linux_growth_counts_the_ack_that_ends_recovery() {
    let mut t = linux_growth_ten_in_flight();
    for k in 2..5 {
        t.ack(0, &[(1, k)]); // segment 0 lost, 1.. arrive
    }
    assert_eq!(t.sent().first(), Some(&(0, 1)), "fast retransmit");
    assert_eq!(t.ssthresh_segments(), 5.0);
    t.ack(0, &[(1, 10)]);
    t.sent();
    t.advance(100);
    t.ack(10, &[]); // the retransmission arrives: recovery ends, cwnd = ssthresh = 5
    assert_eq!(t.cwnd_segments(), 5.0);
    // Congestion avoidance: one segment per 5 counted. The exit ACK counted one (segment 0),
    // so four more single-segment ACKs make five.
    t.sent();
    for k in 11..14 {
        t.ack(k, &[]);
        assert_eq!(t.cwnd_segments(), 5.0, "ack {k}");
    }
    t.ack(14, &[]);
    assert_eq!(t.cwnd_segments(), 6.0);
}

/// Linux's tcp_fastretrans_alert at the ACK that reaches the recovery point: the state is
/// Open again, and a segment still marked lost starts the next recovery on that same ACK
/// (tcp_time_to_recover, "the loss is proven"): a new reduction, with no open window in
/// between. Without a segment marked lost the recovery just ends.
#[test]
fn rack_renews_the_recovery_at_its_point_while_a_segment_is_marked_lost() {
    for lost_above in [true, false] {
        let mut t = ten_in_flight("rack");
        t.ack(2, &[(3, 10)]); // 2 lost: recovery up to 10, cwnd 10 -> 5
        assert_eq!(t.sent(), [(2, 1), (10, 0), (11, 0), (12, 0), (13, 0)]);
        t.advance(130);
        if lost_above {
            // 10 (sent at 100 ms, before the SACKed 11) is lost by now: RACK marks it.
            t.ack(2, &[(11, 14), (3, 10)]);
            assert!(t.sent().contains(&(10, 1)));
            t.advance(10);
            t.ack(10, &[(11, 14)]); // the recovery point, with 10 still marked lost
        } else {
            t.ack(14, &[]);
        }
        let c = t.s.counters();
        let (recoveries, cwnd) = if lost_above { (2, 2.5) } else { (1, 5.0) };
        assert_eq!(
            c.recoveries, recoveries,
            "lost above the point: {lost_above}"
        );
        assert_eq!(
            t.ssthresh_segments(),
            cwnd,
            "lost above the point: {lost_above}"
        );
        assert_eq!(
            t.cwnd_segments(),
            cwnd,
            "lost above the point: {lost_above}"
        );
    }
}
