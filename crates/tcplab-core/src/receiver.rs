//! The receiving side of a bulk transfer, as a sans-IO state machine.
//!
//! Verbs: `on_segment(now, seg)` feeds a data segment, `poll_transmit(now)` yields the
//! acknowledgment that is due (at most one: ACKs owed by several segments before a poll are
//! coalesced, so poll after every segment to get one ACK per segment), `poll_timeout()` says
//! when `on_timeout(now)` is due (the delayed-ACK timer), and `read()` hands the in-order
//! bytes to the application. No payload is carried: the receiver tracks byte ranges only.
//!
//! Rules:
//! - Cumulative ACKs; data above `rcv_nxt` is held as disjoint, non-adjacent byte ranges.
//! - Delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2) when `cfg.delayed_ack`: an ACK every
//!   `cfg.ack_every` full-sized in-order segments, otherwise `cfg.delayed_ack_timeout` after
//!   the first unacknowledged segment. An ACK is immediate for a segment above `rcv_nxt`, one
//!   that fills all or part of a hole, a duplicate, a segment beyond the window and a CE mark.
//! - SACK (RFC 2018 §4): the first block holds the most recently received segment (when it
//!   lies above `rcv_nxt`), the other held blocks follow by recency of their latest segment
//!   (each block once, none at or below `rcv_nxt`), up to `cfg.sack_blocks`.
//! - Timestamps (RFC 7323 §4.3): TS.Recent takes `SEG.TSval` when `SEG.TSval >= TS.Recent`
//!   and `SEG.SEQ <= Last.ACK.sent`; every ACK echoes TS.Recent. PAWS is not applied
//!   (sequence numbers never wrap and there are no earlier incarnations).
//! - The application reads at once, so the advertised window is always `cfg.rcv_buf`; bytes
//!   at or beyond `rcv_nxt + rcv_buf` are not accepted (a segment is trimmed to the window,
//!   one starting beyond it is dropped and answered with an ACK, RFC 9293 §3.10.7.4).
//! - ECN (RFC 3168 §6.1.3): after a CE mark every ACK carries ECE until a CWR arrives.
//! - DSACK (RFC 2883, when `cfg.dsack` and SACK are on): a segment whose every byte had
//!   arrived already is reported once, as the first block of the next ACK (its byte range,
//!   trimmed to the window); the ordinary blocks follow, the block holding the duplicate
//!   first (§4.1), up to `cfg.sack_blocks` blocks in all. Of several duplicates before one
//!   ACK only the latest is reported.
//! - `cfg.sack_style = EthPackets` (the ETH framework, Bolliger et al. 1999, Appendix A.2):
//!   each SACK block is one out-of-order packet instead of a held range. Every out-of-order
//!   arrival is recorded as the bytes it brought that no recorded packet covers (for the
//!   sender's whole, aligned segments: the segment itself), so the packets are disjoint and
//!   lie inside the held blocks; a duplicate makes the packet holding its first byte the
//!   most recent. The blocks are the most recently received packets above `rcv_nxt`, most
//!   recent first, up to `cfg.sack_blocks` (after a DSACK block, if any).
//! - Linux quick-ACK mode (when `cfg.quickack`, [`quickack`]): in-order data is acknowledged
//!   at once while quick-ACK credit lasts (at the start, after an idle gap, after a duplicate
//!   or out-of-window segment), and the delayed-ACK timer adapts to the inter-arrival time
//!   between `cfg.delayed_ack_min` and `cfg.delayed_ack_timeout`.

mod quickack;
mod window;

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::config::SackStyle;
use crate::log::ReceiverCounters;
use crate::{
    AckSegment, DataSegment, SackBlock, SackList, Seq, SharedConfig, TcpConfig, Time,
    MAX_SACK_BLOCKS,
};

/// A block of data held above `rcv_nxt`.
#[derive(Clone, Copy, Debug)]
struct Held {
    /// One past its last byte.
    end: u64,
    /// When a segment last arrived in it (a key of `Receiver::recency`).
    stamp: u64,
}

/// Held blocks (or packets) by recency: stamp -> the block's bytes `[start, end)`, a later
/// arrival a larger stamp.
#[derive(Clone, Debug, Default)]
struct Recency {
    by_stamp: BTreeMap<u64, SackBlock>,
    /// The next stamp.
    next: u64,
}

