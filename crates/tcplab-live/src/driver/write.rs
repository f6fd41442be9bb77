//! A delivery written to its host's device at the end of its route (the clock read just
//! before the write: the packet's lateness, [`crate::stalls`]), and a kernel host's answers
//! read inside the write, stamped with the delivery's modelled time.

use super::Emulator;
use crate::vnet;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use tcplab_core::Time;

impl Emulator {
    /// Writes a packet that reached host `k` at model time `at`. A kernel host's stack
    /// takes the packet inside the write (a TUN write runs the receive path, and the
    /// transmissions it triggers: an ACK, the data an ACK releases), so what the host has
    /// sent when the write returns is its answer: it is read at once and stamped `at`, as
    /// if the write had been on time. A late emulator (the loop or the machine did not run,
    /// [`crate::stalls`]) thus delivers late but does not compress the answers into a burst
    /// the model never saw: an ACK clock stays a clock on the modelled links. The kernel's
    /// own timers still run on the real clock.
    pub(super) fn write(&mut self, k: usize, at: Time, bytes: &[u8]) {
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
