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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketPool, Payload};
    use crate::wlan::spec::{ChannelSpec, MacSpec};

    /// A DCF with `stations` stations 10 m from the AP, no shadowing; `threshold` overrides
    /// the receive threshold (e.g. +100 dBm: every frame lost on the channel).
    fn dcf(stations: usize, threshold: Option<f64>) -> Dcf {
        let mac = MacSpec::default();
        let spec = ChannelSpec {
            shadowing_db: 0.0,
            rx_threshold_dbm: threshold,
            ..ChannelSpec::default()
        };
        let channel = Channel::new(&spec, mac.rate);
        let mut mean = vec![f64::NAN];
        mean.extend(std::iter::repeat_n(channel.mean_rssi(10.0), stations));
        let params = DcfParams {
            cw_min: mac.cw_min,
            cw_max: mac.cw_max,
            retry_limit: mac.retry_limit,
            buffer: mac.buffer,
        };
        Dcf::new(
            params,
            Phy::new(&mac),
            channel,
            mean,
            Rng::stream(1, "b"),
            Rng::stream(1, "c"),
        )
    }

    fn frame(pool: &mut PacketPool, to: u32) -> Frame {
        let id = pool.insert(Packet {
            flow: 0,
            dst: 0,
            size: 1500,
            sent_at: Time::ZERO,
            payload: Payload::Udp(0),
        });
        Frame { id, size: 1500, to }
    }

    /// Runs the DCF until it is idle with nothing to send (or `limit` wake-ups).
    fn run(d: &mut Dcf, limit: usize) -> Vec<(Time, Outcome)> {
        let mut all = Vec::new();
        let mut out = Vec::new();
        for _ in 0..limit {
            let Some(t) = d.next_wake() else { break };
            d.wake(t, &mut out);
            all.extend(out.drain(..).map(|o| (t, o)));
        }
        all
    }

    #[test]
    fn a_frame_on_an_idle_medium_goes_at_once_and_is_acknowledged() {
        let mut pool = PacketPool::new();
        let mut d = dcf(1, None);
        let f = frame(&mut pool, 1);
        assert!(d.enqueue(Time::ZERO, 0, f));
        // The medium has been idle since 0 (+ DIFS): the frame starts at the first slot.
        assert_eq!(d.next_wake(), Some(Time::ZERO));
        let done = run(&mut d, 10);
        let end = Time::ZERO + d.phy.exchange_time(1500);
        assert_eq!(done, vec![(end, Outcome::Delivered { from: 0, frame: f })]);
        assert_eq!(d.node_stats(0).attempts, 1);
        assert_eq!(d.queued(0), 0);
        assert_eq!(d.busy, end - Time::ZERO);
    }

    #[test]
    fn simultaneous_frames_collide_and_back_off_with_doubled_windows() {
        let mut pool = PacketPool::new();
        let mut d = dcf(2, None);
        // Both stations get a frame at the same instant on an idle medium: both transmit in
        // slot 0, they collide, and both retry later.
        let (a, b) = (frame(&mut pool, 0), frame(&mut pool, 0));
        assert!(d.enqueue(Time::ZERO, 1, a));
        assert!(d.enqueue(Time::ZERO, 2, b));
        let mut out = Vec::new();
        d.wake(Time::ZERO, &mut out);
        let end = Time::ZERO + d.phy.exchange_time(1500);
        assert_eq!(d.next_wake(), Some(end));
        d.wake(end, &mut out);
        assert!(
            out.is_empty(),
            "nothing delivered or dropped after one collision"
        );
        for n in [1, 2] {
            let node = &d.nodes[n];
            assert_eq!((node.stats.collisions, node.failures, node.cw), (1, 1, 63));
            assert!(node.backoff.is_some_and(|b| b <= 63));
        }
        // Both are delivered eventually, each attempt counted.
        let done = run(&mut d, 100);
        assert_eq!(done.len(), 2);
        let attempts = d.node_stats(1).attempts + d.node_stats(2).attempts;
        let collisions = d.node_stats(1).collisions + d.node_stats(2).collisions;
        assert_eq!(attempts, 2 + collisions);
        assert!(d.nodes[1..].iter().all(|n| n.cw == 31 && n.failures == 0));
    }

    #[test]
    fn a_frame_lost_on_every_attempt_is_dropped_after_the_retry_limit() {
        let mut pool = PacketPool::new();
        let mut d = dcf(1, Some(100.0)); // no frame is ever received
        let f = frame(&mut pool, 0);
        assert!(d.enqueue(Time::ZERO, 1, f));
        let done = run(&mut d, 100);
        assert_eq!(done.len(), 1);
        match done[0].1 {
            Outcome::Dropped {
                from,
                frame,
                rssi,
                channel,
            } => {
                assert_eq!((from, frame, channel), (1, f, true));
                assert!((rssi - d.channel.mean_rssi(10.0)).abs() < 1e-9);
            }
            o => panic!("{o:?}"),
        }
        let st = d.node_stats(1);
        assert_eq!((st.attempts, st.channel_errors, st.collisions), (7, 7, 0));
        // Backoff windows 31, 63, ..., 1023 between attempts: the drop comes after 7
        // exchanges, 6 DIFS and the drawn slots.
        let min = d.phy.exchange_time(1500).saturating_mul(7) + d.phy.difs.saturating_mul(6);
        assert!(done[0].0 >= Time::ZERO + min);
        assert_eq!(d.nodes[1].cw, 31, "CW back to CWmin after a drop");
    }

    #[test]
    fn a_full_queue_refuses_frames_and_a_station_joining_a_busy_medium_backs_off() {
        let mut pool = PacketPool::new();
        let mut d = dcf(2, None);
        for _ in 0..50 {
            let f = frame(&mut pool, 0);
            assert!(d.enqueue(Time::ZERO, 1, f));
        }
        let f = frame(&mut pool, 0);
        assert!(!d.enqueue(Time::ZERO, 1, f), "drop-tail at 50 frames");
        // Station 2 joins while station 1's first frame is on the air: it must back off,
        // and its counter only counts idle slots.
        let mut out = Vec::new();
        d.wake(Time::ZERO, &mut out);
        let g = frame(&mut pool, 0);
        assert!(d.enqueue(Time::from_micros(100), 2, g));
        assert!(d.nodes[2].backoff.is_some());
        let done = run(&mut d, 1000);
        assert_eq!(done.len(), 51, "everything delivered, no collision loss");
        assert_eq!(d.queued(1) + d.queued(2), 0);
    }

    #[test]
    fn backoff_counters_freeze_while_the_medium_is_busy() {
        let mut pool = PacketPool::new();
        let mut d = dcf(2, None);
        // Counters 0 and 5 slots at the start of the idle period.
        d.nodes[1].backoff = Some(0);
        d.nodes[2].backoff = Some(5);
        let (a, b) = (frame(&mut pool, 0), frame(&mut pool, 0));
        assert!(d.enqueue(Time::ZERO, 1, a));
        assert!(d.enqueue(Time::ZERO, 2, b));
        let done = run(&mut d, 10);
        let x = d.phy.exchange_time(1500);
        // Station 1 in slot 0; station 2's 5 slots resume DIFS after that exchange.
        let second = Time::ZERO + x + d.phy.difs + d.phy.slot.saturating_mul(5) + x;
        assert_eq!(
            done,
            vec![
                (Time::ZERO + x, Outcome::Delivered { from: 1, frame: a }),
                (second, Outcome::Delivered { from: 2, frame: b }),
            ]
        );
    }
}
