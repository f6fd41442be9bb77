//! CUBIC's window arithmetic as Linux computes it (net/ipv4/tcp_cubic.c, Linux 6.x), for
//! `flavor = "linux"` (the `linux` profile's): whole packets and a jiffies clock instead of
//! RFC 9438's real-valued segments and seconds.
//!
//! - **Reduction** (`cubictcp_recalc_ssthresh`): ssthresh = max(cwnd × 717 / 1024, 2)
//!   packets, rounded down (β = 717/1024 ≈ 0.7002); W_max with fast convergence =
//!   cwnd × (1024 + 717) / 2048, also rounded down.
//! - **Growth** (`bictcp_update`, `tcp_cong_avoid_ai`): at most once per jiffy (and when cwnd
//!   changed or HZ/32 passed), `cnt` = the packets to acknowledge per one-packet increase:
//!   cwnd / (W_cubic(t + delay_min) − cwnd), W_cubic in packets from the integer cube
//!   `(410 × (t − K)³) >> 40` with t in 2^-10 s; 100 × cwnd when at or above the curve; at
//!   most 20 before the first loss (`last_max_cwnd == 0`); the TCP-friendly estimate counts
//!   acknowledged packets in steps of `(cwnd × 15) >> 3`; never below 2 (1.5× per RTT).
//! - **delay_min** (`cubictcp_acked`): the smallest RTT sample in µs, samples taken in the
//!   first second of an epoch discarded ("right after fast recovery").
//! - **Timeout** (`cubictcp_state` in TCP_CA_Loss): `bictcp_reset`, so W_max = 0.
//!
//! Differences kept: the clock is HZ = 1000 (jiffies = ms; kernels built with HZ = 250 step
//! 4 ms); the cube root is exact (Linux's `cubic_root` is a table and one Newton step,
//! within about 0.2 %); `cubictcp_cwnd_event`'s shift of the epoch after an idle period is
//! not modelled (the sender is not application limited in the flows compared).

use crate::{Dur, Time};

/// Linux `beta` (BICTCP_BETA_SCALE = 1024 is one).
pub const BETA: u64 = 717;
const BETA_SCALE: u64 = 1024;
/// BICTCP_HZ: t is in 2^-10 s.
const BICTCP_HZ: u32 = 10;
/// `cube_rtt_scale` = bic_scale (41) × 10.
const CUBE_RTT_SCALE: u64 = 410;
/// `beta_scale` = 8 × (1024 + 717) / 3 / (1024 − 717), integer.
const BETA_SCALE_FRIENDLY: u64 = 8 * (BETA_SCALE + BETA) / 3 / (BETA_SCALE - BETA);
/// jiffies per second (CONFIG_HZ).
const HZ: u64 = 1000;

/// The state Linux keeps in `struct bictcp` for the window (HyStart's lives in `HyStart`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Bic {
    /// Packets acknowledged per one-packet increase.
    pub cnt: u64,
    /// W_max, packets (0: no loss since the start or the last timeout).
    pub last_max_cwnd: u64,
    last_cwnd: u64,
    last_time: u64,
    origin_point: u64,
    /// Time from the epoch's start to the origin point, 2^-10 s.
    k: u64,
    /// Smallest RTT sample, µs (0: none).
    pub delay_min_us: u64,
    /// Start of the current epoch, jiffies (None: no epoch; Linux 0).
    epoch_start: Option<u64>,
    ack_cnt: u64,
    tcp_cwnd: u64,
}

fn jiffies(t: Time) -> u64 {
    t.as_nanos() / (1_000_000_000 / HZ)
}

/// floor(cbrt(a)).
fn cube_root(a: u64) -> u64 {
    let mut x = (a as f64).cbrt() as u64;
    while x > 0 && x.saturating_mul(x).saturating_mul(x) > a {
        x -= 1;
    }
    while (x + 1).saturating_mul(x + 1).saturating_mul(x + 1) <= a {
        x += 1;
    }
    x
}

impl Bic {
    /// `bictcp_reset`: everything back to zero (at the start and at a timeout).
    pub fn reset(&mut self) {
        let delay_min_us = self.delay_min_us;
        *self = Bic {
            delay_min_us,
            ..Bic::default()
        };
    }

    /// `cubictcp_acked`: an RTT sample.
    pub fn on_rtt(&mut self, now: Time, rtt: Dur) {
        if self
            .epoch_start
            .is_some_and(|e| jiffies(now).saturating_sub(e) < HZ)
        {
            return; // discard delay samples right after fast recovery
        }
        let us = (rtt.as_nanos() / 1000).max(1);
        if self.delay_min_us == 0 || us < self.delay_min_us {
            self.delay_min_us = us;
        }
    }

    /// `cubictcp_recalc_ssthresh`: ssthresh in packets for a loss at `cwnd` packets.
    pub fn recalc_ssthresh(&mut self, cwnd: u64, fast_convergence: bool) -> u64 {
        self.epoch_start = None;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && fast_convergence {
            cwnd * (BETA_SCALE + BETA) / (2 * BETA_SCALE)
        } else {
            cwnd
        };
        (cwnd * BETA / BETA_SCALE).max(2)
    }