impl Recency {
    /// Registers the block `[start, end)` as the most recent one; returns its stamp.
    fn stamp(&mut self, start: u64, end: u64) -> u64 {
        let stamp = self.next;
        self.next += 1;
        let block = SackBlock {
            start: Seq(start),
            end: Seq(end),
        };
        self.by_stamp.insert(stamp, block);
        stamp
    }

    /// Makes the block `[start, end)`, stamped `old` (its end then `old_end`), the most
    /// recent; returns its stamp. One that already is keeps its stamp: the order stays the
    /// same.
    fn restamp(&mut self, old: u64, start: u64, old_end: u64, end: u64) -> u64 {
        if old + 1 != self.next {
            self.by_stamp.remove(&old);
            return self.stamp(start, end);
        }
        if end != old_end {
            if let Some(mut e) = self.by_stamp.last_entry() {
                e.get_mut().end = Seq(end);
            }
        }
        old
    }

    fn remove(&mut self, stamp: u64) {
        self.by_stamp.remove(&stamp);
    }

    /// The `n` most recent blocks, most recent first.
    fn latest(&self, n: usize) -> impl Iterator<Item = SackBlock> + '_ {
        self.by_stamp.values().rev().take(n).copied()
    }
}

pub struct Receiver {
    cfg: Arc<TcpConfig>,
    /// SACK blocks per ACK (clamped to 0..=MAX_SACK_BLOCKS).
    sack_blocks: usize,
    /// Next byte expected: everything below it has arrived.
    rcv_nxt: Seq,
    /// Everything below it was handed out by `read`.
    read_nxt: Seq,
    /// Data held above `rcv_nxt`, by first byte. Disjoint and non-adjacent, every start above
    /// `rcv_nxt`.
    ooo: BTreeMap<u64, Held>,
    /// The held blocks by recency: the SACK order. Same blocks as `ooo`.
    recency: Recency,
    /// RFC 7323 TS.Recent.
    ts_recent: Option<Time>,
    /// RFC 7323 Last.ACK.sent: the cumulative ACK of the latest ACK sent.
    last_ack_sent: Seq,
    /// An ACK is due now.
    ack_due: bool,
    /// Full-sized in-order segments not yet acknowledged.
    full_unacked: u32,
    /// Delayed-ACK timer.
    delack_deadline: Option<Time>,
    /// ECN-Echo owed on every ACK until CWR.
    ece: bool,
    /// The duplicate the next ACK reports in a DSACK block.
    dsack: Option<SackBlock>,
    /// The out-of-order packets, with `sack_style = EthPackets` only.
    packets: Option<Packets>,
    counters: ReceiverCounters,
    /// Linux quick-ACK state, when `cfg.quickack`.
    quick: Option<quickack::QuickAck>,
    /// Linux's receive window, when `cfg.rcv_autotune`.
    win: Option<window::Window>,
    /// What the last in-order segment put in the receive queue, while its ACK has not gone
    /// (or been put off): Linux sends that ACK from the receive path, before the application
    /// reads.
    unread: Option<Unread>,
}

/// Data in the receive queue that the application has not read yet.
#[derive(Clone, Copy, Debug)]
struct Unread {
    /// Segments it takes (the in-order segment and the held ones it released): buffer space
    /// the ACK's window leaves out; 0 once the delayed-ACK timer ran.
    segments: u64,
    /// The read to come (tcp_rcv_space_adjust in tcp_recvmsg, after the ACK): when the data
    /// arrived, `rcv_nxt` then and the held span beyond it.
    at: Time,
    copied: u64,
    ooo_span: u64,
}

impl Receiver {
    pub fn new(cfg: impl SharedConfig) -> Self {
        let cfg = cfg.shared();
        Receiver {
            sack_blocks: (cfg.sack_blocks as usize).min(MAX_SACK_BLOCKS),
            rcv_nxt: Seq(0),
            read_nxt: Seq(0),
            ooo: BTreeMap::new(),
            recency: Recency::default(),
            ts_recent: None,
            last_ack_sent: Seq(0),
            ack_due: false,
            full_unacked: 0,
            delack_deadline: None,
            ece: false,
            dsack: None,
            packets: (cfg.sack_style == SackStyle::EthPackets).then(Packets::default),
            counters: ReceiverCounters::default(),
            quick: cfg.quickack.then(|| quickack::QuickAck::new(&cfg)),
            win: cfg.rcv_autotune.then(|| window::Window::new(&cfg)),
            unread: None,
            cfg,
        }
    }

