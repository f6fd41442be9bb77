//! The loss-recovery behaviours the ETH study (Bolliger et al. 1999) and RFC 6937 / RFC 8985
//! describe, one per test. Two kinds of scripts:
//!
//! - `Path`: the sender and a real receiver over a fixed path (50 ms each way, 1 ms per data
//!   segment) that drops exactly the transmissions listed, e.g. `(3, 0)` = the first
//!   transmission of segment 3, `(2, 1)` = its first retransmission. Used where the point is
//!   the outcome (timeouts, when each hole is repaired) across strategies.
//! - `Script`: the test plays the receiver ACK by ACK (as in `sender_script.rs`). Used where
//!   the point is what is sent in answer to each ACK.
//!
//! Sequence numbers are written in segments (MSS = 1000 bytes).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tcplab_core::cc::Growth;
use tcplab_core::{
    AckSegment, ControllerSpec, DataSegment, Dur, ParamValue, Receiver, RecoverySpec, Sender,
    SenderCounters, TcpConfig, Time,
};

use crate::common;

use common::{new, Script, MSS};

const OWD: Dur = Dur::from_millis(50);
const GAP: Dur = Dur::from_millis(1);
/// Round-trip time of the path, serialization of one segment included.
const RTT: Dur = Dur::from_millis(101);

fn spec(recovery: &str, params: &[(&str, ParamValue)]) -> RecoverySpec {
    let mut s = RecoverySpec::named(recovery);
    for (k, v) in params {
        s.params.insert(k.to_string(), v.clone());
    }
    s
}

fn sender(rec: &RecoverySpec, iw: u32, app: Option<u64>, timestamps: bool) -> Sender {
    let cfg = TcpConfig {
        mss: MSS as u32,
        initial_cwnd: iw,
        growth: Growth::PerAck,
        timestamps,
        ..TcpConfig::default()
    };
    Sender::build(&cfg, &ControllerSpec::named("reno"), rec, app).unwrap()
}

// ---------------------------------------------------------------------------------------
// Path: a deterministic path with scripted drops.

struct Outcome {
    /// Every transmission: (time, segment, earlier transmissions of it).
    sent: Vec<(Time, u64, u8)>,
    c: SenderCounters,
}

impl Outcome {
    /// When the `n`-th retransmission (1 = first) of `seg` left.
    fn resent_at(&self, seg: u64, n: u8) -> Option<Time> {
        self.sent
            .iter()
            .find(|&&(_, s, r)| s == seg && r == n)
            .map(|&(t, ..)| t)
    }
    fn transmissions_of(&self, seg: u64) -> usize {
        self.sent.iter().filter(|&&(_, s, _)| s == seg).count()
    }
}

enum Msg {
    Data(DataSegment),
    Ack(AckSegment),
    Timer,
}

/// Transfers `segments` segments with initial window `iw`, dropping the listed transmissions.
fn path(rec: &str, iw: u32, segments: u64, drops: &[(u64, u8)]) -> Outcome {
    let mut s = sender(&spec(rec, &[]), iw, Some(segments * MSS), true);
    let mut r = Receiver::new(&TcpConfig {
        mss: MSS as u32,
        ..TcpConfig::default()
    });
    let mut q: BinaryHeap<Reverse<(Time, u64, usize)>> = BinaryHeap::new();
    let mut msgs: Vec<Option<Msg>> = Vec::new();
    let push = |q: &mut BinaryHeap<_>, msgs: &mut Vec<Option<Msg>>, t: Time, m: Msg| {
        msgs.push(Some(m));
        q.push(Reverse((t, msgs.len() as u64, msgs.len() - 1)));
    };
    let (mut now, mut busy) = (Time::ZERO, Time::ZERO);
    let mut sent = Vec::new();
    let (mut s_timer, mut r_timer) = (None, None);
    loop {
        while let Some(d) = s.poll_transmit(now) {
            let seg = d.seq.0 / MSS;
            sent.push((now, seg, d.retransmission));
            busy = now.max(busy) + GAP;
            if !drops.contains(&(seg, d.retransmission)) {
                push(&mut q, &mut msgs, busy + OWD, Msg::Data(d));
            }
        }
        while let Some(a) = r.poll_transmit(now) {
            push(&mut q, &mut msgs, now + OWD, Msg::Ack(a));
        }
        while r.read().is_some() {}
        if s.is_finished() {
            break;
        }
        for (timer, deadline) in [
            (&mut s_timer, s.poll_timeout()),
            (&mut r_timer, r.poll_timeout()),
        ] {
            if *timer != deadline {
                *timer = deadline;
                if let Some(t) = deadline {
                    push(&mut q, &mut msgs, t, Msg::Timer);
                }
            }
        }
        let Reverse((t, _, i)) = q.pop().expect("something is scheduled");
        now = t;
        assert!(now < Time::from_secs(60), "{rec}: transfer takes too long");
        match msgs[i].take().unwrap() {
            Msg::Data(d) => r.on_segment(now, &d),
            Msg::Ack(a) => s.on_segment(now, &a),
            Msg::Timer => {
                if s.poll_timeout().is_some_and(|d| d <= now) {
                    s.on_timeout(now);
                }
                if r.poll_timeout().is_some_and(|d| d <= now) {
                    r.on_timeout(now);
                }
            }
        }
    }
    assert_eq!(r.counters().bytes_delivered, segments * MSS, "{rec}");
    Outcome {
        sent,
        c: s.counters().clone(),
    }
}

