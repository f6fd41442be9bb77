//! One link direction in isolation: exact arrival times (queueing + serialization +
//! propagation), Dummynet buffer limits in packets and bytes counting the packet being
//! serialized, and random loss applied after serialization.

use tcplab_core::{Dur, Time};
use tcplab_sim::scenario::{Buffer, LinkDir};

use crate::common;

use common::one_link::Outcome;

/// Host `a` joined to host `b` by one link whose forward direction is `fwd`; sends UDP
/// packets `(time, wire size)` from `a` to `b` and runs until nothing is left. Runs twice,
/// with lazy departures and with an event at every departure, and checks that both agree.
fn run(fwd: LinkDir, sends: &[(Time, u32)]) -> Outcome {
    let lazy = run_mode(fwd.clone(), sends, false);
    let every = run_mode(fwd, sends, true);
    assert_eq!(lazy.arrivals, every.arrivals);
    assert_eq!(lazy.rec.drops, every.rec.drops);
    assert_eq!(
        lazy.net.links[0].stats_at(Time::MAX),
        every.net.links[0].stats_at(Time::MAX)
    );
    every
}

fn run_mode(fwd: LinkDir, sends: &[(Time, u32)], every_departure: bool) -> Outcome {
    common::one_link::run(fwd, sends, every_departure)
}

fn ms(x: u64) -> Time {
    Time::from_millis(x)
}

/// 1 Mb/s: 1000 bytes take 8 ms, 500 bytes 4 ms; 10 ms propagation.
fn link(buffer: Buffer) -> LinkDir {
    LinkDir::new(1_000_000, Dur::from_millis(10), buffer)
}

#[test]
fn single_packet_arrives_after_serialization_and_propagation() {
    let o = run(link(Buffer::Packets(10)), &[(ms(1), 1000)]);
    assert_eq!(o.arrivals, [(0, ms(1 + 8 + 10))]);
    let l = o.net.links[0].stats_at(Time::MAX);
    assert_eq!(
        (l.packets_sent, l.bytes_sent, l.busy),
        (1, 1000, Dur::from_millis(8))
    );
}

#[test]
fn serialization_time_rounds_up_to_whole_nanoseconds() {
    // 1 byte at 3 b/s: 8/3 s = 2_666_666_666.67 ns -> 2_666_666_667 ns.
    let o = run(
        LinkDir::new(3, Dur::from_nanos(5), Buffer::Packets(10)),
        &[(Time::ZERO, 1)],
    );
    assert_eq!(o.arrivals, [(0, Time::from_nanos(2_666_666_667 + 5))]);
}

#[test]
fn queued_packet_waits_for_the_one_in_service() {
    // Packet 0 (1000 B) in service 0..8 ms; packet 1 (500 B) arrives at 2 ms, waits 6 ms,
    // serializes 8..12 ms, arrives at 22 ms.
    let o = run(link(Buffer::Packets(10)), &[(ms(0), 1000), (ms(2), 500)]);
    assert_eq!(o.arrivals, [(0, ms(18)), (1, ms(22))]);
    // Queue series: 1, 2 on arrivals, 1, 0 on departures.
    // What the link holds after each change, stated as facts (series on change).
    let queues = tcplab_sim::instruments::replay(0, 1, o.net.facts.iter().copied()).queues;
    assert_eq!(queues.packets, [1, 2, 1, 0]);
    assert_eq!(queues.time_ns, [0, 2_000_000, 8_000_000, 12_000_000]);
}

