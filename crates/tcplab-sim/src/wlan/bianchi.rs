//! Bianchi's saturation-throughput model of the DCF (G. Bianchi, "Performance Analysis of
//! the IEEE 802.11 Distributed Coordination Function", IEEE JSAC 18(3), 2000), evaluated
//! with this crate's timing ([`super::phy`]): the analytical reference of the validation
//! tests and of docs/wlan.md.
//!
//! n saturated stations, W = CWmin + 1, m backoff stages (CWmax + 1 = 2^m W). The
//! transmission probability per slot tau and the conditional collision probability p solve
//!
//!   tau = 2 (1 - 2p) / ((1 - 2p)(W + 1) + p W (1 - (2p)^m)),   p = 1 - (1 - tau)^(n - 1)
//!
//! and the throughput is S = P_s P_tr E[P] / ((1 - P_tr) slot + P_tr P_s T_s +
//! P_tr (1 - P_s) T_c) with P_tr = 1 - (1 - tau)^n, P_s = n tau (1 - tau)^(n-1) / P_tr.
//! Here T_s = T_c = DATA + SIFS + ACK + DIFS (a failed exchange keeps the medium busy as
//! long as a successful one, see `phy`). The model has no retry limit and no channel errors.

use super::phy::Phy;
use super::spec::MacSpec;

/// Bianchi's solution for one configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Saturation {
    pub tau: f64,
    pub p: f64,
    /// Aggregate throughput of IP packets of `size` bytes, bit/s.
    pub throughput_bps: f64,
}

fn tau_of_p(p: f64, w: f64, m: i32) -> f64 {
    let p = if (p - 0.5).abs() < 1e-12 {
        0.5 + 1e-12
    } else {
        p
    };
    let a = 1.0 - 2.0 * p;
    2.0 * a / (a * (w + 1.0) + p * w * (1.0 - (2.0 * p).powi(m)))
}

/// Saturation throughput of `n` stations sending IP packets of `size` bytes.
pub fn saturation(n: u32, mac: &MacSpec, size: u32) -> Saturation {
    let phy = Phy::new(mac);
    let w = (mac.cw_min + 1) as f64;
    let m = (((mac.cw_max + 1) as f64 / w).log2().round()) as i32;
    let p_of = |tau: f64| 1.0 - (1.0 - tau).powi(n as i32 - 1);
    // g(tau) = tau - tau_of_p(p(tau)) increases with tau: bisection.
    let (mut lo, mut hi) = (1e-12, 1.0 - 1e-12);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid - tau_of_p(p_of(mid), w, m) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let tau = 0.5 * (lo + hi);
    let p = p_of(tau);
    let nf = n as f64;
    let p_tr = 1.0 - (1.0 - tau).powi(n as i32);
    let p_s = nf * tau * (1.0 - tau).powi(n as i32 - 1) / p_tr;
    let t_s = (phy.exchange_time(size) + phy.difs).as_secs_f64();
    let t_c = t_s;
    let slot = phy.slot.as_secs_f64();
    let bits = size as f64 * 8.0;
    let throughput_bps =
        p_s * p_tr * bits / ((1.0 - p_tr) * slot + p_tr * p_s * t_s + p_tr * (1.0 - p_s) * t_c);
    Saturation {
        tau,
        p,
        throughput_bps,
    }
}

/// One saturated station without collisions or errors: a packet every DIFS + CWmin/2 slots
/// + DATA + SIFS + ACK.
pub fn single_station_bps(mac: &MacSpec, size: u32) -> f64 {
    let phy = Phy::new(mac);
    let cycle = phy.difs.as_secs_f64()
        + mac.cw_min as f64 / 2.0 * phy.slot.as_secs_f64()
        + phy.exchange_time(size).as_secs_f64();
    size as f64 * 8.0 / cycle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_station_reduces_to_the_no_collision_formula() {
        let mac = MacSpec::default();
        let one = single_station_bps(&mac, 1500);
        // 12000 bits / (50 + 310 + 1309.091 + 314 us) = 6.0511 Mb/s.
        assert!((one / 1e6 - 6.0511).abs() < 1e-3, "{one}");
        let s = saturation(1, &mac, 1500);
        assert!((s.tau - 2.0 / 33.0).abs() < 1e-9, "{}", s.tau);
        assert!((s.throughput_bps / one - 1.0).abs() < 1e-9);
    }

    #[test]
    fn bianchi_collision_probability_grows_and_throughput_falls() {
        let mac = MacSpec::default();
        let mut last = f64::INFINITY;
        let mut last_p = 0.0;
        for n in [2, 5, 10, 20, 50] {
            let s = saturation(n, &mac, 1500);
            assert!(s.throughput_bps < last, "{n}: {s:?}");
            assert!(s.p > last_p, "{n}: {s:?}");
            // The fixed point holds.
            let p = 1.0 - (1.0 - s.tau).powi(n as i32 - 1);
            assert!((p - s.p).abs() < 1e-9);
            last = s.throughput_bps;
            last_p = s.p;
        }
    }
}
