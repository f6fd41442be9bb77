//! The receiving side of a bulk transfer, as a sans-IO state machine.
//! (Being written: see the receiver task.)

use crate::log::ReceiverCounters;
use crate::{AckSegment, DataSegment, Seq, TcpConfig, Time};

pub struct Receiver {
    _cfg: TcpConfig,
}

impl Receiver {
    pub fn new(cfg: &TcpConfig) -> Self {
        Receiver { _cfg: cfg.clone() }
    }
    /// A data segment arrived.
    pub fn on_segment(&mut self, _now: Time, _seg: &DataSegment) {
        todo!("receiver")
    }
    /// The next acknowledgment to send, if one is due now.
    pub fn poll_transmit(&mut self, _now: Time) -> Option<AckSegment> {
        todo!("receiver")
    }
    /// When `on_timeout` is due (the delayed-ACK timer).
    pub fn poll_timeout(&self) -> Option<Time> {
        todo!("receiver")
    }
    pub fn on_timeout(&mut self, _now: Time) {
        todo!("receiver")
    }
    /// Next in-order bytes for the application, `(first byte, length)`, each byte once.
    pub fn read(&mut self) -> Option<(Seq, u64)> {
        todo!("receiver")
    }
    /// Next byte expected (the cumulative ACK point).
    pub fn rcv_nxt(&self) -> Seq {
        todo!("receiver")
    }
    pub fn counters(&self) -> &ReceiverCounters {
        todo!("receiver")
    }
}
