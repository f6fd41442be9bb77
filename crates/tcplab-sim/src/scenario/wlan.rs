//! Scenario types of an 802.11b WLAN segment (canonical units: bit/s, ns, bytes, metres,
//! dB/dBm). Re-exported by [`crate::scenario`]; docs/wlan.md and docs/scenario.md describe
//! every field and its default.

use super::{Buffer, Duplex, LinkDir};
use serde::{Deserialize, Serialize};
use tcplab_core::Dur;

/// One WLAN segment: an access point and stations sharing one medium (DCF).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WlanSpec {
    /// Names the segment in results (`"{name}:{ap}-{station}"` rows of `links`) and its
    /// random streams (`"wlan/{name}/backoff"`, `"wlan/{name}/channel"`).
    pub name: String,
    /// The access point: a router node (it relays between the medium and wired links).
    pub ap: String,
    pub stations: Vec<StationSpec>,
    /// Placement of stations that give neither `distance` nor `preset`.
    #[serde(default)]
    pub preset: Option<ChannelPreset>,
    #[serde(default)]
    pub mac: MacSpec,
    #[serde(default)]
    pub channel: ChannelSpec,
    /// Cross-layer channel: every TCP packet the MAC drops after its retry limit whose last
    /// attempt was received below the receive threshold (a channel loss, not a collision) is
    /// reported to its flow's sender (docs/loss-classification.md).
    #[serde(default, skip_serializing_if = "is_false")]
    pub report_losses: bool,
    /// Delay between such a drop and the report reaching the sender (only with
    /// `report_losses`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub report_delay: Dur,
}

fn is_false(b: &bool) -> bool {
    !*b
}
fn is_zero(d: &Dur) -> bool {
    *d == Dur::ZERO
}

/// A station: a host node placed at `distance` metres from the AP, or by `preset`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StationSpec {
    pub node: String,
    #[serde(default)]
    pub distance: Option<f64>,
    #[serde(default)]
    pub preset: Option<ChannelPreset>,
}

/// Link quality of the WLAN paper: the distance at which the residual TCP-segment loss after
/// MAC retries (channel losses only) is about 1e-4 (`LL`) or 1e-2 (`HL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChannelPreset {
    LL,
    HL,
}

impl ChannelPreset {
    pub const ALL: [ChannelPreset; 2] = [ChannelPreset::LL, ChannelPreset::HL];
    /// Target residual loss per frame after all attempts.
    pub fn residual_loss(self) -> f64 {
        match self {
            ChannelPreset::LL => 1e-4,
            ChannelPreset::HL => 1e-2,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelPreset::LL => "LL",
            ChannelPreset::HL => "HL",
        }
    }
}

/// DCF and PHY parameters (802.11b DSSS/CCK, long preamble).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MacSpec {
    /// Data rate of every frame, bit/s: 1, 2, 5.5 or 11 Mb/s.
    pub rate: u64,
    /// Rate of MAC ACKs (basic rate set), bit/s: 1 or 2 Mb/s.
    pub basic_rate: u64,
    /// Transmit queue of each node (AP and every station), packets, counting the frame
    /// being transmitted; drop-tail (cause `buffer_overflow`).
    pub buffer: u32,
    /// Transmission attempts of a frame before the MAC gives up (dot11ShortRetryLimit).
    pub retry_limit: u32,
    pub cw_min: u32,
    pub cw_max: u32,
    pub slot: Dur,
    pub sifs: Dur,
    pub difs: Dur,
    /// PLCP preamble + header (long preamble: 144 + 48 bits at 1 Mb/s).
    pub plcp: Dur,
    /// MAC header + FCS + LLC/SNAP bytes added to every IP packet.
    pub mac_overhead: u32,
    /// Bytes of a MAC ACK frame.
    pub ack_bytes: u32,
}

impl Default for MacSpec {
    fn default() -> Self {
        MacSpec {
            rate: 11_000_000,
            basic_rate: 1_000_000,
            buffer: 50,
            retry_limit: 7,
            cw_min: 31,
            cw_max: 1023,
            slot: Dur::from_micros(20),
            sifs: Dur::from_micros(10),
            difs: Dur::from_micros(50),
            plcp: Dur::from_micros(192),
            mac_overhead: 36,
            ack_bytes: 14,
        }
    }
}

/// Radio channel: log-distance path loss plus log-normal shadowing drawn per frame.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChannelSpec {
    pub tx_power_dbm: f64,
    /// Path loss at the reference distance of 1 m.
    pub ref_loss_db: f64,
    pub exponent: f64,
    /// Standard deviation of the shadowing, dB (0: a deterministic channel).
    pub shadowing_db: f64,
    /// Receive threshold; None = the data rate's sensitivity (docs/wlan.md).
    pub rx_threshold_dbm: Option<f64>,
    /// Block fading: each station's shadowing is held for this long (aligned blocks of
    /// simulated time) instead of drawn per frame. 0 (default) = a new draw per frame.
    pub coherence: Dur,
}

impl Default for ChannelSpec {
    fn default() -> Self {
        ChannelSpec {
            tx_power_dbm: 15.0,
            ref_loss_db: 40.05,
            exponent: 3.5,
            shadowing_db: 4.0,
            rx_threshold_dbm: None,
            coherence: Dur::ZERO,
        }
    }
}

/// The WLAN paper's Fig. 3: host `server` - 100 Mb/s `access` link - router `router` -
/// Dummynet `pipe` - router `ap` - WLAN `wlan` (its `ap` must be `"ap"`). The pipe's
/// queue discipline is `pipe.forward.queue` / `pipe.reverse.queue`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WlanAccess {
    pub access: Duplex,
    pub pipe: Duplex,
    pub wlan: WlanSpec,
}

impl WlanAccess {
    /// The server's access link when a scenario gives none: 100 Mb/s, 0.1 ms and 1000 packets
    /// each way, drop-tail, no loss (the one home of this default: the builder uses it and
    /// the Python schema reads it through the WLAN vocabulary).
    pub fn default_access() -> Duplex {
        Duplex::symmetric(LinkDir::new(
            100_000_000,
            Dur::from_micros(100),
            Buffer::Packets(1000),
        ))
    }
}

/// The WLAN paper's Dummynet pipes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PipePreset {
    /// 1.6 Mb/s, 60 ms each way, 12 packets (the router is the bottleneck).
    Thin,
    /// 16 Mb/s, 30 ms each way, 60 packets (the WLAN is the bottleneck).
    Fat,
}

impl PipePreset {
    pub const ALL: [PipePreset; 2] = [PipePreset::Thin, PipePreset::Fat];
    /// The name in scenarios.
    pub fn as_str(self) -> &'static str {
        match self {
            PipePreset::Thin => "thin",
            PipePreset::Fat => "fat",
        }
    }
    /// (rate bit/s, one-way delay, buffer packets).
    pub fn params(self) -> (u64, Dur, u32) {
        match self {
            PipePreset::Thin => (1_600_000, Dur::from_millis(60), 12),
            PipePreset::Fat => (16_000_000, Dur::from_millis(30), 60),
        }
    }
}
