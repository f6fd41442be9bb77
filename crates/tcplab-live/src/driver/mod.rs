//! The emulator's event loop: the link directions of a [`Plan`] (each tcplab-sim's own
//! model) between the TUN devices of its hosts, driven by the real clock of
//! [`crate::clock`].
//!
//! A packet read from host `h`'s device goes to the host that owns its destination address
//! (with the one-link plan: to the other host). Its route is its flow's pinned route when it
//! belongs to a scenario flow that has one (found by the flow's key, [`Plan::flow_of`]),
//! else the routing table's. It is offered to the first link direction of the route at the
//! time it was read (a kernel host's answer to a delivery: at the delivery's modelled time,
//! [`Emulator::write`]); when the model says it reaches the far end of a
//! direction, at a router, it is offered to the next direction at that modelled time (a
//! router adds no time of its own, as in the simulator); at its destination host it is
//! written to that host's device (the clock is read just before the write; actual minus
//! modelled time is the packet's lateness).
//!
//! Each turn reads every packet waiting on any device (until a read finds nothing; the clock
//! is read for each read, and with offloads a read may be a super-packet whose segments
//! share its time, [`crate::vnet`]), then
//! processes, in model time order, every link event due by the clock and every packet read,
//! then waits until the earliest next event or until a device is readable. Processing in
//! time order across all directions means a direction never receives a packet at a time
//! before one it has already processed, so the model sees only its own event times: a late
//! loop delays packets but never changes what the model decides.
//!
//! This module holds the [`Emulator`] (its state, the models' [`Direction`]s and
//! [`Segment`]s and the [`Packet`] they carry), its construction and the turn ([`Emulator::run`]:
//! reading, processing in model time order, waiting). The turn's steps, each an
//! `impl Emulator` of its own: `read` (a host's packets read and stamped), `hops` (a
//! packet offered to its route's link directions, the models' deliveries and drops, and what
//! they leave in the records), `write` (a delivery written to its host, and a kernel host's
//! answers). What it keeps: `host` (a host's device and counts), `records` (queue rows,
//! drops and captures, and their limits).

mod hops;
mod host;
mod read;
mod records;
#[cfg(test)]
mod tests;
mod write;

pub use host::Host;
pub use records::{Capture, DropRecord, QueueRow, MAX_CAPTURE_BYTES, MAX_QUEUE_ROWS};

use crate::clock::Clock;
use crate::device::Received;
use crate::plan::{Plan, QueueSeries};
use crate::stalls::Stalls;
use crate::tcp_sends::TcpSends;
use crate::unmodelled::Unmodelled;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::{Dur, Time};
use tcplab_sim::link_direction::LinkDirection;
use tcplab_sim::packet::PacketKind;
use tcplab_sim::wlan_segment::WlanSegment;

/// Largest read from a device: a TUN device's MTU is far smaller, but with offloads a read is
/// a `virtio_net_hdr` and a super-packet of up to 64 KB ([`crate::vnet`]).
const MAX_PACKET: usize = 65_536 + 64;

/// Breaks of a real-time emulator ([`Emulator::breaks`]): at least [`BREAK`] off the CPU in
/// every [`BREAK_EVERY`] of real time (6.25 %).
pub const BREAK_EVERY: Dur = Dur::from_micros(800);
pub const BREAK: Dur = Dur::from_micros(50);

/// A packet inside the model: its bytes, its destination node, its flow when that flow's
/// route is pinned, whether it was ECN-capable when it entered (a packet marked CE at
/// one hop stays ECN-capable at the next, as in the simulator) and whether a simulation has
/// its counterpart ([`crate::unmodelled`]: wired loss models draw only for those).
pub struct Packet {
    pub dst: u32,
    /// The flow (and the packet's kind in it) whose pinned route it follows.
    pub flow: Option<(PacketKind, u32)>,
    pub ect: bool,
    pub modelled: bool,
    pub bytes: Vec<u8>,
}

/// One link direction's model and counts.
pub struct Direction {
    pub link: LinkDirection<Packet>,
    /// Packets offered to the model (read from a device or forwarded by a router).
    pub offered: u64,
    /// Packets that reached the far end (written to a host or offered to the next hop).
    pub delivered: u64,
}