#[test]
fn three_losses_in_one_window() {
    // Segments 3, 6 and 9 of an initial window of 16 are lost (ETH Fig. 1: Linz - Munich).
    let drops = [(3, 0), (6, 0), (9, 0)];
    let reno = path("reno", 16, 80, &drops);
    assert!(reno.c.timeouts >= 1, "Reno cannot repair the third hole");

    let nr = path("newreno", 16, 80, &drops);
    assert_eq!((nr.c.timeouts, nr.c.recoveries), (0, 1), "newreno");
    let (t3, t6, t9) = (
        nr.resent_at(3, 1).unwrap(),
        nr.resent_at(6, 1).unwrap(),
        nr.resent_at(9, 1).unwrap(),
    );
    assert!(
        t6 - t3 >= RTT && t9 - t6 >= RTT,
        "NewReno: one hole per RTT"
    );

    for rec in ["sack", "fack", "rh", "lrd", "prr", "rack"] {
        let o = path(rec, 16, 80, &drops);
        assert_eq!((o.c.timeouts, o.c.recoveries), (0, 1), "{rec}");
        let first = o.resent_at(3, 1).unwrap();
        let last = o.resent_at(9, 1).unwrap().max(o.resent_at(6, 1).unwrap());
        assert!(last - first < RTT, "{rec}: every hole within one RTT");
        assert_eq!(o.c.retransmits, 3, "{rec}: the three holes only");
    }
}

#[test]
fn one_loss_in_a_window_of_three() {
    // ETH §10.5: with three segments in flight, the loss of the first leaves two duplicate
    // ACKs; Reno and FACK (snd.fack - snd.una = 3, not more) cannot trigger recovery.
    for rec in ["reno", "fack"] {
        let o = path(rec, 3, 20, &[(0, 0)]);
        assert_eq!(o.c.recoveries, 0, "{rec}: no trigger");
        assert_eq!(o.c.timeouts, 1, "{rec}");
        assert!(
            o.resent_at(0, 1).unwrap() >= Time::from_secs(1),
            "{rec}: after the RTO"
        );
    }
    // Rate-Halving enters recovery on the first duplicate ACK and sends new data, whose
    // ACK is the third SACK above the hole.
    for rec in ["rh", "lrd"] {
        let o = path(rec, 3, 20, &[(0, 0)]);
        assert_eq!((o.c.recoveries, o.c.timeouts), (1, 0), "{rec}");
        let (t, seg, _) = o.sent[3];
        assert!(
            seg == 3 && t < Time::from_millis(110),
            "{rec}: new data on dup 1"
        );
        assert!(o.resent_at(0, 1).unwrap() < Time::from_millis(300), "{rec}");
    }
}

