//! 802.11b PHY/MAC timing: how long the medium is busy for one frame exchange.
//!
//! - DATA: PLCP preamble + header (long preamble, 192 us at 1 Mb/s) then the MAC frame
//!   (IP packet + `mac_overhead` bytes: 24 header + 4 FCS + 8 LLC/SNAP) at the data rate.
//! - ACK: PLCP + 14 bytes at the basic rate, SIFS after the DATA.
//! - A successful exchange keeps the medium busy DATA + SIFS + ACK. A failed one (frame
//!   error, collision) keeps it busy for the longest DATA + SIFS + ACK time as well: the
//!   transmitter waits that long for an ACK that does not come (ACK timeout), and the
//!   other stations, having received a corrupted frame, defer EIFS = SIFS + ACK + DIFS
//!   instead of DIFS. Every busy period is followed by DIFS before backoff slots count.

use super::spec::MacSpec;
use tcplab_core::Dur;

/// Timing of one segment, from its [`MacSpec`].
#[derive(Clone, Debug, PartialEq)]
pub struct Phy {
    pub rate: u64,
    pub basic_rate: u64,
    pub slot: Dur,
    pub sifs: Dur,
    pub difs: Dur,
    pub plcp: Dur,
    pub mac_overhead: u32,
    pub ack_bytes: u32,
}

/// The data rates of 802.11b, bit/s.
pub const RATES: [u64; 4] = [1_000_000, 2_000_000, 5_500_000, 11_000_000];
/// Rates of the basic rate set (ACKs).
pub const BASIC_RATES: [u64; 2] = [1_000_000, 2_000_000];

impl Phy {
    pub fn new(m: &MacSpec) -> Self {
        Phy {
            rate: m.rate,
            basic_rate: m.basic_rate,
            slot: m.slot,
            sifs: m.sifs,
            difs: m.difs,
            plcp: m.plcp,
            mac_overhead: m.mac_overhead,
            ack_bytes: m.ack_bytes,
        }
    }

    /// Air time of a DATA frame carrying an IP packet of `size` bytes.
    pub fn data_time(&self, size: u32) -> Dur {
        self.plcp + Dur::transmission((size + self.mac_overhead) as u64, self.rate)
    }

    /// Air time of a MAC ACK.
    pub fn ack_time(&self) -> Dur {
        self.plcp + Dur::transmission(self.ack_bytes as u64, self.basic_rate)
    }

    /// How long the transmitter waits after its DATA for the ACK before it counts a failure
    /// (SIFS + ACK: the medium-busy time of a failed exchange matches a successful one).
    pub fn ack_timeout(&self) -> Dur {
        self.sifs + self.ack_time()
    }

    /// Mean duration of `attempts` failed attempts of a frame of `size` bytes with contention
    /// windows from `cw_min` doubling up to `cw_max`: DIFS + mean backoff + exchange each.
    pub fn retry_span(&self, size: u32, attempts: u32, cw_min: u32, cw_max: u32) -> Dur {
        let mut cw = cw_min as u64;
        let mut span = Dur::ZERO;
        for _ in 0..attempts {
            span += self.difs + self.slot.saturating_mul(cw) / 2 + self.exchange_time(size);
            cw = (2 * cw + 1).min(cw_max as u64);
        }
        span
    }

    /// Medium busy for an exchange (success or failure) whose longest DATA carries `size`.
    pub fn exchange_time(&self, size: u32) -> Dur {
        self.data_time(size) + self.ack_timeout()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_preamble_timing_at_11_mbps() {
        let p = Phy::new(&MacSpec::default());
        // 1536 bytes at 11 Mb/s = 1117.09 us (rounded up to ns) + 192 us.
        assert_eq!(p.data_time(1500), Dur::from_nanos(192_000 + 1_117_091));
        // 14 bytes at 1 Mb/s = 112 us + 192 us.
        assert_eq!(p.ack_time(), Dur::from_micros(304));
        assert_eq!(
            p.exchange_time(1500),
            p.data_time(1500) + Dur::from_micros(314)
        );
    }
}
