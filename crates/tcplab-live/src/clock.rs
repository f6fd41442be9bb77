//! The real clock: the one module of tcplab that reads it (clippy bans `Instant::now` and
//! `clock_gettime` everywhere else). Time is `CLOCK_MONOTONIC`, the clock Python's
//! `time.monotonic_ns()` reads, so probes in other namespaces on the same machine share it.
//! The emulator's model time is nanoseconds since [`Clock::start`].
//!
//! Waiting is sub-millisecond: the timer slack of the thread is set to 1 ns, the thread
//! sleeps in `ppoll` (a high-resolution timeout, woken early by readable descriptors) until
//! [`SPIN`] before the deadline and spins for the rest.

use std::os::fd::RawFd;
use tcplab_core::{Dur, Time};

/// The last stretch before a deadline is spent spinning rather than sleeping.
pub const SPIN: Dur = Dur::from_micros(50);
/// Longest sleep without a deadline (bounds the delay to notice a stop request).
const IDLE: Dur = Dur::from_millis(100);

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin_ns: u64,
}

#[allow(clippy::disallowed_methods)] // this module owns the real clock
fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Clock {
    /// Time 0 is now. Also sets this thread's timer slack to 1 ns (best effort).
    pub fn start() -> Self {
        // SAFETY: prctl with an integer argument.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
        Clock {
            origin_ns: monotonic_ns(),
        }
    }

    /// Time 0 is `CLOCK_MONOTONIC` = `origin_ns` (another process's origin, so that the
    /// endpoints and the emulator share one time axis; may lie in the future: times before
    /// it read as 0). Sets the timer slack as [`Clock::start`] does.
    pub fn with_origin(origin_ns: u64) -> Self {
        let mut c = Self::start();
        c.origin_ns = origin_ns;
        c
    }

    /// `CLOCK_MONOTONIC` now, in ns (for choosing a shared origin).
    pub fn monotonic_now_ns() -> u64 {
        monotonic_ns()
    }

    /// `CLOCK_MONOTONIC` at time 0, in ns.
    pub fn origin_monotonic_ns(&self) -> u64 {
        self.origin_ns
    }

    pub fn now(&self) -> Time {
        Time::from_nanos(monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// Waits until `deadline` (None: until something is readable or [`IDLE`] passed) or
    /// until one of `fds` is readable, whichever comes first. Returns the time read last.
    pub fn wait(&self, deadline: Option<Time>, fds: &[RawFd]) -> Time {
        self.wait_slept(deadline, fds).0
    }

    /// [`Clock::wait`], also saying how long the thread slept (in `ppoll`, off the CPU).
    pub fn wait_slept(&self, deadline: Option<Time>, fds: &[RawFd]) -> (Time, Dur) {
        let mut pfds: Vec<libc::pollfd> = fds
            .iter()
            .map(|&fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        let now = self.now();
        let until = deadline.unwrap_or(now + IDLE);
        if until <= now {
            return (now, Dur::ZERO);
        }
        let left = until - now;
        let mut slept = Dur::ZERO;
        if left > SPIN {
            let n = sleep(&mut pfds, left - SPIN);
            let t = self.now();
            slept = t.saturating_since(now);
            if n != 0 || deadline.is_none() {
                return (t, slept); // readable, interrupted by a signal, or idle
            }
        }
        loop {
            let t = self.now();
            if t >= until {
                return (t, slept);
            }
            std::hint::spin_loop();
        }
    }

    /// Sleeps for `d` (off the CPU, whatever is readable); returns the time after.
    pub fn pause(&self, d: Dur) -> Time {
        sleep(&mut [], d);
        self.now()
    }
}

/// `ppoll` on `pfds` for at most `d`: the number of ready descriptors (0: the time passed).
fn sleep(pfds: &mut [libc::pollfd], d: Dur) -> libc::c_int {
    let ns = d.as_nanos();
    let ts = libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: pfds is a valid array of pollfd (possibly empty); ts a valid timespec.
    unsafe {
        libc::ppoll(
            pfds.as_mut_ptr(),
            pfds.len() as libc::nfds_t,
            &ts,
            std::ptr::null(),
        )
    }
}