    /// A data segment arrived.
    pub fn on_segment(&mut self, now: Time, seg: &DataSegment) {
        self.counters.segments_received += 1;
        self.counters.bytes_received += seg.len as u64;

        // RFC 7323 §4.3 (3): segments above a hole do not update TS.Recent, a hole filler does.
        if let (true, Some(tsv)) = (self.cfg.timestamps, seg.ts_val) {
            if seg.seq <= self.last_ack_sent && self.ts_recent.is_none_or(|r| tsv >= r) {
                self.ts_recent = Some(tsv);
            }
        }
        // RFC 3168 §6.1.3: CWR ends the echo; CE (in the same segment too) starts it again.
        if self.cfg.ecn {
            if seg.cwr {
                self.ece = false;
            }
            if seg.ce {
                self.ece = true;
                self.ack_due = true;
            }
        }
        if seg.len == 0 {
            return; // carries no data and owes no acknowledgment
        }
        if let (Some(w), Some(ecr)) = (self.win.as_mut(), seg.ts_ecr) {
            w.on_tsecr(now, ecr, seg.len);
        }

        let right_edge = match &self.win {
            Some(w) => w.right_edge(self.rcv_nxt.0),
            None => self.rcv_nxt.0.saturating_add(self.cfg.rcv_buf),
        };
        let start = seg.seq.0;
        if start >= right_edge {
            self.counters.out_of_window_segments += 1;
            self.ack_due = true;
            self.enter_quickack();
            return;
        }
        let end = start.saturating_add(seg.len as u64).min(right_edge);
        let from = start.max(self.rcv_nxt.0);
        if from >= end {
            // Every byte (inside the window) had arrived already, below rcv_nxt: a
            // retransmission (tcp_data_queue).
            self.duplicate(start, end);
            self.enter_quickack();
            return;
        }

        // What came before this segment has been read (the application reads at once).
        self.read_unread();
        if from == self.rcv_nxt.0 {
            let fills_hole = !self.ooo.is_empty();
            if let Some(q) = self.quick.as_mut() {
                q.on_data(now);
            }
            // tcp_data_queue queues the segment and grows the window (tcp_event_data_recv)
            // while the held segments it reaches are still held; tcp_ofo_queue moves them
            // to the receive queue after.
            let held = self.win.as_ref().map(|_| self.held_segments() + 1);
            self.advance(end);
            // Linux's tcp_cleanup_rbuf: the application read a small (pushed) segment and
            // emptied the receive queue: the ACK goes now.
            let pushed = held.is_some_and(|held| {
                self.window_on_data(now, seg.len, true, held) && self.ooo.is_empty()
            });
            let quick = self.quick.as_ref().is_some_and(|q| q.active());
            if fills_hole || !self.cfg.delayed_ack || quick || pushed {
                self.ack_due = true;
            } else {
                self.delay_ack(now, seg.len);
                // The ACK waits; the application reads now.
                self.read_unread();
            }
        } else if self.hold(from, end) {
            self.counters.out_of_order_segments += 1;
            if let Some(p) = &mut self.packets {
                p.insert(from, end);
            }
            if self.win.is_some() {
                let held = self.held_segments();
                self.window_on_data(now, seg.len, false, held);
            }
            self.ack_due = true;
        } else {
            // Every byte had arrived already, inside one held block (now the most recent).
            self.duplicate(start, end);
            if let Some(p) = &mut self.packets {
                p.touch(from);
            }
        }
    }

    /// Linux's receive window after a new segment of `len` bytes while `held` segments (this
    /// one among them) take buffer space (`in_order`: it moved rcv_nxt, and the application
    /// reads it once its ACK has gone or been put off): the window may grow (and then an ACK
    /// goes at once, as Linux's `icsk_ack.quick |= 1`), the RTT and the buffer follow.
    /// True when the segment was small enough for Linux to mark it pushed.
    #[inline(never)]
    fn window_on_data(&mut self, now: Time, len: u32, in_order: bool, held: u64) -> bool {
        let rcv_nxt = self.rcv_nxt.0;
        let span = self
            .ooo
            .last_key_value()
            .map_or(0, |(_, h)| h.end - rcv_nxt);
        let Some(w) = self.win.as_mut() else {
            return false;
        };
        if in_order {
            w.on_in_order(now, rcv_nxt);
        }
        let (grew, pushed) = w.on_segment(len, held);
        if grew {
            if let Some(q) = self.quick.as_mut() {
                q.at_least_one();
            }
        }
        if in_order {
            // `held` counted the segments this one released; they are in the queue now
            let segments = held - self.held_segments();
            self.unread = Some(Unread {
                segments,
                at: now,
                copied: rcv_nxt,
                ooo_span: span,
            });
        }
        pushed
    }

