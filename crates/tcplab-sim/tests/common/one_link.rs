//! A bare network of two hosts and one link, driven packet by packet without TCP: for tests
//! of one link direction (timing, buffers, loss, scheduled changes).

use tcplab_core::{Dur, Time};
use tcplab_sim::builder::explicit;
use tcplab_sim::engine::EventQueue;
use tcplab_sim::network::{NetEvent, Network};
use tcplab_sim::packet::{Packet, Payload};
use tcplab_sim::scenario::{Buffer, Duplex, LinkDir, NodeKind, TraceSpec};
use tcplab_sim::topology;
use tcplab_sim::trace::Recorder;

#[derive(Clone, Copy)]
enum Ev {
    Net(NetEvent),
    Send(usize),
}
impl From<NetEvent> for Ev {
    fn from(e: NetEvent) -> Self {
        Ev::Net(e)
    }
}

pub struct Outcome {
    /// (packet number, arrival time) in arrival order.
    pub arrivals: Vec<(u64, Time)>,
    pub net: Network,
    pub rec: Recorder,
}

/// Host `a` joined to host `b` by one link whose forward direction is `fwd` (its schedule
/// applied); sends UDP packets `(time, wire size)` from `a` to `b` and runs until nothing
/// is left. `every_departure`: an event at every departure instead of lazy ones.
pub fn run(fwd: LinkDir, sends: &[(Time, u32)], every_departure: bool) -> Outcome {
    let rev = LinkDir::new(1_000_000, Dur::ZERO, Buffer::Packets(10));
    let topo = explicit(
        &[("a", NodeKind::Host), ("b", NodeKind::Host)],
        vec![("a", "b", Duplex::new(fwd, rev))],
    );
    let mut errs = vec![];
    let layout = topology::expand(&topo, &mut errs);
    assert!(errs.is_empty(), "{errs:?}");
    let (a, b) = (layout.node("a").unwrap(), layout.node("b").unwrap());
    let mut net = Network::new(&layout, 1);
    net.set_every_departure(every_departure);
    let mut rec = Recorder::new(&TraceSpec::all(), 0);
    let mut q = EventQueue::new();
    net.schedule_changes(&mut q);
    for (i, &(at, _)) in sends.iter().enumerate() {
        q.push(at, Ev::Send(i));
    }
    let mut arrivals = vec![];
    while let Some((now, ev)) = q.pop() {
        match ev {
            Ev::Send(i) => {
                let p = Packet {
                    flow: 0,
                    dst: b,
                    size: sends[i].1,
                    sent_at: now,
                    payload: Payload::Udp(i as u64),
                };
                net.send(now, a, p, &mut q, &mut rec);
            }
            Ev::Net(e) => {
                if let Some(d) = net.handle(now, e, &mut q, &mut rec) {
                    assert_eq!(d.node, b);
                    arrivals.push((d.packet.seq(), now));
                }
            }
        }
    }
    Outcome { arrivals, net, rec }
}
