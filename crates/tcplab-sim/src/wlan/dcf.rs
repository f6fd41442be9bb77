//! The DCF contention state machine of one shared medium (one collision domain: every node
//! hears every other, no hidden terminals, no capture).
//!
//! Node 0 is the access point, nodes 1..=N the stations. Each node has a drop-tail transmit
//! queue; the frame at its head contends.
//!
//! # Time line
//!
//! The medium alternates busy periods (one frame exchange, or a collision) and idle periods.
//! An idle period starts DIFS after the end of the busy one, at `from`; backoff counters
//! count slots from there. A node's backoff is stored as the slot index (relative to the
//! current `from`) at which its counter reaches zero, so a whole idle period needs no event
//! per slot: the next transmission is at `from + k_min * slot`, and every node whose counter
//! reaches zero in that slot transmits (two or more: a collision). When the transmission
//! starts at slot K, every other counter is frozen at `k - K` slots for the next idle period.
//!
//! - After every attempt (success or failure) the transmitter draws a new backoff uniformly
//!   in [0, CW] (post-backoff, also with an empty queue). CW starts at CWmin, doubles
//!   (2 CW + 1, up to CWmax) after each failed attempt and returns to CWmin after a success
//!   or a drop. After `retry_limit` failed attempts the frame is dropped (cause `mac`).
//! - A frame reaching the head of an empty queue at a node whose backoff has run out is
//!   sent in the first slot boundary at or after its arrival if the medium is idle, and
//!   after a fresh backoff if the medium is busy.
//! - DATA frames are received when the channel draw is at or above the receive threshold
//!   ([`super::channel`]); the durations are [`super::phy`]'s.

use super::channel::Channel;
use super::phy::Phy;
use crate::packet::PacketId;
use crate::rng::Rng;
use std::collections::VecDeque;
use tcplab_core::{Dur, Time};

/// A frame waiting in a node's transmit queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub id: PacketId,
    /// IP packet bytes.
    pub size: u32,
    /// Receiving node (0 = AP).
    pub to: u32,
}

/// What the end of a busy period did to one transmitter's head frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    /// Received (and acknowledged) by `frame.to`.
    Delivered { from: u32, frame: Frame },
    /// Dropped after the retry limit. `rssi` is the received power of the last attempt;
    /// `channel` is true when that attempt was lost below the receive threshold, false when
    /// it collided.
    Dropped {
        from: u32,
        frame: Frame,
        rssi: f64,
        channel: bool,
    },
}

/// Contention parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcfParams {
    pub cw_min: u32,
    pub cw_max: u32,
    pub retry_limit: u32,
    /// Transmit queue capacity per node, packets.
    pub buffer: u32,
}

/// Counters of one node's transmissions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeStats {
    pub attempts: u64,
    pub collisions: u64,
    pub channel_errors: u64,
}

#[derive(Clone, Debug)]
struct MacNode {
    queue: VecDeque<Frame>,
    /// Slot (relative to the idle period's `from`) at which the counter reaches zero; None
    /// when no backoff is pending.
    backoff: Option<u64>,
    cw: u32,
    /// Failed attempts of the head frame.
    failures: u32,
    stats: NodeStats,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Medium {
    /// Idle; backoff slots count from `from` (the end of the last busy period + DIFS).
    Idle { from: Time },
    /// An exchange (or collision) occupies the medium until `until`.
    Busy { until: Time },
}

/// One attempt in the busy period under way.
#[derive(Clone, Copy, Debug)]
struct Attempt {
    node: u32,
    received: bool,
    collided: bool,
    rssi: f64,
}

pub struct Dcf {
    params: DcfParams,
    pub phy: Phy,
    pub channel: Channel,
    /// Mean RSSI of the link between the AP and node i (index 0 unused).
    mean_rssi: Vec<f64>,
    nodes: Vec<MacNode>,
    medium: Medium,
    current: Vec<Attempt>,
    backoff_rng: Rng,
    channel_rng: Rng,
    /// Block fading: per station, (block index, shadowing draw in dB).
    fades: Vec<Option<(u64, f64)>>,
    /// Total time the medium was busy (ended busy periods).
    pub busy: Dur,
}

impl Dcf {
    /// `mean_rssi[i]`: the mean received power between the AP and station i (i >= 1).
    pub fn new(
        params: DcfParams,
        phy: Phy,
        channel: Channel,
        mean_rssi: Vec<f64>,
        backoff_rng: Rng,
        channel_rng: Rng,
    ) -> Self {
        let node = MacNode {
            queue: VecDeque::new(),
            backoff: None,
            cw: params.cw_min,
            failures: 0,
            stats: NodeStats::default(),
        };
        let n = mean_rssi.len();
        Dcf {
            nodes: vec![node; n],
            params,
            phy,
            channel,
            mean_rssi,
            medium: Medium::Idle { from: Time::ZERO },
            current: Vec::new(),
            fades: vec![None; n],
            backoff_rng,
            channel_rng,
            busy: Dur::ZERO,
        }
    }

    pub fn node_stats(&self, node: u32) -> NodeStats {
        self.nodes[node as usize].stats
    }

    /// Frames waiting at `node` (including the one being sent).
    pub fn queued(&self, node: u32) -> usize {
        self.nodes[node as usize].queue.len()
    }

    /// Every frame held by any node.
    pub fn for_each_frame(&self, mut f: impl FnMut(u32, &Frame)) {
        for (i, n) in self.nodes.iter().enumerate() {
            for fr in &n.queue {
                f(i as u32, fr);
            }
        }
    }

    fn draw_backoff(&mut self, cw: u32) -> u64 {
        self.backoff_rng.next_u64() % (cw as u64 + 1)
    }

