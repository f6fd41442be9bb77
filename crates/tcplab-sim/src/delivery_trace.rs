//! Trace-driven link capacity in Mahimahi's format (`mm-link`), as a sans-IO component: given
//! a time, the next delivery opportunity. No clock, no socket: the simulator's link asks it
//! for the delivery time of each packet, and a live emulator can ask it the same way.
//!
//! # The format
//! One delivery opportunity per line: an integer number of milliseconds since the link
//! started, nondecreasing; several equal lines are several opportunities in that
//! millisecond. The trace repeats with a period equal to its last timestamp (which must be
//! > 0): opportunity `j` is at `ms[j % n] + (j / n) * period` ms.
//!
//! # Semantics (Mahimahi's `LinkQueue::rationalize`, src/frontend/link_queue.cc)
//! - Each opportunity can deliver [`OPPORTUNITY_BYTES`] bytes. The packet at the head of the
//!   queue takes as many of them as it still needs; a packet bigger than what is left of an
//!   opportunity continues in the next one, and what a finished packet leaves of an
//!   opportunity goes to the next packet waiting (several small packets share one
//!   opportunity). A packet leaves the link at the time of the opportunity that carries its
//!   last byte.
//! - An opportunity only serves packets that arrived strictly before it: Mahimahi brings the
//!   link up to date (`rationalize(now)`) before it enqueues a packet arriving at `now`.
//! - Bytes of an opportunity that no waiting packet uses are lost (not saved for later).
//! - Mahimahi's opportunity is 1504 bytes (its largest TUN payload); here it is an MTU of
//!   1500 bytes, so a trace with one line per millisecond is exactly 12 Mb/s of 1500-byte
//!   packets.
//!
//! The queue in front (its buffer and discipline) is the link's, as on any link; Mahimahi's
//! default is an infinite drop-tail queue.

use crate::scenario::LinkDir;
use std::fmt;
use std::io::Read;
use std::path::Path;
use tcplab_core::Time;

/// Bytes one delivery opportunity can carry (one 1500-byte MTU).
pub const OPPORTUNITY_BYTES: u32 = 1500;
/// Largest trace file read (bytes).
pub const MAX_FILE_BYTES: u64 = 32 << 20;
/// Most opportunities (lines) in a trace.
pub const MAX_LINES: usize = 4_000_000;
/// Largest timestamp (ms): about 11.6 days, so that times stay far from overflow.
pub const MAX_MS: u64 = 1_000_000_000;

const NS_PER_MS: u64 = 1_000_000;

/// Why a trace cannot be used: one line (the caller prefixes the file's name).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceError(pub String);

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for TraceError {}

/// A checked trace: delivery opportunities in ms, nondecreasing, the last one > 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeliveryTrace {
    ms: Vec<u64>,
}