#[test]
fn lost_fast_retransmission() {
    // Segment 2 and its fast retransmission are lost. LRD sees a SACK beyond the point
    // where the retransmission left, resends at once and halves again; RH and FACK wait
    // for the RTO (ETH §10.6). RACK finds it by time.
    let drops = [(2, 0), (2, 1)];
    let lrd = path("lrd", 10, 80, &drops);
    assert_eq!((lrd.c.timeouts, lrd.transmissions_of(2)), (0, 3));
    let second = lrd.resent_at(2, 2).unwrap() - lrd.resent_at(2, 1).unwrap();
    assert!(
        second < RTT * 2,
        "resent about one RTT later, not after an RTO"
    );
    assert_eq!(
        (lrd.c.recoveries, lrd.c.recovery_restarts),
        (1, 1),
        "a new halving"
    );
    let rack = path("rack", 10, 80, &drops);
    assert_eq!((rack.c.timeouts, rack.transmissions_of(2)), (0, 3));
    for rec in ["rh", "fack"] {
        let o = path(rec, 10, 80, &drops);
        assert_eq!(o.c.timeouts, 1, "{rec}");
        assert!(
            o.resent_at(2, 2).unwrap() >= Time::from_secs(1),
            "{rec}: after the RTO"
        );
    }
}

// ---------------------------------------------------------------------------------------
// Script: the test plays the receiver.

fn script(rec: RecoverySpec, iw: u32, app_segments: Option<u64>) -> Script {
    Script::with(sender(&rec, iw, app_segments.map(|n| n * MSS), false))
}

#[test]
fn fack_triggers_on_the_forward_distance_alone() {
    // Segments 0-2 are lost; one ACK reports 3 and 4. snd.fack - snd.una = 5 > 3: FACK
    // enters recovery on this single duplicate ACK, where RFC 6675 (2 SACKed above the
    // first hole) does not.
    let mut f = script(RecoverySpec::named("fack"), 10, None);
    assert_eq!(f.sent(), new(0..10));
    f.advance(100);
    f.ack(0, &[(3, 5)]);
    assert_eq!(f.sent(), vec![(0, 1)], "fast retransmission, window halved");
    assert_eq!(f.s.counters().recoveries, 1);
    let mut s = script(RecoverySpec::named("sack"), 10, None);
    s.sent();
    s.ack(0, &[(3, 5)]);
    assert_eq!(s.s.counters().recoveries, 0);
}

#[test]
fn fack_waits_half_an_rtt_unless_rampdown() {
    // Segment 0 of 10 lost; each duplicate ACK SACKs one more segment. Recovery begins on
    // the third (snd.fack - snd.una = 4); ssthresh = 5 and awnd = 7 with the retransmission.
    // Without rampdown nothing is sent until awnd falls below 5; with rampdown the window
    // starts at 5 + awnd/2 = 8 and loses half a segment per ACK: one segment per two ACKs.
    for (rampdown, expect) in [
        (false, [0, 0, 0, 1, 1, 1]),
        (true, [1, 0, 1, 0, 1, 0]), // the first with the fast retransmission
    ] {
        let rec = spec("fack", &[("rampdown", ParamValue::Bool(rampdown))]);
        let mut t = script(rec, 10, None);
        t.sent();
        t.ack(0, &[(1, 2)]);
        t.ack(0, &[(1, 3)]);
        assert_eq!(t.sent(), vec![], "FlightSize outside recovery: no new data");
        t.ack(0, &[(1, 4)]);
        let first = t.sent();
        assert_eq!(first[0], (0, 1));
        let mut counts = vec![first.len() - 1];
        for end in 5..10 {
            t.ack(0, &[(1, end)]);
            counts.push(t.sent().len());
        }
        assert_eq!(counts, expect, "rampdown = {rampdown}");
    }
}

#[test]
fn rate_halving_sends_on_every_other_ack_and_retransmits_after_three_sacks() {
    // ETH §10.5: "The first duplicate acknowledgment triggers the transmission of a new data
    // packet. The third duplicate acknowledgment results in the fast retransmission."
    let mut t = script(RecoverySpec::named("rh"), 10, None);
    assert_eq!(t.sent(), new(0..10));
    t.advance(100);
    t.ack(0, &[(1, 2)]);
    assert_eq!(t.sent(), new(10..11), "recovery on the first dup ACK");
    assert!(t.s.snapshot().in_recovery);
    t.ack(0, &[(1, 3)]);
    assert_eq!(t.sent(), vec![]);
    t.ack(0, &[(1, 4)]);
    assert_eq!(t.sent(), vec![(0, 1)], "hole eligible after three SACKs");
    t.ack(0, &[(1, 5)]);
    assert_eq!(t.sent(), vec![]);
    t.ack(0, &[(1, 6)]);
    assert_eq!(t.sent(), new(11..12));
    // Two more holes reported by one ACK are not eligible until three ACKs SACK above them.
    t.ack(0, &[(9, 11), (1, 7)]);
    t.ack(0, &[(9, 12), (1, 7)]);
    assert_eq!(t.sent().iter().filter(|s| s.1 > 0).count(), 0);
    t.ack(0, &[(13, 14), (9, 12), (1, 7)]);
    assert!(
        t.sent().contains(&(7, 1)),
        "7 and 8 now have three SACKs above"
    );
    assert_eq!(t.s.counters().retransmits_fast, 1);
}