    /// `bictcp_update`: `acked` packets acknowledged at `cwnd` packets; returns `cnt`.
    pub fn update(&mut self, now: Time, cwnd: u64, acked: u64) -> u64 {
        let now_j = jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now_j.saturating_sub(self.last_time) <= HZ / 32 {
            return self.cnt;
        }
        if !(self.epoch_start.is_some() && now_j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = now_j;
            let start = *self.epoch_start.get_or_insert_with(|| {
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    // cube_factor = 2^(10 + 3 BICTCP_HZ) / cube_rtt_scale
                    let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)) / CUBE_RTT_SCALE;
                    self.k = cube_root(cube_factor * (self.last_max_cwnd - cwnd));
                    self.origin_point = self.last_max_cwnd;
                }
                now_j
            });
            // t = jiffies since the epoch + delay_min, in 2^-10 s
            let delay_j = self.delay_min_us * HZ / 1_000_000;
            let t = ((now_j - start + delay_j) << BICTCP_HZ) / HZ;
            let offs = t.abs_diff(self.k);
            let delta =
                ((CUBE_RTT_SCALE as u128 * (offs as u128).pow(3)) >> (10 + 3 * BICTCP_HZ)) as u64;
            let target = if t < self.k {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point + delta
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20; // increase cwnd 5 % per RTT
            }
        }
        // TCP-friendly region.
        let delta = (cwnd * BETA_SCALE_FRIENDLY) >> 3;
        if delta > 0 {
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
        }
        if self.tcp_cwnd > cwnd {
            let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
            self.cnt = self.cnt.min(max_cnt);
        }
        self.cnt = self.cnt.max(2);
        self.cnt
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_rounds_down_in_packets() {
        let mut b = Bic::default();
        // 14 packets: 14 * 717 / 1024 = 9.8 -> 9 (the simulation's real-valued 0.7 gave 9.8).
        assert_eq!(b.recalc_ssthresh(14, true), 9);
        assert_eq!(b.last_max_cwnd, 14, "first loss: W_max = cwnd");
        // Below the last W_max: fast convergence, 12 * 1741 / 2048 = 10.2 -> 10.
        assert_eq!(b.recalc_ssthresh(12, true), 8);
        assert_eq!(b.last_max_cwnd, 10);
        assert_eq!(b.recalc_ssthresh(2, true), 2, "never below 2");
        assert_eq!(BETA_SCALE_FRIENDLY, 15);
    }

    #[test]
    fn growth_follows_the_integer_cubic_curve() {
        let mut b = Bic {
            delay_min_us: 40_000,
            ..Bic::default()
        };
        b.recalc_ssthresh(100, true); // W_max 100
        let t0 = Time::from_secs(10);
        // At 70 packets (after the reduction) the curve is far below W_max: K =
        // cbrt(2^40 / 410 * 30) = 4316 (2^-10 s, 4.2 s; RFC 9438: cbrt(30 / 0.4) = 4.2 s).
        let cnt = b.update(t0, 70, 1);
        assert_eq!(b.k, cube_root((1u64 << 40) / 410 * 30));
        assert!((4300..4330).contains(&b.k), "{}", b.k);
        // t = 40 ms (delay_min) = 40 / 1000 * 1024 = 40 in 2^-10 s; the target just above
        // cwnd: cnt large but the TCP-friendly region caps nothing yet.
        assert!(cnt > 2);
        // At the origin point (t = K) the target equals W_max: one packet per 70 / 30 = 2.
        let at_k = t0 + Dur::from_millis(4316 * 1000 / 1024 - 40 + 1);
        let cnt = b.update(at_k, 70, 1);
        assert_eq!(cnt, 2, "cwnd / (W_max - cwnd) = 70 / 30, at least 2");
    }

    #[test]
    fn before_any_loss_growth_is_at_least_5_percent_per_rtt() {
        let mut b = Bic::default();
        let cnt = b.update(Time::from_secs(1), 50, 1);
        assert!(cnt <= 20, "cnt {cnt}");
    }

    #[test]
    fn samples_right_after_an_epoch_starts_are_discarded() {
        let mut b = Bic::default();
        b.on_rtt(Time::from_millis(10), Dur::from_millis(50));
        assert_eq!(b.delay_min_us, 50_000);
        b.update(Time::from_millis(100), 10, 1); // an epoch starts
        b.on_rtt(Time::from_millis(500), Dur::from_millis(30));
        assert_eq!(
            b.delay_min_us, 50_000,
            "within a second of the epoch's start"
        );
        b.on_rtt(Time::from_millis(1200), Dur::from_millis(30));
        assert_eq!(b.delay_min_us, 30_000);
    }

    #[test]
    fn cube_root_is_exact() {
        for a in [0u64, 1, 7, 8, 26, 27, 1 << 40, u64::MAX / 2] {
            let x = cube_root(a);
            assert!(
                x.pow(3) <= a && (x + 1).checked_pow(3).is_none_or(|c| c > a),
                "{a}"
            );
        }
    }
}
