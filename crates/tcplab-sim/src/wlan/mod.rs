//! An 802.11b WLAN segment: an access point and N stations sharing one medium under the
//! DCF, as one kind of hop of the [`crate::network`]. docs/wlan.md describes the model.
//!
//! - [`spec`]: scenario types; [`phy`]: timing and rates; [`channel`]: path loss,
//!   shadowing, receive threshold; [`dcf`]: the contention state machine; [`bianchi`]: the
//!   analytical saturation throughput (validation reference).
//! - The segment contributes two link directions per station to routing: `AP -> station`
//!   (direction "forward") and `station -> AP` ("reverse"), numbered after the wired links
//!   (see [`crate::topology::Layout::directions`]). A packet routed onto one of them is
//!   queued at the transmitting node's MAC queue; when its frame is acknowledged the packet
//!   arrives at the receiving node (at the end of the DATA + SIFS + ACK exchange).
//! - Drops: a full transmit queue (`buffer_overflow`); the retry limit (`mac`, with the RSSI
//!   of the last attempt).
//! - Events: one lazy wake-up per segment (`NetEvent::Wlan`); a wake-up whose time is no
//!   longer the segment's next one is stale and ignored.

pub mod bianchi;
pub mod channel;
pub mod dcf;
pub mod phy;
pub use crate::scenario::wlan as spec;

use crate::packet::DropCause;
use crate::packet::PacketId;
use crate::rng::Rng;
use channel::Channel;
use dcf::{Dcf, DcfParams, Frame, Outcome};
use phy::Phy;
use spec::{StationSpec, WlanSpec};
use tcplab_core::{Dur, Time};

/// Counts of one hop (one direction between the AP and a station).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HopStats {
    /// Frames delivered (acknowledged).
    pub packets_sent: u64,
    pub bytes_sent: u64,
    /// Drops by cause, indexed by `DropCause as usize`.
    pub drops: [u64; 5],
}

/// What a wake-up produced, for the network to act on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HopEvent {
    /// The packet reached the far end of hop `hop` (local hop index).
    Arrived { hop: u32, id: PacketId },
    /// The MAC dropped the packet on hop `hop` after its retry limit.
    MacDrop {
        hop: u32,
        id: PacketId,
        rssi: f64,
        /// Lost below the receive threshold (a channel loss, reported over the cross-layer
        /// channel), not in a collision.
        channel: bool,
    },
}

pub struct Wlan {
    pub name: String,
    /// Network node of the AP and of each station (station j is DCF node j + 1).
    pub ap: u32,
    pub stations: Vec<u32>,
    /// Distance of each station from the AP, metres.
    pub distances: Vec<f64>,
    pub dcf: Dcf,
    /// Per local hop: 2j = AP -> station j, 2j + 1 = station j -> AP.
    pub hops: Vec<HopStats>,
    /// Report channel losses to senders after this delay.
    pub report_delay: Option<Dur>,
    armed: Option<Time>,
    out: Vec<Outcome>,
}

/// The distance of a station: its own, else its preset's, else the segment preset's.
/// None when nothing places it or the channel cannot be inverted (validation reports it).
pub fn station_distance(w: &WlanSpec, s: &StationSpec) -> Option<f64> {
    if let Some(d) = s.distance {
        return Some(d);
    }
    let preset = s.preset.or(w.preset)?;
    let ch = Channel::new(&w.channel, w.mac.rate);
    ch.distance_for_residual(preset.residual_loss(), independent_draws(w))
}

/// How many independent shadowing draws the attempts of one frame see: every attempt without
/// block fading; with it, the coherence blocks a full retry sequence of a 1500-byte frame
/// spans (at least 1, at most the retry limit).
pub fn independent_draws(w: &WlanSpec) -> u32 {
    let c = w.channel.coherence.as_nanos();
    if c == 0 {
        return w.mac.retry_limit;
    }
    let m = &w.mac;
    let span = Phy::new(m).retry_span(1500, m.retry_limit, m.cw_min, m.cw_max);
    (span.as_nanos().div_ceil(c) as u32).clamp(1, m.retry_limit.max(1))
}

