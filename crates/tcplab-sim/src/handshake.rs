//! The handshake of a flow whose live stack is a real TCP (`stack = "linux"` or
//! `"tcplab-tcp"`), modelled by what it leaves behind: the sender's first RTT sample.
//!
//! A real TCP connection opens with a SYN and a SYN-ACK, and Linux takes their round trip as
//! its first RTT sample (`tcp_ack_update_rtt` on the SYN-ACK): the RTO starts near three
//! round trips instead of `rto_initial`, `tcp_min_rtt` holds the handshake's round trip, and
//! BBR starts its RTprop and its initial pacing rate from it (`bbr_init`). On a slow link the
//! handshake's round trip is shorter than any data segment's (a 60-byte SYN crosses 1.6 Mb/s
//! in 0.3 ms, a 1500-byte segment in 7.5 ms), and BBR's window follows.
//!
//! The simulation does not send the SYN and SYN-ACK; it gives the sender, before its first
//! segment, the round trip they would take on the idle path: each hop's propagation delay
//! and the serialization of [`SYN_WIRE_SIZE`] bytes (on a WLAN hop, the DATA + SIFS + ACK
//! exchange on an idle medium). The connection is taken as established at the flow's start,
//! so the flow's timing is unchanged. What this leaves out: the queueing a handshake meets
//! behind other flows' packets (a flow that starts on a loaded path sees a longer sample
//! there), and trace-driven capacity (a traced hop counts its delay only). The live emulator
//! passes the real handshake without a loss draw (`tcplab-live`'s `unmodelled`), so neither
//! side loses a SYN. Flows of tcplab's own UDP transport (`stack = "tcplab"`, the default)
//! have no handshake, on the wire or here.

use crate::network::{Hop, Network};
use crate::packet::PacketKind;
use crate::scenario::Stack;
use tcplab_core::Dur;

/// Bytes of Linux's SYN and SYN-ACK on the wire: IPv4 and TCP headers (40) and the options a
/// Linux SYN carries (MSS 4, SACK-permitted 2, timestamps 10, NOP 1, window scale 3: 20).
pub const SYN_WIRE_SIZE: u32 = 60;

/// Whether a flow carried live by `stack` opens with a handshake.
pub fn has_handshake(stack: Stack) -> bool {
    matches!(stack, Stack::Linux | Stack::TcplabTcp)
}

/// The round trip of TCP flow `flow`'s SYN (from `src` to `dst`, on the data's route) and
/// SYN-ACK (back, on the ACKs' route) over the idle network.
pub fn idle_round_trip(net: &Network, flow: u32, src: u32, dst: u32) -> Dur {
    one_way(net, PacketKind::Data, flow, src, dst) + one_way(net, PacketKind::Ack, flow, dst, src)
}

