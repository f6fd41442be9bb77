//! End-of-run accounting, independent of the counters the endpoints keep:
//! - every packet handed to the network was delivered to its destination endpoint, dropped
//!   with a cause, or is still held by a link (waiting, in service or propagating) or by a
//!   WLAN segment (in a transmit queue), in total
//!   per kind and per flow; the packets stored are exactly those the links hold;
//! - the endpoints agree with the network (segments the sender sent = data packets injected,
//!   segments the receiver got = data packets delivered, same for ACKs);
//! - each receiving application read every byte exactly once, in order: every read started
//!   where the previous ended, the bytes read add up to the receiver's `rcv_nxt`, never
//!   exceed what the sender sent, and equal the transfer size for completed transfers.

use crate::app::UdpFlow;
use crate::flow::TcpFlow;
use crate::instruments::drops::DropLog;
use crate::network::Network;
use crate::packet::{PacketKind, Payload};
use crate::results::Conservation;

/// Checks the network's counts and the packets it holds against the endpoints and the
/// ground-truth drop log `drops`.
pub fn check(net: &Network, drops: &DropLog, tcp: &[TcpFlow], udp: &[UdpFlow]) -> Conservation {
    let mut v: Vec<String> = Vec::new();

    // Packets held by links, by kind and by flow.
    let mut held = [0u64; 3];
    let mut tcp_held = vec![[0u64; 2]; tcp.len()];
    let mut udp_held = vec![0u64; udp.len()];
    let mut count = |id| {
        let p = net.pool.get(id);
        held[p.kind() as usize] += 1;
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
    let c = &net.counts;
    for k in PacketKind::ALL {
        let i = k as usize;
        if c.sent[i] != c.delivered[i] + c.dropped[i] + held[i] {
            v.push(format!(
                "{} packets: {} sent != {} delivered + {} dropped + {} in flight",
                k.as_str(),
                c.sent[i],
                c.delivered[i],
                c.dropped[i],
                held[i]
            ));
        }
    }
    let held_total: u64 = held.iter().sum();
    if net.pool.live() as u64 != held_total {
        v.push(format!(
            "{} packets stored but {held_total} held by links",
            net.pool.live()
        ));
    }

    for (i, f) in tcp.iter().enumerate() {
        let n = &f.name;
        let p = &f.packets;
        let [data_drops, ack_drops] = drops.tcp[i];
        let [data_held, acks_held] = tcp_held[i];
        if p.data_sent != p.data_delivered + data_drops + data_held {
            v.push(format!(
                "flow {n:?}: {} data segments sent != {} delivered + {data_drops} dropped + {data_held} in flight",
                p.data_sent, p.data_delivered
            ));
        }
        if p.acks_sent != p.acks_delivered + ack_drops + acks_held {
            v.push(format!(
                "flow {n:?}: {} ACKs sent != {} delivered + {ack_drops} dropped + {acks_held} in flight",
                p.acks_sent, p.acks_delivered
            ));
        }
        let sc = f.sender.counters();
        let rc = f.receiver.counters();
        if sc.segments_sent != p.data_sent {
            v.push(format!(
                "flow {n:?}: sender counts {} segments sent, the network got {}",
                sc.segments_sent, p.data_sent
            ));
        }
        if rc.segments_received != p.data_delivered {
            v.push(format!(
                "flow {n:?}: receiver counts {} segments received, the network delivered {}",
                rc.segments_received, p.data_delivered
            ));
        }
        if rc.acks_sent != p.acks_sent {
            v.push(format!(
                "flow {n:?}: receiver counts {} ACKs sent, the network got {}",
                rc.acks_sent, p.acks_sent
            ));
        }
        if sc.acks_received != p.acks_delivered {
            v.push(format!(
                "flow {n:?}: sender counts {} ACKs received, the network delivered {}",
                sc.acks_received, p.acks_delivered
            ));
        }
        v.extend(f.read_violations.iter().cloned());
        if f.read_total != f.delivered {
            v.push(format!(
                "flow {n:?}: reads add up to {} bytes but cover {} distinct bytes (some read twice)",
                f.read_total, f.delivered
            ));
        }
        let rcv_nxt = f.receiver.rcv_nxt().0;
        if f.delivered != rcv_nxt {
            v.push(format!(
                "flow {n:?}: application read {} bytes but the receiver's rcv_nxt is {rcv_nxt}",
                f.delivered
            ));
        }
        let snd_nxt = f.sender.snd_nxt().0;
        if f.delivered > snd_nxt {
            v.push(format!(
                "flow {n:?}: application read {} bytes but the sender sent only {snd_nxt}",
                f.delivered
            ));
        }
        if let (Some(_), Some(total)) = (f.finished_at, f.bytes) {
            if f.delivered != total {
                v.push(format!(
                    "flow {n:?}: completed, but {} of {total} bytes were read",
                    f.delivered
                ));
            }
        }
    }

    for (i, u) in udp.iter().enumerate() {
        let d = drops.udp[i];
        if u.sent() != u.received + d + udp_held[i] {
            v.push(format!(
                "udp {:?}: {} packets sent != {} received + {d} dropped + {} in flight",
                u.name,
                u.sent(),
                u.received,
                udp_held[i]
            ));
        }
    }

    Conservation {
        ok: v.is_empty(),
        violations: v,
        packets_sent: c.sent.iter().sum(),
        packets_delivered: c.delivered.iter().sum(),
        packets_dropped: c.dropped.iter().sum(),
        packets_in_flight: held_total,
    }
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
    fn a_packet_unaccounted_for_is_reported() {
        let mut s = sim();
        s.parts_mut().0.counts.sent[0] += 1;
        let v = violations(s);
        assert!(v.iter().any(|m| m.starts_with("data packets:")), "{v:?}");
    }

    #[test]
    fn endpoint_and_network_disagreeing_is_reported() {
        let mut s = sim();
        s.parts_mut().1[0].packets.data_sent += 1;
        let v = violations(s);
        assert!(v.iter().any(|m| m.contains("data segments sent")), "{v:?}");
        assert!(v.iter().any(|m| m.contains("sender counts")), "{v:?}");
    }

    #[test]
    fn bytes_read_twice_or_out_of_order_are_reported() {
        let mut s = sim();
        let f = &mut s.parts_mut().1[0];
        f.read_total += 10;
        f.read_violations
            .push("flow \"flow0\": read of 10 bytes at 0 after 20 bytes delivered".into());
        let v = violations(s);
        assert!(v.iter().any(|m| m.contains("read twice")), "{v:?}");
        assert!(v.iter().any(|m| m.contains("read of 10 bytes")), "{v:?}");

        let mut s = sim();
        s.parts_mut().1[0].delivered += 1;
        let v = violations(s);
        assert!(v.iter().any(|m| m.contains("rcv_nxt")), "{v:?}");
    }
}
