//! Westwood+ bandwidth estimation from the ACK stream (Mascolo et al.; Linux tcp_westwood.c),
//! shared by `westwood` and `areno`.
//!
//! Delivered data is counted per ACK: a cumulative ACK counts the bytes it newly covers, a
//! duplicate ACK counts one MSS (a segment left the network even though it arrived out of
//! order), and a later cumulative ACK counts only what the duplicate ACKs before it have not
//! already counted. The count is turned into a rate once per interval of about one RTT (the
//! smoothed RTT, at least `min_interval`), and the samples are low-pass filtered with an EWMA:
//! `bwe <- (1 - gain) bwe + gain sample`, gain 1/8 in Westwood+.
//!
//! Differences from Linux, on purpose: Linux cascades two such filters (`bw_ns_est`, then
//! `bw_est`), which only slows convergence; and when the duplicate ACKs already credited at
//! least as much as a cumulative ACK covers, Linux counts one MSS for that ACK instead of none.

use super::{filter::Ewma, AckSample};
use crate::{Dur, Time};

#[derive(Clone, Debug, PartialEq)]
pub struct BandwidthEstimator {
    min_interval: Dur,
    /// Bytes credited to duplicate ACKs and not yet covered by a cumulative ACK.
    accounted: u64,
    /// Bytes delivered since `start`.
    bytes: u64,
    start: Option<Time>,
    filter: Ewma,
    samples: u64,
}

impl BandwidthEstimator {
    /// `gain`: weight of a new sample (Westwood+: 1/8). `min_interval`: shortest sampling
    /// interval (Linux: 50 ms, against ACK compression on short paths).
    pub fn new(gain: f64, min_interval: Dur) -> Self {
        BandwidthEstimator {
            min_interval,
            accounted: 0,
            bytes: 0,
            start: None,
            filter: Ewma::new(gain),
            samples: 0,
        }
    }

    /// Westwood+ defaults: gain 1/8, intervals of at least 50 ms.
    pub fn westwood_plus() -> Self {
        Self::new(0.125, Dur::from_millis(50))
    }

    /// Bytes one ACK reports delivered (see the module comment).
    fn delivered_by(&mut self, s: &AckSample) -> u64 {
        if s.is_duplicate {
            self.accounted += s.mss as u64;
            s.mss as u64
        } else if s.acked_bytes > 0 {
            let credited = self.accounted.min(s.acked_bytes);
            self.accounted -= credited;
            s.acked_bytes - credited
        } else {
            0
        }
    }

    /// Feeds every ACK (duplicates included).
    pub fn on_ack(&mut self, s: &AckSample) {
        let bytes = self.delivered_by(s);
        let Some(start) = self.start else {
            // The first ACK opens the first interval; what it acknowledges was delivered
            // before the interval began.
            self.start = Some(s.now);
            return;
        };
        self.bytes += bytes;
        let len = s.srtt.or(s.rtt).unwrap_or(Dur::ZERO).max(self.min_interval);
        let elapsed = s.now.saturating_since(start);
        if len > Dur::ZERO && elapsed >= len {
            let sample = self.bytes as f64 / elapsed.as_secs_f64();
            self.filter.update(sample);
            self.samples += 1;
            self.bytes = 0;
            self.start = Some(s.now);
        }
    }

    /// Filtered estimate in bytes per second, once one interval has closed.
    pub fn estimate(&self) -> Option<f64> {
        self.filter.get()
    }

    /// Filtered estimate in bits per second.
    pub fn bits_per_sec(&self) -> Option<f64> {
        self.estimate().map(|b| b * 8.0)
    }

    /// Intervals closed so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::AckBuilder;

    #[test]
    fn converges_to_a_constant_rate() {
        // 1460-byte segments acknowledged one per ms (11.68 Mb/s), RTT 40 ms, starting from
        // a burst that would mislead an unfiltered estimator.
        let mut e = BandwidthEstimator::westwood_plus();
        let mut t = 0u64;
        for _ in 0..20 {
            t += 10;
            e.on_ack(&AckBuilder::at_ms(t).acked(1460 * 30).rtt_ms(40).build());
        }
        for _ in 0..3000 {
            t += 1;
            e.on_ack(&AckBuilder::at_ms(t).acked(1460).rtt_ms(40).build());
        }
        let truth = 1460.0 * 1000.0;
        let est = e.estimate().unwrap();
        assert!(
            (est / truth - 1.0).abs() < 0.02,
            "estimate {est} vs {truth}"
        );
        assert!((e.bits_per_sec().unwrap() / 11.68e6 - 1.0).abs() < 0.02);
    }

    #[test]
    fn intervals_last_one_rtt_but_at_least_min_interval() {
        let mut e = BandwidthEstimator::new(1.0, Dur::from_millis(50));
        e.on_ack(&AckBuilder::at_ms(0).acked(1000).rtt_ms(10).build());
        for ms in 1..=49 {
            e.on_ack(&AckBuilder::at_ms(ms).acked(1000).rtt_ms(10).build());
        }
        assert_eq!(e.estimate(), None, "10 ms RTT, but 50 ms floor");
        e.on_ack(&AckBuilder::at_ms(50).acked(1000).rtt_ms(10).build());
        assert_eq!(e.estimate(), Some(1_000_000.0));
        assert_eq!(e.samples(), 1);
    }

    #[test]
    fn duplicate_acks_count_one_mss_and_are_not_counted_twice() {
        let mut e = BandwidthEstimator::new(1.0, Dur::ZERO);
        e.on_ack(&AckBuilder::at_ms(0).acked(1000).rtt_ms(100).build());
        // Three duplicate ACKs (3 MSS delivered out of order), then a cumulative ACK for
        // the retransmission and the three: 4 MSS newly covered, 1 not yet counted.
        for ms in [10, 20, 30] {
            e.on_ack(&AckBuilder::at_ms(ms).dup().rtt_ms(100).build());
        }
        e.on_ack(&AckBuilder::at_ms(100).acked(4000).rtt_ms(100).build());
        // 3000 + 1000 bytes in 100 ms.
        assert_eq!(e.estimate(), Some(40_000.0));
    }
}