#[test]
fn packet_buffer_counts_the_packet_in_service_and_drops_overflow() {
    // Five packets at once into a 3-packet buffer: one in service + two waiting, two dropped.
    let o = run(link(Buffer::Packets(3)), &[(ms(0), 1000); 5]);
    assert_eq!(o.arrivals, [(0, ms(18)), (1, ms(26)), (2, ms(34))]);
    let l = o.net.links[0].stats_at(Time::MAX);
    assert_eq!(l.drops, [2, 0, 0, 0, 0], "two buffer_overflow drops");
    let d = &o.rec.drops;
    assert_eq!(d.cause, ["buffer_overflow", "buffer_overflow"]);
    assert_eq!(d.seq, [3, 4]);
    assert_eq!(d.time_ns, [0, 0]);
    assert_eq!(d.link, [0, 0]);
    assert_eq!(d.packet, ["udp", "udp"]);
    assert_eq!(d.flow_kind, ["udp", "udp"]);
    assert_eq!(d.size, [1000, 1000]);
    // The network states its drops as facts; the drop log counts them per flow.
    let measured = tcplab_sim::instruments::replay(0, 1, o.net.facts.iter().copied());
    assert_eq!(measured.drops().udp, [2]);
    // Once the first has left (its serialization ends at 8 ms) there is room again.
    let later = Time::from_nanos(8_000_001);
    let o = run(
        link(Buffer::Packets(3)),
        &[(ms(0), 1000), (ms(0), 1000), (ms(0), 1000), (later, 1000)],
    );
    assert_eq!(o.arrivals.len(), 4);
}

#[test]
fn byte_buffer_counts_the_packet_in_service() {
    // 2500 bytes: 1000 (in service) + 1000 fit, a third 1000 does not, then 500 fits exactly.
    let o = run(
        link(Buffer::Bytes(2500)),
        &[
            (ms(0), 1000),
            (ms(0), 1000),
            (ms(0), 1000),
            (ms(0), 500),
            (ms(0), 1),
        ],
    );
    let got: Vec<u64> = o.arrivals.iter().map(|a| a.0).collect();
    assert_eq!(got, [0, 1, 3]);
    assert_eq!(o.rec.drops.seq, [2, 4]);
    assert_eq!(o.net.links[0].stats_at(Time::MAX).drops[0], 2);
}

#[test]
fn an_idle_link_admits_by_the_same_rule_as_a_busy_one() {
    // A packet reaching an idle drop-tail link starts service at once (it does not go
    // through the queue): a 1000-byte packet still does not fit a 500-byte buffer, idle or
    // not; a 500-byte one does and fills it, so a 1-byte packet behind it is refused.
    let o = run(
        link(Buffer::Bytes(500)),
        &[
            (ms(0), 1000),
            (ms(1), 500),
            (ms(2), 1),
            (ms(20), 1000),
            (ms(20), 500),
        ],
    );
    assert_eq!(o.arrivals, [(1, ms(1 + 4 + 10)), (4, ms(20 + 4 + 10))]);
    assert_eq!(o.rec.drops.seq, [0, 2, 3]);
    assert_eq!(o.rec.drops.cause, ["buffer_overflow"; 3]);
    let l = o.net.links[0].stats_at(Time::MAX);
    assert_eq!((l.packets_sent, l.bytes_sent, l.drops[0]), (2, 1000, 3));
}

#[test]
fn link_loss_happens_after_serialization() {
    // p = 1: every packet occupies the link, then is lost on the wire when serialization ends.
    let o = run(
        link(Buffer::Packets(10)).bernoulli(1.0),
        &[(ms(0), 1000), (ms(0), 1000)],
    );
    assert!(o.arrivals.is_empty());
    let l = o.net.links[0].stats_at(Time::MAX);
    assert_eq!((l.packets_sent, l.bytes_sent), (2, 2000));
    assert_eq!(l.busy, Dur::from_millis(16));
    assert_eq!(l.drops, [0, 0, 0, 2, 0]);
    assert_eq!(o.rec.drops.cause, ["link_error", "link_error"]);
    assert_eq!(o.rec.drops.time_ns, [8_000_000, 16_000_000]);
    assert_eq!(o.net.pool.live(), 0);
}

#[test]
fn zero_delay_and_back_to_back_packets_keep_order() {
    let o = run(
        LinkDir::new(8_000_000, Dur::ZERO, Buffer::Packets(100)),
        &[(ms(0), 1000); 20],
    );
    let expected: Vec<(u64, Time)> = (0..20).map(|i| (i, ms(i + 1))).collect();
    assert_eq!(o.arrivals, expected);
}
