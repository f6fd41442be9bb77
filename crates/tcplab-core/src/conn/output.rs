//! Packets to the peer.

use super::{payload_byte, Connection, Core, Role, State};
use crate::wire::{
    self, checksum::sum16, Ecn, Ipv4Header, TcpFlags, TcpHeader, TcpOptions, WireSackBlock,
};
use crate::{DataSegment, Time};

impl Connection {
    /// Appends the next packet to send at `now` to `out` and returns its length, or `None`
    /// when nothing is due. Call until `None` after every input and timeout.
    pub fn poll_packet(&mut self, now: Time, out: &mut Vec<u8>) -> Option<usize> {
        if let Some((seq, ack, with_ack, port)) = self.send_rst.take() {
            let flags = TcpFlags::RST.with(TcpFlags::ACK, with_ack);
            let mut tcp = self.header(seq, ack, flags, 0, TcpOptions::default());
            tcp.dst_port = port;
            return Some(self.emit(out, &tcp, Ecn::NotEct, None));
        }
        if self.state == State::Closed {
            return None;
        }
        if self.send_syn {
            self.send_syn = false;
            return Some(self.emit_syn(now, out));
        }
        if self.data_flows() {
            if let Some(n) = self.poll_core(now, out) {
                return Some(n);
            }
        }
        if self.send_fin || self.fin_due() {
            self.send_fin = false;
            return Some(self.emit_fin(now, out));
        }
        if self.send_ack {
            self.send_ack = false;
            let tcp = self.control(now, TcpFlags::ACK);
            return Some(self.emit(out, &tcp, Ecn::NotEct, None));
        }
        None
    }

    /// Our FIN is due: a receiver's application closed; a sender's wrote its last byte (or
    /// closed) and that byte has been sent: the FIN follows right behind it, as Linux's does.
    fn fin_due(&self) -> bool {
        if self.fin_sent.is_some() || !matches!(self.state, State::Established | State::CloseWait) {
            return false;
        }
        match &self.core {
            Core::Sender(s) => {
                let app_bytes = match &self.role {
                    Role::Sender { app_bytes, .. } => *app_bytes,
                    Role::Receiver => None,
                };
                // Once closed the core writes nothing more: snd_nxt is the end.
                s.is_finished() || self.fin_wanted || app_bytes.is_some_and(|n| s.snd_nxt().0 >= n)
            }
            Core::Receiver(_) => self.fin_wanted,
            Core::None => false,
        }
    }

    /// The FIN's retransmission timer runs once the FIN is all that is unacknowledged (the
    /// core retransmits data before it).
    pub(super) fn arm_fin_timer(&mut self, now: Time) {
        if self.fin_acked || self.rtx.is_some() || self.fin_sent.is_none() {
            return;
        }
        let rto = match &self.core {
            Core::Sender(s) if !s.is_finished() => return,
            Core::Sender(s) => s.rtt().rto(),
            _ => self.cfg.tcp.rto_initial,
        };
        self.rtx = Some(super::Backoff {
            deadline: now + rto,
            tries: 0,
        });
    }

    fn emit_fin(&mut self, now: Time, out: &mut Vec<u8>) -> usize {
        let seq = match self.fin_sent {
            Some(fin) => fin,
            None => {
                let fin = self.snd_nxt_wire();
                self.fin_sent = Some(fin);
                self.state = match self.state {
                    State::CloseWait => State::LastAck,
                    _ => State::FinWait1,
                };
                self.arm_fin_timer(now);
                fin
            }
        };
        let mut tcp = self.control(now, TcpFlags::ACK | TcpFlags::FIN);
        tcp.seq = seq;
        self.send_ack = false;
        self.emit(out, &tcp, Ecn::NotEct, None)
    }

    /// The core's next segment: data (Sender role) or an ACK (Receiver role).
    fn poll_core(&mut self, now: Time, out: &mut Vec<u8>) -> Option<usize> {
        let n = self.negotiated?;
        let rcv_nxt = self.rcv_nxt_wire();
        let ts_recent = self.ts_recent.unwrap_or(0);
        match &mut self.core {
            Core::Sender(s) => {
                // After the FIN only retransmissions remain: the core has nothing new.
                let (d, kind) = s.poll_transmit_with_kind(now)?;
                self.transmitted = Some((d, kind));
                let options = TcpOptions {
                    timestamps: d.ts_val.map(|t| (self.clock.to_wire(t), ts_recent)),
                    ..TcpOptions::default()
                };
                let flags = TcpFlags::ACK.with(TcpFlags::CWR, d.cwr);
                let window = self.window(self.cfg.tcp.rcv_buf);
                let tcp = self.header(self.ours.to_wire(d.seq), rcv_nxt, flags, window, options);
                self.send_ack = false;
                Some(self.emit(out, &tcp, Ecn::from_flags(d.ect, false), Some(d)))
            }
            Core::Receiver(r) => {
                let a = r.poll_transmit(now)?;
                let mut options = TcpOptions {
                    timestamps: a
                        .ts_ecr
                        .filter(|_| n.timestamps)
                        .map(|ecr| (self.clock.to_wire(now), ecr.as_nanos() as u32)),
                    ..TcpOptions::default()
                };
                for b in &a.sack {
                    options.push_sack(WireSackBlock {
                        left: self.theirs.to_wire(b.start),
                        right: self.theirs.to_wire(b.end),
                    });
                }
                let flags = TcpFlags::ACK.with(TcpFlags::ECE, a.ece && n.ecn);
                let fin = self.fin_received && self.theirs.to_wire(a.ack) == self.rcv_data_wire();
                let ack = self.theirs.to_wire(a.ack).wrapping_add(fin as u32);
                let window = self.window(a.window);
                let tcp = self.header(self.snd_nxt_wire(), ack, flags, window, options);
                self.send_ack = false;
                Some(self.emit(out, &tcp, Ecn::NotEct, None))
            }
            Core::None => None,
        }
    }