    /// The application's read of the data whose ACK has gone or been put off (DRS).
    fn read_unread(&mut self) {
        if let (Some(u), Some(w)) = (self.unread.take(), self.win.as_mut()) {
            w.on_read(u.at, u.copied, u.ooo_span);
        }
    }

    /// Segments held out of order (MSS-sized, rounded up): buffer space they take.
    fn held_segments(&self) -> u64 {
        let bytes: u64 = self.ooo.iter().map(|(s, h)| h.end - s).sum();
        bytes.div_ceil(u64::from(self.cfg.mss.max(1)))
    }

    /// A segment whose bytes `[start, end)` (inside the window) had all arrived already.
    fn duplicate(&mut self, start: u64, end: u64) {
        self.counters.duplicate_segments += 1;
        self.ack_due = true;
        if self.cfg.dsack && self.sack_blocks > 0 {
            self.dsack = Some(SackBlock {
                start: Seq(start),
                end: Seq(end.max(start)),
            });
        }
    }

    /// Delayed-ACK bookkeeping for an in-order segment that does not force an ACK (inlined:
    /// most data segments take this path; the quick-ACK variant is out of line).
    #[inline(always)]
    fn delay_ack(&mut self, now: Time, len: u32) {
        // The sender never sends more than one MSS; anything at least that long is full-sized.
        if len >= self.cfg.mss {
            self.full_unacked += 1;
        }
        if self.full_unacked >= self.cfg.ack_every.max(1) {
            self.ack_due = true;
        } else if self.quick.is_some() {
            self.delay_ack_quick(now);
        } else if self.delack_deadline.is_none() {
            self.delack_deadline = Some(now + self.cfg.delayed_ack_timeout);
        }
    }

    /// `delay_ack` with quick-ACK's adaptive timeout.
    #[inline(never)]
    fn delay_ack_quick(&mut self, now: Time) {
        if let Some(q) = &self.quick {
            // tcp_send_delayed_ack: keep an earlier deadline; one due within ato/4 fires now.
            let ato = q.timeout();
            match self.delack_deadline {
                Some(d) if d <= now + ato / 4 => self.ack_due = true,
                Some(d) => self.delack_deadline = Some(d.min(now + ato)),
                None => self.delack_deadline = Some(now + ato),
            }
        }
    }

    /// tcp_enter_quickack_mode, when `cfg.quickack`.
    fn enter_quickack(&mut self) {
        if let Some(q) = self.quick.as_mut() {
            q.enter();
        }
    }

    /// Quick-ACK credit left (Linux icsk_ack.quick); None without `cfg.quickack`.
    pub fn quickacks_left(&self) -> Option<u32> {
        self.quick.as_ref().map(|q| q.quick())
    }

    /// New in-order data up to `end`: moves `rcv_nxt`, swallowing held blocks it reaches.
    fn advance(&mut self, end: u64) {
        let mut nxt = end.max(self.rcv_nxt.0);
        while let Some(e) = self.ooo.first_entry() {
            if *e.key() > nxt {
                break;
            }
            let h = e.remove();
            nxt = nxt.max(h.end);
            self.recency.remove(h.stamp);
        }
        if let Some(p) = &mut self.packets {
            p.drop_below(nxt);
        }
        self.counters.bytes_delivered += nxt - self.rcv_nxt.0;
        self.rcv_nxt = Seq(nxt);
    }

