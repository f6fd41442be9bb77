//! TUN devices created inside named network namespaces (`ip netns`, `/run/netns/NAME`).
//! The calling thread enters the namespace (`setns`), opens `/dev/net/tun` with
//! `IFF_TUN | IFF_NO_PI` (raw IP packets, no packet-information header) and returns to its
//! own namespace; the device stays in the namespace it was made in and disappears when its
//! descriptor closes (it is not persistent), so an emulator that dies leaves no device.
//!
//! No segmentation offloads: without `IFF_VNET_HDR` a TUN device announces no GSO/TSO to
//! the kernel, so every packet the stack hands it is one IP packet of at most the MTU.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd};

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

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

/// Opens a non-blocking TUN device `dev` inside network namespace `netns`.
pub fn open_in_netns(netns: &str, dev: &str) -> Result<File, String> {
    if dev.is_empty() || dev.len() >= libc::IFNAMSIZ {
        return Err(format!("tun = {dev:?}: a device name of 1 to 15 bytes"));
    }
    let own = File::open("/proc/thread-self/ns/net")
        .map_err(|e| format!("cannot open this thread's network namespace: {e}"))?;
    let target =
        File::open(format!("/run/netns/{netns}")).map_err(|e| format!("netns = {netns:?}: {e}"))?;
    setns(&target).map_err(|e| format!("netns = {netns:?}: setns: {e} (needs CAP_SYS_ADMIN)"))?;
    let tun = open_tun(dev);
    setns(&own).map_err(|e| format!("cannot return to the own network namespace: {e}"))?;
    tun.map_err(|e| format!("tun = {dev:?} in {netns:?}: {e}"))
}

fn open_tun(dev: &str) -> io::Result<File> {
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
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..dev.len()].copy_from_slice(dev.as_bytes());
    // SAFETY: req is a properly sized ifreq for TUNSETIFF.
    if unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}
