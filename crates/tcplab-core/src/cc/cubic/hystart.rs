//! HyStart: leaving slow start before the first loss (Ha & Rhee, "Taming the elephants",
//! 2011), as Linux 6.x implements it in net/ipv4/tcp_cubic.c (hystart_update,
//! bictcp_hystart_reset, cubictcp_acked).
//!
//! Rounds: a round ends when snd_una passes the snd_nxt recorded at its start (tracked at
//! every window size). Once cwnd is at least `hystart_low_window` (16) segments, every ACK
//! with an RTT sample checks two exit conditions; the first that holds ends slow start (the
//! caller sets ssthresh = cwnd):
//! - ACK train: ACKs arriving at most 2 ms apart (hystart_ack_delta_us) since the round began
//!   have spanned more than delay_min / 2.
//! - Delay increase: the smallest RTT of the round, after its first 8 samples
//!   (HYSTART_MIN_SAMPLES), exceeds delay_min + clamp(delay_min / 8, 4 ms, 16 ms).
//!
//! Simplified: Linux adds hystart_ack_delay (up to 1 ms for GSO/TSO aggregation) to the
//! ACK-train threshold; tcplab has no segmentation offload, so it adds nothing. Once found,
//! HyStart stays off until a timeout (Linux resets it in TCP_CA_Loss).

use crate::{Dur, Seq, Time};

/// cwnd (segments) below which HyStart does nothing (Linux hystart_low_window).
pub const LOW_WINDOW: u64 = 16;
/// RTT samples per round before the delay test (Linux HYSTART_MIN_SAMPLES).
pub const MIN_SAMPLES: u32 = 8;
/// ACKs further apart than this break an ACK train (Linux hystart_ack_delta_us).
pub const ACK_DELTA: Dur = Dur::from_millis(2);
/// Bounds of the delay-increase threshold (Linux HYSTART_DELAY_MIN/MAX).
pub const DELAY_MIN: Dur = Dur::from_millis(4);
pub const DELAY_MAX: Dur = Dur::from_millis(16);

/// Which test ended slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Exit {
    AckTrain,
    Delay,
}

#[derive(Clone, Debug, Default)]
pub struct HyStart {
    /// An exit was found (Linux ca->found); nothing more until `restart`.
    found: Option<Exit>,
    round_start: Time,
    last_ack: Time,
    /// snd_nxt when the round began.
    end_seq: Seq,
    /// Smallest RTT of the round.
    curr_rtt: Option<Dur>,
    samples: u32,
}

impl HyStart {
    /// Starts over after a timeout (bictcp_reset + bictcp_hystart_reset in TCP_CA_Loss): the
    /// next ACK begins a round.
    pub fn restart(&mut self) {
        *self = HyStart::default();
    }

    fn new_round(&mut self, now: Time, snd_nxt: Seq) {
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = snd_nxt;
        self.curr_rtt = None;
        self.samples = 0;
    }

    pub fn found(&self) -> Option<Exit> {
        self.found
    }

