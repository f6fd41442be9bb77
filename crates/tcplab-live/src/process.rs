//! Process settings of the live binaries. How they stop: SIGTERM or SIGINT sets [`STOP`]
//! (their loops wait at most 100 ms, so they notice it promptly, then write what they
//! recorded), and the death of the parent process sends SIGTERM (`PR_SET_PDEATHSIG`), so
//! nothing outlives its run; a binary whose owner (`$TCPLAB_OWNER_PID`, set by the Python
//! testbed) died before that was set exits at once. Their scheduling: [`realtime`].

use std::sync::atomic::{AtomicBool, Ordering};

pub static STOP: AtomicBool = AtomicBool::new(false);

/// The environment variable naming the process that started this one (its owner).
const OWNER_ENV: &str = "TCPLAB_OWNER_PID";

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// Installs the handlers (call first thing in `main`); exits (status 1) when the process's
/// owner is already gone.
pub fn install() {
    // SAFETY: plain libc calls with valid arguments; the handler only stores an atomic.
    unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGTERM as libc::c_ulong,
            0,
            0,
            0,
        );
        for s in [libc::SIGTERM, libc::SIGINT] {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigaction(s, &sa, std::ptr::null_mut());
        }
    }
    // names this process's parent only: not passed on to anything it starts
    let owner = std::env::var(OWNER_ENV).ok();
    std::env::remove_var(OWNER_ENV);
    // SAFETY: getppid has no preconditions.
    let parent = unsafe { libc::getppid() };
    if let Some(o) = owner.and_then(|o| o.parse::<libc::pid_t>().ok()) {
        if o != parent {
            eprintln!("the owning process {o} is gone: not starting");
            std::process::exit(1);
        }
    }
}

/// SCHED_FIFO (priority 10) when `on`: `SCHED_FIFO`, `refused` or `off`, as the emulator's
/// stats say it.
pub fn realtime(on: bool) -> &'static str {
    if !on {
        return "off";
    }
    let p = libc::sched_param { sched_priority: 10 };
    // SAFETY: a valid sched_param for this process.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0 {
        "SCHED_FIFO"
    } else {
        "refused"
    }
}

/// CPU time this process used so far (user + system), ns.
pub fn cpu_ns() -> u64 {
    // SAFETY: rusage is plain data, filled by the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid rusage to fill.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let ns = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1_000;
    ns(ru.ru_utime) + ns(ru.ru_stime)
}