/// The time a [`SYN_WIRE_SIZE`]-byte packet of `flow` (routed as a `kind` packet) takes from
/// `from` to `to` over the idle network.
fn one_way(net: &Network, kind: PacketKind, flow: u32, from: u32, to: u32) -> Dur {
    let hop_time = |l: u32| match net.hops[l as usize] {
        Hop::Wired(i) => {
            let link = &net.links[i as usize];
            let serialization = if link.rate > 0 {
                link.transmission_time(SYN_WIRE_SIZE)
            } else {
                Dur::ZERO
            };
            link.delay + serialization
        }
        Hop::Wlan { segment, .. } => net.wlans[segment as usize]
            .dcf
            .phy
            .exchange_time(SYN_WIRE_SIZE),
    };
    net.path(kind, flow, from, to)
        .into_iter()
        .fold(Dur::ZERO, |total, l| total + hop_time(l))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::dumbbell;
    use crate::scenario::{Buffer, Duplex, LinkDir};

    /// A link of `rate` bit/s and `ms` of delay each way, 10 packets of buffer.
    fn dir(rate: u64, ms: u64) -> Duplex {
        Duplex::symmetric(LinkDir::new(
            rate,
            Dur::from_millis(ms),
            Buffer::Packets(10),
        ))
    }
    use crate::topology;

    #[test]
    fn the_idle_round_trip_is_the_delays_and_a_syn_serialized_each_way() {
        // Dumbbell: access 100 Mb/s 1 ms, bottleneck 1.6 Mb/s 20 ms.
        let topo = dumbbell(1, dir(1_600_000, 20), dir(100_000_000, 1));
        let mut errs = Vec::new();
        let layout = topology::expand(&topo, &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
        let net = Network::new(&layout, 1);
        let (src, dst) = (layout.node("s0").unwrap(), layout.node("r0").unwrap());
        let rtt = idle_round_trip(&net, 0, src, dst);
        let syn = |rate: u64| Dur::transmission(SYN_WIRE_SIZE as u64, rate);
        let one_way = Dur::from_millis(1)
            + syn(100_000_000)
            + Dur::from_millis(20)
            + syn(1_600_000)
            + Dur::from_millis(1)
            + syn(100_000_000);
        assert_eq!(rtt, one_way + one_way);
        // 0.3 ms a SYN at 1.6 Mb/s, where a 1500-byte segment takes 7.5 ms.
        assert_eq!(syn(1_600_000), Dur::from_micros(300));
    }

    #[test]
    fn flows_with_the_same_settings_share_one_copy_of_them() {
        use crate::builder::ScenarioBuilder;
        use crate::scenario::TcpFlowSpec;
        use crate::Simulation;
        use tcplab_core::TcpConfig;
        let other = TcpConfig {
            mss: 1000,
            ..TcpConfig::default()
        };
        let topo = dumbbell(2, dir(10_000_000, 20), dir(100_000_000, 1));
        let s = ScenarioBuilder::new("shared", topo)
            .flow(TcpFlowSpec::bulk("s0", "r0"))
            .flow(TcpFlowSpec::bulk("s1", "r1"))
            .flow(TcpFlowSpec::bulk("s0", "r0").tcp(other.clone()))
            .flow(TcpFlowSpec::bulk("s1", "r1"))
            .build();
        let sim = Simulation::new(&s).unwrap();
        let cfg = |i: usize| sim.sender(i).config() as *const TcpConfig;
        // One copy for the first two flows and their receivers; the third has its own, and
        // the fourth, equal to the first again, a new one (only neighbours are compared).
        assert_eq!(cfg(0), cfg(1));
        assert_eq!(cfg(0), sim.receiver(1).config() as *const TcpConfig);
        assert_ne!(cfg(2), cfg(1));
        assert_ne!(cfg(3), cfg(2));
        assert_eq!(*sim.sender(2).config(), other);
        assert_eq!(*sim.receiver(3).config(), s.tcp);
    }

    #[test]
    fn a_real_tcp_flow_starts_from_the_handshakes_sample_and_a_udp_transport_flow_does_not() {
        use crate::builder::ScenarioBuilder;
        use crate::scenario::TcpFlowSpec;
        use crate::Simulation;
        for (stack, sampled) in [
            (Stack::Linux, true),
            (Stack::TcplabTcp, true),
            (Stack::Tcplab, false),
        ] {
            let mut flow = TcpFlowSpec::bulk("s0", "r0")
                .controller("bbr")
                .recovery("rack");
            flow.stack = stack;
            let topo = dumbbell(1, dir(1_600_000, 20), dir(100_000_000, 1));
            let s = ScenarioBuilder::new("handshake", topo).flow(flow).build();
            let sim = Simulation::new(&s).unwrap();
            let syn = |rate: u64| Dur::transmission(SYN_WIRE_SIZE as u64, rate);
            let rtt = (Dur::from_millis(22) + syn(1_600_000) + syn(100_000_000) * 2) * 2;
            let srtt = sim.sender(0).rtt().srtt();
            assert_eq!(srtt, sampled.then_some(rtt), "{stack:?}");
        }
    }

    #[test]
    fn only_real_tcp_stacks_open_with_a_handshake() {
        assert!(has_handshake(Stack::Linux));
        assert!(has_handshake(Stack::TcplabTcp));
        assert!(!has_handshake(Stack::Tcplab));
    }
}