    /// Holds `[from, end)` (above `rcv_nxt`), merging with overlapping or adjacent blocks;
    /// the result is the most recent block. False when every byte was held already (inside
    /// one block).
    fn hold(&mut self, from: u64, end: u64) -> bool {
        // Found with one look-up: the block starting last at or below `end` is the only one
        // `[from, end)` can reach when it starts at or below `from` (blocks are disjoint and
        // non-adjacent). Either it reaches `from`, and holds the bytes already or grows in
        // place, or it ends before `from` and the new block stands alone.
        match self.ooo.range_mut(..=end).next_back() {
            Some((&s, h)) if s <= from && h.end >= from => {
                let old_end = h.end;
                h.end = old_end.max(end);
                h.stamp = self.recency.restamp(h.stamp, s, old_end, h.end);
                return end > old_end;
            }
            Some((&s, h)) if s < from && h.end < from => {}
            Some(_) => {
                self.hold_merging(from, end);
                return true;
            }
            None => {}
        }
        let stamp = self.recency.stamp(from, end);
        self.ooo.insert(from, Held { end, stamp });
        true
    }

    /// [`hold`](Self::hold) when `[from, end)` reaches blocks starting inside it.
    #[inline(never)]
    fn hold_merging(&mut self, from: u64, end: u64) {
        let (mut lo, mut hi) = (from, end);
        if let Some((&s, h)) = self.ooo.range(..=from).next_back() {
            if h.end >= from {
                lo = s;
            }
        }
        while let Some((&s, &h)) = self.ooo.range(lo..=hi).next() {
            self.ooo.remove(&s);
            self.recency.remove(h.stamp);
            hi = hi.max(h.end);
        }
        let stamp = self.recency.stamp(lo, hi);
        self.ooo.insert(lo, Held { end: hi, stamp });
    }

    fn sack_list(&self, dsack: Option<SackBlock>) -> SackList {
        let room = self.sack_blocks - dsack.is_some() as usize;
        if let Some(p) = &self.packets {
            return dsack.into_iter().chain(p.latest(room)).collect();
        }
        dsack.into_iter().chain(self.recency.latest(room)).collect()
    }

    /// The next acknowledgment to send, if one is due now. (Inlined: the caller polls until
    /// None, so most calls find nothing due.)
    #[inline]
    pub fn poll_transmit(&mut self, now: Time) -> Option<AckSegment> {
        if !self.ack_due {
            return None;
        }
        Some(self.ack(now))
    }

    /// The acknowledgment due now.
    #[inline(never)]
    fn ack(&mut self, now: Time) -> AckSegment {
        self.ack_due = false;
        self.delack_deadline = None;
        self.full_unacked = 0;
        self.last_ack_sent = self.rcv_nxt;
        self.counters.acks_sent += 1;
        if let Some(q) = self.quick.as_mut() {
            q.on_ack_sent();
        }
        let dsack = self.dsack.take();
        self.counters.dsacks_sent += dsack.is_some() as u64;
        AckSegment {
            ack: self.rcv_nxt,
            sack: self.sack_list(dsack),
            ts_ecr: if self.cfg.timestamps {
                self.ts_recent
            } else {
                None
            },
            ts_val: self.cfg.timestamps.then_some(now),
            window: self.advertise(),
            ece: self.ece,
        }
    }

    /// The window of the ACK being sent: `cfg.rcv_buf`, or Linux's (`cfg.rcv_autotune`).
    fn advertise(&mut self) -> u64 {
        if self.win.is_none() {
            return self.cfg.rcv_buf; // every ACK without autotuning: no walk of the held data
        }
        let held = self.held_segments() + self.unread.map_or(0, |u| u.segments);
        let rcv_nxt = self.rcv_nxt.0;
        let w = self.win.as_mut().expect("checked above");
        let window = w.select(rcv_nxt, held);
        self.read_unread();
        window
    }

