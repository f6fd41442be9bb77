//! Synthetic ACK samples and congestion events for the controllers' unit tests.

use super::{AckSample, CcContext, CongestionEvent, CongestionKind, Growth};
use crate::ack::AckFacts;
use crate::{Dur, Seq, Time};

pub const MSS: u32 = 1000;

pub fn ctx(growth: Growth) -> CcContext {
    CcContext {
        mss: MSS,
        initial_cwnd: 2 * MSS as u64,
        initial_ssthresh: u64::MAX,
        growth,
        seed: 0,
    }
}

/// Builds an `AckSample`: by default one MSS newly acknowledged, nothing else known.
#[derive(Clone, Copy, Debug)]
pub struct AckBuilder(AckSample);

impl AckBuilder {
    pub fn at(now: Time) -> Self {
        AckBuilder(AckSample {
            facts: AckFacts {
                now,
                mss: MSS,
                acked_bytes: MSS as u64,
                sacked_bytes: 0,
                is_duplicate: false,
                srtt: None,
                min_rtt: None,
                snd_una: Seq(0),
            },
            rtt: None,
            snd_nxt: Seq(0),
            in_flight: 0,
            prior_in_flight: 0,
            next_departure: now,
            delivered: 0,
            in_recovery: false,
            newly_lost: 0,
            rate: None,
        })
    }
    pub fn at_ms(ms: u64) -> Self {
        Self::at(Time::from_millis(ms))
    }
    pub fn at_us(us: u64) -> Self {
        Self::at(Time::from_micros(us))
    }
    pub fn acked(mut self, bytes: u64) -> Self {
        self.0.facts.acked_bytes = bytes;
        self
    }
    /// A duplicate ACK: nothing newly acknowledged.
    pub fn dup(mut self) -> Self {
        self.0.facts.acked_bytes = 0;
        self.0.facts.is_duplicate = true;
        self
    }
    /// Sets this ACK's RTT sample, and srtt and min_rtt to the same value.
    pub fn rtt(mut self, rtt: Dur) -> Self {
        self.0.rtt = Some(rtt);
        self.0.facts.srtt = Some(rtt);
        self.0.facts.min_rtt = Some(rtt);
        self
    }
    pub fn rtt_ms(self, ms: u64) -> Self {
        self.rtt(Dur::from_millis(ms))
    }
    pub fn no_rtt(mut self) -> Self {
        self.0.rtt = None;
        self
    }
    pub fn srtt(mut self, d: Dur) -> Self {
        self.0.facts.srtt = Some(d);
        self
    }
    pub fn min_rtt(mut self, d: Dur) -> Self {
        self.0.facts.min_rtt = Some(d);
        self
    }
    pub fn seq(mut self, una: u64, nxt: u64) -> Self {
        self.0.facts.snd_una = Seq(una);
        self.0.snd_nxt = Seq(nxt);
        self
    }
    pub fn delivered(mut self, bytes: u64) -> Self {
        self.0.delivered = bytes;
        self
    }
    pub fn in_flight(mut self, bytes: u64) -> Self {
        self.0.in_flight = bytes;
        self
    }
    /// Bytes in flight before this ACK (by default 0).
    pub fn prior_in_flight(mut self, bytes: u64) -> Self {
        self.0.prior_in_flight = bytes;
        self
    }
    /// The sender's next segment may leave no earlier than `at` (by default now).
    pub fn next_departure(mut self, at: Time) -> Self {
        self.0.next_departure = at;
        self
    }
    /// The ACK came in recovery, and the strategy marked `lost` bytes lost while taking it.
    pub fn recovery(mut self, in_recovery: bool, lost: u64) -> Self {
        self.0.in_recovery = in_recovery;
        self.0.newly_lost = lost;
        self
    }
    pub fn rate(mut self, rate: crate::rate::RateSample) -> Self {
        self.0.rate = Some(rate);
        self
    }
    pub fn build(self) -> AckSample {
        self.0
    }
}

pub fn event(kind: CongestionKind, now: Time) -> CongestionEvent {
    CongestionEvent {
        now,
        kind,
        mss: MSS,
        flight_size: 0,
        latest_rtt: None,
        min_rtt: None,
    }
}
