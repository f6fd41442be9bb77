//! Time-varying links: scheduled changes of rate, delay, buffer and loss model take effect
//! without disturbing packets already there (the packet in service finishes at the old rate
//! and keeps its loss draw, propagating packets keep their arrival time, a smaller buffer
//! drops nothing already queued).

use tcplab_core::{Dur, Time};
use tcplab_sim::builder::{explicit, ScenarioBuilder};
use tcplab_sim::scenario::{Buffer, Duplex, LinkChange, LinkDir, LossSpec, NodeKind, UdpFlowSpec};

use crate::common;

/// Sends UDP packets `(time, size)` over one link direction `fwd` from host a to host b;
/// returns (packet number, arrival time) in arrival order and the drop causes in order.
fn run(fwd: LinkDir, sends: &[(Time, u32)]) -> (Vec<(u64, Time)>, Vec<&'static str>) {
    let out = common::one_link::run(fwd, sends, false);
    assert_eq!(out.net.pool.live(), 0);
    (out.arrivals, out.rec.drops.cause.iter().copied().collect())
}

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

/// 1 Mb/s (1000 bytes: 8 ms), 10 ms propagation.
fn link() -> LinkDir {
    LinkDir::new(1_000_000, Dur::from_millis(10), Buffer::Packets(10))
}

fn at(x_ms: u64) -> LinkChange {
    LinkChange {
        at: Dur::from_millis(x_ms),
        ..LinkChange::default()
    }
}

#[test]
fn packet_in_service_finishes_at_the_old_rate() {
    // Packet 0 is serialized 0..8 ms at 1 Mb/s; the rate doubles at 4 ms. Packet 1 (queued
    // since 1 ms) is serialized 8..12 ms at 2 Mb/s.
    let fwd = link().change(LinkChange {
        rate: Some(2_000_000),
        ..at(4)
    });
    let (arr, _) = run(fwd, &[(ms(0), 1000), (ms(1), 1000)]);
    assert_eq!(arr, [(0, ms(18)), (1, ms(22))]);
}

#[test]
fn propagating_packets_keep_their_arrival_time_and_order() {
    // Packet 0 leaves the serializer at 8 ms, arrives at 18 ms (sent before the change).
    // At 9 ms the delay drops to 1 ms: packet 1 (9..17 ms) arrives at 18 ms, after packet 0;
    // packet 2 (sent at 20 ms) arrives at 20 + 8 + 1 = 29 ms although the delay grows to
    // 50 ms at 28.5 ms, while it propagates.
    let fwd = link()
        .change(LinkChange {
            delay: Some(Dur::from_millis(1)),
            ..at(9)
        })
        .change(LinkChange {
            delay: Some(Dur::from_millis(50)),
            ..LinkChange {
                at: Dur::from_micros(28_500),
                ..LinkChange::default()
            }
        });
    let (arr, _) = run(fwd, &[(ms(0), 1000), (ms(9), 1000), (ms(20), 1000)]);
    assert_eq!(arr, [(0, ms(18)), (1, ms(18)), (2, ms(29))]);
    // Overtaking is not allowed: packet 1 of 100 bytes (0.8 ms) sent at 9 ms would arrive
    // at 10.8 ms with the new delay; it arrives right after packet 0.
    let fwd = link().change(LinkChange {
        delay: Some(Dur::from_millis(1)),
        ..at(9)
    });
    let (arr, _) = run(fwd, &[(ms(0), 1000), (ms(9), 100)]);
    assert_eq!(arr, [(0, ms(18)), (1, ms(18))]);
}

#[test]
fn smaller_buffer_keeps_queued_packets_and_refuses_new_ones_until_below() {
    // Five packets at 0 fill 5 of 10 places; at 1 ms the buffer becomes 2 packets. Nothing
    // queued is dropped. Serializations end at 8, 16, 24, 32, 40 ms. At 30 ms the link holds
    // 2 (the 4th in service, the 5th waiting): refused; at 33 ms it holds 1: accepted.
    let fwd = link().change(LinkChange {
        buffer: Some(Buffer::Packets(2)),
        ..at(1)
    });
    let mut sends = vec![(ms(0), 1000); 5];
    sends.push((ms(2), 1000));
    sends.push((ms(30), 1000));
    sends.push((ms(33), 1000));
    let (arr, drops) = run(fwd, &sends);
    let got: Vec<u64> = arr.iter().map(|a| a.0).collect();
    assert_eq!(got, [0, 1, 2, 3, 4, 7]);
    assert_eq!(drops, ["buffer_overflow", "buffer_overflow"]);
}

