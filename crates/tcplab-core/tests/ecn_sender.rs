//! ECN at the sender (RFC 3168 §6.1): data is ECN-capable (retransmissions are not); an ECE
//! echo halves the window like a congestion loss but retransmits nothing; the next segment
//! carries CWR; further echoes are ignored until an ACK covers data sent after the
//! reduction (one reduction per window). MSS 1000, so sequence numbers read as segments.

use tcplab_core::cc::Growth;
use tcplab_core::{
    AckSegment, ControllerSpec, DataSegment, RecoverySpec, SackList, Sender, Seq, TcpConfig, Time,
};

const MSS: u64 = 1000;

fn sender(ecn: bool) -> Sender {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_cwnd: 10,
        growth: Growth::PerAck,
        timestamps: false,
        delayed_ack: false,
        ecn,
        ..TcpConfig::default()
    };
    Sender::build(
        &cfg,
        &ControllerSpec::named("reno"),
        &RecoverySpec::named("newreno"),
        None,
    )
    .unwrap()
}

fn drain(s: &mut Sender, now: Time) -> Vec<DataSegment> {
    std::iter::from_fn(|| s.poll_transmit(now)).collect()
}

fn ack(s: &mut Sender, now: Time, segs: u64, ece: bool) {
    let a = AckSegment {
        ack: Seq(segs * MSS),
        sack: SackList::new(),
        ts_ecr: None,
        ts_val: None,
        window: 1 << 30,
        ece,
    };
    s.on_segment(now, &a);
}

#[test]
fn echo_reduces_once_per_window_without_retransmitting() {
    let mut s = sender(true);
    let t = Time::from_millis(100);
    let first = drain(&mut s, Time::ZERO);
    assert_eq!(first.len(), 10);
    assert!(first.iter().all(|d| d.ect && !d.cwr && !d.ce));

    // Segment 0 was marked: its ACK echoes ECE. The ACK does not grow the window (RFC 3168
    // §6.1.2), which is halved as for a congestion loss, without recovery or retransmission.
    ack(&mut s, t, 1, true);
    let c = s.counters();
    assert_eq!((c.ecn_reductions, c.retransmits, c.recoveries), (1, 0, 0));
    let snap = s.snapshot();
    assert_eq!(
        snap.ssthresh, 5000,
        "Reno: ssthresh = cwnd (10) / 2, not 11 / 2"
    );
    assert_eq!(snap.cwnd, 5000);
    assert!(!snap.in_recovery);
    // The window is full (9 in flight > 5): nothing goes out yet.
    assert!(drain(&mut s, t).is_empty());

    // Echoes continue until the receiver sees CWR: ACKs up to and including segment 10
    // (the last one sent before the reduction) are ignored.
    for k in 2..=10 {
        ack(&mut s, t, k, true);
    }
    assert_eq!(s.counters().ecn_reductions, 1, "one reduction per window");
    let next = drain(&mut s, t);
    assert!(!next.is_empty());
    assert!(
        next[0].cwr,
        "the first segment after the reduction carries CWR"
    );
    assert!(next[1..].iter().all(|d| !d.cwr && d.ect));
    assert_eq!(next[0].seq, Seq(10 * MSS));

    // A new mark on data sent after the reduction: a second reduction.
    ack(&mut s, t, 11, true);
    assert_eq!(s.counters().ecn_reductions, 2);
    assert_eq!(s.counters().retransmits, 0);
}

/// Ten segments out, segment 1 lost: three duplicate ACKs start a recovery at 100 ms (cwnd
/// 11 after the ACK of segment 0, ssthresh 5500).
fn segment_one_lost() -> (Sender, Time) {
    let mut s = sender(true);
    let t = Time::from_millis(100);
    drain(&mut s, Time::ZERO);
    ack(&mut s, t, 1, false);
    drain(&mut s, t);
    for _ in 0..3 {
        ack(&mut s, t, 1, false);
    }
    (s, t)
}

#[test]
fn retransmissions_are_not_ecn_capable() {
    let (mut s, t) = segment_one_lost();
    let out = drain(&mut s, t);
    let rtx: Vec<&DataSegment> = out.iter().filter(|d| d.retransmission > 0).collect();
    assert_eq!(rtx.len(), 1, "fast retransmission of segment 1");
    assert!(!rtx[0].ect);
}

#[test]
fn without_ecn_echoes_are_ignored_and_nothing_is_ect() {
    let mut s = sender(false);
    let t = Time::from_millis(100);
    assert!(drain(&mut s, Time::ZERO).iter().all(|d| !d.ect));
    ack(&mut s, t, 1, true);
    assert_eq!(s.counters().ecn_reductions, 0);
    assert_eq!(s.snapshot().cwnd, 11 * MSS);
}

#[test]
fn an_echo_then_a_loss_in_the_same_window_reduce_once() {
    // RFC 3168 §6.1.2: one reduction per window for any mix of drops and CE marks.
    let mut s = sender(true);
    let t = Time::from_millis(100);
    assert_eq!(drain(&mut s, Time::ZERO).len(), 10);
    ack(&mut s, t, 1, true); // CE on segment 0: cwnd 10 -> 5
    assert_eq!((s.snapshot().cwnd, s.snapshot().ssthresh), (5000, 5000));
    // Segment 1 was lost: three duplicate ACKs for it, from segments 2..5 of the same window.
    for _ in 0..3 {
        ack(&mut s, t, 1, false);
    }
    drain(&mut s, t);
    let c = s.counters();
    assert_eq!(
        (c.recoveries, c.retransmits_fast),
        (1, 1),
        "the loss is repaired"
    );
    assert_eq!(
        s.snapshot().ssthresh,
        5000,
        "no second reduction for the same window (was 2500)"
    );
    // A loss in data sent after the ECN reduction is a new window: it reduces.
    let mut s = sender(true);
    drain(&mut s, Time::ZERO);
    ack(&mut s, t, 1, true);
    for k in 2..=10 {
        ack(&mut s, t, k, false);
    }
    drain(&mut s, t);
    for _ in 0..3 {
        ack(&mut s, t, 10, false);
    }
    assert_eq!(s.counters().recoveries, 1);
    assert!(s.snapshot().ssthresh < 5000, "{}", s.snapshot().ssthresh);
}

#[test]
fn a_loss_then_an_echo_in_the_same_window_reduce_once() {
    let (mut s, t) = segment_one_lost();
    assert_eq!(s.snapshot().ssthresh, 5500);
    ack(&mut s, t, 12, false); // the retransmission repairs it: recovery ends
    assert!(!s.snapshot().in_recovery);
    // An echo for data sent before the loss (segments up to 11) is the same window.
    ack(&mut s, t, 12, true);
    assert_eq!(s.counters().ecn_reductions, 0);
    assert_eq!(s.snapshot().ssthresh, 5500);
}
