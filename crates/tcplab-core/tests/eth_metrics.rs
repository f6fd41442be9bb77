//! The sender-side measurements of the ETH report (docs/eth-metrics.md), one behaviour per
//! test: the kind reported with each transmission, the duplicate ACKs that triggered each
//! recovery, the use of the n-th SACK block, and DSACK (the receiver's blocks and RACK's
//! reordering window). The test plays the receiver ACK by ACK (`common::Script`); sequence
//! numbers are in segments of 1000 bytes.

use tcplab_core::cc::{CongestionKind, Growth};
use tcplab_core::{
    ControllerSpec, DataSegment, LossResponse, Receiver, RecoverySpec, Sender, Seq, TcpConfig,
    Time, TxKind,
};

use crate::common;

use common::{new, Script, MSS};

fn config() -> TcpConfig {
    TcpConfig {
        mss: MSS as u32,
        initial_cwnd: 10,
        growth: Growth::PerAck,
        timestamps: false,
        ..TcpConfig::default()
    }
}

fn script(recovery: &str, iw: u32) -> Script {
    let cfg = TcpConfig {
        initial_cwnd: iw,
        ..config()
    };
    let s = Sender::build(
        &cfg,
        &ControllerSpec::named("reno"),
        &RecoverySpec::named(recovery),
        None,
    )
    .unwrap();
    Script::with(s)
}

fn responses(t: &mut Script) -> Vec<LossResponse> {
    let mut v = Vec::new();
    t.s.drain_loss_responses(&mut v);
    v
}

/// Everything the sender transmits now, as (segment, kind).
fn sent_kinds(t: &mut Script) -> Vec<(u64, TxKind)> {
    std::iter::from_fn(|| t.s.poll_transmit_with_kind(t.now))
        .map(|(d, k)| (d.seq.0 / MSS, k))
        .collect()
}

#[test]
fn reno_recovery_is_triggered_by_three_dup_acks_and_reports_a_fast_retransmission() {
    let mut t = script("reno", 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(1, &[]); // segment 0 arrives, 1 is lost; slow start sends two more
    assert_eq!(
        sent_kinds(&mut t),
        vec![(10, TxKind::New), (11, TxKind::New)]
    );
    for _ in 0..2 {
        t.ack(1, &[]);
        assert_eq!(sent_kinds(&mut t), vec![]);
    }
    t.ack(1, &[]);
    assert_eq!(sent_kinds(&mut t), vec![(1, TxKind::Fast)]);
    let r = responses(&mut t);
    assert_eq!(r.len(), 1);
    assert_eq!(
        (r[0].kind, r[0].dupacks),
        (CongestionKind::FastRetransmit, 3)
    );
    // Inflation: the next dup ACKs release new data, reported as new.
    t.ack(1, &[]);
    t.ack(1, &[]);
    t.ack(1, &[]);
    assert!(sent_kinds(&mut t).iter().all(|&(_, k)| k == TxKind::New));
    assert_eq!(t.s.counters().retransmits_fast, 1);
}

#[test]
fn rate_halving_recovery_is_triggered_by_one_dup_ack() {
    let mut t = script("rh", 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(0, &[(1, 2)]);
    let r = responses(&mut t);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].dupacks, 1, "RH enters on the first duplicate ACK");
    assert_eq!(sent_kinds(&mut t), vec![(10, TxKind::New)]);
    t.ack(0, &[(1, 3)]);
    t.ack(0, &[(1, 4)]);
    assert_eq!(sent_kinds(&mut t), vec![(0, TxKind::Fast)]);
}

