//! The presets' scenario types other than the dumbbell and `wlan_access`: the parking lot
//! (Adaptive Reno Fig. 5) and the wired-cum-wireless path (Venoplus Fig. 2). Their expansion
//! into nodes and links is in [`crate::topology::parking_lot`] and
//! [`crate::topology::wired_wireless`], which describe the node and link names.

use super::{Duplex, QueueSpec};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParkingLot {
    /// Router-to-router links; there are `hops + 1` routers.
    pub hops: u32,
    /// One duplex for every hop, or one per hop.
    pub bottleneck: Vec<Duplex>,
    /// Every host's access link (forward = from the sending side).
    pub access: Duplex,
    pub long_pairs: u32,
    /// Cross pairs on each hop: one count for every hop, or one per hop.
    pub cross_pairs: Vec<u32>,
    pub reverse_pairs: u32,
    /// Queue discipline of every router link direction; None: [`default_router_queue`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Bytes per packet when the BDP is counted in packets ([`DEFAULT_PACKET_SIZE`]).
    #[serde(default = "default_packet_size")]
    pub packet_size: u32,
}

/// A parking lot's `packet_size` when the scenario gives none (bytes).
pub const DEFAULT_PACKET_SIZE: u32 = 1500;

fn default_packet_size() -> u32 {
    DEFAULT_PACKET_SIZE
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WiredCumWireless {
    /// Server / mobile host pairs.
    pub pairs: u32,
    /// `server{i}-router`: one for all pairs, or one per pair.
    pub wired: Vec<Duplex>,
    /// `router-bs`.
    pub bottleneck: Duplex,
    /// `bs-mobile{i}`: one for all pairs, or one per pair.
    pub wireless: Vec<Duplex>,
}
