//! The emulator's event loop: two link directions of tcplab-sim's model between two TUN
//! devices (forward: A -> B, reverse: B -> A), driven by the real clock of [`crate::clock`].
//!
//! Each turn reads every packet waiting on either device (the clock is read for each, and
//! that is the time the packet is offered to the model), writes every packet whose modelled
//! departure from the far end of the link is due (the clock is read just before each write;
//! actual minus modelled time is the packet's lateness), then waits until the earliest next
//! event of either direction or until a device is readable. The model sees only its own
//! event times: a late loop delays packets but never changes what the model decides.

use crate::clock::Clock;
use crate::ecn;
use crate::histogram::Histogram;
use crate::ident::{self, Ident};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use tcplab_core::Time;
use tcplab_sim::link_direction::{Event, LinkDirection};
use tcplab_sim::packet::DropCause;

/// Largest packet read from a TUN device (its MTU is far smaller).
const MAX_PACKET: usize = 65_536;

/// A drop the model made.
#[derive(Clone, Debug)]
pub struct DropRecord {
    /// Model time of the drop (ns since the emulator started).
    pub at: Time,
    pub direction: &'static str,
    pub cause: DropCause,
    pub ident: Option<Ident>,
}

/// One direction's state and counts.
pub struct Direction {
    pub name: &'static str,
    pub link: LinkDirection<Vec<u8>>,
    pub lateness: Histogram,
    /// Packets read and offered to the model.
    pub offered: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    /// Actual times of the first and last write to the far device (None: none yet).
    pub first_write: Option<Time>,
    pub last_write: Option<Time>,
    /// Drops outside the model: writing to the far TUN device failed.
    pub write_errors: u64,
    /// Packets read that are not IPv4 (not offered to the model).
    pub not_ipv4: u64,
}

impl Direction {
    pub fn new(name: &'static str, link: LinkDirection<Vec<u8>>) -> Self {
        Direction {
            name,
            link,
            lateness: Histogram::default(),
            offered: 0,
            delivered: 0,
            delivered_bytes: 0,
            first_write: None,
            last_write: None,
            write_errors: 0,
            not_ipv4: 0,
        }
    }
}

pub struct Emulator {
    pub clock: Clock,
    pub tun: [File; 2],
    /// `dirs[i]` carries packets read from `tun[i]` to `tun[1 - i]`.
    pub dirs: [Direction; 2],
    pub drops: Vec<DropRecord>,
}

impl Emulator {
    /// Runs until `stop` is set (a signal handler sets it; waits are interrupted by signals
    /// and never longer than 100 ms).
    pub fn run(&mut self, stop: &AtomicBool) -> io::Result<()> {
        let fds = [self.tun[0].as_raw_fd(), self.tun[1].as_raw_fd()];
        let mut buf = vec![0u8; MAX_PACKET];
        while !stop.load(Ordering::Relaxed) {
            for i in 0..2 {
                self.read_all(i, &mut buf)?;
            }
            for i in 0..2 {
                self.depart(i);
            }
            let next = self.dirs.iter().filter_map(|d| d.link.next_event()).min();
            self.clock.wait(next, &fds);
        }
        Ok(())
    }

    fn read_all(&mut self, i: usize, buf: &mut [u8]) -> io::Result<()> {
        loop {
            let n = match self.tun[i].read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let now = self.clock.now();
            let d = &mut self.dirs[i];
            let pkt = &buf[..n];
            if ident::ipv4(pkt).is_none() {
                d.not_ipv4 += 1;
                continue;
            }
            d.offered += 1;
            let ect = ecn::ect(pkt);
            if let Err((cause, pkt)) = d.link.enqueue(now, n as u32, ect, pkt.to_vec()) {
                self.drops.push(DropRecord {
                    at: now,
                    direction: d.name,
                    cause,
                    ident: ident::ipv4(&pkt),
                });
            }
        }
    }

    fn depart(&mut self, i: usize) {
        let (dirs, tun) = (&mut self.dirs, &mut self.tun);
        let d = &mut dirs[i];
        let out = &mut tun[1 - i];
        while let Some(ev) = d.link.poll(self.clock.now()) {
            match ev {
                Event::Deliver { at, mut pkt, ce } => {
                    if ce {
                        ecn::set_ce(&mut pkt);
                    }
                    let t = self.clock.now();
                    match out.write(&pkt) {
                        // A TUN write takes the whole packet or fails.
                        Ok(n) if n == pkt.len() => {
                            d.lateness.record(t.saturating_since(at).as_nanos());
                            d.delivered += 1;
                            d.delivered_bytes += pkt.len() as u64;
                            d.first_write.get_or_insert(t);
                            d.last_write = Some(t);
                        }
                        Ok(_) | Err(_) => d.write_errors += 1,
                    }
                }
                Event::Lost { at, cause, pkt } => self.drops.push(DropRecord {
                    at,
                    direction: d.name,
                    cause,
                    ident: ident::ipv4(&pkt),
                }),
            }
        }
    }
}