impl DeliveryTrace {
    /// Checks a list of opportunities (what the scenario JSON carries).
    pub fn from_ms(ms: Vec<u64>) -> Result<Self, TraceError> {
        if ms.is_empty() {
            return Err(TraceError(
                "has no delivery opportunities (an empty trace)".into(),
            ));
        }
        if ms.len() > MAX_LINES {
            return Err(TraceError(format!(
                "has {} opportunities: at most {MAX_LINES} allowed",
                ms.len()
            )));
        }
        for (i, w) in ms.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(TraceError(format!(
                    "opportunity {} = {} ms: timestamps must be nondecreasing (the one before is {} ms)",
                    i + 1,
                    w[1],
                    w[0]
                )));
            }
        }
        let last = *ms.last().expect("not empty");
        if last == 0 {
            return Err(TraceError(
                "lasts 0 ms: the last timestamp (the period it repeats with) must be > 0".into(),
            ));
        }
        if last > MAX_MS {
            return Err(TraceError(format!(
                "last timestamp {last} ms: at most {MAX_MS} ms allowed"
            )));
        }
        Ok(DeliveryTrace { ms })
    }

    /// Parses Mahimahi's text format: one whole number of ms per line (surrounding
    /// whitespace and a final newline allowed; nothing else, as in `mm-link`). Errors name
    /// the line and its value.
    pub fn parse(text: &str) -> Result<Self, TraceError> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let n = i + 1;
            if ms.len() == MAX_LINES {
                return Err(TraceError(format!(
                    "line {n}: more than {MAX_LINES} opportunities (lines)"
                )));
            }
            let word = line.trim();
            let v: u64 = match word.parse() {
                Ok(v) if v <= MAX_MS => v,
                Ok(v) => {
                    return Err(TraceError(format!(
                        "line {n}: {v} ms is past the largest timestamp allowed ({MAX_MS} ms)"
                    )))
                }
                Err(_) => {
                    let shown: String = word.chars().take(40).collect();
                    let what = if word.is_empty() {
                        "an empty line".to_string()
                    } else {
                        format!("{shown:?}")
                    };
                    return Err(TraceError(format!(
                        "line {n}: {what} is not a whole number of milliseconds"
                    )));
                }
            };
            if let Some(&before) = ms.last() {
                if v < before {
                    return Err(TraceError(format!(
                        "line {n}: {v} ms is earlier than the line before ({before} ms); timestamps must be nondecreasing"
                    )));
                }
            }
            ms.push(v);
        }
        if ms.is_empty() {
            return Err(TraceError(
                "has no delivery opportunities (an empty trace)".into(),
            ));
        }
        Self::from_ms(ms)
    }

    /// Reads and parses a trace file, reading at most [`MAX_FILE_BYTES`]. Errors are one
    /// line for the caller to prefix with the file's name as the user gave it.
    pub fn read(path: &Path) -> Result<Self, TraceError> {
        let file =
            std::fs::File::open(path).map_err(|e| TraceError(format!("cannot be read ({e})")))?;
        let mut bytes = Vec::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| TraceError(format!("cannot be read ({e})")))?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(TraceError(format!(
                "is larger than {} MiB, the most a trace may be",
                MAX_FILE_BYTES >> 20
            )));
        }
        let text = std::str::from_utf8(&bytes).map_err(|e| {
            let line = bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1;
            TraceError(format!("line {line}: not text (invalid UTF-8)"))
        })?;
        Self::parse(text)
    }

    /// The opportunities in ms, as given.
    pub fn ms(&self) -> &[u64] {
        &self.ms
    }

    /// The period the trace repeats with (its last timestamp), in ms.
    pub fn period_ms(&self) -> u64 {
        *self.ms.last().expect("a checked trace is not empty")
    }

    /// The mean capacity in bit/s (opportunities of [`OPPORTUNITY_BYTES`] per period).
    pub fn mean_rate(&self) -> u64 {
        let bits = self.ms.len() as u128 * OPPORTUNITY_BYTES as u128 * 8 * 1000;
        let p = self.period_ms() as u128;
        ((bits + p / 2) / p) as u64
    }

    /// The time of opportunity `j` (0-based, counting the repetitions).
    pub fn time_of(&self, j: u64) -> Time {
        let n = self.ms.len() as u64;
        let ms = self.ms[(j % n) as usize] as u128 + (j / n) as u128 * self.period_ms() as u128;
        Time::from_nanos(u64::try_from(ms * NS_PER_MS as u128).unwrap_or(u64::MAX))
    }

    /// The first opportunity later than `t` (strictly).
    pub fn first_after(&self, t: Time) -> u64 {
        let n = self.ms.len() as u64;
        let period_ns = self.period_ms() as u128 * NS_PER_MS as u128;
        let t = t.as_nanos() as u128;
        let cycle = t / period_ns;
        let within = t - cycle * period_ns;
        // Opportunities of this cycle at or before `within` (ns) are past.
        let k = self
            .ms
            .partition_point(|&m| (m as u128 * NS_PER_MS as u128) <= within) as u64;
        (cycle as u64).saturating_mul(n).saturating_add(k)
    }
}

/// The problems of a link direction's trace (`p` is the direction's path): a trace
/// [`DeliveryTrace::from_ms`] refuses, a rate other than the trace's mean rate, a scheduled
/// rate change (a trace has no rate to change).
pub fn link_problems(p: &str, d: &LinkDir) -> Vec<String> {
    let Some(t) = &d.trace else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    match DeliveryTrace::from_ms(t.ms.clone()) {
        Err(e) => errs.push(format!("{p}.trace = {:?}: {e}", t.file)),
        Ok(trace) if trace.mean_rate() != d.rate => errs.push(format!(
            "{p}.rate = {}: expected the trace's mean rate {} bit/s (a trace link's rate is its trace's)",
            d.rate,
            trace.mean_rate()
        )),
        Ok(_) => {}
    }
    for (i, c) in d.schedule.iter().enumerate() {
        if let Some(rate) = c.rate {
            errs.push(format!(
                "{p}.schedule[{i}].rate = {rate}: a trace-driven link has no rate to change (its trace sets the capacity)"
            ));
        }
    }
    errs
}

/// Where a link stands in its trace: the next opportunity not yet used up and the bytes
/// left in it. Plain state; [`Deliveries::deliver`] moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deliveries {
    next: u64,
    left: u32,
}

impl Default for Deliveries {
    fn default() -> Self {
        Deliveries {
            next: 0,
            left: OPPORTUNITY_BYTES,
        }
    }
}

