//! Sender and receiver wired back to back through a lossy, rate-limited path with a tiny
//! event loop of its own: exactly-once in-order delivery and sane counters for every
//! recovery strategy, without the simulator.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use tcplab_core::cc::{CrossLayerReport, Growth, CONTROLLERS};
use tcplab_core::recovery::RECOVERIES;
use tcplab_core::{
    AckSegment, ControllerSpec, DataSegment, Dur, ParamValue, Receiver, RecoverySpec, Sender,
    TcpConfig, Time,
};

enum Msg {
    Data(DataSegment),
    Ack(AckSegment),
    SenderTimer,
    ReceiverTimer,
}

struct Path {
    rate_bps: u64,
    delay: Dur,
    loss: f64,
    /// When the forward serializer is next free.
    busy_until: Time,
    rng: u64,
}

impl Path {
    fn lost(&mut self) -> bool {
        // xorshift64*: a private stream for this test.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let x = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (x as f64 / (1u64 << 53) as f64) < self.loss
    }
}

struct Outcome {
    delivered: u64,
    sender: tcplab_core::SenderCounters,
    duplicates: u64,
}

fn transfer(recovery: &str, growth: Growth, loss: f64, bytes: u64, seed: u64) -> Outcome {
    transfer_with(
        &ControllerSpec::named("reno"),
        recovery,
        growth,
        loss,
        bytes,
        seed,
    )
}

/// A transfer; every data segment the path drops is also reported to the sender as a
/// random loss over the cross-layer channel (ignored by controllers that do not use it).
fn transfer_with(
    controller: &ControllerSpec,
    recovery: &str,
    growth: Growth,
    loss: f64,
    bytes: u64,
    seed: u64,
) -> Outcome {
    let cfg = TcpConfig {
        growth,
        ..TcpConfig::default()
    };
    let mut s = Sender::build(
        &cfg,
        controller,
        &RecoverySpec::named(recovery),
        Some(bytes),
    )
    .unwrap();
    let mut r = Receiver::new(&cfg);
    let mut path = Path {
        rate_bps: 10_000_000,
        delay: Dur::from_millis(20),
        loss,
        busy_until: Time::ZERO,
        rng: seed | 1,
    };
    let mut q: BinaryHeap<Reverse<(Time, u64, usize)>> = BinaryHeap::new();
    let mut msgs: Vec<Option<Msg>> = Vec::new();
    let mut seq = 0;
    let mut push = |q: &mut BinaryHeap<_>, msgs: &mut Vec<Option<Msg>>, t: Time, m: Msg| {
        msgs.push(Some(m));
        seq += 1;
        q.push(Reverse((t, seq, msgs.len() - 1)));
    };
    let mut now = Time::ZERO;
    let mut next_read = 0u64;
    let (mut s_timer, mut r_timer) = (None, None);
    loop {
        while let Some(d) = s.poll_transmit(now) {
            let start = now.max(path.busy_until);
            path.busy_until = start + Dur::transmission(d.len as u64 + 52, path.rate_bps);
            if !path.lost() {
                push(
                    &mut q,
                    &mut msgs,
                    path.busy_until + path.delay,
                    Msg::Data(d),
                );
            } else {
                s.on_cross_layer(&CrossLayerReport {
                    now,
                    random_losses: 1,
                    lost: Some(d.seq),
                });
            }
        }
        while let Some(a) = r.poll_transmit(now) {
            if !path.lost() {
                push(&mut q, &mut msgs, now + path.delay, Msg::Ack(a));
            }
        }
        while let Some((start, len)) = r.read() {
            assert_eq!(
                start.0, next_read,
                "delivery must be in order, each byte once"
            );
            next_read += len;
        }
        if s.poll_timeout() != s_timer {
            s_timer = s.poll_timeout();
            if let Some(t) = s_timer {
                push(&mut q, &mut msgs, t, Msg::SenderTimer);
            }
        }
        if r.poll_timeout() != r_timer {
            r_timer = r.poll_timeout();
            if let Some(t) = r_timer {
                push(&mut q, &mut msgs, t, Msg::ReceiverTimer);
            }
        }
        if s.is_finished() {
            break;
        }
        let Some(Reverse((t, _, i))) = q.pop() else {
            panic!(
                "deadlock: nothing scheduled and the transfer is unfinished ({recovery} p={loss}): {:?} {:?}",
                s.snapshot(),
                s.counters()
            );
        };
        assert!(t >= now);
        now = t;
        assert!(now < Time::from_secs(3600), "transfer takes too long");
        match msgs[i].take().unwrap() {
            Msg::Data(d) => r.on_segment(now, &d),
            Msg::Ack(a) => s.on_segment(now, &a),
            Msg::SenderTimer => {
                if s.poll_timeout().is_some_and(|d| d <= now) {
                    s.on_timeout(now);
                }
            }
            Msg::ReceiverTimer => {
                if r.poll_timeout().is_some_and(|d| d <= now) {
                    r.on_timeout(now);
                }
            }
        }
    }
    Outcome {
        delivered: next_read,
        sender: s.counters().clone(),
        duplicates: r.counters().duplicate_segments,
    }
}