#[test]
fn for_sack_strategies_an_advancing_ack_with_new_sack_data_is_a_dup_ack() {
    // RFC 6675 §2: the ACK that acknowledges segment 0 and SACKs 2 (segment 1 lost, as a
    // delayed ACK would report it) counts; two more SACKs make three.
    let mut t = script("sack", 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(1, &[(2, 3)]);
    t.ack(1, &[(2, 4)]);
    assert!(responses(&mut t).is_empty());
    t.ack(1, &[(2, 5)]);
    let r = responses(&mut t);
    assert_eq!(r.iter().map(|r| r.dupacks).collect::<Vec<_>>(), vec![3]);
    // RH enters on that first ACK, with one dup ACK.
    let mut t = script("rh", 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(1, &[(2, 3)]);
    let r = responses(&mut t);
    assert_eq!(r.iter().map(|r| r.dupacks).collect::<Vec<_>>(), vec![1]);
    // The sender's dup_acks counter stays RFC 5681's: none of these ACKs was one for RH.
    assert_eq!(t.s.counters().dup_acks, 0);
}

#[test]
fn dup_acks_restart_counting_when_the_cumulative_ack_advances() {
    // Two dup ACKs, then an advance, then three more: the recovery counts three.
    let mut t = script("newreno", 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(1, &[]);
    t.ack(1, &[]);
    t.ack(1, &[]);
    t.ack(2, &[]);
    t.ack(2, &[]);
    t.ack(2, &[]);
    assert!(responses(&mut t).is_empty());
    t.ack(2, &[]);
    let r = responses(&mut t);
    assert_eq!(r.iter().map(|r| r.dupacks).collect::<Vec<_>>(), vec![3]);
}

#[test]
fn a_timeout_retransmission_is_reported_as_such() {
    let mut t = script("sack", 2);
    assert_eq!(t.sent(), new(0..2));
    t.now = Time::from_millis(1000);
    t.timer();
    assert_eq!(sent_kinds(&mut t), vec![(0, TxKind::Timeout)]);
    let r = responses(&mut t);
    assert_eq!((r[0].kind, r[0].dupacks), (CongestionKind::Timeout, 0));
}

#[test]
fn the_nth_sack_block_is_used_when_it_sacks_new_data() {
    let mut t = script("sack", 10);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    // Segments 0, 3, 5 and 7 are lost. ACK of segment 2: one new block.
    t.ack(0, &[(1, 3)]);
    // The ACK of segment 4 is lost; the ACK of 6 repeats 4's block as its second.
    t.ack(0, &[(6, 7), (4, 5), (1, 3)]);
    // ACK of 8: its first block is new, the others repeat.
    t.ack(0, &[(8, 9), (6, 7), (4, 5)]);
    let c = t.s.counters();
    assert_eq!(c.sack_blocks_carried, [3, 2, 2, 0, 0, 0]);
    assert_eq!(c.sack_blocks_used, [3, 1, 0, 0, 0, 0]);

    // A strategy that does not read SACK uses none.
    let mut r = script("reno", 10);
    assert_eq!(r.sent(), new(0..10));
    r.advance(100);
    r.ack(0, &[(1, 3)]);
    r.ack(0, &[(4, 5), (1, 3)]);
    let c = r.s.counters();
    assert_eq!(c.sack_blocks_carried, [2, 1, 0, 0, 0, 0]);
    assert_eq!(c.sack_blocks_used, [0; 6]);
}

fn seg(n: u64) -> DataSegment {
    DataSegment {
        seq: Seq(n * MSS),
        len: MSS as u32,
        ts_val: None,
        ts_ecr: None,
        retransmission: 0,
        ect: false,
        ce: false,
        cwr: false,
    }
}

/// Delivers segment `n` and returns the ACK as (ack, blocks) in segments.
fn deliver(r: &mut Receiver, n: u64) -> (u64, Vec<(u64, u64)>) {
    r.on_segment(Time::ZERO, &seg(n));
    let a = r.poll_transmit(Time::ZERO).expect("an immediate ACK");
    let blocks = a
        .sack
        .iter()
        .map(|b| (b.start.0 / MSS, b.end.0 / MSS))
        .collect();
    (a.ack.0 / MSS, blocks)
}

#[test]
fn the_receiver_reports_duplicates_in_a_dsack_block_when_asked_to() {
    let cfg = TcpConfig {
        delayed_ack: false,
        dsack: true,
        ..config()
    };
    let mut r = Receiver::new(&cfg);
    deliver(&mut r, 0);
    deliver(&mut r, 1);
    // A duplicate below the cumulative ACK: reported once, below it (RFC 2883 §4.1.1).
    assert_eq!(deliver(&mut r, 0), (2, vec![(0, 1)]));
    // Segment 2 is lost; 3 and 4 are held. A duplicate of 3: the DSACK block first, the
    // block holding it second (§4.1.2).
    deliver(&mut r, 3);
    deliver(&mut r, 6);
    assert_eq!(deliver(&mut r, 4), (2, vec![(3, 5), (6, 7)]));
    assert_eq!(deliver(&mut r, 3), (2, vec![(3, 4), (3, 5), (6, 7)]));
    assert_eq!(
        deliver(&mut r, 7),
        (2, vec![(6, 8), (3, 5)]),
        "reported once"
    );
    assert_eq!(r.counters().dsacks_sent, 2);
    // The number of blocks stays within sack_blocks.
    let cfg2 = TcpConfig {
        sack_blocks: 2,
        ..cfg.clone()
    };
    let mut r = Receiver::new(&cfg2);
    deliver(&mut r, 1);
    deliver(&mut r, 3);
    assert_eq!(deliver(&mut r, 1), (0, vec![(1, 2), (1, 2)]));

    // Off (the default): a duplicate adds no block.
    let mut r = Receiver::new(&TcpConfig {
        dsack: false,
        ..cfg
    });
    deliver(&mut r, 0);
    assert_eq!(deliver(&mut r, 0), (1, vec![]));
    assert_eq!(r.counters().dsacks_sent, 0);
}

#[test]
fn a_dsack_widens_racks_reordering_window() {
    // As `rack_declares_a_loss_after_the_reordering_window` in recovery_eth.rs: segment 4
    // is missing when 5 is SACKed at t = 200 ms; RACK.rtt = min_RTT = 100 ms. Without
    // DSACK the reordering timer is due at 100 + 100 + 25 ms; an ACK that also reports a
    // duplicate (segment 3, below the cumulative ACK) doubles reo_wnd to 50 ms.
    for (dsack, due) in [(false, 225), (true, 250)] {
        let mut t = script("rack", 4);
        assert_eq!(t.sent(), new(0..4));
        t.advance(100);
        t.ack(4, &[]);
        assert_eq!(t.sent(), new(4..9));
        t.advance(100);
        if dsack {
            t.ack(4, &[(3, 4), (5, 6)]);
        } else {
            t.ack(4, &[(5, 6)]);
        }
        assert!(t.sent().iter().all(|s| s.1 == 0));
        assert_eq!(
            t.s.poll_timeout(),
            Some(Time::from_millis(due)),
            "dsack {dsack}"
        );
        let c = t.s.counters();
        assert_eq!(c.dsacks_received, dsack as u64);
        // The DSACK block is carried but never "used".
        assert_eq!(c.sack_blocks_used[0], !dsack as u64);
    }
}