    /// When `on_timeout` is due (the delayed-ACK timer).
    pub fn poll_timeout(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// The delayed-ACK timer expired (call at or after `poll_timeout`; early calls do
    /// nothing): an ACK becomes due.
    pub fn on_timeout(&mut self, now: Time) {
        if self.delack_deadline.is_some_and(|d| d <= now) {
            self.delack_deadline = None;
            self.ack_due = true;
            if let Some(u) = self.unread.as_mut() {
                u.segments = 0; // read while the timer ran
            }
        }
    }

    /// Next in-order bytes for the application, `(first byte, length)`, each byte once.
    pub fn read(&mut self) -> Option<(Seq, u64)> {
        if self.read_nxt >= self.rcv_nxt {
            return None;
        }
        let first = self.read_nxt;
        self.read_nxt = self.rcv_nxt;
        Some((first, self.rcv_nxt - first))
    }

    /// Next byte expected (the cumulative ACK point).
    pub fn rcv_nxt(&self) -> Seq {
        self.rcv_nxt
    }

    pub fn counters(&self) -> &ReceiverCounters {
        &self.counters
    }

    /// The settings the receiver runs with.
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// An acknowledgment is due: `poll_transmit` will return it.
    pub fn ack_pending(&self) -> bool {
        self.ack_due
    }

    /// RFC 7323 TS.Recent: the timestamp the next ACK echoes.
    pub fn ts_recent(&self) -> Option<Time> {
        self.ts_recent
    }

    /// RFC 7323 Last.ACK.sent: the cumulative ACK of the latest ACK sent.
    pub fn last_ack_sent(&self) -> Seq {
        self.last_ack_sent
    }

    /// ECN-Echo is set on ACKs (a CE mark not yet answered by CWR).
    pub fn ece(&self) -> bool {
        self.ece
    }

    /// The window the last ACK advertised in bytes: `cfg.rcv_buf` (the application reads at
    /// once), or with `cfg.rcv_autotune` Linux's.
    pub fn window(&self) -> u64 {
        self.win
            .as_ref()
            .map_or(self.cfg.rcv_buf, |w| w.advertised())
    }

    /// The window of the SYN: `cfg.rcv_buf` (at most 65535), or with `cfg.rcv_autotune`
    /// Linux's first window.
    pub fn syn_window(cfg: &TcpConfig) -> u64 {
        if cfg.rcv_autotune {
            window::Window::initial(cfg)
        } else {
            cfg.rcv_buf.min(65535)
        }
    }

    /// Data held above `rcv_nxt`, in sequence order.
    pub fn held_blocks(&self) -> impl Iterator<Item = SackBlock> + '_ {
        self.ooo.iter().map(|(&s, h)| SackBlock {
            start: Seq(s),
            end: Seq(h.end),
        })
    }
}

/// The out-of-order packets of `sack_style = EthPackets`: disjoint byte ranges above
/// `rcv_nxt`, each the bytes one arrival added, by first byte and by recency.
#[derive(Debug, Default)]
struct Packets {
    by_start: BTreeMap<u64, Held>,
    recency: Recency,
}

impl Packets {
    /// The packet `[start, end)` (new, or one held already at `start`) becomes the most
    /// recent.
    fn restamp(&mut self, start: u64, end: u64) {
        let stamp = match self.by_start.get(&start) {
            Some(old) => self.recency.restamp(old.stamp, start, old.end, end),
            None => self.recency.stamp(start, end),
        };
        self.by_start.insert(start, Held { end, stamp });
    }

    /// An out-of-order arrival of `[from, end)` that brought new bytes: recorded without the
    /// bytes of the packets it overlaps at its edges; the packets inside it are superseded.
    fn insert(&mut self, from: u64, end: u64) {
        let mut lo = from;
        if let Some((_, h)) = self.by_start.range(..from).next_back() {
            lo = lo.max(h.end);
        }
        let mut hi = end;
        let inside: Vec<(u64, Held)> = self
            .by_start
            .range(from..end)
            .map(|(&s, &h)| (s, h))
            .collect();
        for (s, h) in inside {
            if h.end <= end {
                self.by_start.remove(&s);
                self.recency.remove(h.stamp);
            } else {
                hi = s;
            }
        }
        if lo < hi {
            self.restamp(lo, hi);
        }
    }

    /// A duplicate arrived: the packet holding byte `at` becomes the most recent.
    fn touch(&mut self, at: u64) {
        if let Some((&s, &h)) = self.by_start.range(..=at).next_back() {
            if h.end > at {
                self.restamp(s, h.end);
            }
        }
    }

    /// `rcv_nxt` moved to `nxt`: the packets below it are acknowledged (held blocks are
    /// swallowed whole, so no packet straddles it).
    fn drop_below(&mut self, nxt: u64) {
        while let Some(e) = self.by_start.first_entry() {
            if *e.key() >= nxt {
                break;
            }
            let h = e.remove();
            self.recency.remove(h.stamp);
        }
    }

    /// The `n` most recently received packets, most recent first.
    fn latest(&self, n: usize) -> impl Iterator<Item = SackBlock> + '_ {
        self.recency.latest(n)
    }
}