/// RFC 6937's sndcnt for one ACK, in segments, from what the sender reports.
struct PrrModel {
    ssrb: bool,
    ssthresh: i64,
    recover_fs: i64,
    delivered: i64,
    out: i64,
}

impl PrrModel {
    fn sndcnt(&mut self, delivered_data: i64, pipe: i64) -> i64 {
        self.delivered += delivered_data;
        if pipe > self.ssthresh {
            // CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
            (self.delivered * self.ssthresh + self.recover_fs - 1) / self.recover_fs - self.out
        } else {
            let owed = self.delivered - self.out;
            let limit = if self.ssrb {
                owed.max(delivered_data) + 1
            } else {
                owed
            };
            (self.ssthresh - pipe).min(limit)
        }
    }
}

/// Plays one recovery with PRR: segments 0..20 in flight (cwnd 20, ssthresh 10), `lost` of
/// them lost, every other segment SACKed one ACK at a time (new data too, retransmissions
/// never); checks the transmissions in answer to every ACK in recovery against the model and
/// returns them.
fn prr_recovery(bound: &str, lost: &[u64]) -> (Script, Vec<usize>) {
    let mut t = script(
        spec("prr", &[("bound", ParamValue::Str(bound.into()))]),
        20,
        None,
    );
    assert_eq!(t.sent(), new(0..20));
    t.advance(100);
    let mut model: Option<PrrModel> = None;
    let mut blocks: Vec<(u64, u64)> = Vec::new();
    let mut arrived: Vec<u64> = (1..20).filter(|i| !lost.contains(i)).collect();
    arrived.reverse();
    let mut per_ack = Vec::new();
    while let Some(seg) = arrived.pop().filter(|&s| s < 40) {
        match blocks.last_mut() {
            Some(b) if b.1 == seg => b.1 += 1,
            _ => blocks.push((seg, seg + 1)),
        }
        let shown: Vec<_> = blocks.iter().rev().take(3).copied().collect();
        let was = t.s.snapshot().in_recovery;
        let nxt = t.s.snd_nxt().0 / MSS;
        t.ack(0, &shown);
        let snap = t.s.snapshot();
        let sent = t.sent();
        for s in &sent {
            if s.1 == 0 {
                arrived.insert(0, s.0); // new data arrives later, in order
            }
        }
        if !snap.in_recovery {
            continue;
        }
        let m = model.get_or_insert_with(|| PrrModel {
            ssrb: bound == "ssrb",
            ssthresh: t.segs(snap.ssthresh) as i64,
            recover_fs: nxt as i64, // snd.nxt - snd.una at entry
            delivered: 0,
            out: 0,
        });
        let pipe = t.segs(snap.in_flight) as i64;
        let mut want = m.sndcnt(1, pipe).max(0);
        if !was {
            want = want.max(1); // the fast retransmission
        }
        assert_eq!(
            sent.len() as i64,
            want,
            "{bound}: ACK for {seg}, pipe {pipe}"
        );
        m.out += sent.len() as i64;
        per_ack.push(sent.len());
    }
    assert!(model.is_some(), "recovery happened");
    (t, per_ack)
}