/// One 802.11b segment's model (tcplab-sim's own MAC) and counts per local hop.
pub struct Segment {
    pub wlan: WlanSegment<Packet>,
    /// Its hop 0 in the plan's numbering of directions.
    pub first: u32,
    pub offered: Vec<u64>,
    pub delivered: Vec<u64>,
}

/// The emulator: its clock and plan, a model per link direction and 802.11b segment, a host
/// per device, the packets read this turn and what it records.
pub struct Emulator {
    pub clock: Clock,
    pub plan: Plan,
    /// `hosts[k]` is `plan.hosts[k]`.
    pub hosts: Vec<Host>,
    /// `dirs[i]` is `plan.dirs[i]`.
    pub dirs: Vec<Direction>,
    /// `segments[i]` is `plan.wlans[i]`; their hops follow `dirs` in the numbering.
    pub segments: Vec<Segment>,
    pub drops: Vec<DropRecord>,
    host_of_node: Vec<Option<usize>>,
    host_of_addr: HashMap<Ipv4Addr, usize>,
    /// Packets read this turn: (time stamped, host, packet), in time order.
    arrivals: VecDeque<(Time, usize, Packet)>,
    unmodelled: Unmodelled,
    /// What the directions held, when the plan records queues.
    pub queue_rows: Vec<QueueRow>,
    /// Rows not kept past [`MAX_QUEUE_ROWS`].
    pub queue_rows_cut: u64,
    /// The hosts' TCP data segments, when the plan logs them.
    pub tcp_sends: TcpSends,
    /// When deliveries were late ([`crate::stalls`]).
    pub stalls: Stalls,
    /// Interval mode: the next tick (model time).
    next_tick: Option<Time>,
    /// `captures[k]` is `plan.pcap[k]`.
    pub captures: Vec<Capture>,
    /// Per direction: the capture file it is recorded to.
    capture_of_dir: Vec<Option<usize>>,
    capture_bytes: usize,
    /// Where a kernel host's answers are read ([`Emulator::write`]).
    answer_buf: Vec<u8>,
    /// The packets of the latest read of a device with offloads ([`crate::vnet`]).
    split: Vec<Vec<u8>>,
    /// Take breaks: sleep [`BREAK`] whenever [`BREAK_EVERY`] passed without the loop
    /// having slept that long (`tcplab-emu --realtime --breaks`; off by default). Linux
    /// keeps 5 % of every CPU for normal tasks (`sched_rt_runtime_us`, since 6.12 the fair
    /// server: 50 ms in every second); a real-time loop that never sleeps is stopped for up to 50 ms at a
    /// time once a second when a normal task waits on its CPU, and every packet due then is
    /// written up to 50 ms late. Idle time and time a normal task ran count towards those
    /// 50 ms, so short breaks of its own let the kernel leave the loop alone: packets due in
    /// a break are up to [`BREAK`] late instead.
    pub breaks: bool,
    /// Breaks taken.
    pub breaks_taken: u64,
}

