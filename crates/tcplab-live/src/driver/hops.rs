//! A packet's way through the link models: offered at a node to the next link direction of
//! its route (or to an 802.11b segment's hop), the models' events taken when due (a
//! delivery reaches a router, offered on, or its destination host, [`super::write`]; a drop
//! is logged), and what each hop leaves in the records ([`super::records`]: queue rows,
//! captured packets, drops).

use super::records::{DropRecord, QueueRow, MAX_CAPTURE_BYTES, MAX_QUEUE_ROWS};
use super::{Emulator, Packet};
use crate::plan::QueueSeries;
use crate::{ecn, ident};
use tcplab_core::Time;
use tcplab_sim::link_direction::Event;
use tcplab_sim::packet::DropCause;
use tcplab_sim::wlan_segment;

impl Emulator {
    /// Offers `p`, at node `node` at model time `t`, to the next link direction of its route.
    pub(super) fn offer(&mut self, t: Time, node: u32, p: Packet) {
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
    pub(super) fn poll_segment(&mut self, w: usize, t: Time) {
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
    pub(super) fn poll(&mut self, i: usize, t: Time) {
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
    /// States what direction `dir` holds at `at` (when the plan records queues).
    pub(super) fn queue_row(&mut self, at: Time, dir: usize) {
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
}
