//! Scripted exchanges for F-RTO (RFC 5682) and undo of unnecessary reductions (DSACK,
//! timestamps), as in Linux's tcp_input.c. The test plays the receiver; MSS 1000, so
//! sequence numbers read as segments.

use tcplab_core::cc::Growth;
use tcplab_core::{ControllerSpec, Dur, RecoverySpec, Sender, TcpConfig, Time};

use crate::common;

use common::{new, Script, MSS};

fn cfg(frto: bool, undo: bool, timestamps: bool) -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        initial_cwnd: 10,
        growth: Growth::PerAck,
        timestamps,
        rto_min: Dur::from_millis(200),
        rto_initial: Dur::from_secs(1),
        frto,
        undo,
        ..TcpConfig::default()
    }
}

fn script(cfg: &TcpConfig, recovery: &str) -> Script {
    Script::with(
        Sender::build(
            cfg,
            &ControllerSpec::named("reno"),
            &RecoverySpec::named(recovery),
            None,
        )
        .unwrap(),
    )
}

/// Ten segments out at 0 ms, the ACKs delayed past the RTO (1 s): the timer fires and
/// segment 0 is retransmitted; returns the script just after.
fn delay_spike(cfg: &TcpConfig) -> Script {
    let mut t = script(cfg, "sack");
    assert_eq!(t.sent(), new(0..10));
    t.now = t.s.poll_timeout().unwrap();
    t.timer();
    assert_eq!(t.sent(), vec![(0, 1)]);
    assert_eq!((t.cwnd_segments(), t.ssthresh_segments()), (1.0, 5.0));
    t
}

#[test]
fn frto_detects_a_spurious_timeout_and_undoes_it() {
    let mut t = delay_spike(&cfg(true, false, false));
    // The delayed ACK of the original segment 0 arrives: F-RTO sends new data (step 2b)
    // instead of retransmitting 1..9.
    t.advance(10);
    t.ack(1, &[]);
    assert_eq!(t.sent(), new(10..12), "new data, not retransmissions");
    // Originals 1..4, never retransmitted, are acknowledged: the timeout was spurious.
    t.advance(1);
    t.ack(5, &[]);
    assert_eq!(t.s.counters().undos_timeout, 1);
    // cwnd back to its value before the timeout (10), plus this ACK's slow-start step.
    assert_eq!(t.cwnd_segments(), 11.0);
    let sent = t.sent();
    assert!(
        sent.iter().all(|&(_, rtx)| rtx == 0),
        "nothing retransmitted: {sent:?}"
    );
    assert_eq!(
        t.s.counters().retransmits,
        1,
        "only the timeout's retransmission"
    );
}

#[test]
fn without_frto_the_same_exchange_retransmits_go_back_n() {
    let mut t = delay_spike(&cfg(false, false, false));
    t.advance(10);
    t.ack(1, &[]);
    assert_eq!(
        t.sent(),
        vec![(1, 1), (2, 1)],
        "conventional: retransmit in order"
    );
    assert_eq!(t.s.counters().undos_timeout, 0);
}

#[test]
fn frto_a_real_loss_falls_back_to_conventional_recovery() {
    let mut t = delay_spike(&cfg(true, false, false));
    t.advance(10);
    t.ack(1, &[]); // 1..9 really lost; the retransmission of 0 arrived
    assert_eq!(t.sent(), new(10..12));
    t.advance(100);
    t.ack(1, &[(10, 11)]); // the new data arrives above the hole: step 3a, the loss is real
    assert_eq!(t.s.counters().undos_timeout, 0);
    assert_eq!(t.cwnd_segments(), 2.0);
    let sent = t.sent();
    assert!(
        sent.iter().all(|&(_, rtx)| rtx == 1) && !sent.is_empty(),
        "{sent:?}"
    );
}

#[test]
fn timestamps_undo_a_spurious_timeout_at_the_first_ack() {
    // Eifel detection (Linux tcp_packet_delayed): the ACK echoes the original's timestamp,
    // older than the retransmission.
    let mut t = delay_spike(&cfg(false, true, true));
    t.advance(10);
    t.ack_ts(1, &[], Some(Time::ZERO));
    assert_eq!(t.s.counters().undos_timeout, 1);
    assert_eq!(t.cwnd_segments(), 11.0, "10 restored, +1 slow start");
    // The echo of the retransmission itself proves nothing.
    let mut t = delay_spike(&cfg(false, true, true));
    let rtx_at = t.now;
    t.advance(100);
    t.ack_ts(1, &[], Some(rtx_at));
    assert_eq!(t.s.counters().undos_timeout, 0);
}