impl Emulator {
    /// `tuns[k]` is host `k`'s device. Errors name the link direction whose delivery trace
    /// is bad.
    pub fn new(plan: Plan, tuns: Vec<File>, clock: Clock) -> Result<Self, String> {
        let plan_queues = plan.queues;
        let mut capture_of_dir = vec![None; plan.dirs.len()];
        for (k, f) in plan.pcap.iter().enumerate() {
            for &d in &f.dirs {
                capture_of_dir[d as usize] = Some(k);
            }
        }
        let captures = plan
            .pcap
            .iter()
            .map(|_| Capture {
                bytes: tcplab_sim::pcap::global_header(plan.pcap_snaplen).to_vec(),
                packets: 0,
                cut: 0,
            })
            .collect();
        let dirs = plan
            .dirs
            .iter()
            .map(|d| {
                LinkDirection::new(&d.spec, plan.seed, &d.label())
                    .map(|link| Direction {
                        link,
                        offered: 0,
                        delivered: 0,
                    })
                    .map_err(|e| format!("{}.trace: {}", d.label(), e.0))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut first = plan.dirs.len() as u32;
        let segments = plan
            .wlans
            .iter()
            .map(|w| {
                let wlan = WlanSegment::new(w, plan.seed);
                let n = wlan.hop_count();
                first += n as u32;
                Segment {
                    wlan,
                    first: first - n as u32,
                    offered: vec![0; n],
                    delivered: vec![0; n],
                }
            })
            .collect();
        let mut host_of_node = vec![None; plan.nodes.len()];
        for (k, h) in plan.hosts.iter().enumerate() {
            host_of_node[h.node as usize] = Some(k);
        }
        let host_of_addr = plan
            .hosts
            .iter()
            .enumerate()
            .map(|(k, h)| (h.addr, k))
            .collect();
        Ok(Emulator {
            clock,
            plan,
            hosts: tuns.into_iter().map(Host::new).collect(),
            dirs,
            segments,
            drops: Vec::new(),
            host_of_node,
            host_of_addr,
            arrivals: VecDeque::new(),
            unmodelled: Unmodelled::default(),
            queue_rows: Vec::new(),
            queue_rows_cut: 0,
            tcp_sends: TcpSends::default(),
            stalls: Stalls::default(),
            captures,
            capture_of_dir,
            capture_bytes: 0,
            answer_buf: vec![0; MAX_PACKET],
            split: Vec::new(),
            breaks: false,
            breaks_taken: 0,
            next_tick: match plan_queues {
                QueueSeries::Interval(_) => Some(Time::ZERO),
                _ => None,
            },
        })
    }

    /// Runs until `stop` is set (a signal handler sets it; waits are interrupted by signals
    /// and never longer than 100 ms).
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let mut fds: Vec<RawFd> = self.hosts.iter().map(|h| h.tun.as_raw_fd()).collect();
        let mut buf = vec![0u8; MAX_PACKET];
        let mut rested = self.clock.now();
        while !stop.load(Ordering::Relaxed) {
            for (k, fd) in fds.iter_mut().enumerate() {
                if *fd >= 0 && self.read_all(k, &mut buf, None)? == Received::Gone {
                    *fd = -1; // poll ignores it: the endpoint closed its socket
                }
            }
            let horizon = self.clock.now();
            self.process(horizon);
            if self.breaks && self.clock.now() >= rested + BREAK_EVERY {
                rested = self.clock.pause(BREAK);
                self.breaks_taken += 1;
                continue;
            }
            let next = self.next_model_event().map(|e| e.0);
            let (t, slept) = self.clock.wait_slept(next, &fds);
            if slept >= BREAK {
                rested = t;
            }
        }
        Ok(())
    }

    /// The earliest next event of any model: (time, model), a model being link direction
    /// `i` (`i < dirs.len()`) or segment `i - dirs.len()`.
    fn next_model_event(&self) -> Option<(Time, usize)> {
        let wired = self.dirs.iter().map(|d| d.link.next_event());
        let wlan = self.segments.iter().map(|s| s.wlan.next_event());
        wired
            .chain(wlan)
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (t, i)))
            .min()
    }

    /// Processes every link event due by `horizon` and every packet read this turn, in
    /// model time order (at equal times, link events first).
    fn process(&mut self, horizon: Time) {
        loop {
            let link = self.next_model_event().filter(|&(t, _)| t <= horizon);
            let read = self.arrivals.front().map(|a| a.0);
            let tick = self.next_tick.filter(|&t| t <= horizon);
            match (link, read, tick) {
                (Some((t, i)), r, k) if r.is_none_or(|r| t <= r) && k.is_none_or(|k| t <= k) => {
                    match i.checked_sub(self.dirs.len()) {
                        None => self.poll(i, t),
                        Some(w) => self.poll_segment(w, t),
                    }
                }
                (_, Some(r), k) if k.is_none_or(|k| r <= k) => {
                    let (t, k, p) = self.arrivals.pop_front().expect("a packet read");
                    let node = self.plan.hosts[k].node;
                    self.offer(t, node, p);
                }
                (_, _, Some(k)) => self.tick(k),
                _ => break,
            }
        }
    }

    /// Interval mode: every direction's row at tick `t`, and the next tick.
    fn tick(&mut self, t: Time) {
        for i in 0..self.dirs.len() {
            self.queue_row(t, i);
        }
        if let QueueSeries::Interval(w) = self.plan.queues {
            self.next_tick = Some(t + tcplab_core::Dur::from_nanos(w));
        }
    }
}
