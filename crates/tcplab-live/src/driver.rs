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
//! With the scenario's series on, the emulator also states what each link direction holds
//! ([`QueueRow`], the `queues` table): every `trace.interval` of model time (interval mode,
//! the ticks counted from the emulator's start), or after every packet a direction takes,
//! drops or delivers (change mode). At most [`MAX_QUEUE_ROWS`] rows are kept; the rest are
//! counted.
//!
//! With the scenario's `trace.pcap`, the packets a captured direction delivers to its far
//! end are recorded as they are (their real bytes, CE set when marked; the first
//! `pcap_snaplen` of each) with their modelled arrival time ([`Capture`]): tcpdump on the
//! receiving interface, where the simulator captures at the start of serialization.

use crate::clock::Clock;
use crate::device::{self, Received};
use crate::ecn;
use crate::histogram::Histogram;
use crate::ident::{self, Ident};
use crate::plan::{Plan, QueueSeries};
use crate::stalls::Stalls;
use crate::tcp_sends::TcpSends;
use crate::unmodelled::Unmodelled;
use crate::vnet;
use std::collections::{HashMap, VecDeque};
use std::fs::File;
use std::io::{self, Write};
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::{Dur, Time};
use tcplab_sim::link_direction::{Event, LinkDirection};
use tcplab_sim::packet::{DropCause, PacketKind};
use tcplab_sim::wlan_segment::{self, WlanSegment};

/// Largest read from a device: a TUN device's MTU is far smaller, but with offloads a read is
/// a `virtio_net_hdr` and a super-packet of up to 64 KB ([`crate::vnet`]).
const MAX_PACKET: usize = 65_536 + 64;

/// Breaks of a real-time emulator ([`Emulator::breaks`]): at least [`BREAK`] off the CPU in
/// every [`BREAK_EVERY`] of real time (6.25 %).
pub const BREAK_EVERY: Dur = Dur::from_micros(800);
pub const BREAK: Dur = Dur::from_micros(50);

/// Queue rows kept at most (24 bytes each in the results); further rows are counted in
/// [`Emulator::queue_rows_cut`].
pub const MAX_QUEUE_ROWS: usize = 4_000_000;

/// Bytes of capture records kept at most over all files; further packets are counted in
/// [`Capture::cut`].
pub const MAX_CAPTURE_BYTES: usize = 256 << 20;

/// One capture file being written: pcap global header and records, model time stamps.
pub struct Capture {
    pub bytes: Vec<u8>,
    pub packets: u64,
    /// Packets not recorded past [`MAX_CAPTURE_BYTES`].
    pub cut: u64,
}

/// Link direction `dir` held `packets` packets of `bytes` bytes (waiting or in service) at
/// model time `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueRow {
    pub at: Time,
    pub dir: u32,
    pub packets: u32,
    pub bytes: u64,
}

/// A drop the model made.
#[derive(Clone, Debug)]
pub struct DropRecord {
    /// Model time of the drop (ns since the emulator started).
    pub at: Time,
    /// The link direction (index into [`Emulator::dirs`]).
    pub dir: u32,
    pub cause: DropCause,
    pub ident: Option<Ident>,
}

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

/// One host: its device and what crossed it.
pub struct Host {
    pub tun: File,
    /// The device carries a `virtio_net_hdr` on every read and write and hands over
    /// TCP super-packets, which the emulator segments ([`crate::vnet`]).
    pub vnet: bool,
    /// Reads that were super-packets, and the segments they gave (counted in `sent` too).
    pub super_packets: u64,
    pub segments: u64,
    /// Packets read from the device (and not counted in `not_ipv4` or `no_route`).
    pub sent: u64,
    /// Packets read that are not IPv4 (not offered to the model).
    pub not_ipv4: u64,
    /// Packets read whose destination is no other host of the plan (not offered).
    pub no_route: u64,
    /// Packets written to this host's device.
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Actual times of the first and last write to the device (None: none yet).
    pub first_write: Option<Time>,
    pub last_write: Option<Time>,
    /// Drops outside the model: writing to the device failed.
    pub write_errors: u64,
    /// Write time minus modelled arrival of every packet written here.
    pub lateness: Histogram,
    /// The host's own kernel TCP is behind its device (a TUN device in a namespace whose
    /// host runs a kernel TCP end, `HostPlan::kernel_tcp`): it answers a packet written to
    /// it inside the write ([`Emulator::write`]). A user-space endpoint's answers wait for
    /// its process and are read at the turn that finds them.
    pub kernel: bool,
    /// Packets read right after a delivery to this host (its kernel's answers), stamped
    /// with the delivery's modelled time; those answering a delivery at least
    /// [`crate::stalls::THRESHOLD_NS`] late.
    pub answers: u64,
    pub answers_late: u64,
    /// The time the latest packet read from this host was stamped with: an answer is never
    /// stamped earlier (a host's packets reach the model in the order it sent them).
    pub last_read: Time,
    /// Answers stamped `last_read` instead of their delivery's modelled time, because the
    /// host had sent something before them that was read earlier in the turn.
    pub answers_behind: u64,
}

