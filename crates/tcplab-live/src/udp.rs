//! The transport's UDP socket: bound and connected to the peer, large buffers, blocking
//! sends (a full send buffer holds the sender back instead of dropping outside the model),
//! non-blocking receives that also return the IP header's TOS byte (ECN: ECT, CE).

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};

/// Socket buffer size asked for (root may exceed `net.core.*mem_max`).
const BUFFER: libc::c_int = 8 << 20;

pub struct Udp {
    sock: UdpSocket,
    tos: u8,
}

fn setsockopt(fd: RawFd, level: libc::c_int, name: libc::c_int, v: libc::c_int) -> io::Result<()> {
    // SAFETY: fd is an open socket; v lives for the call.
    let r = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            &v as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl Udp {
    pub fn open(local: SocketAddr, peer: SocketAddr) -> io::Result<Udp> {
        let sock = UdpSocket::bind(local)?;
        sock.connect(peer)?;
        let fd = sock.as_raw_fd();
        for (force, plain) in [
            (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
            (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
        ] {
            if setsockopt(fd, libc::SOL_SOCKET, force, BUFFER).is_err() {
                setsockopt(fd, libc::SOL_SOCKET, plain, BUFFER)?;
            }
        }
        setsockopt(fd, libc::IPPROTO_IP, libc::IP_RECVTOS, 1)?;
        // Never fragment: a datagram larger than the path's MTU is an error, not two packets.
        setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_MTU_DISCOVER,
            libc::IP_PMTUDISC_DO,
        )?;
        Ok(Udp { sock, tos: 0 })
    }

    pub fn fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }

    /// The TOS byte of the following datagrams (2: ECT(0)).
    pub fn set_tos(&mut self, tos: u8) -> io::Result<()> {
        if tos != self.tos {
            setsockopt(
                self.fd(),
                libc::IPPROTO_IP,
                libc::IP_TOS,
                tos as libc::c_int,
            )?;
            self.tos = tos;
        }
        Ok(())
    }

    /// Sends one datagram, waiting while the send buffer is full.
    pub fn send(&self, b: &[u8]) -> io::Result<()> {
        loop {
            match self.sock.send(b) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// One waiting datagram: its length and TOS byte; None when nothing is waiting.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<Option<(usize, u8)>> {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr() as *mut libc::c_void,
            iov_len: buf.len(),
        };
        let mut cmsg = [0u64; 8]; // aligned control buffer
                                  // SAFETY: msghdr is plain data; every pointer set below outlives the call.
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr() as *mut libc::c_void;
        msg.msg_controllen = std::mem::size_of_val(&cmsg) as _;
        loop {
            // SAFETY: msg points at valid buffers.
            let n = unsafe { libc::recvmsg(self.fd(), &mut msg, libc::MSG_DONTWAIT) };
            if n >= 0 {
                return Ok(Some((n as usize, tos_of(&msg))));
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::WouldBlock => return Ok(None),
                io::ErrorKind::Interrupted => continue,
                // An ICMP error from an earlier send (peer not yet listening): skip it.
                io::ErrorKind::ConnectionRefused => continue,
                _ => return Err(e),
            }
        }
    }
}

fn tos_of(msg: &libc::msghdr) -> u8 {
    // SAFETY: walking the control messages the kernel wrote into msg's buffer.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::IPPROTO_IP && (*c).cmsg_type == libc::IP_TOS {
                return *libc::CMSG_DATA(c);
            }
            c = libc::CMSG_NXTHDR(msg, c);
        }
    }
    0
}
