//! The scripted-exchange harness shared by the sender tests: the test plays the receiver,
//! ACK by ACK, and checks what the sender transmits. Sequence numbers are written in
//! segments of `MSS` bytes to keep the scripts readable.

#![allow(dead_code)] // each test file uses part of it

use tcplab_core::{AckSegment, DataSegment, Dur, SackBlock, SackList, Sender, Seq, Time};

pub const MSS: u64 = 1000;

pub struct Script {
    pub s: Sender,
    pub now: Time,
}

impl Script {
    pub fn with(s: Sender) -> Self {
        Script { s, now: Time::ZERO }
    }

    pub fn advance(&mut self, ms: u64) {
        self.now += Dur::from_millis(ms);
    }

    /// Everything the sender transmits now, as (segment index, retransmission count).
    pub fn sent(&mut self) -> Vec<(u64, u8)> {
        std::iter::from_fn(|| self.s.poll_transmit(self.now))
            .map(|d| (d.seq.0 / MSS, d.retransmission))
            .collect()
    }

    /// An ACK for everything below segment `ack`, with SACK blocks in segments.
    pub fn ack(&mut self, ack: u64, sack: &[(u64, u64)]) {
        self.ack_ts(ack, sack, None);
    }

    /// As `ack`, echoing the timestamp `ts_ecr`.
    pub fn ack_ts(&mut self, ack: u64, sack: &[(u64, u64)], ts_ecr: Option<Time>) {
        let sack: SackList = sack
            .iter()
            .map(|&(a, b)| SackBlock {
                start: Seq(a * MSS),
                end: Seq(b * MSS),
            })
            .collect();
        let a = AckSegment {
            ack: Seq(ack * MSS),
            sack,
            ts_ecr,
            ts_val: None,
            window: 1 << 30,
            ece: false,
        };
        self.s.on_segment(self.now, &a);
    }

    /// Fires the sender's timer if it is due by `self.now`.
    pub fn timer(&mut self) {
        if self.s.poll_timeout().is_some_and(|t| t <= self.now) {
            self.s.on_timeout(self.now);
        }
    }

    pub fn segs(&self, bytes: u64) -> f64 {
        bytes as f64 / MSS as f64
    }
    pub fn cwnd_segments(&self) -> f64 {
        self.segs(self.s.snapshot().cwnd)
    }
    pub fn ssthresh_segments(&self) -> f64 {
        self.segs(self.s.snapshot().ssthresh)
    }
}

/// Originals of segments `range`, as `Script::sent` lists them.
pub fn new(range: std::ops::Range<u64>) -> Vec<(u64, u8)> {
    range.map(|i| (i, 0)).collect()
}

/// A data segment of `len` bytes at byte `seq`, as a sender sends it (the receiver tests).
pub fn seg(seq: u64, len: u32) -> DataSegment {
    DataSegment {
        seq: Seq(seq),
        len,
        ts_val: None,
        ts_ecr: None,
        retransmission: 0,
        ect: false,
        ce: false,
        cwr: false,
    }
}