impl Wlan {
    /// `ap`, `stations`: network node ids; streams `"wlan/{name}/backoff"` and
    /// `"wlan/{name}/channel"` from `seed`.
    pub fn new(spec: &WlanSpec, ap: u32, stations: Vec<u32>, seed: u64) -> Self {
        let phy = Phy::new(&spec.mac);
        let channel = Channel::new(&spec.channel, spec.mac.rate);
        let distances: Vec<f64> = spec
            .stations
            .iter()
            .map(|s| station_distance(spec, s).expect("validated placement"))
            .collect();
        let mut mean = vec![f64::NAN];
        mean.extend(distances.iter().map(|&d| channel.mean_rssi(d)));
        let params = DcfParams {
            cw_min: spec.mac.cw_min,
            cw_max: spec.mac.cw_max,
            retry_limit: spec.mac.retry_limit,
            buffer: spec.mac.buffer,
        };
        let dcf = Dcf::new(
            params,
            phy,
            channel,
            mean,
            Rng::stream(seed, &format!("wlan/{}/backoff", spec.name)),
            Rng::stream(seed, &format!("wlan/{}/channel", spec.name)),
        );
        Wlan {
            name: spec.name.clone(),
            ap,
            hops: vec![HopStats::default(); 2 * stations.len()],
            stations,
            distances,
            dcf,
            report_delay: spec.report_losses.then_some(spec.report_delay),
            armed: None,
            out: Vec::new(),
        }
    }

    /// Number of hops (link directions) the segment contributes.
    pub fn hop_count(&self) -> usize {
        2 * self.stations.len()
    }

    /// (transmitting DCF node, receiving DCF node) of local hop `hop`.
    fn ends(hop: u32) -> (u32, u32) {
        let sta = hop / 2 + 1;
        if hop.is_multiple_of(2) {
            (0, sta)
        } else {
            (sta, 0)
        }
    }

    fn hop_of(from: u32, to: u32) -> u32 {
        if from == 0 {
            2 * (to - 1)
        } else {
            2 * (from - 1) + 1
        }
    }

    /// Queues packet `id` (`size` IP bytes) on local hop `hop`; Err(cause) when dropped.
    pub fn offer(&mut self, now: Time, hop: u32, id: PacketId, size: u32) -> Result<(), DropCause> {
        let (from, to) = Self::ends(hop);
        if self.dcf.enqueue(now, from, Frame { id, size, to }) {
            Ok(())
        } else {
            self.hops[hop as usize].drops[DropCause::BufferOverflow as usize] += 1;
            Err(DropCause::BufferOverflow)
        }
    }

    /// The wake-up time to schedule now, if the segment needs a new one.
    pub fn rearm(&mut self) -> Option<Time> {
        let next = self.dcf.next_wake();
        if next.is_some() && next != self.armed {
            self.armed = next;
            next
        } else {
            None
        }
    }

    /// A wake-up scheduled for `now` fired; appends what happened to `events`.
    pub fn wake(&mut self, now: Time, events: &mut Vec<HopEvent>) {
        if self.armed != Some(now) {
            return; // stale
        }
        self.armed = None;
        self.out.clear();
        self.dcf.wake(now, &mut self.out);
        for o in self.out.drain(..) {
            match o {
                Outcome::Delivered { from, frame } => {
                    let hop = Self::hop_of(from, frame.to);
                    let h = &mut self.hops[hop as usize];
                    h.packets_sent += 1;
                    h.bytes_sent += frame.size as u64;
                    events.push(HopEvent::Arrived { hop, id: frame.id });
                }
                Outcome::Dropped {
                    from,
                    frame,
                    rssi,
                    channel,
                } => {
                    let hop = Self::hop_of(from, frame.to);
                    self.hops[hop as usize].drops[DropCause::Mac as usize] += 1;
                    events.push(HopEvent::MacDrop {
                        hop,
                        id: frame.id,
                        rssi,
                        channel,
                    });
                }
            }
        }
    }

    /// Every packet the segment holds (in transmit queues).
    pub fn for_each_packet(&self, mut f: impl FnMut(PacketId)) {
        self.dcf.for_each_frame(|_, fr| f(fr.id));
    }

    /// (from node, to node) network ids of local hop `hop`.
    pub fn hop_nodes(&self, hop: u32) -> (u32, u32) {
        let sta = self.stations[(hop / 2) as usize];
        if hop.is_multiple_of(2) {
            (self.ap, sta)
        } else {
            (sta, self.ap)
        }
    }
}
