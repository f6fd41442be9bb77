//! TUN devices created inside network namespaces, named (`ip netns`: `/run/netns/NAME`) or
//! given by the path of a namespace file (`/proc/PID/ns/net`: a namespace held by a process,
//! as an unprivileged run inside a user namespace makes them, see docs/live.md). The calling
//! thread enters the namespace (`setns`), opens `/dev/net/tun` with
//! `IFF_TUN | IFF_NO_PI` (raw IP packets, no packet-information header) and returns to its
//! own namespace; the device stays in the namespace it was made in and disappears when its
//! descriptor closes (it is not persistent), so an emulator that dies leaves no device.
//!
//! Offloads ([`crate::vnet`]): with `offload` the device is opened with `IFF_VNET_HDR` and
//! announces checksum offload and TSO for IPv4 (`TUNSETOFFLOAD(TUN_F_CSUM | TUN_F_TSO4)`),
//! so the host's kernel hands over a TCP super-packet of up to 64 KB in one read, which the
//! emulator segments as the kernel would have; without, the device announces no offload and
//! every packet the stack hands it is one IP packet of at most the MTU.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

fn setns(f: &File) -> io::Result<()> {
    // SAFETY: f is an open namespace file.
    if unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The namespace file of `netns`: a path as given (it contains a `/`), else a name under
/// `/run/netns` (`ip netns`).
pub fn netns_path(netns: &str) -> String {
    if netns.contains('/') {
        netns.to_string()
    } else {
        format!("/run/netns/{netns}")
    }
}

/// Opens a non-blocking TUN device `dev` inside network namespace `netns` (a name or the path
/// of a namespace file, [`netns_path`]); with `offload`, a `virtio_net_hdr` device with
/// checksum offload and TSO for IPv4 ([`crate::vnet`]).
pub fn open_in_netns(netns: &str, dev: &str, offload: bool) -> Result<File, String> {
    if dev.is_empty() || dev.len() >= libc::IFNAMSIZ {
        return Err(format!("tun = {dev:?}: a device name of 1 to 15 bytes"));
    }
    let own = File::open("/proc/thread-self/ns/net")
        .map_err(|e| format!("cannot open this thread's network namespace: {e}"))?;
    let target = File::open(netns_path(netns)).map_err(|e| format!("netns = {netns:?}: {e}"))?;
    setns(&target).map_err(|e| {
        format!("netns = {netns:?}: setns: {e} (needs CAP_SYS_ADMIN over the namespace)")
    })?;
    let tun = open_tun(dev, offload);
    setns(&own).map_err(|e| format!("cannot return to the own network namespace: {e}"))?;
    tun.map_err(|e| format!("tun = {dev:?} in {netns:?}: {e}"))
}

fn open_tun(dev: &str, offload: bool) -> io::Result<File> {
    let path = c"/dev/net/tun";
    // SAFETY: a valid C string; flags are plain integers.
    let fd = unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    let file = unsafe { File::from_raw_fd(fd) };
    let mut req = IfReq {
        name: [0; libc::IFNAMSIZ],
        flags: IFF_TUN | IFF_NO_PI | if offload { IFF_VNET_HDR } else { 0 },
        _pad: [0; 22],
    };
    req.name[..dev.len()].copy_from_slice(dev.as_bytes());
    // SAFETY: req is a properly sized ifreq for TUNSETIFF.
    if unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: TUNSETOFFLOAD takes its flags by value.
    if offload && unsafe { libc::ioctl(fd, TUNSETOFFLOAD as _, TUN_F_CSUM | TUN_F_TSO4) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_under_run_netns_and_a_path_is_kept() {
        assert_eq!(netns_path("tcplab-1-ab-a"), "/run/netns/tcplab-1-ab-a");
        assert_eq!(netns_path("/proc/42/ns/net"), "/proc/42/ns/net");
    }

    #[test]
    fn a_missing_namespace_is_one_line_naming_it() {
        let e = open_in_netns("/proc/0/ns/net", "tcplab0", true).unwrap_err();
        assert!(e.starts_with("netns = \"/proc/0/ns/net\": "), "{e}");
        assert!(!e.contains('\n'));
    }
}
