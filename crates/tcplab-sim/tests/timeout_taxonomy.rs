//! Timeout taxonomy (docs/timeouts.md): constructed loss patterns on a two-host path, with
//! trace-driven loss (`LossSpec::Trace`) dropping chosen data packets, and the class each
//! timeout gets in the verdicts table and the flow summary.

use crate::common;

use tcplab_sim::instruments::timeouts::TimeoutClass;
use tcplab_sim::scenario::Scenario;
use tcplab_sim::Results;

use common::MSS;

/// The two-host path of `common::trace_loss_path` (no ACK loss) with initial window `cwnd`.
fn path(recovery: &str, cwnd: u32, segments: u64, drop: &[u64]) -> Scenario {
    common::trace_loss_path(recovery, common::tcp_cwnd(cwnd), segments, drop, &[])
}

fn run(s: &Scenario) -> Results {
    common::run_completed(s)
}

/// Index (among data packets sent) of the first retransmission of the segment at `seq`.
fn first_rtx_index(r: &Results, seq: u64) -> u64 {
    let s = &r.segments;
    (0..s.seq.len())
        .find(|&k| s.seq[k] == seq && s.retransmission[k] == 1)
        .expect("a retransmission") as u64
}

/// The timeout classes of the run, in order, checked against the summary counts.
fn classes(r: &Results) -> Vec<&'static str> {
    let v = &r.verdicts;
    let f = &r.flows[0];
    let mut out = Vec::new();
    for k in 0..v.len() {
        if v.trigger[k] == "timeout" {
            assert_ne!(v.timeout_class[k], "");
            out.push(v.timeout_class[k]);
        } else {
            assert_eq!(v.timeout_class[k], "");
        }
    }
    assert_eq!(out.len() as u64, f.sender.timeouts);
    assert_eq!(f.timeouts_by_class.iter().sum::<u64>(), f.sender.timeouts);
    for c in TimeoutClass::ALL {
        let n = out.iter().filter(|&&x| x == c.as_str()).count() as u64;
        assert_eq!(f.timeouts_by_class[c as usize], n, "{}", c.as_str());
    }
    let p = (f.sender.timeouts + f.sender.fast_retransmits) as f64 / f.sender.segments_sent as f64;
    assert_eq!(f.loss_indication_p, p);
    out
}

#[test]
fn one_loss_in_a_window_of_three_is_a_non_trigger_timeout() {
    let r = run(&path("reno", 3, 3, &[0]));
    assert_eq!(r.flows[0].sender.fast_retransmits, 0);
    assert_eq!(classes(&r), ["non_trigger"]);
    assert!(r.flows[0].loss_indication_p > 0.0);
}

#[test]
fn a_lost_timeout_retransmission_times_out_again() {
    let clean = run(&path("reno", 3, 3, &[0]));
    let rtx = first_rtx_index(&clean, 0);
    assert_eq!(
        rtx, 3,
        "the timeout retransmission follows the three originals"
    );
    let r = run(&path("reno", 3, 3, &[0, rtx]));
    assert_eq!(classes(&r), ["non_trigger", "lost_timeout_rtx"]);
}

#[test]
fn a_lost_fast_retransmission_times_out() {
    for recovery in ["newreno", "rh", "reno"] {
        let clean = run(&path(recovery, 10, 20, &[0]));
        assert_eq!(clean.flows[0].sender.fast_retransmits, 1, "{recovery}");
        assert_eq!(clean.flows[0].sender.timeouts, 0, "{recovery}");
        let rtx = first_rtx_index(&clean, 0);
        let r = run(&path(recovery, 10, 20, &[0, rtx]));
        assert_eq!(r.flows[0].sender.fast_retransmits, 1, "{recovery}");
        assert_eq!(classes(&r), ["lost_fast_rtx"], "{recovery}");
    }
}

#[test]
fn three_losses_in_a_window_under_reno_are_multiple_packet_loss_missing_acks() {
    // Reno leaves recovery on the first partial ACK; the later holes lack duplicate ACKs.
    let r = run(&path("reno", 10, 20, &[0, 1, 2]));
    assert_eq!(r.flows[0].sender.fast_retransmits, 1);
    assert_eq!(classes(&r), ["mpl_missing_acks"]);
}

#[test]
fn a_lost_recovery_retransmission_is_a_lost_mpl_retransmission() {
    for recovery in ["newreno", "rh"] {
        let clean = run(&path(recovery, 10, 20, &[0, 1]));
        assert_eq!(clean.flows[0].sender.timeouts, 0, "{recovery}");
        let rtx = first_rtx_index(&clean, MSS);
        let r = run(&path(recovery, 10, 20, &[0, 1, rtx]));
        assert_eq!(classes(&r), ["mpl_lost_rtx"], "{recovery}");
    }
}

#[test]
fn trace_loss_drops_exactly_the_listed_packets() {
    let r = run(&path("newreno", 10, 20, &[2, 5, 5]));
    assert_eq!(r.flows[0].data_drops, 2);
    let d = &r.drops;
    let seqs: Vec<u64> = (0..d.seq.len()).map(|k| d.seq[k]).collect();
    assert_eq!(seqs, [2 * MSS, 5 * MSS]);
    assert!(d.cause.iter().all(|&c| c == "link_error"));
}