    /// An ACK in slow start with RTT sample `delay`, `delay_min` the smallest RTT seen,
    /// `cwnd` in segments. Returns the exit condition when this ACK finds one (None once an
    /// exit was found: see `found`).
    pub fn on_ack(
        &mut self,
        now: Time,
        delay: Dur,
        delay_min: Dur,
        cwnd: u64,
        snd_una: Seq,
        snd_nxt: Seq,
    ) -> Option<Exit> {
        if self.found.is_some() {
            return None;
        }
        // Rounds are tracked whatever the window (Linux 6.12, "tcp_cubic: fix incorrect
        // HyStart round start detection"); the tests wait for the low window.
        if snd_una > self.end_seq {
            self.new_round(now, snd_nxt);
        }
        if cwnd < LOW_WINDOW {
            return None;
        }
        let delay = delay.max(Dur::from_nanos(1));
        if now.saturating_since(self.last_ack) <= ACK_DELTA {
            self.last_ack = now;
            if now.saturating_since(self.round_start) > delay_min / 2 {
                self.found = Some(Exit::AckTrain);
            }
        }
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.samples < MIN_SAMPLES {
            self.samples += 1;
        } else if self.found.is_none() {
            let thresh = (delay_min / 8).clamp(DELAY_MIN, DELAY_MAX);
            if self.curr_rtt.is_some_and(|c| c > delay_min + thresh) {
                self.found = Some(Exit::Delay);
            }
        }
        self.found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: Dur = Dur::from_millis(40);

    /// ACKs `gap_us` apart from `t0_us`, the i-th acking segment `first + i`, each with RTT
    /// `rtt`; the round's snd_nxt is `nxt` segments. Returns the index of the ACK that found
    /// an exit, and which.
    #[allow(clippy::too_many_arguments)]
    fn acks(
        h: &mut HyStart,
        t0_us: u64,
        gap_us: u64,
        n: u64,
        first: u64,
        nxt: u64,
        rtt: Dur,
        cwnd: u64,
    ) -> Option<(u64, Exit)> {
        (0..n).find_map(|i| {
            let now = Time::from_nanos((t0_us + i * gap_us) * 1000);
            let una = Seq((first + i) * 1000);
            h.on_ack(now, rtt, MIN, cwnd, una, Seq(nxt * 1000))
                .map(|e| (i, e))
        })
    }

    #[test]
    fn ack_train_exit_after_half_the_minimum_rtt() {
        let mut h = HyStart::default();
        // ACKs 1 ms apart: the train spans more than 20 ms at the 22nd ACK (21 ms).
        assert_eq!(
            acks(&mut h, 0, 1000, 40, 1, 100, MIN, 20),
            Some((21, Exit::AckTrain))
        );
        assert_eq!(h.found(), Some(Exit::AckTrain));
        // Found: no more tests until a restart.
        let later = h.on_ack(Time::from_secs(1), MIN, MIN, 20, Seq(1 << 30), Seq(1 << 31));
        assert_eq!((later, h.found()), (None, Some(Exit::AckTrain)));
        h.restart();
        assert_eq!(h.found(), None);
    }

    #[test]
    fn acks_more_than_2_ms_apart_are_no_train() {
        let mut h = HyStart::default();
        assert_eq!(acks(&mut h, 0, 2100, 60, 1, 100, MIN, 20), None);
        // Exactly 2 ms apart still count (hystart_ack_delta_us is inclusive).
        let mut h = HyStart::default();
        assert_eq!(
            acks(&mut h, 0, 2000, 60, 1, 100, MIN, 20),
            Some((11, Exit::AckTrain))
        );
    }

    #[test]
    fn delay_exit_after_eight_samples_of_a_round_above_the_threshold() {
        let mut h = HyStart::default();
        // Round 1 (up to segment 20): RTT = delay_min, ACKs 3 ms apart (no train).
        assert_eq!(acks(&mut h, 0, 3000, 20, 1, 20, MIN, 20), None);
        // Round 2: threshold 40 + clamp(40/8, 4, 16) = 45 ms. 45 ms is not above it.
        assert_eq!(
            acks(
                &mut h,
                60_000,
                3000,
                20,
                21,
                40,
                MIN + DELAY_MIN + Dur::from_millis(1),
                20
            ),
            None
        );
        let mut h = HyStart::default();
        assert_eq!(acks(&mut h, 0, 3000, 20, 1, 20, MIN, 20), None);
        let rtt = Dur::from_micros(45_001);
        // The first 8 samples of the round are only collected; the 9th tests.
        assert_eq!(
            acks(&mut h, 60_000, 3000, 20, 21, 40, rtt, 20),
            Some((8, Exit::Delay))
        );
    }

    #[test]
    fn delay_threshold_is_clamped_to_4_and_16_ms() {
        for (min, below, above) in [(10, 14, 15), (200, 216, 217)] {
            for (rtt, exit) in [(below, None), (above, Some((8, Exit::Delay)))] {
                let mut h = HyStart::default();
                let min = Dur::from_millis(min);
                let found = (0..20).find_map(|i| {
                    let now = Time::from_nanos(i * 3_000_000);
                    h.on_ack(now, Dur::from_millis(rtt), min, 20, Seq(i + 1), Seq(1000))
                        .map(|e| (i, e))
                });
                assert_eq!(found, exit, "delay_min {min}, rtt {rtt} ms");
            }
        }
    }

    #[test]
    fn nothing_below_the_low_window_but_rounds_still_start() {
        let mut h = HyStart::default();
        assert_eq!(
            acks(
                &mut h,
                0,
                1000,
                60,
                1,
                100,
                Dur::from_secs(1),
                LOW_WINDOW - 1
            ),
            None
        );
        // Rounds are tracked below the low window too: round 1 begins at the first ACK
        // (cwnd 15, snd_nxt = 20 segments) and ends when snd_una passes 20, though cwnd
        // reached 16 at segment 16. Round 2's delays are tested on their own: the 9th
        // sample of 50 ms exits. (Had round 1 restarted at segment 16 with snd_nxt = 40,
        // its 40 ms samples would have kept the round minimum low to segment 40.)
        let mut h = HyStart::default();
        let rtt = Dur::from_millis(50);
        assert_eq!(acks(&mut h, 0, 3000, 15, 1, 20, MIN, LOW_WINDOW - 1), None);
        assert_eq!(acks(&mut h, 45_000, 3000, 5, 16, 40, MIN, LOW_WINDOW), None);
        assert_eq!(
            acks(&mut h, 60_000, 3000, 15, 21, 40, rtt, LOW_WINDOW),
            Some((8, Exit::Delay))
        );
    }
}