    /// The window field for `bytes` of receive space, scaled.
    fn window(&self, bytes: u64) -> u16 {
        let shift = self.negotiated.map_or(0, |n| n.rcv_wscale);
        (bytes >> shift).min(65535) as u16
    }

    /// A control segment (ACK, FIN) at our next sequence number, acknowledging what we have.
    fn control(&self, now: Time, flags: TcpFlags) -> TcpHeader {
        let ts = self.negotiated.is_some_and(|n| n.timestamps);
        let options = TcpOptions {
            timestamps: ts.then(|| (self.clock.to_wire(now), self.ts_recent.unwrap_or(0))),
            ..TcpOptions::default()
        };
        let window = self.window(self.cfg.tcp.rcv_buf);
        self.header(
            self.snd_nxt_wire(),
            self.rcv_nxt_wire(),
            flags,
            window,
            options,
        )
    }

    fn emit_syn(&mut self, now: Time, out: &mut Vec<u8>) -> usize {
        self.syn_sent = self.syn_sent.on_send(now);
        let tcp_cfg = &self.cfg.tcp;
        let passive = self.state == State::SynReceived;
        let n = self.negotiated;
        // A SYN offers what we have; a SYN-ACK answers only what the SYN offered.
        let (sack, ts, ws) = match (passive, n) {
            (true, Some(n)) => (
                n.sack,
                n.timestamps,
                n.window_scaling.then_some(n.rcv_wscale),
            ),
            _ => (
                tcp_cfg.sack_blocks > 0,
                tcp_cfg.timestamps,
                self.cfg.window_scale,
            ),
        };
        let options = TcpOptions {
            mss: Some(self.cfg.mss),
            window_scale: ws,
            sack_permitted: sack,
            timestamps: ts.then(|| {
                let ecr = if passive {
                    self.ts_recent.unwrap_or(0)
                } else {
                    0
                };
                (self.clock.to_wire(now), ecr)
            }),
            ..TcpOptions::default()
        };
        let (flags, ack) = if passive {
            let ecn = n.is_some_and(|n| n.ecn);
            (
                (TcpFlags::SYN | TcpFlags::ACK).with(TcpFlags::ECE, ecn),
                self.irs.wrapping_add(1),
            )
        } else {
            let ecn = tcp_cfg.ecn;
            (TcpFlags::SYN.with(TcpFlags::ECE | TcpFlags::CWR, ecn), 0)
        };
        let window = crate::Receiver::syn_window(&self.cfg.tcp).min(65535) as u16;
        let tcp = self.header(self.cfg.iss, ack, flags, window, options);
        self.emit(out, &tcp, Ecn::NotEct, None)
    }

    fn header(
        &self,
        seq: u32,
        ack: u32,
        flags: TcpFlags,
        window: u16,
        options: TcpOptions,
    ) -> TcpHeader {
        TcpHeader {
            src_port: self.cfg.local.1,
            dst_port: self.cfg.remote.1,
            seq,
            ack,
            flags,
            window,
            urgent: 0,
            options,
        }
    }

    /// Appends the packet: headers, then for data the payload pattern.
    fn emit(
        &mut self,
        out: &mut Vec<u8>,
        tcp: &TcpHeader,
        ecn: Ecn,
        data: Option<DataSegment>,
    ) -> usize {
        let ip = Ipv4Header {
            ecn,
            ident: self.next_ident,
            ttl: self.cfg.ttl,
            src: self.cfg.local.0,
            dst: self.cfg.remote.0,
            ..Ipv4Header::default()
        };
        self.next_ident = self.next_ident.wrapping_add(1);
        let start = out.len();
        let Some(d) = data else {
            wire::emit_tcp_headers(out, &ip, tcp, 0, 0);
            return out.len() - start;
        };
        // Payload first (after room for the headers), then the headers with its sum.
        let head = wire::IPV4_HEADER_LEN + tcp.header_len();
        out.resize(start + head, 0);
        out.extend((0..d.len as u64).map(|k| payload_byte(d.seq.0 + k)));
        let sum = sum16(0, &out[start + head..]);
        self.scratch.clear();
        wire::emit_tcp_headers(&mut self.scratch, &ip, tcp, d.len, sum);
        out[start..start + head].copy_from_slice(&self.scratch);
        out.len() - start
    }
}
