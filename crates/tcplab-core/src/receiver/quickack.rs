//! Linux's quick-ACK mode and adaptive delayed-ACK timeout (`cfg.quickack`), from
//! net/ipv4/tcp_input.c (tcp_incr_quickack, tcp_enter_quickack_mode, tcp_event_data_recv,
//! tcp_in_quickack_mode), net/ipv4/tcp_output.c (tcp_send_delayed_ack) and
//! include/net/tcp.h (tcp_dec_quickack_mode, TCP_MAX_QUICKACKS, TCP_ATO_MIN).
//!
//! - Quick-ACK credit: `quick` ACKs are sent at once, one credit per ACK sent. The credit is
//!   raised to `min(rcv_wnd / (2 MSS), 16)` (at least 2) by the first data segment, by
//!   in-order data after a gap longer than the RTO, and by a segment entirely below
//!   `rcv_nxt` or beyond the window (tcp_enter_quickack_mode, which also resets ato).
//! - ato (the delayed-ACK timeout) starts at `delayed_ack_min` (TCP_ATO_MIN); for each
//!   in-order data segment, with m the time since the previous one: m <= ato_min / 2 gives
//!   `ato = ato / 2 + ato_min / 2`; m < ato gives `ato = min(ato / 2 + m, rto)`. When the
//!   credit runs out ato returns to ato_min.
//! - The timer is armed for `min(ato, delayed_ack_timeout)` (TCP_DELACK_MAX); an earlier
//!   deadline is kept, and a deadline within a quarter of that timeout sends the ACK at once.
//!
//! Simplified: the receiver has no RTT estimate of its own, so Linux's bound of ato by the
//! receiver's SRTT (and by HZ/2) is not applied, and its RTO is `rto_initial` (Linux measures
//! it on the handshake). Pingpong (interactive) mode does not arise in a one-way transfer.

use crate::{Dur, TcpConfig, Time};

/// Linux TCP_MAX_QUICKACKS.
pub const MAX_QUICKACKS: u32 = 16;

#[derive(Clone, Debug)]
pub(super) struct QuickAck {
    /// ACKs still to send at once (icsk_ack.quick).
    quick: u32,
    /// Delayed-ACK timeout; None before the first data segment (icsk_ack.ato == 0).
    ato: Option<Dur>,
    /// When the previous in-order data segment arrived (icsk_ack.lrcvtime).
    lrcvtime: Time,
    /// rcv_wnd / (2 MSS), at least 2.
    window_quickacks: u32,
    ato_min: Dur,
    rto: Dur,
    delack_max: Dur,
}

impl QuickAck {
    pub fn new(cfg: &TcpConfig) -> Self {
        let w = (cfg.rcv_buf / (2 * cfg.mss.max(1) as u64)).min(u32::MAX as u64) as u32;
        QuickAck {
            quick: 0,
            ato: None,
            lrcvtime: Time::ZERO,
            window_quickacks: if w == 0 { 2 } else { w },
            ato_min: cfg.delayed_ack_min,
            rto: cfg.rto_initial,
            delack_max: cfg.delayed_ack_timeout,
        }
    }

    /// tcp_incr_quickack.
    fn incr(&mut self, max_quickacks: u32) {
        self.quick = self.quick.max(self.window_quickacks.min(max_quickacks));
    }

    /// tcp_enter_quickack_mode: a duplicate or out-of-window segment.
    pub fn enter(&mut self) {
        self.incr(MAX_QUICKACKS);
        self.ato = Some(self.ato_min);
    }

    /// tcp_event_data_recv: in-order data arrived at `now`.
    pub fn on_data(&mut self, now: Time) {
        match self.ato {
            None => {
                self.incr(MAX_QUICKACKS);
                self.ato = Some(self.ato_min);
            }
            Some(ato) => {
                let m = now.saturating_since(self.lrcvtime);
                if m <= self.ato_min / 2 {
                    self.ato = Some(ato / 2 + self.ato_min / 2);
                } else if m < ato {
                    self.ato = Some((ato / 2 + m).min(self.rto));
                } else if m > self.rto {
                    self.incr(MAX_QUICKACKS);
                }
            }
        }
        self.lrcvtime = now;
    }

    /// tcp_grow_window's `icsk_ack.quick |= 1`: the receive window grew, so this ACK goes at
    /// once (the bit is or-ed in, as Linux does: a credit of 2 becomes 3).
    pub fn at_least_one(&mut self) {
        self.quick |= 1;
    }

    /// tcp_in_quickack_mode.
    pub fn active(&self) -> bool {
        self.quick > 0
    }

    /// tcp_dec_quickack_mode: an ACK was sent.
    pub fn on_ack_sent(&mut self) {
        if self.quick > 0 {
            self.quick -= 1;
            if self.quick == 0 {
                self.ato = Some(self.ato_min);
            }
        }
    }

    /// The delayed-ACK timeout now (tcp_send_delayed_ack).
    pub fn timeout(&self) -> Dur {
        self.ato.unwrap_or(self.ato_min).min(self.delack_max)
    }

    /// Credit left (for tests and logs).
    pub fn quick(&self) -> u32 {
        self.quick
    }
}