/// SACK recovery after segment 2 seemed lost (three SACKs above it), then the original 2
/// arrives late: returns the script after the fast retransmission of 2.
fn reordered(cfg: &TcpConfig) -> Script {
    let mut t = script(cfg, "sack");
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack_ts(2, &[], Some(Time::ZERO));
    t.sent();
    for k in 4..=6 {
        t.ack_ts(2, &[(3, k)], Some(Time::ZERO));
    }
    let sent = t.sent();
    assert_eq!(sent[0], (2, 1), "fast retransmission of 2: {sent:?}");
    // cwnd 11 (the ACK of 0..2 added one) halved.
    assert_eq!(t.ssthresh_segments(), 5.5);
    t
}

#[test]
fn a_dsack_for_the_only_retransmission_undoes_fast_recovery() {
    let mut t = reordered(&cfg(false, true, false));
    t.advance(1);
    let all = t.s.snd_nxt().0 / MSS;
    t.ack_ts(all, &[], None); // the late original fills the hole: recovery ends
    assert!(!t.s.snapshot().in_recovery);
    assert_eq!(
        t.s.counters().undos_recovery,
        0,
        "the retransmission is not yet reported"
    );
    t.advance(1);
    t.ack_ts(all, &[(2, 3)], None); // DSACK: the retransmission was a duplicate
    assert_eq!(t.s.counters().undos_recovery, 1);
    assert_eq!(t.cwnd_segments(), 11.0, "back to cwnd before the reduction");
    // max(ssthresh before, 3/4 cwnd): ssthresh was still unbounded (slow start), as in Linux.
    assert_eq!(t.s.snapshot().ssthresh, u64::MAX);
}

#[test]
fn a_timestamp_older_than_the_retransmission_undoes_fast_recovery_at_its_end() {
    let mut t = reordered(&cfg(false, true, true));
    t.advance(1);
    let all = t.s.snd_nxt().0 / MSS;
    t.ack_ts(all, &[], Some(Time::ZERO)); // the original's echo ends recovery
    assert_eq!(t.s.counters().undos_recovery, 1);
    assert_eq!(t.cwnd_segments(), 11.0);
    // Off by default: the same exchange keeps the reduction.
    let mut t = reordered(&cfg(false, false, true));
    t.advance(1);
    let all = t.s.snd_nxt().0 / MSS;
    t.ack_ts(all, &[], Some(Time::ZERO));
    assert_eq!(t.s.counters().undos_recovery, 0);
    assert_eq!(t.cwnd_segments(), 5.5);
}

#[test]
fn a_timeout_during_fast_recovery_keeps_the_episodes_first_retransmission_time() {
    // NewReno (no SACK): segment 2 is lost, three duplicate ACKs retransmit it at 100 ms,
    // then the timer fires during that recovery. Linux's tcp_enter_loss does not start a new
    // undo episode inside a recovery: retrans_stamp stays the fast retransmission's, so a
    // late ACK echoing a timestamp sent after it (not before the timeout's retransmission
    // alone) proves nothing. Starting a new episode at the timeout took such ACKs for
    // spurious-timeout proofs and, with F-RTO, looped: 23 timeouts in 6 s at 2 % loss.
    let mut t = script(&cfg(false, true, true), "newreno");
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack_ts(2, &[], Some(Time::ZERO));
    t.sent();
    for _ in 0..3 {
        t.ack_ts(2, &[], Some(Time::ZERO));
    }
    let sent = t.sent();
    assert_eq!(sent[0], (2, 1), "fast retransmission of 2: {sent:?}");
    let fast_rtx = t.now;
    t.now = t.s.poll_timeout().unwrap();
    t.timer();
    assert_eq!(t.s.counters().timeouts, 1);
    assert_eq!(
        t.sent()[0],
        (2, 2),
        "the timeout's retransmission (its second)"
    );
    t.advance(1);
    t.ack_ts(5, &[], Some(fast_rtx));
    assert_eq!(t.s.counters().undos_timeout, 0);
    // An echo older than the fast retransmission still undoes (the original got through).
    t.advance(1);
    t.ack_ts(6, &[], Some(Time::ZERO));
    assert_eq!(t.s.counters().undos_timeout, 1);
}