#[test]
fn prr_sends_what_rfc6937_allows_on_every_ack() {
    // One loss. Two duplicate ACKs send new data (SACKed segments leave the pipe), the third
    // starts recovery with RecoverFS = 22, ssthresh = 10: while pipe > ssthresh the k-th ACK
    // of recovery may have sent ceil(k * 10/22) segments in all, the fast retransmission first.
    let (mut t, sent) = prr_recovery("ssrb", &[0]);
    assert_eq!(sent[..12], [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1]);
    assert_eq!(t.s.counters().retransmits, 1);
    // The retransmission of 0 arrives: recovery ends with cwnd = ssthresh.
    t.advance(100);
    let nxt = t.s.snd_nxt().0 / MSS;
    t.ack(nxt, &[]);
    let snap = t.s.snapshot();
    assert!(!snap.in_recovery);
    assert_eq!((snap.cwnd, snap.ssthresh), (10 * MSS, 10 * MSS));

    // Twelve losses: recovery starts with pipe = 7 < ssthresh. The slow-start bound sends
    // one segment more than was delivered (2 on the first ACK), the conservative bound only
    // what was delivered.
    let lost: Vec<u64> = (0..12).collect();
    let (_, ssrb) = prr_recovery("ssrb", &lost);
    let (_, crb) = prr_recovery("crb", &lost);
    assert_eq!((ssrb[0], crb[0]), (2, 1));
    assert!(ssrb.iter().sum::<usize>() > crb.iter().sum::<usize>());
}

/// An RTT sample of 100 ms, then segments 4..9 in flight (cwnd 5) at t = 100 ms.
fn rack_after_one_rtt(app: Option<u64>) -> Script {
    let mut t = script(RecoverySpec::named("rack"), 4, app);
    assert_eq!(t.sent(), new(0..4));
    t.advance(100);
    t.ack(4, &[]);
    assert_eq!(t.sent(), new(4..9));
    t
}

#[test]
fn rack_declares_a_loss_after_the_reordering_window() {
    // Segment 4 is missing when 5 is SACKed: a single duplicate ACK. RACK waits
    // reo_wnd = min_rtt/4 = 25 ms past the RTT of the segment sent after it, then
    // declares it lost and starts recovery.
    let mut t = rack_after_one_rtt(None);
    t.advance(100);
    t.ack(4, &[(5, 6)]);
    let sent = t.sent();
    assert!(
        sent.iter().all(|s| s.1 == 0),
        "no retransmission yet: {sent:?}"
    );
    assert_eq!(t.s.poll_timeout(), Some(Time::from_millis(225)));
    t.advance(24);
    t.timer();
    assert_eq!(t.sent(), vec![]);
    t.advance(1);
    t.timer();
    assert_eq!(t.sent(), vec![(4, 1)]);
    let c = t.s.counters();
    assert_eq!((c.recoveries, c.dup_acks, c.timeouts), (1, 1, 0));
}

#[test]
fn tlp_probes_a_tail_loss_and_the_probe_starts_recovery() {
    // The last segments of the transfer (7, 8) are lost. 2*SRTT after the last ACK the
    // probe resends the highest segment; its SACK shows 7 lost.
    let mut t = rack_after_one_rtt(Some(9));
    t.advance(100);
    t.ack(7, &[]);
    assert_eq!(t.sent(), vec![]);
    assert_eq!(
        t.s.poll_timeout(),
        Some(Time::from_millis(400)),
        "PTO = 2 SRTT"
    );
    t.now = Time::from_millis(400);
    t.timer();
    assert_eq!(t.sent(), vec![(8, 1)], "probe: the last segment again");
    assert_eq!((t.s.counters().probes, t.s.counters().timeouts), (1, 0));
    t.advance(100);
    t.ack(7, &[(8, 9)]);
    assert_eq!(t.sent(), vec![(7, 1)]);
    assert_eq!(t.s.counters().recoveries, 1);

    // With data left to send the probe is new data.
    let mut t = rack_after_one_rtt(None);
    t.advance(100);
    t.ack(7, &[]); // 7 and 8 lost, and everything sent now too
    let tail = t.sent();
    assert!(!tail.is_empty());
    let pto = t.s.poll_timeout().unwrap();
    assert_eq!(pto, Time::from_millis(400));
    t.now = pto;
    t.timer();
    let probe = t.sent();
    assert_eq!(probe.len(), 1);
    assert_eq!(probe[0].1, 0, "new data");
    t.advance(100);
    t.ack(7, &[(probe[0].0, probe[0].0 + 1)]);
    assert_eq!(
        t.sent()[0],
        (7, 1),
        "RACK: everything sent before the probe is lost"
    );
    assert_eq!(t.s.counters().recoveries, 1);
}
