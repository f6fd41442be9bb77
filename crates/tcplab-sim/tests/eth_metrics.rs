//! Loss events, dup ACKs per recovery and SACK-block use in the flow summary and the
//! verdicts table (docs/eth-metrics.md): constructed loss patterns on a two-host path, with
//! trace-driven loss (`LossSpec::Trace`) dropping chosen data packets.

use crate::common;

use tcplab_core::TcpConfig;
use tcplab_sim::scenario::Scenario;
use tcplab_sim::Results;

/// The two-host path of `common::trace_loss_path` with initial window `cwnd`.
fn path(recovery: &str, cwnd: u32, segments: u64, drop: &[u64], ack_drop: &[u64]) -> Scenario {
    common::trace_loss_path(recovery, common::tcp_cwnd(cwnd), segments, drop, ack_drop)
}

fn run(s: &Scenario) -> Results {
    let r = common::run_completed(s);
    // Every row of the verdicts table has its loss-event size; the summary agrees with them.
    let v = &r.verdicts;
    assert_eq!(v.lost_segments.len(), v.len());
    assert_eq!(v.dupacks.len(), v.len());
    let f = &r.flows[0];
    let single = v.lost_segments.iter().filter(|&&n| n == 1).count() as u64;
    let multiple = v.lost_segments.iter().filter(|&&n| n > 1).count() as u64;
    assert_eq!(
        (f.loss_events_single, f.loss_events_multiple),
        (single, multiple)
    );
    let drops: u32 = v.lost_segments.iter().sum();
    assert_eq!(f.loss_event_drops, drops as u64);
    r
}

/// (trigger, dupacks, lost segments) of every loss response.
fn rows(r: &Results) -> Vec<(&'static str, u32, u32)> {
    let v = &r.verdicts;
    (0..v.len())
        .map(|k| (v.trigger[k], v.dupacks[k], v.lost_segments[k]))
        .collect()
}

#[test]
fn one_loss_is_a_single_loss_event() {
    for recovery in [
        "reno", "newreno", "sack", "fack", "rh", "lrd", "prr", "rack",
    ] {
        let r = run(&path(recovery, 10, 30, &[3], &[]));
        let f = &r.flows[0];
        assert_eq!(
            (
                f.loss_events_single,
                f.loss_events_multiple,
                f.loss_event_max
            ),
            (1, 0, 1),
            "{recovery}: {:?}",
            rows(&r)
        );
        assert_eq!(f.data_drops, 1);
    }
}

#[test]
fn three_losses_in_one_window_are_one_multiple_loss_event() {
    // Reno halves twice or times out, NewReno and the SACK strategies recover once: either
    // way the three drops of the window are one event of three.
    for recovery in [
        "reno", "newreno", "sack", "fack", "rh", "lrd", "prr", "rack",
    ] {
        let r = run(&path(recovery, 10, 40, &[2, 4, 6], &[]));
        let f = &r.flows[0];
        assert_eq!(
            (
                f.loss_events_single,
                f.loss_events_multiple,
                f.loss_event_max
            ),
            (0, 1, 3),
            "{recovery}: {:?}",
            rows(&r)
        );
        assert_eq!(r.verdicts.lost_segments[0], 3, "{recovery}");
    }
}

#[test]
fn losses_in_two_windows_are_two_events() {
    // A loss early and a loss in a later window, each answered by its own recovery.
    let r = run(&path("sack", 10, 200, &[3, 120], &[]));
    let f = &r.flows[0];
    assert_eq!(
        (f.loss_events_single, f.loss_events_multiple),
        (2, 0),
        "{:?}",
        rows(&r)
    );
    assert_eq!(f.sender.fast_retransmits, 2);
}

#[test]
fn a_lost_fast_retransmission_is_a_second_event() {
    // The window's loss, then its fast retransmission lost: the timeout that repairs it is
    // a loss event of its own.
    let clean = run(&path("newreno", 10, 20, &[0], &[]));
    let s = &clean.segments;
    let rtx = (0..s.seq.len())
        .find(|&k| s.seq[k] == 0 && s.retransmission[k] == 1)
        .unwrap() as u64;
    let r = run(&path("newreno", 10, 20, &[0, rtx], &[]));
    let got: Vec<_> = rows(&r).iter().map(|&(t, _, n)| (t, n)).collect();
    assert_eq!(
        got,
        [("fast_retransmit", 1), ("timeout", 1)],
        "{:?}",
        rows(&r)
    );
    // The timeout's dup ACKs are those since the cumulative ACK last advanced.
    assert_eq!(r.verdicts.dupacks[0], 3);
    assert!(r.verdicts.dupacks[1] > 3);
}

#[test]
fn dup_acks_per_recovery_reno_three_rh_one() {
    for (recovery, dupacks) in [("reno", 3), ("newreno", 3), ("rh", 1), ("lrd", 1)] {
        let r = run(&path(recovery, 10, 30, &[3], &[]));
        let f = &r.flows[0];
        assert_eq!(f.sender.fast_retransmits, 1, "{recovery}");
        assert_eq!(r.verdicts.dupacks[0], dupacks, "{recovery}");
        let mut bins = [0; 5];
        bins[dupacks as usize] = 1;
        assert_eq!(f.recoveries_by_dupacks, bins, "{recovery}");
        assert_eq!(f.dupacks_per_recovery, Some(dupacks as f64), "{recovery}");
    }
}

#[test]
fn a_lost_ack_makes_the_second_sack_block_useful() {
    // Segments 2 and 5 are lost, so the ACKs of 3, 4 and 6 carry SACK blocks: [3,4), then
    // [3,5), then [6,7) and [3,5). When the ACK of 4 is lost, the next ACK's second block
    // reports segment 4 for the first time.
    let clean = run(&path("sack", 10, 30, &[2, 5], &[]));
    let f = &clean.flows[0];
    assert!(f.sack_block_used[0] > 0);
    assert!(f.sack_block_carried[1] > 0);
    assert_eq!(f.sack_block_used[1], 0, "{:?}", f.sack_block_used);
    // ACK 3 (of segment 4) is lost.
    let r = run(&path("sack", 10, 30, &[2, 5], &[3]));
    let f = &r.flows[0];
    assert_eq!(f.sack_block_used[1], 1, "{:?}", f.sack_block_used);
    assert!(f.sack_block_carried[1] >= f.sack_block_used[1]);
    assert_eq!(f.sack_block_used[2..], [0, 0, 0, 0]);
}

#[test]
fn a_spurious_timeout_retransmission_is_reported_in_a_dsack_block() {
    // Every ACK of the first window is lost: the timeout resends segment 0, which had
    // arrived; with tcp.dsack the receiver reports the duplicate, and the sender does not
    // count the DSACK block as a used SACK block.
    for dsack in [false, true] {
        let tcp = TcpConfig {
            initial_cwnd: 4,
            delayed_ack: false,
            dsack,
            ..TcpConfig::default()
        };
        let r = run(&common::trace_loss_path(
            "sack",
            tcp,
            20,
            &[],
            &[0, 1, 2, 3],
        ));
        let f = &r.flows[0];
        assert!(
            f.sender.timeouts >= 1 && f.spurious_retransmits >= 1,
            "{f:?}"
        );
        assert_eq!(f.dsacks_sent > 0, dsack, "{f:?}");
        assert_eq!(
            f.loss_events_single + f.loss_events_multiple,
            0,
            "no data was lost"
        );
        assert_eq!(f.sack_block_used, [0; 6]);
        assert_eq!(f.sack_block_carried[0] > 0, dsack);
    }
}
