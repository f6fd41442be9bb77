//! What both transport endpoints share: the clock at the framing's resolution, the fact
//! log (the simulator's recorded-fact format, [`tcplab_sim::instruments::record`], written
//! as it goes), the timer-lateness histogram, and files written whole at the end.

use crate::clock::Clock;
use crate::histogram::Histogram;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use tcplab_core::{DataSegment, LogRecord, LossResponse, Sender, Time, TxKind};
use tcplab_sim::instruments::fact::Fact;
use tcplab_sim::instruments::record::write_jsonl;
use tcplab_sim::results::SenderColumns;

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

/// Writes `value` as pretty JSON (and a newline) to `dir/name`, whole ([`write_whole`]).
pub fn write_json(dir: &Path, name: &str, value: &Value) -> Result<(), String> {
    let text = serde_json::to_string_pretty(value).expect("json") + "\n";
    write_whole(dir, name, &text).map_err(|e| e.to_string())
}

/// Tells the starting process that the socket is bound (`ready` on stdout).
pub fn ready() {
    println!("ready");
    let _ = std::io::stdout().flush();
}

/// The header of a sender's `series.csv`.
pub const SERIES_HEADER: &str =
    "t_ns,cwnd,ssthresh,srtt_ns,rto_ns,in_flight,snd_una,snd_nxt,in_recovery,bytes_sent\n";

/// Appends `sender`'s row at `t` to a `series.csv`.
pub fn series_row(series: &mut String, t: Time, sender: &Sender) {
    let s = sender.snapshot();
    let _ = writeln!(
        series,
        "{},{},{},{},{},{},{},{},{},{}",
        t.as_nanos(),
        s.cwnd,
        s.ssthresh.min(i64::MAX as u64),
        s.srtt.map_or(String::new(), |d| d.as_nanos().to_string()),
        s.rto.as_nanos(),
        s.in_flight,
        s.snd_una.0,
        s.snd_nxt.0,
        s.in_recovery as u8,
        sender.counters().bytes_sent
    );
}

/// A sender's figures in its `summary.json`: bytes acknowledged, the simulator's
/// throughput (those bytes over `span_ns`), goodput, and the `flows` columns its counters
/// give (`tcplab_sim::results::SenderColumns`, as simulated), their names listed under
/// `flow_columns` so that the flows row takes exactly these.
pub fn sender_figures(sender: &Sender, span_ns: u64) -> Value {
    let c = sender.counters();
    let acked = sender.snd_una().0;
    let mut columns = serde_json::to_value(SenderColumns::of(c)).unwrap_or_default();
    merge(
        &mut columns,
        json!({ "goodput": if c.bytes_sent > 0 { acked as f64 / c.bytes_sent as f64 } else { 0.0 } }),
    );
    let names: Vec<String> = columns
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    let mut out = json!({
        "bytes_acked": acked,
        "throughput_bps": acked as f64 * 8e9 / span_ns.max(1) as f64,
        "flow_columns": names,
    });
    merge(&mut out, columns);
    out
}

/// Adds the fields of `from` (an object) to `into` (an object).
pub fn merge(into: &mut Value, from: Value) {
    if let (Value::Object(a), Value::Object(b)) = (into, from) {
        a.extend(b);
    }
}

/// `events.csv`'s header: the core's event log (the simulator's `events` table: window
/// changes with their reason, recovery entries and exits, timeouts, ECN responses, undos),
/// time on the flow's clock.
pub const EVENTS_HEADER: &str = "time_ns,event,reason,cwnd,ssthresh,seq,label,value\n";

/// `segments.csv`'s header: each data transmission (the simulator's `segments` table), time
/// on the flow's clock.
pub const SEGMENTS_HEADER: &str = "time_ns,seq,len,retransmission\n";

/// The simulator's sender facts of flow `flow`, as an endpoint records them, and what the
/// scenario traces of the sender: the core's event log as `events.csv`, its transmissions as
/// `segments.csv`.
pub struct SenderFacts {
    pub log: FactLog,
    flow: u32,
    una: u64,
    loss_buf: Vec<LossResponse>,
    events: Option<BufWriter<File>>,
    event_buf: Vec<LogRecord>,
    segments: Option<BufWriter<File>>,
}

fn csv_log(path: Option<&Path>, header: &str) -> std::io::Result<Option<BufWriter<File>>> {
    let Some(p) = path else { return Ok(None) };
    let mut w = BufWriter::new(File::create(p)?);
    w.write_all(header.as_bytes())?;
    Ok(Some(w))
}

impl SenderFacts {
    /// Facts into `log`; the event log into `events` and the transmissions into `segments`
    /// (paths) when given.
    pub fn new(
        log: FactLog,
        flow: u32,
        events: Option<&Path>,
        segments: Option<&Path>,
    ) -> std::io::Result<Self> {
        Ok(SenderFacts {
            log,
            flow,
            una: 0,
            loss_buf: Vec::new(),
            events: csv_log(events, EVENTS_HEADER)?,
            event_buf: Vec::new(),
            segments: csv_log(segments, SEGMENTS_HEADER)?,
        })
    }

    /// After an interaction with `sender`: its loss responses, then its cumulative ACK when
    /// it moved, and its event log.
    pub fn after(&mut self, sender: &mut Sender) -> std::io::Result<()> {
        if let Some(w) = self.events.as_mut() {
            // On from the first interaction: the sender of a real-TCP connection is built
            // when the handshake completes, and logs nothing before its first ACK.
            sender.set_logging(true);
            sender.drain_log(&mut self.event_buf);
            for r in self.event_buf.drain(..) {
                writeln!(
                    w,
                    "{},{},{},{},{},{},{},{}",
                    r.time.as_nanos(),
                    r.event.name(),
                    r.event.reason(),
                    r.cwnd,
                    r.ssthresh,
                    r.seq.0,
                    r.label,
                    r.value
                )?;
            }
        }
        sender.drain_loss_responses(&mut self.loss_buf);
        let snd_nxt = sender.snd_nxt().0;
        for response in self.loss_buf.drain(..) {
            self.log.push(Fact::LossResponse {
                flow: self.flow,
                response,
                snd_nxt,
            })?;
        }
        let una = sender.snd_una().0;
        if una != self.una {
            self.una = una;
            self.log.push(Fact::Acked {
                flow: self.flow,
                una,
            })?;
        }
        Ok(())
    }

    /// Writes out what is buffered: the facts and the logs.
    pub fn flush(&mut self) -> std::io::Result<()> {
        self.log.flush()?;
        for w in [self.events.as_mut(), self.segments.as_mut()]
            .into_iter()
            .flatten()
        {
            w.flush()?;
        }
        Ok(())
    }

    /// A data segment sent at `now`, with what it was.
    pub fn transmit(&mut self, now: Time, seg: &DataSegment, kind: TxKind) -> std::io::Result<()> {
        if let Some(w) = self.segments.as_mut() {
            let (t, seq, len) = (now.as_nanos(), seg.seq.0, seg.len);
            writeln!(w, "{t},{seq},{len},{}", seg.retransmission)?;
        }
        self.log.push(Fact::Transmit {
            flow: self.flow,
            seq: seg.seq.0,
            retransmission: seg.retransmission,
            kind,
        })
    }
}
