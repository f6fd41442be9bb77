//! A host's device: what the emulator reads a host's packets from and writes its packets
//! to, one whole IPv4 packet per read or write.
//!
//! - A namespace (a name under `/run/netns`, or the path of a namespace file): a TUN
//!   device opened in it ([`crate::tun`]); the host's Linux stack sends and receives.
//! - `fd:N`: a `SOCK_SEQPACKET` Unix socket the emulator inherited as descriptor `N`, whose
//!   other end a user-space endpoint holds (tcplab's own TCP, docs/real-tcp.md): that host has no
//!   kernel stack on the path, so no kernel ever sees (or resets) its connections. The
//!   endpoint closing its end is the host going away: reads then end ([`Device::Gone`]).

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, FromRawFd};

/// What reading a (non-blocking) device gave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Received {
    /// One packet of this many bytes.
    Packet(usize),
    /// Nothing more to read now.
    Drained,
    /// The device ended: the other end of an attached socket closed (a TUN never ends).
    Gone,
}

/// Reads the next packet of `dev` into `buf` (an interrupted read is retried).
pub fn receive(dev: &mut File, buf: &mut [u8]) -> io::Result<Received> {
    loop {
        return match dev.read(buf) {
            Ok(0) => Ok(Received::Gone),
            Ok(n) => Ok(Received::Packet(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Received::Drained),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(e),
        };
    }
}

/// Whether the device of `spec` has the host's kernel stack behind it (a namespace's TUN
/// device), not a user-space endpoint.
pub fn is_kernel(spec: &str) -> bool {
    !spec.starts_with("fd:")
}

/// Opens the device of a host given as `spec` (a namespace or `fd:N`); `tun`: the TUN
/// device's name in a namespace.
pub fn open(spec: &str, tun: &str) -> Result<File, String> {
    open_with(spec, tun, false)
}

/// [`open`]; a namespace's TUN device with segmentation offload when `offload`
/// ([`crate::vnet`]: what is read and written then carries a `virtio_net_hdr`; see
/// [`offloads`]).
pub fn open_with(spec: &str, tun: &str, offload: bool) -> Result<File, String> {
    match spec.strip_prefix("fd:") {
        Some(n) => attached(spec, n),
        None => crate::tun::open_in_netns(spec, tun, offload),
    }
}

/// Whether [`open_with`] gives the device of `spec` offloads when asked (a namespace's TUN
/// device; an attached socket carries plain packets).
pub fn offloads(spec: &str) -> bool {
    is_kernel(spec)
}

/// The inherited socket `fd:N`, checked to be a `SOCK_SEQPACKET` socket, made non-blocking
/// and close-on-exec.
fn attached(spec: &str, n: &str) -> Result<File, String> {
    let fd: libc::c_int = n.parse().ok().filter(|&fd| fd > 2).ok_or(format!(
        "{spec:?}: expected fd:N with N > 2 an inherited descriptor"
    ))?;
    let mut kind: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: kind and len are valid for SO_TYPE's int answer.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_TYPE,
            (&mut kind as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(format!("{spec:?}: not an open socket ({e})"));
    }
    let mut domain: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: domain and len are valid for SO_DOMAIN's int answer.
    unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_DOMAIN,
            (&mut domain as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    let packet = domain == libc::AF_PACKET && kind == libc::SOCK_DGRAM;
    if kind != libc::SOCK_SEQPACKET && !packet {
        return Err(format!(
            "{spec:?}: a socket of type {kind}, not SOCK_SEQPACKET (nor an AF_PACKET SOCK_DGRAM socket)"
        ));
    }
    // SAFETY: fd is an open socket this process inherited for the emulator's use alone.
    let file = unsafe { File::from_raw_fd(fd) };
    // SAFETY: fcntl on an open descriptor with plain integer flags.
    unsafe {
        let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl | libc::O_NONBLOCK);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFD, libc::FD_CLOEXEC);
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pair(kind: libc::c_int) -> (libc::c_int, libc::c_int) {
        let mut fds = [0; 2];
        // SAFETY: fds is a valid array of two ints.
        assert_eq!(
            unsafe { libc::socketpair(libc::AF_UNIX, kind, 0, fds.as_mut_ptr()) },
            0
        );
        (fds[0], fds[1])
    }

    #[test]
    fn a_seqpacket_socket_carries_whole_packets_and_other_descriptors_are_refused() {
        let (a, b) = pair(libc::SOCK_SEQPACKET);
        let mut dev = open(&format!("fd:{a}"), "unused").unwrap();
        // SAFETY: b is ours.
        let mut peer = unsafe { File::from_raw_fd(b) };
        peer.write_all(&[0x45; 60]).unwrap();
        peer.write_all(&[0x45; 20]).unwrap();
        let mut buf = [0u8; 100];
        assert_eq!(dev.read(&mut buf).unwrap(), 60, "one packet per read");
        assert_eq!(dev.read(&mut buf).unwrap(), 20);
        let e = dev.read(&mut buf).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock, "non-blocking");
        drop(peer);
        assert_eq!(dev.read(&mut buf).unwrap(), 0, "the endpoint went away");

        let (s, t) = pair(libc::SOCK_STREAM);
        let err = open(&format!("fd:{s}"), "x").unwrap_err();
        assert!(err.contains("not SOCK_SEQPACKET"), "{err}");
        // SAFETY: closing our own descriptors.
        unsafe {
            libc::close(s);
            libc::close(t);
        }
        assert!(open("fd:2", "x").unwrap_err().contains("N > 2"));
        assert!(open("fd:x", "x").unwrap_err().contains("expected fd:N"));
        assert!(open("fd:999", "x")
            .unwrap_err()
            .contains("not an open socket"));
    }
}
