//! What both transport endpoints share: the clock at the framing's resolution, the fact
//! log (the simulator's recorded-fact format, [`tcplab_sim::instruments::record`], written
//! as it goes), the timer-lateness histogram, and files written whole at the end.

use crate::clock::Clock;
use crate::histogram::Histogram;
use serde_json::{json, Value};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use tcplab_core::Time;
use tcplab_sim::instruments::fact::Fact;
use tcplab_sim::instruments::record::write_jsonl;

/// Facts kept in memory before they are written.
const FACT_BATCH: usize = 4096;

/// The real clock read at `quantum_ns` resolution (1 ns, or 1 µs for the ETH framing's
/// 32-bit µs timestamps).
pub struct EndpointClock {
    pub clock: Clock,
    quantum_ns: u64,
}

impl EndpointClock {
    pub fn new(origin_ns: Option<u64>, quantum_ns: u64) -> Self {
        let clock = match origin_ns {
            Some(o) => Clock::with_origin(o),
            None => Clock::start(),
        };
        EndpointClock {
            clock,
            quantum_ns: quantum_ns.max(1),
        }
    }

    /// Sleeps until model time 0 (the shared origin may lie a moment ahead), so that the
    /// first time read is the origin or later.
    pub fn wait_for_origin(&self) {
        let ahead = self
            .clock
            .origin_monotonic_ns()
            .saturating_sub(Clock::monotonic_now_ns());
        std::thread::sleep(std::time::Duration::from_nanos(ahead));
        while Clock::monotonic_now_ns() < self.clock.origin_monotonic_ns() {
            std::hint::spin_loop();
        }
    }

    pub fn now(&self) -> Time {
        let t = self.clock.now().as_nanos();
        Time::from_nanos(t - t % self.quantum_ns)
    }
}

/// Facts as JSON lines, in batches.
pub struct FactLog {
    out: BufWriter<File>,
    batch: Vec<Fact>,
    pub count: u64,
}

impl FactLog {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(FactLog {
            out: BufWriter::new(File::create(path)?),
            batch: Vec::with_capacity(FACT_BATCH),
            count: 0,
        })
    }

    pub fn push(&mut self, f: Fact) -> std::io::Result<()> {
        self.batch.push(f);
        self.count += 1;
        if self.batch.len() >= FACT_BATCH {
            self.flush()?;
        }
        Ok(())
    }

    pub fn flush(&mut self) -> std::io::Result<()> {
        write_jsonl(&self.batch, &mut self.out)?;
        self.batch.clear();
        self.out.flush()
    }
}

/// Lateness percentiles of a histogram, as the emulator's stats give them.
pub fn lateness_json(h: &Histogram) -> Value {
    json!({
        "count": h.count(),
        "p50": h.quantile(0.5),
        "p99": h.quantile(0.99),
        "max": h.max(),
        "mean": h.mean(),
    })
}

/// Writes `text` to `dir/name` through a temporary name, so no half-written file is left.
pub fn write_whole(dir: &Path, name: &str, text: &str) -> std::io::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, dir.join(name))
}

/// Tells the starting process that the socket is bound (`ready` on stdout).
pub fn ready() {
    println!("ready");
    let _ = std::io::stdout().flush();
}
