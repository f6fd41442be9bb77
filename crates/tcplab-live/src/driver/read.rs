//! A turn's reads: every packet a host has sent, read from its device (with offloads, a
//! super-packet cut into its segments, [`crate::vnet`]), stamped with the clock, or with a
//! delivery's modelled time when it is a kernel host's answer ([`super::write`]), and put in
//! the turn's arrivals in time order, bound for the host that owns its destination address.

use super::{Emulator, Packet};
use crate::device::{self, Received};
use crate::{ecn, ident, vnet};
use std::io;
use tcplab_core::Time;

impl Emulator {
    /// Reads every packet host `k` has sent; [`Received::Gone`] when its device ended (a
    /// user-space endpoint closed its socket: a TUN never ends). Each is stamped with the
    /// clock as it is read, or with `answering` (a delivery's modelled time, see
    /// [`Emulator::write`]), but never earlier than the host's previous packet: a late
    /// delivery's answer would otherwise overtake what the host sent before it and was read
    /// at the top of the turn, reordering its packets (the kernel then sees reordering, and
    /// RACK widens its reordering window).
    pub(super) fn read_all(
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
}