#[test]
fn loss_model_changes_for_packets_that_start_service_after() {
    // Every packet lost from 20 ms until 36 ms. Packet 2 starts service at 16 ms (ends at
    // 24 ms): its loss draw was made with the old, lossless model, so it arrives. Packets 3
    // and 4 (start 24 and 32 ms) are lost; packet 5 (start 40 ms) arrives.
    let fwd = link()
        .change(LinkChange {
            loss: Some(LossSpec::Bernoulli { p: 1.0 }),
            ..at(20)
        })
        .change(LinkChange {
            loss: Some(LossSpec::None),
            ..at(36)
        });
    let (arr, drops) = run(fwd, &[(ms(0), 1000); 6]);
    let got: Vec<u64> = arr.iter().map(|a| a.0).collect();
    assert_eq!(got, [0, 1, 2, 5]);
    assert_eq!(drops, ["link_error", "link_error"]);
}

/// Through the whole simulator: a CBR source at 800 kb/s over a link whose rate falls from
/// 1 Mb/s to 400 kb/s at 1 s and comes back at 2 s. Before and after the dip nothing is
/// dropped; during it the link carries 400 kb/s and the 20-packet buffer overflows.
#[test]
fn rate_dip_in_a_simulation() {
    let fwd = LinkDir::new(1_000_000, Dur::from_millis(5), Buffer::Packets(20))
        .change(LinkChange {
            rate: Some(400_000),
            ..at(1000)
        })
        .change(LinkChange {
            rate: Some(1_000_000),
            ..at(2000)
        });
    let rev = LinkDir::new(1_000_000, Dur::from_millis(5), Buffer::Packets(20));
    let topo = explicit(
        &[("a", NodeKind::Host), ("b", NodeKind::Host)],
        vec![("a", "b", Duplex::new(fwd, rev))],
    );
    let s = ScenarioBuilder::new("dip", topo)
        .duration(Dur::from_secs(3))
        .udp(UdpFlowSpec::cbr("a", "b", 800_000, 1000))
        .build();
    let r = tcplab_sim::Simulation::run(&s).unwrap();
    let d = &r.drops;
    assert!(!d.time_ns.is_empty());
    assert!(d
        .time_ns
        .iter()
        .all(|&t| (1_000_000_000..2_100_000_000).contains(&t)));
    // 3 s at 800 kb/s = 300 packets; during the dip 100 kb/s... 400 kb/s of 800 get through:
    // about 50 of the 100 packets of that second are dropped (minus the 20 buffered).
    let dropped = d.time_ns.len() as i64;
    assert!((25..=55).contains(&dropped), "{dropped} drops");
    assert_eq!(r.links[0].rate_bps, 1_000_000);
    assert!(r.conservation.ok, "{:?}", r.conservation.violations);
}

#[test]
fn validation_names_unsorted_and_late_changes() {
    let fwd = link()
        .change(LinkChange {
            rate: Some(1),
            ..at(5000)
        })
        .change(LinkChange {
            rate: Some(1),
            ..at(4000)
        })
        .change(at(20_000));
    let topo = explicit(
        &[("a", NodeKind::Host), ("b", NodeKind::Host)],
        vec![("a", "b", Duplex::new(fwd, link()))],
    );
    let s = ScenarioBuilder::new("bad", topo)
        .duration(Dur::from_secs(10))
        .build();
    let e = s.validate().unwrap_err().0;
    assert!(
        e.contains(
            "links[0].forward.schedule[1].at = 4000000000: expected later than schedule[0].at"
        ),
        "{e}"
    );
    assert!(
        e.contains("links[0].forward.schedule[2].at = 20000000000: expected at most the duration"),
        "{e}"
    );
    assert!(
        e.contains("links[0].forward.schedule[2]: changes nothing"),
        "{e}"
    );
}