    /// First slot boundary at or after `now` of the idle period starting at `from`.
    fn slot_at_or_after(&self, from: Time, now: Time) -> u64 {
        let since = now.saturating_since(from).as_nanos();
        since.div_ceil(self.phy.slot.as_nanos())
    }

    /// Queues `frame` at `node`; false when its queue is full (drop-tail).
    pub fn enqueue(&mut self, now: Time, node: u32, frame: Frame) -> bool {
        let n = node as usize;
        if self.nodes[n].queue.len() >= self.params.buffer as usize {
            return false;
        }
        self.nodes[n].queue.push_back(frame);
        if self.nodes[n].queue.len() > 1 || self.current.iter().any(|a| a.node == node) {
            return true; // not a new head, or its node is transmitting
        }
        match self.medium {
            Medium::Idle { from } => {
                let first = self.slot_at_or_after(from, now);
                let b = self.nodes[n].backoff.map_or(first, |k| k.max(first));
                self.nodes[n].backoff = Some(b);
            }
            Medium::Busy { .. } => {
                if self.nodes[n].backoff.is_none() {
                    let cw = self.nodes[n].cw;
                    let b = self.draw_backoff(cw);
                    self.nodes[n].backoff = Some(b);
                }
            }
        }
        true
    }

    /// When the medium next needs attention: the end of the busy period, or the next
    /// transmission; None when idle with nothing to send.
    pub fn next_wake(&self) -> Option<Time> {
        match self.medium {
            Medium::Busy { until } => Some(until),
            Medium::Idle { from } => self
                .nodes
                .iter()
                .filter(|n| !n.queue.is_empty())
                .filter_map(|n| n.backoff)
                .min()
                .map(|k| from + self.phy.slot.saturating_mul(k)),
        }
    }

    /// Runs what is due at `now` (which must be [`Dcf::next_wake`]); outcomes of an ended
    /// busy period are appended to `out`.
    pub fn wake(&mut self, now: Time, out: &mut Vec<Outcome>) {
        match self.medium {
            Medium::Busy { until } => {
                debug_assert_eq!(until, now);
                self.end_busy(now, out);
            }
            Medium::Idle { from } => {
                let k = now.saturating_since(from).as_nanos() / self.phy.slot.as_nanos();
                self.start_busy(now, k);
            }
        }
    }

    fn start_busy(&mut self, now: Time, k: u64) {
        self.current.clear();
        for (i, n) in self.nodes.iter_mut().enumerate() {
            match n.backoff {
                Some(b) if b == k && !n.queue.is_empty() => {
                    n.backoff = None;
                    self.current.push(Attempt {
                        node: i as u32,
                        received: false,
                        collided: false,
                        rssi: f64::NAN,
                    });
                }
                Some(b) if b > k => n.backoff = Some(b - k),
                Some(_) => n.backoff = None, // post-backoff ran out with nothing to send
                None => {}
            }
        }
        debug_assert!(!self.current.is_empty(), "a transmission when one is due");
        let collided = self.current.len() > 1;
        let mut longest = 0;
        for a in 0..self.current.len() {
            let node = self.current[a].node as usize;
            let frame = self.nodes[node].queue[0];
            longest = longest.max(frame.size);
            let station = if node == 0 { frame.to as usize } else { node };
            let rssi = self.draw_rssi(now, station);
            let ok = self.channel.received(rssi);
            let at = &mut self.current[a];
            at.rssi = rssi;
            at.collided = collided;
            at.received = ok && !collided;
            let st = &mut self.nodes[node].stats;
            st.attempts += 1;
            if collided {
                st.collisions += 1;
            } else if !ok {
                st.channel_errors += 1;
            }
        }
        let until = now + self.phy.exchange_time(longest);
        self.busy += until - now;
        self.medium = Medium::Busy { until };
    }

    /// Received power of a frame on station `station`'s link at `now`.
    fn draw_rssi(&mut self, now: Time, station: usize) -> f64 {
        let mean = self.mean_rssi[station];
        let c = self.channel.coherence_ns;
        if c == 0 {
            return self.channel.draw_rssi(mean, &mut self.channel_rng);
        }
        let block = now.as_nanos() / c;
        match self.fades[station] {
            Some((b, x)) if b == block => mean + x,
            _ => {
                let x = self.channel.draw_rssi(0.0, &mut self.channel_rng);
                self.fades[station] = Some((block, x));
                mean + x
            }
        }
    }

    fn end_busy(&mut self, now: Time, out: &mut Vec<Outcome>) {
        let attempts = std::mem::take(&mut self.current);
        for a in &attempts {
            let p = self.params;
            let n = &mut self.nodes[a.node as usize];
            if a.received {
                let frame = n.queue.pop_front().expect("the transmitted frame");
                n.failures = 0;
                n.cw = p.cw_min;
                out.push(Outcome::Delivered {
                    from: a.node,
                    frame,
                });
            } else {
                n.failures += 1;
                if n.failures >= p.retry_limit {
                    let frame = n.queue.pop_front().expect("the transmitted frame");
                    n.failures = 0;
                    n.cw = p.cw_min;
                    out.push(Outcome::Dropped {
                        from: a.node,
                        frame,
                        rssi: a.rssi,
                        channel: !a.collided,
                    });
                } else {
                    n.cw = (2 * n.cw + 1).min(p.cw_max);
                }
            }
            let cw = self.nodes[a.node as usize].cw;
            let b = self.draw_backoff(cw);
            self.nodes[a.node as usize].backoff = Some(b);
        }
        self.current = attempts;
        self.current.clear();
        self.medium = Medium::Idle {
            from: now + self.phy.difs,
        };
    }
}
