//! Drop-tail FIFO: admit while the buffer (counting the packet in service) has room.

use super::{Admission, Occupancy, Queue, Queued};
use crate::packet::DropCause;
use crate::scenario::Buffer;
use std::collections::VecDeque;
use tcplab_core::Time;

pub struct DropTail {
    buffer: Buffer,
    fifo: VecDeque<Queued>,
    waiting: Occupancy,
}

impl DropTail {
    pub fn new(buffer: Buffer) -> Self {
        DropTail {
            buffer,
            fifo: VecDeque::new(),
            waiting: Occupancy::default(),
        }
    }

    /// Whether a packet of `size` bytes is admitted while the link holds `held`: the one
    /// rule of [`Queue::enqueue`], for a link that serves an admitted packet at once without
    /// queueing it (its queue is empty and nothing is in service).
    #[inline]
    pub fn admits(&self, size: u32, held: Occupancy) -> bool {
        held.fits(size, self.buffer)
    }
}

impl Queue for DropTail {
    #[inline]
    fn enqueue(&mut self, _now: Time, pkt: Queued, held: Occupancy) -> Admission {
        if !self.admits(pkt.size, held) {
            return Admission::Drop(DropCause::BufferOverflow);
        }
        self.waiting.add(pkt.size);
        self.fifo.push_back(pkt);
        Admission::Accept
    }
    #[inline]
    fn dequeue(&mut self, _now: Time) -> Option<Queued> {
        let p = self.fifo.pop_front()?;
        self.waiting.remove(p.size);
        Some(p)
    }
    #[inline]
    fn waiting(&self) -> Occupancy {
        self.waiting
    }
    fn for_each(&self, f: &mut dyn FnMut(Queued)) {
        self.fifo.iter().for_each(|p| f(*p));
    }
    fn set_limits(&mut self, buffer: Option<Buffer>, _rate: Option<u64>) {
        if let Some(b) = buffer {
            self.buffer = b;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketPool, Payload};

    fn ids(n: usize) -> Vec<crate::packet::PacketId> {
        let mut pool = PacketPool::new();
        let p = Packet {
            flow: 0,
            dst: 0,
            size: 0,
            sent_at: Time::ZERO,
            payload: Payload::Udp(0),
        };
        (0..n).map(|_| pool.insert(p)).collect()
    }

    #[test]
    fn packets_limit_counts_what_the_link_holds() {
        let mut q = DropTail::new(Buffer::Packets(2));
        let id = ids(3);
        let mut held = Occupancy::default();
        for (i, &id) in id.iter().enumerate() {
            let pkt = Queued {
                id,
                size: 100,
                ect: false,
                drawn: true,
            };
            let a = q.enqueue(Time::ZERO, pkt, held);
            if i < 2 {
                assert_eq!(a, Admission::Accept);
                held.add(100);
            } else {
                assert_eq!(a, Admission::Drop(DropCause::BufferOverflow));
            }
        }
        assert_eq!(q.waiting().packets, 2);
        assert_eq!(q.dequeue(Time::ZERO).map(|p| p.id), Some(id[0]));
    }

    #[test]
    fn bytes_limit() {
        let mut q = DropTail::new(Buffer::Bytes(250));
        let id = ids(3);
        let mut held = Occupancy::default();
        let mut verdicts = vec![];
        for &id in &id {
            let pkt = Queued {
                id,
                size: 100,
                ect: false,
                drawn: true,
            };
            let a = q.enqueue(Time::ZERO, pkt, held);
            if a == Admission::Accept {
                held.add(100);
            }
            verdicts.push(a);
        }
        assert_eq!(
            verdicts,
            [
                Admission::Accept,
                Admission::Accept,
                Admission::Drop(DropCause::BufferOverflow)
            ]
        );
    }
}
