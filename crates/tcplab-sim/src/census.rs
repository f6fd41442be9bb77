//! The end-of-run census the simulator states for the conservation instrument
//! ([`crate::instruments::conservation`]): the packets each link direction and WLAN segment
//! still holds (waiting, in service, propagating, in a transmit queue), per flow and kind;
//! the packets the network stores; each TCP flow's endpoints' own counters and its
//! receiving application's reads.

use crate::app::UdpFlow;
use crate::flow::TcpFlow;
use crate::instruments::fact::{EndpointCounts, Reads};
use crate::instruments::Fact;
use crate::network::Network;
use crate::packet::{PacketKind, Payload};

/// The census facts of `net` and the flows at the end of a run, in order.
pub fn facts(net: &Network, tcp: &[TcpFlow], udp: &[UdpFlow]) -> Vec<Fact> {
    let mut tcp_held = vec![[0u64; 2]; tcp.len()];
    let mut udp_held = vec![0u64; udp.len()];
    let mut count = |id| {
        let p = net.pool.get(id);
        match p.payload {
            Payload::Data(_) => tcp_held[p.flow as usize][0] += 1,
            Payload::Ack(_) => tcp_held[p.flow as usize][1] += 1,
            Payload::Udp(_) => udp_held[p.flow as usize] += 1,
        }
    };
    for l in &net.links {
        l.for_each_packet(&mut count);
    }
    // Frames waiting in WLAN transmit queues (including the one on the air).
    for w in &net.wlans {
        w.for_each_packet(&mut count);
    }
    let mut out = Vec::new();
    let held = |flow: usize, kind, packets| {
        (packets > 0).then_some(Fact::InFlight {
            flow: flow as u32,
            kind,
            packets,
        })
    };
    for (i, [data, acks]) in tcp_held.into_iter().enumerate() {
        out.extend(held(i, PacketKind::Data, data));
        out.extend(held(i, PacketKind::Ack, acks));
    }
    for (i, n) in udp_held.into_iter().enumerate() {
        out.extend(held(i, PacketKind::Udp, n));
    }
    out.push(Fact::Stored {
        packets: net.pool.live() as u64,
    });
    for (i, f) in tcp.iter().enumerate() {
        let flow = i as u32;
        let sc = f.sender.counters();
        let rc = f.receiver.counters();
        out.push(Fact::Endpoints {
            flow,
            counts: EndpointCounts {
                segments_sent: sc.segments_sent,
                segments_received: rc.segments_received,
                acks_sent: rc.acks_sent,
                acks_received: sc.acks_received,
            },
        });
        out.extend(f.misreads.iter().map(|&(seq, len, after)| Fact::Misread {
            flow,
            seq,
            len,
            after,
        }));
        out.push(Fact::Reads {
            flow,
            reads: Reads {
                total: f.read_total,
                in_order: f.delivered,
                rcv_nxt: f.receiver.rcv_nxt().0,
                snd_nxt: f.sender.snd_nxt().0,
                completed: f.finished_at.and(f.bytes),
            },
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::builder::{dumbbell, ScenarioBuilder};
    use crate::scenario::{Buffer, Duplex, LinkDir, TcpFlowSpec, TraceSpec};
    use crate::Simulation;
    use tcplab_core::{Dur, Time};

    fn sim() -> Simulation {
        let d = |ms| LinkDir::new(10_000_000, Dur::from_millis(ms), Buffer::Packets(20));
        let s = ScenarioBuilder::new(
            "c",
            dumbbell(1, Duplex::symmetric(d(10)), Duplex::symmetric(d(1))),
        )
        .duration(Dur::from_secs(5))
        .flow(TcpFlowSpec::bulk("s0", "r0"))
        .trace(TraceSpec::off())
        .build();
        let mut sim = Simulation::new(&s).unwrap();
        sim.run_until(Time::from_secs(2));
        sim
    }

    fn violations(sim: Simulation) -> Vec<String> {
        let c = sim.finish().conservation;
        assert_eq!(c.ok, c.violations.is_empty());
        c.violations
    }

    #[test]
    fn an_honest_run_conserves() {
        assert_eq!(violations(sim()), Vec::<String>::new());
    }

    #[test]
    fn bytes_read_twice_or_out_of_order_are_reported() {
        let mut s = sim();
        let f = &mut s.parts_mut().1[0];
        f.read_total += 10;
        f.misreads.push((0, 10, 20));
        let v = violations(s);
        assert!(v.iter().any(|m| m.contains("read twice")), "{v:?}");
        assert!(
            v.iter()
                .any(|m| m == "flow \"flow0\": read of 10 bytes at 0 after 20 bytes delivered"),
            "{v:?}"
        );

        let mut s = sim();
        s.parts_mut().1[0].delivered += 1;
        let v = violations(s);
        assert!(v.iter().any(|m| m.contains("rcv_nxt")), "{v:?}");
    }
}