impl Host {
    pub fn new(tun: File) -> Self {
        Host {
            tun,
            vnet: false,
            super_packets: 0,
            segments: 0,
            sent: 0,
            not_ipv4: 0,
            no_route: 0,
            delivered: 0,
            delivered_bytes: 0,
            first_write: None,
            last_write: None,
            write_errors: 0,
            lateness: Histogram::default(),
            kernel: false,
            answers: 0,
            answers_late: 0,
            last_read: Time::ZERO,
            answers_behind: 0,
        }
    }
}

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

    /// States what direction `dir` holds at `at` (when the plan records queues).
    fn queue_row(&mut self, at: Time, dir: usize) {
        if dir >= self.dirs.len() {
            return; // an 802.11b hop: its MAC queue is not stated
        }
        if self.queue_rows.len() >= MAX_QUEUE_ROWS {
            self.queue_rows_cut += 1;
            return;
        }
        let held = self.dirs[dir].link.held_at(at);
        self.queue_rows.push(QueueRow {
            at,
            dir: dir as u32,
            packets: held.packets,
            bytes: held.bytes,
        });
    }

    /// Records `bytes`, delivered by direction `dir` at `at`, when that direction is captured.
    fn capture(&mut self, dir: usize, at: Time, bytes: &[u8]) {
        let Some(k) = self.capture_of_dir[dir] else {
            return;
        };
        let c = &mut self.captures[k];
        let snaplen = self.plan.pcap_snaplen;
        let record = 16 + bytes.len().min(snaplen as usize);
        if self.capture_bytes + record > MAX_CAPTURE_BYTES {
            c.cut += 1;
            return;
        }
        self.capture_bytes += record;
        tcplab_sim::pcap::write_packet_record(&mut c.bytes, at, bytes, snaplen);
        c.packets += 1;
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

    /// Reads every packet host `k` has sent; [`Received::Gone`] when its device ended (a
    /// user-space endpoint closed its socket: a TUN never ends). Each is stamped with the
    /// clock as it is read, or with `answering` (a delivery's modelled time, see
    /// [`Emulator::write`]), but never earlier than the host's previous packet: a late
    /// delivery's answer would otherwise overtake what the host sent before it and was read
    /// at the top of the turn, reordering its packets (the kernel then sees reordering, and
    /// RACK widens its reordering window).
    fn read_all(
        &mut self,
        k: usize,
        buf: &mut [u8],
        answering: Option<Time>,
    ) -> io::Result<Received> {
        loop {
            let n = match device::receive(&mut self.hosts[k].tun, buf)? {
                Received::Packet(n) => n,
                end => return Ok(end),
            };
            let host = &mut self.hosts[k];
            let behind = answering.is_some_and(|at| at < host.last_read);
            let now = match answering {
                // Never before what the host sent earlier and was read at this turn.
                Some(_) if behind => host.last_read,
                Some(at) => at,
                // The clock: never before `last_read` (answers are stamped at most now).
                None => self.clock.now(),
            };
            host.last_read = now;
            if !host.vnet {
                host.answers_behind += u64::from(behind);
                self.take(k, now, buf[..n].to_vec(), answering.is_some());
                continue;
            }
            // A device with offloads: one read may be a super-packet, whose segments are
            // taken one by one, all stamped with the time of the read.
            let mut segs = std::mem::take(&mut self.split);
            match vnet::packets(&mut buf[..n], &mut segs) {
                Ok(()) if segs.len() > 1 => {
                    host.super_packets += 1;
                    host.segments += segs.len() as u64;
                }
                Ok(()) => {}
                // Not cut (never seen: only TCP over IPv4 is offloaded): not offered.
                Err(_) => host.not_ipv4 += 1,
            }
            if behind {
                host.answers_behind += segs.len() as u64;
            }
            for bytes in segs.drain(..) {
                self.take(k, now, bytes, answering.is_some());
            }
            self.split = segs;
        }
    }

    /// Takes packet `bytes` that host `k` sent, stamped `now`: offered to the model at `now`
    /// with the packets read this turn (`answer`: a kernel host's answer to a delivery, see
    /// [`Emulator::write`], which goes before the packets read at the top of the turn).
    fn take(&mut self, k: usize, now: Time, bytes: Vec<u8>, answer: bool) {
        let host = &mut self.hosts[k];
        let Some(id) = ident::ipv4(&bytes) else {
            host.not_ipv4 += 1;
            return;
        };
        let dst = if self.plan.point_to_point {
            Some(1 - k)
        } else {
            self.host_of_addr.get(&id.dst).copied().filter(|&d| d != k)
        };
        let Some(dst) = dst else {
            host.no_route += 1;
            return;
        };
        host.sent += 1;
        if self.plan.tcp_sends {
            self.tcp_sends.record(now, &id);
        }
        let flow = match (id.sport, id.dport) {
            (Some(sp), Some(dp)) if self.plan.has_pinned_routes() => {
                self.plan.flow_of(id.src, id.dst, sp, dp)
            }
            _ => None,
        };
        let p = Packet {
            dst: self.plan.hosts[dst].node,
            flow,
            ect: ecn::ect(&bytes),
            modelled: !self.unmodelled.is_unmodelled(&id),
            bytes,
        };
        if answer {
            // Before the packets read at the top of this turn (stamped later).
            let at = self.arrivals.partition_point(|a| a.0 <= now);
            self.arrivals.insert(at, (now, k, p));
        } else {
            self.arrivals.push_back((now, k, p));
        }
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

    /// Offers `p`, at node `node` at model time `t`, to the next link direction of its route.
    fn offer(&mut self, t: Time, node: u32, p: Packet) {
        let Some(l) = self.plan.next_dir(node, p.dst, p.flow) else {
            // No path between the two hosts: only a packet's first hop can lack one (the
            // routing table is consistent along a path), so `node` is the sending host.
            if let Some(k) = self.host_of_node[node as usize] {
                self.hosts[k].no_route += 1;
            }
            return;
        };
        let (size, ect) = (p.bytes.len() as u32, p.ect);
        let offered = match self.dirs.get_mut(l as usize) {
            Some(d) => {
                d.offered += 1;
                if p.modelled {
                    d.link.enqueue(t, size, ect, p)
                } else {
                    d.link.enqueue_unmodelled(t, size, p)
                }
            }
            None => {
                let h = &self.plan.wlan_hops[l as usize - self.dirs.len()];
                let s = &mut self.segments[h.segment as usize];
                s.offered[h.hop as usize] += 1;
                s.wlan.offer(t, h.hop, size, p)
            }
        };
        if let Err((cause, p)) = offered {
            self.drop_record(t, l, cause, &p);
        }
        if self.plan.queues == QueueSeries::Change {
            self.queue_row(t, l as usize);
        }
    }

    /// `pkt` reached node `to` at model time `at`: written to its host there, else
    /// offered to its next direction.
    fn arrive(&mut self, at: Time, to: u32, pkt: Packet) {
        if pkt.dst == to {
            let k = self.host_of_node[to as usize].expect("a destination is a host");
            self.write(k, at, &pkt.bytes);
        } else {
            self.offer(at, to, pkt);
        }
    }

    /// Takes every event of segment `w` due by `t` (the earliest event of all models).
    fn poll_segment(&mut self, w: usize, t: Time) {
        while let Some(ev) = self.segments[w].wlan.poll(t) {
            match ev {
                wlan_segment::Event::Deliver { at, hop, pkt } => {
                    let s = &mut self.segments[w];
                    s.delivered[hop as usize] += 1;
                    let to = self.plan.dir_name(s.first + hop).3;
                    self.arrive(at, to, pkt);
                }
                wlan_segment::Event::Dropped {
                    at,
                    hop,
                    cause,
                    pkt,
                    ..
                } => {
                    let l = self.segments[w].first + hop;
                    self.drop_record(at, l, cause, &pkt);
                }
            }
        }
    }

    fn drop_record(&mut self, at: Time, dir: u32, cause: DropCause, p: &Packet) {
        self.drops.push(DropRecord {
            at,
            dir,
            cause,
            ident: ident::ipv4(&p.bytes),
        });
    }

    /// Takes every event of direction `i` due by `t` (the earliest event of all models).
    fn poll(&mut self, i: usize, t: Time) {
        let to = self.plan.dirs[i].to;
        while let Some(ev) = self.dirs[i].link.poll(t) {
            let at = match &ev {
                Event::Deliver { at, .. } | Event::Lost { at, .. } => *at,
            };
            match ev {
                Event::Deliver { at, mut pkt, ce } => {
                    self.dirs[i].delivered += 1;
                    if ce {
                        ecn::set_ce(&mut pkt.bytes);
                    }
                    self.capture(i, at, &pkt.bytes);
                    self.arrive(at, to, pkt);
                }
                Event::Lost { at, cause, pkt } => self.drop_record(at, i as u32, cause, &pkt),
            }
            if self.plan.queues == QueueSeries::Change {
                self.queue_row(at, i);
            }
        }
    }

    /// Writes a packet that reached host `k` at model time `at`. A kernel host's stack
    /// takes the packet inside the write (a TUN write runs the receive path, and the
    /// transmissions it triggers: an ACK, the data an ACK releases), so what the host has
    /// sent when the write returns is its answer: it is read at once and stamped `at`, as
    /// if the write had been on time. A late emulator (the loop or the machine did not run,
    /// [`crate::stalls`]) thus delivers late but does not compress the answers into a burst
    /// the model never saw: an ACK clock stays a clock on the modelled links. The kernel's
    /// own timers still run on the real clock.
    fn write(&mut self, k: usize, at: Time, bytes: &[u8]) {
        let h = &mut self.hosts[k];
        let t = self.clock.now();
        let written = if h.vnet {
            write_vnet(&h.tun, bytes)
        } else {
            h.tun.write(bytes)
        };
        match written {
            // A TUN write takes the whole packet or fails.
            Ok(n) if n == bytes.len() => {
                h.lateness.record(t.saturating_since(at).as_nanos());
                self.stalls.record(at, t);
                h.delivered += 1;
                h.delivered_bytes += bytes.len() as u64;
                h.first_write.get_or_insert(t);
                h.last_write = Some(t);
            }
            Ok(_) | Err(_) => {
                h.write_errors += 1;
                return;
            }
        }
        if !self.hosts[k].kernel {
            return;
        }
        let mut buf = std::mem::take(&mut self.answer_buf);
        let before = self.hosts[k].sent;
        // A TUN device never ends, and an error reading it ends the run at the next turn.
        let _ = self.read_all(k, &mut buf, Some(at));
        self.answer_buf = buf;
        let h = &mut self.hosts[k];
        let answers = h.sent - before;
        h.answers += answers;
        if t.saturating_since(at).as_nanos() >= crate::stalls::THRESHOLD_NS {
            h.answers_late += answers;
        }
    }
}

/// Writes `bytes` to a device with offloads: an empty `virtio_net_hdr`, then the packet (one
/// `writev`); the packet's length when the device took it.
fn write_vnet(dev: &File, bytes: &[u8]) -> io::Result<usize> {
    let iov = [
        libc::iovec {
            iov_base: vnet::EMPTY.as_ptr() as *mut libc::c_void,
            iov_len: vnet::HDR,
        },
        libc::iovec {
            iov_base: bytes.as_ptr() as *mut libc::c_void,
            iov_len: bytes.len(),
        },
    ];
    // SAFETY: two valid iovecs over live buffers, which writev only reads.
    let n = unsafe { libc::writev(dev.as_raw_fd(), iov.as_ptr(), 2) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((n as usize).saturating_sub(vnet::HDR))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::fd::{FromRawFd, OwnedFd};
    use tcplab_sim::Scenario;

    /// A 2-pair dumbbell: access 100 Mb/s, 1 ms; bottleneck 10 Mb/s, 5 ms, `buffer` packets.
    fn dumbbell(buffer: u32) -> Plan {
        let dir = |rate: u64, ms: u64, b: u32| serde_json::json!({"rate": rate, "delay": ms * 1_000_000, "buffer": {"packets": b}});
        let duplex = |rate, ms, b| serde_json::json!({"forward": dir(rate, ms, b), "reverse": dir(rate, ms, b)});
        let s: Scenario = serde_json::from_value(serde_json::json!({
            "name": "t", "seed": 1, "duration": 1_000_000_000u64,
            "topology": {"kind": "dumbbell", "pairs": 2,
                "bottleneck": duplex(10_000_000, 5, buffer),
                "sender_access": [duplex(100_000_000, 1, 1000)],
                "receiver_access": [duplex(100_000_000, 1, 1000)]},
            "udp": [{"src": "s0", "dst": "r0", "rate": 1_000_000, "packet_size": 1000}],
        }))
        .unwrap();
        Plan::from_scenario(&s).unwrap()
    }

    /// The emulator over datagram socket pairs instead of TUN devices (one packet per read
    /// and write, as a TUN device); the other ends are returned by host.
    fn emulator(plan: Plan) -> (Emulator, Vec<File>) {
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in &plan.hosts {
            let mut fds = [0; 2];
            // SAFETY: fds is a valid array of two ints.
            let rc = unsafe {
                libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_DGRAM | libc::SOCK_NONBLOCK,
                    0,
                    fds.as_mut_ptr(),
                )
            };
            assert_eq!(rc, 0);
            // SAFETY: both descriptors were just created and are owned by nobody else.
            let (a, b) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
            ours.push(File::from(a));
            theirs.push(File::from(b));
        }
        (Emulator::new(plan, ours, Clock::start()).unwrap(), theirs)
    }

    fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, len: usize, id: u16) -> Vec<u8> {
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[4..6].copy_from_slice(&id.to_be_bytes());
        p[9] = 17;
        p[12..16].copy_from_slice(&src.octets());
        p[16..20].copy_from_slice(&dst.octets());
        p
    }

    /// A host whose device has offloads: one read of a 3-segment TCP super-packet is offered
    /// as its 3 segments, stamped alike; at the far host (offloads too) each is written
    /// alone behind an empty offload header.
    #[test]
    fn a_super_packet_is_offered_segment_by_segment_and_written_one_by_one() {
        let (mut emu, hosts) = emulator(dumbbell(50));
        emu.hosts[0].vnet = true;
        emu.hosts[2].vnet = true;
        let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
        let mss = 1000usize;
        let mut p = ipv4(s0, r0, 40 + 2 * mss + 500, 7);
        p[9] = 6;
        p[20 + 4..20 + 8].copy_from_slice(&1000u32.to_be_bytes());
        p[20 + 12] = 5 << 4;
        p[20 + 13] = 0x18; // PSH ACK
        let mut raw = vec![1u8, 1]; // NEEDS_CSUM, TCPV4
        for v in [40u16, mss as u16, 20, 16] {
            raw.extend_from_slice(&v.to_ne_bytes());
        }
        raw.extend_from_slice(&p);
        (&hosts[0]).write_all(&raw).unwrap();
        let mut buf = vec![0u8; MAX_PACKET];
        emu.read_all(0, &mut buf, None).unwrap();
        let h = &emu.hosts[0];
        assert_eq!((h.sent, h.super_packets, h.segments), (3, 1, 3));
        let stamps: Vec<Time> = emu.arrivals.iter().map(|a| a.0).collect();
        assert!(stamps.iter().all(|&t| t == stamps[0]), "{stamps:?}");
        let lens: Vec<usize> = emu.arrivals.iter().map(|a| a.2.bytes.len()).collect();
        assert_eq!(lens, [1040, 1040, 540]);
        emu.process(stamps[0] + tcplab_core::Dur::from_secs(1));
        assert_eq!(emu.hosts[2].delivered, 3);
        for (i, len) in lens.into_iter().enumerate() {
            let n = (&hosts[2]).read(&mut buf).unwrap();
            assert_eq!(n, vnet::HDR + len);
            assert_eq!(buf[..vnet::HDR], vnet::EMPTY);
            let seq = u32::from_be_bytes(buf[vnet::HDR + 24..vnet::HDR + 28].try_into().unwrap());
            assert_eq!(seq as usize, 1000 + i * mss);
        }
    }

    #[test]
    fn a_packet_crosses_every_hop_at_its_modelled_time() {
        let (mut emu, hosts) = emulator(dumbbell(50));
        let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
        let p = ipv4(s0, r0, 1000, 1);
        let node = emu.plan.hosts[2].node;
        emu.arrivals.push_back((
            Time::ZERO,
            0,
            Packet {
                dst: node,
                flow: None,
                ect: false,
                modelled: true,
                bytes: p.clone(),
            },
        ));
        // Each hop: transmission (80 µs at 100 Mb/s, 800 µs at 10 Mb/s) and propagation.
        let arrival = Time::from_nanos(1_080_000 + 5_800_000 + 1_080_000);
        emu.process(Time::from_nanos(arrival.as_nanos() - 1));
        assert_eq!(emu.hosts[2].delivered, 0);
        let offered: Vec<u64> = emu.dirs.iter().map(|d| d.offered).collect();
        assert_eq!(offered, [1, 0, 0, 0, 1, 0, 1, 0, 0, 0]); // the forward hops of s0 -> r0
        emu.process(arrival);
        assert_eq!(emu.hosts[2].delivered, 1);
        let mut buf = [0u8; 2000];
        let n = (&hosts[2]).read(&mut buf).unwrap();
        assert_eq!(&buf[..n], &p[..]);
    }

    /// r0 answers s0's packet inside the write that delivers it (a kernel host): the
    /// answer leaves at the delivery's modelled time and reaches s0 one path later, whatever
    /// the real clock says; a user-space host's packets wait for the next turn's read.
    #[test]
    fn a_kernel_hosts_answer_leaves_at_the_modelled_time_of_the_delivery() {
        for kernel in [true, false] {
            let (mut emu, hosts) = emulator(dumbbell(50));
            emu.hosts[2].kernel = kernel;
            let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
            (&hosts[2]).write_all(&ipv4(r0, s0, 1000, 2)).unwrap(); // the answer, waiting
            emu.arrivals.push_back((
                Time::ZERO,
                0,
                Packet {
                    dst: emu.plan.hosts[2].node,
                    flow: None,
                    ect: false,
                    modelled: true,
                    bytes: ipv4(s0, r0, 1000, 1),
                },
            ));
            let path = 1_080_000 + 5_800_000 + 1_080_000;
            emu.process(Time::from_nanos(2 * path - 1));
            assert_eq!(emu.hosts[2].delivered, 1);
            assert_eq!(emu.hosts[0].delivered, 0, "kernel {kernel}");
            emu.process(Time::from_nanos(2 * path));
            let answered = u64::from(kernel);
            assert_eq!(emu.hosts[2].answers, answered);
            assert_eq!(
                (emu.hosts[2].sent, emu.hosts[0].delivered),
                (answered, answered)
            );
        }
    }

    /// r0 sent a packet that the turn read (stamped with the clock); then a late delivery's
    /// answer is read: it is stamped no earlier than that packet, so r0's packets reach the
    /// model in the order r0 sent them (a late answer stamped with its delivery's modelled
    /// time overtook them, and the kernel saw reordering).
    #[test]
    fn an_answer_never_overtakes_what_its_host_sent_before() {
        let (mut emu, hosts) = emulator(dumbbell(50));
        emu.hosts[2].kernel = true;
        let (s0, r0) = (emu.plan.hosts[0].addr, emu.plan.hosts[2].addr);
        let mut buf = vec![0; MAX_PACKET];
        (&hosts[2]).write_all(&ipv4(r0, s0, 1000, 1)).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        emu.read_all(2, &mut buf, None).unwrap();
        let first = emu.arrivals.back().unwrap().0;
        assert!(first >= Time::from_millis(2));
        (&hosts[2]).write_all(&ipv4(r0, s0, 1000, 2)).unwrap(); // the answer, waiting
        emu.write(2, Time::from_millis(1), &ipv4(s0, r0, 1000, 3)); // late: due at 1 ms
        let order: Vec<(Time, u16)> = emu
            .arrivals
            .iter()
            .map(|(t, _, p)| (*t, u16::from_be_bytes([p.bytes[4], p.bytes[5]])))
            .collect();
        assert_eq!(order, [(first, 1), (first, 2)]);
        assert_eq!((emu.hosts[2].answers, emu.hosts[2].answers_behind), (1, 1));
    }

    /// Five 1000-byte packets from each of s0 and s1 at once (to r0 and r1), processed for
    /// 100 ms.
    fn burst(emu: &mut Emulator) {
        for (k, (src, dst)) in [(0usize, 2usize), (1, 3)].into_iter().enumerate() {
            let (a, b) = (emu.plan.hosts[src].addr, emu.plan.hosts[dst].addr);
            for i in 0..5u16 {
                let p = ipv4(a, b, 1000, i);
                let node = emu.plan.hosts[dst].node;
                let t = Time::from_nanos(k as u64 * 10_000 + i as u64);
                emu.arrivals.push_back((
                    t,
                    src,
                    Packet {
                        dst: node,
                        flow: None,
                        ect: false,
                        modelled: true,
                        bytes: p,
                    },
                ));
            }
        }
        emu.arrivals.make_contiguous().sort_by_key(|a| a.0);
        emu.process(Time::from_nanos(100_000_000));
    }

    #[test]
    fn a_burst_of_both_pairs_overflows_the_bottleneck_only() {
        let mut plan = dumbbell(2);
        plan.queues = QueueSeries::Off;
        let (mut emu, _hosts) = emulator(plan);
        burst(&mut emu);
        assert!(emu.queue_rows.is_empty(), "series off: no queue rows");
        // 10 packets reach `left` 80 µs apart per access link; the bottleneck serves one
        // every 800 µs and holds 2: the first is in service, two wait, the rest overflow.
        let bottleneck = 4; // left-right forward
        assert!(emu
            .drops
            .iter()
            .all(|d| d.dir == bottleneck && d.cause == DropCause::BufferOverflow));
        let delivered = emu.hosts[2].delivered + emu.hosts[3].delivered;
        assert_eq!(delivered as usize + emu.drops.len(), 10);
        assert_eq!(emu.dirs[bottleneck as usize].offered, 10);
        assert!(emu.drops.len() >= 5, "{} drops", emu.drops.len());
    }

    #[test]
    fn queue_rows_on_change_show_a_full_buffer_at_every_overflow() {
        let mut plan = dumbbell(2);
        plan.queues = QueueSeries::Change;
        let (mut emu, _hosts) = emulator(plan);
        burst(&mut emu);
        let bottleneck = 4u32;
        let rows: Vec<&QueueRow> = emu
            .queue_rows
            .iter()
            .filter(|q| q.dir == bottleneck)
            .collect();
        // A row per packet offered (taken or refused) and per packet delivered at the far end.
        let d = &emu.dirs[bottleneck as usize];
        assert_eq!(rows.len() as u64, d.offered + d.delivered);
        assert!(
            rows.windows(2).all(|w| w[0].at <= w[1].at),
            "in model time order"
        );
        let full = rows.iter().map(|q| q.packets).max().unwrap();
        // Never more than the buffer's 2 packets and the one in service.
        assert!(full <= 3, "{full}");
        assert!(rows.iter().all(|q| q.bytes == q.packets as u64 * 1000));
        for d in &emu.drops {
            // The row stated for the dropped packet's offer is the buffer as it refused it.
            let at_drop = rows.iter().rev().find(|q| q.at <= d.at).unwrap();
            assert_eq!(
                at_drop.packets, full,
                "a drop at {:?} with the buffer not full",
                d.at
            );
        }
        // Every hop of the packets' paths states rows; the reverse directions none.
        for (i, dir) in emu.dirs.iter().enumerate() {
            let n = emu.queue_rows.iter().filter(|q| q.dir == i as u32).count() as u64;
            assert!(
                n >= dir.offered,
                "direction {i}: {n} rows, {} offered",
                dir.offered
            );
        }
        assert_eq!(emu.queue_rows_cut, 0);
    }

    #[test]
    fn a_captured_direction_records_every_packet_it_delivers_as_it_is() {
        let mut plan = dumbbell(2);
        plan.pcap = vec![crate::plan::PcapFilePlan {
            name: "left-right.forward".into(),
            link: "left-right".into(),
            dirs: vec![4],
            directions: vec!["forward"],
        }];
        plan.pcap_snaplen = 100;
        let (mut emu, _hosts) = emulator(plan);
        burst(&mut emu);
        let c = &emu.captures[0];
        assert_eq!(c.packets, emu.dirs[4].delivered);
        assert!(c.packets > 0 && c.cut == 0);
        // Global header, then per packet a 16-byte record header and its first 100 bytes.
        let b = &c.bytes;
        assert_eq!(&b[..24], &tcplab_sim::pcap::global_header(100));
        assert_eq!(b.len() as u64, 24 + c.packets * (16 + 100));
        let mut last = 0u64;
        for k in 0..c.packets as usize {
            let r = &b[24 + k * 116..24 + (k + 1) * 116];
            let word = |i: usize| u32::from_le_bytes(r[i..i + 4].try_into().unwrap());
            let t = word(0) as u64 * 1_000_000_000 + word(4) as u64;
            assert!(t >= last, "records in time order");
            last = t;
            assert_eq!((word(8), word(12)), (100, 1000), "kept and original length");
            assert_eq!(r[16], 0x45, "the packet's own IPv4 header");
        }
    }

    #[test]
    fn queue_rows_on_interval_come_every_tick_for_every_direction() {
        let mut plan = dumbbell(2);
        plan.queues = QueueSeries::Interval(1_000_000);
        let (mut emu, _hosts) = emulator(plan);
        burst(&mut emu);
        // Ticks 0, 1, ..., 100 ms (the horizon), 10 directions each.
        assert_eq!(emu.queue_rows.len(), 101 * 10);
        assert!(
            emu.queue_rows
                .iter()
                .enumerate()
                .all(|(k, q)| q.at.as_nanos() == (k as u64 / 10) * 1_000_000
                    && q.dir == k as u32 % 10)
        );
        // The bottleneck holds the burst for a while (never more than its 2 packets besides
        // the one in service), and nothing at the start or once it has drained.
        let at = |ms: u64| emu.queue_rows[(ms * 10 + 4) as usize];
        let most = (0..=100).map(|ms| at(ms).packets).max().unwrap();
        assert!((1..=3).contains(&most), "{most}");
        assert_eq!((at(0).packets, at(100).packets), (0, 0));
    }

    #[test]
    fn a_packet_of_a_pinned_flow_takes_its_route_and_others_the_tables() {
        let (mut emu, hosts) =
            emulator(Plan::from_scenario(&crate::plan::tests::detour()).unwrap());
        let addr = |n: &str| emu.plan.hosts.iter().find(|h| h.name == n).unwrap().addr;
        let (a, b) = (addr("a"), addr("b"));
        let udp = |src, dst, sport: u16, dport: u16, id| {
            let mut p = ipv4(src, dst, 500, id);
            p[20..22].copy_from_slice(&sport.to_be_bytes());
            p[22..24].copy_from_slice(&dport.to_be_bytes());
            p
        };
        // Host a (0): UDP flow 0's datagram (pinned), UDP flow 1's (not), TCP flow 0's data
        // (pinned, tcplab's transport is UDP on the flow's port); host b (1): flow 0's ACK.
        for (k, p) in [
            (0, udp(a, b, 40000, 5402, 1)),
            (0, udp(a, b, 40000, 5403, 2)),
            (0, udp(a, b, 5400, 5400, 3)),
            (1, udp(b, a, 5400, 5400, 4)),
        ] {
            (&hosts[k]).write_all(&p).unwrap();
        }
        let mut buf = vec![0u8; MAX_PACKET];
        for k in 0..2 {
            emu.read_all(k, &mut buf, None).unwrap();
        }
        let t = emu.arrivals.back().unwrap().0;
        emu.process(t + tcplab_core::Dur::from_secs(1));
        let offered = |label: &str| {
            let i = emu
                .plan
                .dirs
                .iter()
                .position(|d| d.label() == label)
                .unwrap();
            emu.dirs[i].offered
        };
        // Two data packets through the detour, one direct; the ACK back through the detour.
        assert_eq!(offered("a-r1/forward"), 3);
        assert_eq!(offered("r1-r3/forward"), 2);
        assert_eq!(offered("r3-r2/forward"), 2);
        assert_eq!(offered("r1-r2/forward"), 1);
        assert_eq!(offered("r2-b/forward"), 3);
        assert_eq!(offered("r3-r2/reverse"), 1);
        assert_eq!(offered("r1-r3/reverse"), 1);
        assert_eq!(offered("r1-r2/reverse"), 0);
        assert_eq!((emu.hosts[1].delivered, emu.hosts[0].delivered), (3, 1));
    }

    #[test]
    fn a_wlan_hop_delivers_through_the_simulators_mac_and_logs_its_drops() {
        use tcplab_sim::scenario::{ChannelPreset, PipePreset};
        let topo = tcplab_sim::builder::wlan_access(PipePreset::Fat, &[ChannelPreset::HL]);
        let s = tcplab_sim::builder::ScenarioBuilder::new("w", topo).build();
        let (mut emu, _hosts) = emulator(Plan::from_scenario(&s).unwrap());
        let host = |n: &str| emu.plan.hosts.iter().position(|h| h.name == n).unwrap();
        let (sv, sta) = (host("server"), host("sta0"));
        let (a, b) = (emu.plan.hosts[sv].addr, emu.plan.hosts[sta].addr);
        let dst = emu.plan.hosts[sta].node;
        // 400 packets of 1500 bytes at 10 Mb/s into a ~5 Mb/s medium: the AP's MAC queue
        // overflows; frames to the HL station exhaust their retries now and then.
        for i in 0..400u16 {
            let p = ipv4(a, b, 1500, i);
            let t = Time::from_nanos(i as u64 * 1_200_000);
            let pkt = Packet {
                dst,
                flow: None,
                ect: false,
                modelled: true,
                bytes: p,
            };
            emu.arrivals.push_back((t, sv, pkt));
        }
        emu.process(Time::from_nanos(10_000_000_000));
        let down = emu.plan.dirs.len() as u32; // wlan0:ap-sta0 forward
        let seg = &emu.segments[0];
        assert_eq!(seg.first, down);
        let mac = |c| {
            emu.drops
                .iter()
                .filter(|d| d.cause == c && d.dir == down)
                .count()
        };
        let overflow = mac(DropCause::BufferOverflow);
        assert!(overflow > 0, "no overflow at the AP");
        assert!(
            emu.drops.iter().all(|d| d.dir == down),
            "drops off the WLAN hop"
        );
        // Nobody reads the far socket: writes beyond its buffer fail (outside the model).
        let written = emu.hosts[sta].delivered + emu.hosts[sta].write_errors;
        assert_eq!(
            written as usize + emu.drops.len(),
            400,
            "every packet delivered or logged"
        );
        assert_eq!(seg.delivered[0], written);
        let st = seg.wlan.hop_stats(0);
        assert_eq!(
            st.drops[DropCause::Mac as usize] as usize,
            mac(DropCause::Mac)
        );
        assert_eq!(
            st.drops[DropCause::BufferOverflow as usize] as usize,
            overflow
        );
    }
}