#[test]
fn every_strategy_delivers_every_byte_once_under_loss() {
    let bytes = 3_000_000;
    for &recovery in RECOVERIES {
        for growth in [Growth::PerAck, Growth::ByteCounting { limit: 2 }] {
            for (i, loss) in [0.0, 0.01, 0.05, 0.1].into_iter().enumerate() {
                let o = transfer(recovery, growth, loss, bytes, 7 + i as u64);
                assert_eq!(o.delivered, bytes, "{recovery} {growth:?} p={loss}");
                let c = &o.sender;
                if loss == 0.0 {
                    let rtx = c.retransmits - c.retransmits_probe;
                    assert_eq!(rtx, 0, "{recovery}: no loss, no retransmission");
                } else {
                    assert!(c.retransmits > 0 && c.recoveries + c.timeouts > 0);
                }
                assert_eq!(
                    c.retransmits,
                    c.retransmits_fast
                        + c.retransmits_recovery
                        + c.retransmits_timeout
                        + c.retransmits_probe
                );
                assert!(o.duplicates <= c.retransmits);
            }
        }
    }
}

#[test]
fn sack_based_strategies_need_fewer_timeouts_than_reno() {
    let timeouts = |rec: &str| -> u64 {
        (0..6)
            .map(|seed| {
                transfer(
                    rec,
                    Growth::ByteCounting { limit: 2 },
                    0.03,
                    2_000_000,
                    seed,
                )
                .sender
                .timeouts
            })
            .sum()
    };
    let (reno, newreno, sack) = (timeouts("reno"), timeouts("newreno"), timeouts("sack"));
    assert!(newreno < reno, "reno {reno}, newreno {newreno}");
    assert!(sack < reno, "reno {reno}, sack {sack}");
    eprintln!("timeouts at p=0.03: reno {reno}, newreno {newreno}, sack {sack}");
    // The issue-4 strategies all repair several losses per window without a timeout.
    for rec in ["fack", "rh", "lrd", "prr", "rack"] {
        let t = timeouts(rec);
        assert!(t < reno, "reno {reno}, {rec} {t}");
        eprintln!("timeouts at p=0.03: {rec} {t}");
    }
}

#[test]
fn every_controller_delivers_every_byte_once_under_loss() {
    let mut specs: Vec<ControllerSpec> = CONTROLLERS
        .iter()
        .map(|n| ControllerSpec::named(n))
        .collect();
    for (name, key, value) in [
        ("veno", "flavor", "linux"),
        ("vegas", "mode", "ca"),
        ("highspeed", "response", "exact"),
        ("venoplus", "congestion_losses", "all"),
    ] {
        let mut spec = ControllerSpec::named(name);
        spec.params
            .insert(key.into(), ParamValue::Str(value.into()));
        specs.push(spec);
    }
    let bytes = 2_000_000;
    for spec in &specs {
        for &recovery in RECOVERIES {
            for growth in [Growth::PerAck, Growth::ByteCounting { limit: 2 }] {
                for (i, loss) in [0.0, 0.02].into_iter().enumerate() {
                    let o = transfer_with(spec, recovery, growth, loss, bytes, 11 + i as u64);
                    let what = format!(
                        "{} {:?} {recovery} {growth:?} p={loss}",
                        spec.name, spec.params
                    );
                    assert_eq!(o.delivered, bytes, "{what}");
                    let c = &o.sender;
                    if loss == 0.0 {
                        // A tail loss probe may resend the last segment while its ACK is
                        // delayed (RFC 8985 adds the delayed-ACK allowance only when one
                        // segment is in flight).
                        let rtx = c.retransmits - c.retransmits_probe;
                        assert_eq!(rtx, 0, "{what}: no loss, no retransmission {c:?}");
                    }
                    assert!(o.duplicates <= c.retransmits, "{what}");
                }
            }
        }
    }
}
