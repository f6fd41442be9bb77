//! A bulk TCP transfer: the sender and receiver endpoints of one flow, their lazy timers,
//! and the application's view (bytes written, bytes read in order at the receiver).

use crate::engine::TimerSlot;
use crate::instruments::conservation::MAX_MISREADS;
use tcplab_core::{Receiver, Sender, Seq, Time};

pub struct TcpFlow {
    pub name: String,
    pub src: u32,
    pub dst: u32,
    pub controller: String,
    pub recovery: String,
    pub start: Time,
    pub stop: Option<Time>,
    /// Bytes to transfer; None = until `stop` or the end of the run.
    pub bytes: Option<u64>,
    pub sender: Sender,
    pub receiver: Receiver,
    pub sender_timer: TimerSlot,
    pub receiver_timer: TimerSlot,
    pub finished_at: Option<Time>,
    /// Bytes the receiving application has read, in order.
    pub delivered: u64,
    /// Sum of the lengths of all reads (equals `delivered` when no byte was read twice).
    pub read_total: u64,
    /// Reads that did not start where the previous one ended (exactly-once, in-order
    /// check): (seq, len, bytes read in order before), the first
    /// [`MAX_MISREADS`](crate::instruments::conservation::MAX_MISREADS).
    pub misreads: Vec<(u64, u64, u64)>,
}

impl TcpFlow {
    /// The flow ends by itself (a byte count or a stop time), so it does not keep the run
    /// going forever.
    pub fn bounded(&self) -> bool {
        self.bytes.is_some() || self.stop.is_some()
    }

    /// Hands every in-order byte the receiver has to the application, checking that each
    /// chunk starts exactly where the previous one ended.
    #[inline]
    pub fn read_all(&mut self) {
        while let Some((seq, len)) = self.receiver.read() {
            if seq != Seq(self.delivered) {
                self.misread(seq, len);
            }
            self.read_total += len;
            self.delivered = self.delivered.max(seq.0 + len);
        }
    }

    /// Notes (the first [`MAX_MISREADS`] of) the reads that did not start where the
    /// previous one ended.
    #[cold]
    #[inline(never)]
    fn misread(&mut self, seq: Seq, len: u64) {
        if self.misreads.len() < MAX_MISREADS {
            self.misreads.push((seq.0, len, self.delivered));
        }
    }
}
