//! Packets from the peer.

use super::{Backoff, ConnError, Connection, Core, Negotiated, Outcome, Role, State, SynSent};
use crate::wire::{self, SeqMap, TcpFlags, TcpHeader, TcpPacket};
use crate::{AckSegment, DataSegment, Dur, Receiver, SackBlock, SackList, Sender, Time};

/// The MSS assumed when a SYN carries no MSS option (RFC 9293).
const DEFAULT_MSS: u16 = 536;
/// The smallest MSS accepted from a peer (Linux TCP_MIN_MSS).
const MIN_MSS: u16 = 88;
/// Largest window scale shift (RFC 7323 section 2.3).
const MAX_WSCALE: u8 = 14;

/// `a` is after `b` in 32-bit sequence space.
fn after(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

impl Connection {
    /// An IPv4 packet from the peer arrived at `now`. Malformed packets and packets of other
    /// connections are refused with the reason and change nothing.
    pub fn on_packet(&mut self, now: Time, packet: &[u8]) -> Result<(), ConnError> {
        let p = wire::parse_tcp(packet).map_err(ConnError::Wire)?;
        let (raddr, rport) = self.cfg.remote;
        let port_ok = p.tcp.src_port == rport || (rport == 0 && self.state == State::Listen);
        if p.ip.dst != self.cfg.local.0
            || p.tcp.dst_port != self.cfg.local.1
            || p.ip.src != raddr
            || !port_ok
        {
            return Err(ConnError::NotThisConnection);
        }
        let t = &p.tcp;
        match self.state {
            State::Closed => {}
            State::Listen => self.on_listen(now, t),
            State::SynSent => self.on_syn_sent(now, t),
            State::SynReceived => self.on_syn_received(now, &p),
            _ => self.on_synchronized(now, &p),
        }
        Ok(())
    }

    fn on_listen(&mut self, now: Time, t: &TcpHeader) {
        if t.flags.contains(TcpFlags::RST) {
            return;
        }
        if t.flags.contains(TcpFlags::ACK) {
            self.send_rst = Some((t.ack, 0, false, t.src_port));
            return;
        }
        if !t.flags.contains(TcpFlags::SYN) {
            return;
        }
        self.cfg.remote.1 = t.src_port;
        self.take_syn(t, true);
        self.state = State::SynReceived;
        self.send_syn = true;
        self.rtx = Some(Backoff {
            deadline: now + self.cfg.syn_rto,
            tries: 0,
        });
    }

    fn on_syn_sent(&mut self, now: Time, t: &TcpHeader) {
        let ack_ok = t.ack == self.cfg.iss.wrapping_add(1);
        if t.flags.contains(TcpFlags::ACK) && !ack_ok {
            if !t.flags.contains(TcpFlags::RST) {
                self.send_rst = Some((t.ack, 0, false, t.src_port));
            }
            return;
        }
        if t.flags.contains(TcpFlags::RST) {
            if t.flags.contains(TcpFlags::ACK) {
                self.finish(Outcome::Reset); // connection refused
            }
            return;
        }
        if !t.flags.contains(TcpFlags::SYN) {
            return;
        }
        self.take_syn(t, false);
        if t.flags.contains(TcpFlags::ACK) {
            self.send_ack = true;
            self.establish(now);
        } else {
            // Simultaneous open: answer with a SYN-ACK.
            self.state = State::SynReceived;
            self.send_syn = true;
        }
    }

    fn on_syn_received(&mut self, now: Time, p: &TcpPacket<'_>) {
        let t = &p.tcp;
        if t.flags.contains(TcpFlags::RST) {
            if t.seq == self.rcv_nxt_wire() {
                match self.listen_port {
                    // A passive open goes back to listening.
                    Some(port) => {
                        self.state = State::Listen;
                        self.cfg.remote.1 = port;
                        self.negotiated = None;
                        self.ts_recent = None;
                        self.rtx = None;
                        self.syn_sent = SynSent::Not;
                        self.send_syn = false;
                        self.send_ack = false;
                    }
                    None => self.finish(Outcome::Reset),
                }
            }
            return;
        }
        if t.flags.contains(TcpFlags::SYN) {
            if t.seq == self.irs {
                self.send_syn = true; // our SYN-ACK was lost: again
            }
            return;
        }
        if !t.flags.contains(TcpFlags::ACK) {
            return;
        }
        if t.ack != self.cfg.iss.wrapping_add(1) {
            self.send_rst = Some((t.ack, 0, false, t.src_port));
            return;
        }
        self.establish(now);
        // The handshake's ACK may carry data or a FIN already.
        self.on_synchronized(now, p);
    }

    /// The peer's SYN (or SYN-ACK): its ISN, and what it offers against what we offer.
    fn take_syn(&mut self, t: &TcpHeader, passive: bool) {
        self.irs = t.seq;
        self.theirs = SeqMap::after_syn(t.seq);
        self.peer_syn_window = t.window;
        let o = &t.options;
        let ours = &self.cfg.tcp;
        let ws = self.cfg.window_scale.zip(o.window_scale);
        let ece = t.flags.contains(TcpFlags::ECE);
        let cwr = t.flags.contains(TcpFlags::CWR);
        let ecn = ours.ecn && if passive { ece && cwr } else { ece && !cwr };
        self.negotiated = Some(Negotiated {
            peer_mss: o.mss.unwrap_or(DEFAULT_MSS).max(MIN_MSS),
            sack: ours.sack_blocks > 0 && o.sack_permitted,
            timestamps: ours.timestamps && o.timestamps.is_some(),
            window_scaling: ws.is_some(),
            snd_wscale: ws.map_or(0, |w| w.1.min(MAX_WSCALE)),
            rcv_wscale: ws.map_or(0, |w| w.0.min(MAX_WSCALE)),
            ecn,
        });
        if let Some((val, _)) = o.timestamps {
            self.ts_recent = Some(val);
        }
    }

    /// The handshake completed: build the core with the negotiated settings. A sender core
    /// takes the handshake's round trip as its first RTT sample when one SYN (SYN-ACK) was
    /// sent, as Linux does (tcp_ack_update_rtt on the SYN-ACK, tcp_synack_rtt_meas on the
    /// handshake's ACK): its RTO is then about three RTTs (at least `rto_min`), not
    /// `rto_initial`.
    fn establish(&mut self, now: Time) {
        self.state = State::Established;
        self.rtx = None;
        let Some(n) = self.negotiated else {
            return;
        };
        let mut cfg = self.cfg.tcp.clone();
        let ts_bytes = if n.timestamps { 12 } else { 0 };
        cfg.mss = cfg.mss.min((n.peer_mss - ts_bytes) as u32);
        cfg.timestamps = n.timestamps;
        // SACK blocks that fit in the option space next to the timestamp option.
        let room = if n.timestamps { 3 } else { 4 };
        cfg.sack_blocks = if n.sack { cfg.sack_blocks.min(room) } else { 0 };
        cfg.ecn = n.ecn;
        if let Role::Sender { .. } = self.role {
            // A sender core's rcv_buf is only its window before the first ACK: the peer's
            // (and its own receive window's autotuning has nothing to do).
            cfg.rcv_buf = (self.peer_syn_window as u64).max(cfg.mss as u64);
            cfg.rcv_autotune = false;
        }
        let core = match &self.role {
            Role::Sender {
                controller,
                recovery,
                app_bytes,
            } => match Sender::build(&cfg, controller, recovery, *app_bytes) {
                Ok(mut s) => {
                    s.set_timestamp_tick(Dur::from_nanos(self.clock.unit_ns));
                    if let SynSent::Once(sent) = self.syn_sent {
                        s.on_handshake_rtt(now, now.saturating_since(sent));
                    }
                    if self.fin_wanted {
                        s.close();
                    }
                    Core::Sender(Box::new(s))
                }
                Err(e) => {
                    self.refusal = Some(e);
                    let (seq, ack) = (self.snd_nxt_wire(), self.rcv_nxt_wire());
                    self.send_rst = Some((seq, ack, true, self.cfg.remote.1));
                    self.finish(Outcome::Config);
                    return;
                }
            },
            Role::Receiver => Core::Receiver(Box::new(Receiver::new(&cfg))),
        };
        self.core = core;
        self.core_cfg = Some(cfg);
    }

    fn on_synchronized(&mut self, now: Time, p: &TcpPacket<'_>) {
        let t = &p.tcp;
        if t.flags.contains(TcpFlags::RST) {
            // RFC 5961: a RST exactly at rcv_nxt resets; one elsewhere gets a challenge ACK.
            if t.seq == self.rcv_nxt_wire() {
                self.finish(Outcome::Reset);
            } else {
                self.send_ack = true;
            }
            return;
        }
        if t.flags.contains(TcpFlags::SYN) {
            // A retransmitted SYN-ACK (our ACK was lost) or a SYN in a synchronized state:
            // acknowledge (RFC 5961 challenge ACK).
            self.send_ack = true;
            return;
        }
        if !t.flags.contains(TcpFlags::ACK) {
            return;
        }
        if let Some((val, _)) = t.options.timestamps {
            if self.ts_recent.is_none_or(|r| !after(r, val)) {
                self.ts_recent = Some(val);
            }
        }
        self.on_ack(now, t);
        if self.state == State::Closed {
            return;
        }
        if let Core::Receiver(_) = self.core {
            if !p.payload.is_empty() {
                self.on_data(now, p);
            }
        }
        if t.flags.contains(TcpFlags::FIN) {
            self.peer_fin = Some(t.seq.wrapping_add(p.payload.len() as u32));
            if self.fin_received || self.state == State::TimeWait {
                self.send_ack = true; // a retransmitted FIN
                if let Some(until) = self.time_wait_until.as_mut() {
                    *until = now + self.cfg.time_wait;
                }
            }
        }
        self.take_fin(now);
    }

    fn on_ack(&mut self, now: Time, t: &TcpHeader) {
        if let Some(fin) = self.fin_sent {
            if !self.fin_acked && t.ack == fin.wrapping_add(1) {
                self.fin_acked = true;
                self.rtx = None;
                match self.state {
                    State::FinWait1 => self.state = State::FinWait2,
                    State::Closing => self.enter_time_wait(now),
                    State::LastAck => {
                        self.finish(Outcome::Orderly);
                        return;
                    }
                    _ => {}
                }
            }
        }
        let n = self.negotiated;
        let clock = self.clock;
        if let Core::Sender(s) = &mut self.core {
            let una = s.snd_una();
            let ack = self.ours.from_wire(t.ack, una).min(s.snd_nxt());
            let mut sack = SackList::new();
            for b in t.options.sack() {
                sack.push(SackBlock {
                    start: self.ours.from_wire(b.left, una),
                    end: self.ours.from_wire(b.right, una),
                });
            }
            let ts = n.is_some_and(|n| n.timestamps);
            let a = AckSegment {
                ack,
                sack,
                ts_ecr: t
                    .options
                    .timestamps
                    .filter(|_| ts)
                    .map(|(_, ecr)| clock.from_wire(ecr, now)),
                // The connection echoes the peer's TSval itself (`ts_recent`), not the core.
                ts_val: None,
                window: (t.window as u64) << n.map_or(0, |n| n.snd_wscale),
                ece: n.is_some_and(|n| n.ecn) && t.flags.contains(TcpFlags::ECE),
            };
            s.on_segment(now, &a);
        }
        self.arm_fin_timer(now);
    }

    fn on_data(&mut self, now: Time, p: &TcpPacket<'_>) {
        let t = &p.tcp;
        let n = self.negotiated;
        let (ts_val, ts_ecr) = match (n.is_some_and(|n| n.timestamps), t.options.timestamps) {
            (true, Some((val, ecr))) => (
                Some(self.peer_time(val)),
                // An echo of our own ACKs' TSval (0 before the peer saw one).
                (ecr != 0).then(|| self.clock.from_wire(ecr, now)),
            ),
            _ => (None, None),
        };
        let theirs = self.theirs;
        let Core::Receiver(r) = &mut self.core else {
            return;
        };
        let Some(seq) = theirs.try_from_wire(t.seq, r.rcv_nxt()) else {
            self.send_ack = true;
            return;
        };
        let ecn = n.is_some_and(|n| n.ecn);
        let seg = DataSegment {
            seq,
            len: p.payload.len() as u32,
            ts_val,
            ts_ecr,
            retransmission: 0,
            ect: ecn && p.ip.ecn.is_ect(),
            ce: ecn && p.ip.ecn.is_ce(),
            cwr: ecn && t.flags.contains(TcpFlags::CWR),
        };
        r.on_segment(now, &seg);
    }

    /// The peer's TSval as a core `Time`: its 32-bit clock extended to 64 bits (so that
    /// the receiver core's comparisons work across the wrap), echoed back exactly.
    fn peer_time(&mut self, val: u32) -> Time {
        let ext = match self.peer_ts {
            // Start high enough that earlier values stay positive.
            None => (1u64 << 32) + val as u64,
            Some(last) => last.saturating_add_signed(val.wrapping_sub(last as u32) as i32 as i64),
        };
        self.peer_ts = Some(self.peer_ts.map_or(ext, |l| l.max(ext)));
        Time::from_nanos(ext)
    }

    /// Takes the peer's FIN once every byte before it has arrived.
    fn take_fin(&mut self, now: Time) {
        let Some(fin) = self.peer_fin else {
            return;
        };
        if self.fin_received || self.rcv_data_wire() != fin {
            return;
        }
        self.fin_received = true;
        self.send_ack = true;
        match self.state {
            State::Established => self.state = State::CloseWait,
            State::FinWait1 if self.fin_acked => self.enter_time_wait(now),
            State::FinWait1 => self.state = State::Closing,
            State::FinWait2 => self.enter_time_wait(now),
            _ => {}
        }
    }

    pub(super) fn enter_time_wait(&mut self, now: Time) {
        self.state = State::TimeWait;
        self.rtx = None;
        self.time_wait_until = Some(now + self.cfg.time_wait);
    }

    /// Wire number of the next data byte expected from the peer (its FIN not counted).
    pub(super) fn rcv_data_wire(&self) -> u32 {
        match &self.core {
            Core::Receiver(r) => self.theirs.to_wire(r.rcv_nxt()),
            _ => self.irs.wrapping_add(1),
        }
    }

    /// What we acknowledge: the next byte expected, past the peer's FIN once taken.
    pub(super) fn rcv_nxt_wire(&self) -> u32 {
        self.rcv_data_wire().wrapping_add(self.fin_received as u32)
    }

    /// Our next sequence number: past our data and our FIN.
    pub(super) fn snd_nxt_wire(&self) -> u32 {
        match (&self.core, self.fin_sent) {
            (_, Some(fin)) => fin.wrapping_add(1),
            (Core::Sender(s), None) => self.ours.to_wire(s.snd_nxt()),
            _ => match self.state {
                State::SynSent | State::SynReceived | State::Listen => self.cfg.iss,
                _ => self.cfg.iss.wrapping_add(1),
            },
        }
    }
}