impl Deliveries {
    /// The time the packet of `size` bytes at the head of the queue, which arrived at
    /// `arrived`, is delivered: it uses what is left of the opportunities from the current
    /// one on that are later than `arrived` (those before are lost: nothing waited for
    /// them). Packets are delivered in the order they are asked for.
    pub fn deliver(&mut self, trace: &DeliveryTrace, arrived: Time, size: u32) -> Time {
        if trace.time_of(self.next) <= arrived {
            self.next = trace.first_after(arrived).max(self.next);
            self.left = OPPORTUNITY_BYTES;
        }
        let mut need = size;
        while need > self.left {
            need -= self.left;
            self.next += 1;
            self.left = OPPORTUNITY_BYTES;
        }
        self.left -= need;
        let at = trace.time_of(self.next);
        if self.left == 0 {
            self.next += 1;
            self.left = OPPORTUNITY_BYTES;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(ms: &[u64]) -> DeliveryTrace {
        DeliveryTrace::from_ms(ms.to_vec()).unwrap()
    }
    fn ms(t: Time) -> f64 {
        t.as_nanos() as f64 / 1e6
    }

    #[test]
    fn opportunities_repeat_with_the_last_timestamp_as_period() {
        let t = trace(&[1, 1, 4, 10]);
        let times: Vec<f64> = (0..9).map(|j| ms(t.time_of(j))).collect();
        assert_eq!(times, [1., 1., 4., 10., 11., 11., 14., 20., 21.]);
        assert_eq!(t.mean_rate(), 4 * 1500 * 8 * 100);
        // Mahimahi's wraparound: a first timestamp of 0 falls at the period boundary again.
        let z = trace(&[0, 5]);
        let times: Vec<f64> = (0..5).map(|j| ms(z.time_of(j))).collect();
        assert_eq!(times, [0., 5., 5., 10., 10.]);
    }

    #[test]
    fn first_after_is_strictly_later() {
        let t = trace(&[1, 1, 4, 10]);
        for probe in 0..40_000_000u64 {
            if probe % 250_000 != 0 && probe % 1_000_000 != 1 {
                continue;
            }
            let at = Time::from_nanos(probe);
            let j = t.first_after(at);
            assert!(t.time_of(j) > at, "{probe}");
            assert!(j == 0 || t.time_of(j - 1) <= at, "{probe}");
        }
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_two() {
        let t = trace(&[1, 2, 3, 4]);
        let mut d = Deliveries::default();
        let a = Time::ZERO;
        // 3 x 500 bytes fill the 1 ms opportunity.
        assert_eq!(ms(d.deliver(&t, a, 500)), 1.0);
        assert_eq!(ms(d.deliver(&t, a, 500)), 1.0);
        assert_eq!(ms(d.deliver(&t, a, 500)), 1.0);
        // 1000 + 1000: the second one ends in the 3 ms opportunity.
        assert_eq!(ms(d.deliver(&t, a, 1000)), 2.0);
        assert_eq!(ms(d.deliver(&t, a, 1000)), 3.0);
        // 1000 left at 3 ms, but a packet arriving at 3 ms cannot use it: 4 ms.
        assert_eq!(ms(d.deliver(&t, Time::from_millis(3), 100)), 4.0);
    }

    #[test]
    fn unused_opportunities_are_lost() {
        let t = trace(&[1, 2, 3, 4]);
        let mut d = Deliveries::default();
        assert_eq!(ms(d.deliver(&t, Time::ZERO, 100)), 1.0);
        // Arriving at 2.5 ms: the rest of 1 ms and all of 2 ms went unused.
        let at = Time::from_nanos(2_500_000);
        assert_eq!(ms(d.deliver(&t, at, 1500)), 3.0);
        // After a whole idle period (4 ms) the next packet uses the next cycle.
        assert_eq!(ms(d.deliver(&t, Time::from_millis(9), 1500)), 10.0);
    }

    #[test]
    fn malformed_text_is_refused_naming_the_line_and_value() {
        let err = |s: &str| DeliveryTrace::parse(s).unwrap_err().0;
        assert_eq!(err(""), "has no delivery opportunities (an empty trace)");
        assert_eq!(
            err("1\n2\nx3\n"),
            "line 3: \"x3\" is not a whole number of milliseconds"
        );
        assert_eq!(
            err("1\n\n2\n"),
            "line 2: an empty line is not a whole number of milliseconds"
        );
        assert_eq!(
            err("1\n-2\n"),
            "line 2: \"-2\" is not a whole number of milliseconds"
        );
        assert_eq!(
            err("1.5\n"),
            "line 1: \"1.5\" is not a whole number of milliseconds"
        );
        assert_eq!(
            err("5\n3\n"),
            "line 2: 3 ms is earlier than the line before (5 ms); timestamps must be nondecreasing"
        );
        assert_eq!(
            err("0\n0\n"),
            "lasts 0 ms: the last timestamp (the period it repeats with) must be > 0"
        );
        assert!(err("99999999999\n").starts_with("line 1: 99999999999 ms is past"));
        assert_eq!(DeliveryTrace::parse(" 1\r\n2 \n").unwrap().ms(), [1, 2]);
    }

    #[test]
    fn reading_is_bounded_and_names_the_file() {
        let dir = std::env::temp_dir().join(format!("tcplab-dt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("bad.up");
        std::fs::write(&p, "1\n2\nfoo\n").unwrap();
        let e = DeliveryTrace::read(&p).unwrap_err().0;
        assert_eq!(e, "line 3: \"foo\" is not a whole number of milliseconds");
        let e = DeliveryTrace::read(Path::new("/dev/zero")).unwrap_err().0;
        assert_eq!(e, "is larger than 32 MiB, the most a trace may be");
        let e = DeliveryTrace::read(&dir.join("missing")).unwrap_err().0;
        assert!(e.starts_with("cannot be read ("), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
