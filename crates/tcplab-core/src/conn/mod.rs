//! A sans-IO TCP connection around tcplab-core's [`Sender`] or [`Receiver`]
//! (docs/real-tcp.md): the handshake, the close and the bookkeeping that turn the core's
//! one-way bulk transfer into packets an unmodified TCP peer accepts.
//!
//! A [`Connection`] has one [`Role`]: it sends bulk data (a tcplab sender, the peer is a
//! receiver such as a Linux socket sink) or receives it (a tcplab receiver, the peer is a
//! sender). It opens actively ([`Connection::connect`]) or passively
//! ([`Connection::listen`]), and is driven in the poll style: [`Connection::on_packet`]
//! with every IPv4 packet from the peer, [`Connection::poll_packet`] until it returns
//! `None`, [`Connection::poll_timeout`] / [`Connection::on_timeout`] for timers.
//!
//! # States
//!
//! RFC 9293's: `Listen`, `SynSent`, `SynReceived`, `Established`, `FinWait1`, `FinWait2`,
//! `Closing`, `TimeWait`, `CloseWait`, `LastAck`, `Closed` ([`State`]). What the
//! handshake negotiated ([`Negotiated`]: MSS, SACK, timestamps, window scale, ECN)
//! configures the core, which is built when the connection is established.
//!
//! # Simplifications (see docs/real-tcp.md)
//!
//! - A sending connection's FIN follows its last data byte; the FIN's own retransmission
//!   timer starts once every data byte is acknowledged (the core repairs the data).
//! - Data a sending connection receives is ignored (not acknowledged); payload bytes it
//!   sends are [`payload_byte`] of their sequence number.
//! - No urgent data, no simultaneous open beyond answering a SYN in `SynSent` with a
//!   SYN-ACK, no SYN cookies, no keepalive, no zero-window probes, no PAWS check.

#![warn(missing_docs)]

mod input;
mod output;
#[cfg(test)]
mod tests;

use crate::wire::{SeqMap, TsClock};
use crate::{
    ConfigError, ControllerSpec, DataSegment, Dur, Receiver, RecoverySpec, Sender, TcpConfig, Time,
    TxKind,
};

/// The byte a sending connection puts at core sequence number `seq` of its stream, so that a
/// receiver can check what arrived: the stream of the live testbed's Linux endpoints
/// (`python/tcplab/live/linux_endpoint.py`), 64-bit big-endian words, word `k` holding `k`,
/// so a Linux sink checks a tcplab sender's bytes and tcplab's receiver a Linux sender's.
#[inline]
pub fn payload_byte(seq: u64) -> u8 {
    ((seq / 8) >> (8 * (7 - seq % 8))) as u8
}

/// What the connection does with the data direction.
#[derive(Clone, Debug, PartialEq)]
pub enum Role {
    /// Send `app_bytes` bytes (None: until [`Connection::close`]) with this controller and
    /// recovery strategy.
    Sender {
        /// Congestion controller.
        controller: ControllerSpec,
        /// Loss recovery strategy.
        recovery: RecoverySpec,
        /// Bytes to send in all; the connection closes after the last is acknowledged.
        app_bytes: Option<u64>,
    },
    /// Receive what the peer sends.
    Receiver,
}

/// Settings of a connection. `tcp` is the core's configuration before negotiation: its
/// `timestamps`, `sack_blocks > 0` and `ecn` are what the SYN offers.
#[derive(Clone, Debug, PartialEq)]
pub struct ConnConfig {
    /// The core's settings (negotiation lowers `mss`, and turns off what the peer lacks).
    pub tcp: TcpConfig,
    /// Local IPv4 address and port.
    pub local: ([u8; 4], u16),
    /// Peer's IPv4 address and port; port 0 in [`Connection::listen`] accepts any port.
    pub remote: ([u8; 4], u16),
    /// Initial sequence number (the caller draws it at random: the core has no RNG).
    pub iss: u32,
    /// Offset of the timestamp clock (microsecond ticks), random like Linux's.
    pub ts_offset: u32,
    /// MSS option offered: 1460 for a 1500-byte MTU.
    pub mss: u16,
    /// Window scale shift offered (None: no option); Linux offers 7 for its default
    /// buffers.
    pub window_scale: Option<u8>,
    /// First SYN (and SYN-ACK) retransmission timeout; doubles each retry (Linux: 1 s).
    pub syn_rto: Dur,
    /// SYN retransmissions before giving up (Linux `tcp_syn_retries`: 6).
    pub syn_retries: u32,
    /// SYN-ACK retransmissions before giving up (Linux `tcp_synack_retries`: 5).
    pub synack_retries: u32,
    /// FIN retransmissions before giving up (Linux `tcp_orphan_retries` 0 means 8).
    pub fin_retries: u32,
    /// TIME_WAIT length, 2 * MSL (Linux: 60 s).
    pub time_wait: Dur,
    /// IP TTL.
    pub ttl: u8,
}

impl Default for ConnConfig {
    fn default() -> Self {
        ConnConfig {
            tcp: TcpConfig::default(),
            local: ([10, 0, 0, 1], 40000),
            remote: ([10, 0, 0, 2], 5001),
            iss: 0,
            ts_offset: 0,
            mss: 1460,
            window_scale: Some(7),
            syn_rto: Dur::from_secs(1),
            syn_retries: 6,
            synack_retries: 5,
            fin_retries: 8,
            time_wait: Dur::from_secs(60),
            ttl: 64,
        }
    }
}

/// A connection's state (RFC 9293 section 3.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum State {
    /// Waiting for a SYN.
    Listen,
    /// SYN sent, waiting for the SYN-ACK.
    SynSent,
    /// SYN received and SYN-ACK sent, waiting for its ACK.
    SynReceived,
    /// Data flows.
    Established,
    /// Our FIN sent, not yet acknowledged; the peer's not received.
    FinWait1,
    /// Our FIN acknowledged, waiting for the peer's.
    FinWait2,
    /// Both FINs sent, ours not yet acknowledged.
    Closing,
    /// Both FINs acknowledged; lingering 2 * MSL to re-acknowledge a retransmitted FIN.
    TimeWait,
    /// The peer's FIN received; we may still send.
    CloseWait,
    /// Our FIN sent after the peer's, waiting for its ACK.
    LastAck,
    /// Over (see [`Connection::outcome`]).
    Closed,
}

/// How a connection ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// Both FINs exchanged and acknowledged.
    Orderly,
    /// The peer reset it (a refused connection too).
    Reset,
    /// SYN, SYN-ACK or FIN retransmissions ran out.
    TimedOut,
    /// [`Connection::abort`] (a RST was sent).
    Aborted,
    /// The negotiated settings were refused by the core (a RST was sent).
    Config,
}

/// What the handshake settled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Negotiated {
    /// The peer's MSS option (536 when it sent none).
    pub peer_mss: u16,
    /// Both sides sent SACK-permitted.
    pub sack: bool,
    /// Both sides sent timestamps.
    pub timestamps: bool,
    /// Both sides sent the window scale option (RFC 7323: windows in segments after the
    /// SYNs are scaled).
    pub window_scaling: bool,
    /// Shift of the windows the peer advertises (0 without window scaling).
    pub snd_wscale: u8,
    /// Shift of the windows we advertise.
    pub rcv_wscale: u8,
    /// ECN negotiated (RFC 3168: SYN with ECE+CWR, SYN-ACK with ECE).
    pub ecn: bool,
}

/// Why a packet was not taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConnError {
    /// It does not decode ([`crate::wire::WireError`]).
    Wire(crate::wire::WireError),
    /// Its addresses or ports are not this connection's.
    NotThisConnection,
}

impl std::fmt::Display for ConnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnError::Wire(e) => write!(f, "malformed packet: {e}"),
            ConnError::NotThisConnection => write!(f, "packet for another connection"),
        }
    }
}

impl std::error::Error for ConnError {}

/// The core endpoint, once established.
enum Core {
    None,
    Sender(Box<Sender>),
    Receiver(Box<Receiver>),
}

/// Our SYN's (SYN-ACK's) departures, for the handshake's RTT sample (Karn: a SYN sent twice
/// gives none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SynSent {
    Not,
    Once(Time),
    Again,
}

impl SynSent {
    /// One more SYN (SYN-ACK) leaves at `now`.
    fn on_send(self, now: Time) -> SynSent {
        match self {
            SynSent::Not => SynSent::Once(now),
            SynSent::Once(_) | SynSent::Again => SynSent::Again,
        }
    }
}

/// A retransmission timer with exponential backoff.
#[derive(Clone, Copy, Debug)]
struct Backoff {
    deadline: Time,
    tries: u32,
}

/// One TCP connection (module docs).
pub struct Connection {
    cfg: ConnConfig,
    role: Role,
    state: State,
    outcome: Option<Outcome>,
    /// Why the core refused the negotiated settings ([`Outcome::Config`]).
    refusal: Option<crate::ConfigError>,
    core: Core,
    /// The data segment of the last packet polled, and its kind ([`Connection::take_transmitted`]).
    transmitted: Option<(DataSegment, TxKind)>,
    /// The core configuration after negotiation.
    core_cfg: Option<TcpConfig>,
    negotiated: Option<Negotiated>,
    /// Our data: core `Seq(0)` is `iss + 1`.
    ours: SeqMap,
    /// The peer's initial sequence number and its data map.
    irs: u32,
    theirs: SeqMap,
    clock: TsClock,
    /// The latest TSval from the peer (echoed on our control segments), wire value.
    ts_recent: Option<u32>,
    /// The peer's TSvals extended to 64 bits (for the receiver core's `Time` values).
    peer_ts: Option<u64>,
    /// Wire sequence number of our FIN, once sent; acknowledged?
    fin_sent: Option<u32>,
    fin_acked: bool,
    /// The application closed (Sender: FIN after the last byte is acknowledged).
    fin_wanted: bool,
    /// Wire sequence number of the peer's FIN, once seen; taken (all data before it in)?
    peer_fin: Option<u32>,
    fin_received: bool,
    /// Control segments owed.
    send_syn: bool,
    send_ack: bool,
    send_fin: bool,
    /// A RST owed: (seq, ack, ACK flag, destination port).
    send_rst: Option<(u32, u32, bool, u16)>,
    /// SYN / SYN-ACK / FIN retransmission timer.
    rtx: Option<Backoff>,
    syn_sent: SynSent,
    time_wait_until: Option<Time>,
    /// The window field of the peer's SYN (never scaled): a sender core's initial window.
    peer_syn_window: u16,
    /// Opened by `listen`, with this remote port (0: any): a RST in `SynReceived` returns
    /// to `Listen` (RFC 9293 section 3.10.7.4).
    listen_port: Option<u16>,
    /// Headers are built here before the payload is known (no allocation per packet).
    scratch: Vec<u8>,
    /// The IP identification of the next packet: one more per packet, as Linux counts a
    /// connection's DF packets, starting at the ISS's high half. It names each
    /// transmission on the wire ([`Connection::last_ident`]).
    next_ident: u16,
}

impl Connection {
    fn new(cfg: ConnConfig, role: Role, state: State) -> Result<Connection, ConfigError> {
        cfg.tcp.validate()?;
        if let Role::Sender {
            controller,
            recovery,
            app_bytes,
        } = &role
        {
            // Fail now, not at the handshake, on unknown names or parameters.
            Sender::build(&cfg.tcp, controller, recovery, *app_bytes)?;
        }
        let iss = cfg.iss;
        Ok(Connection {
            ours: SeqMap::after_syn(cfg.iss),
            clock: TsClock {
                unit_ns: 1000,
                offset: cfg.ts_offset,
            },
            cfg,
            role,
            state,
            outcome: None,
            refusal: None,
            core: Core::None,
            transmitted: None,
            core_cfg: None,
            negotiated: None,
            irs: 0,
            theirs: SeqMap::default(),
            ts_recent: None,
            peer_ts: None,
            fin_sent: None,
            fin_acked: false,
            fin_wanted: false,
            peer_fin: None,
            fin_received: false,
            send_syn: false,
            send_ack: false,
            send_fin: false,
            send_rst: None,
            rtx: None,
            syn_sent: SynSent::Not,
            time_wait_until: None,
            peer_syn_window: 0,
            listen_port: None,
            scratch: Vec::with_capacity(128),
            next_ident: (iss >> 16) as u16,
        })
    }

    /// Active open at `now`: the SYN is the first packet polled.
    pub fn connect(now: Time, cfg: ConnConfig, role: Role) -> Result<Connection, ConfigError> {
        let mut c = Connection::new(cfg, role, State::SynSent)?;
        c.send_syn = true;
        c.rtx = Some(Backoff {
            deadline: now + c.cfg.syn_rto,
            tries: 0,
        });
        Ok(c)
    }

    /// Passive open: waits for a SYN from `cfg.remote` (any port if its port is 0).
    pub fn listen(cfg: ConnConfig, role: Role) -> Result<Connection, ConfigError> {
        let port = cfg.remote.1;
        let mut c = Connection::new(cfg, role, State::Listen)?;
        c.listen_port = Some(port);
        Ok(c)
    }

    /// The current state.
    pub fn state(&self) -> State {
        self.state
    }
    /// How it ended, once [`State::Closed`].
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }
    /// Why the core refused the negotiated settings, when it ended with [`Outcome::Config`].
    pub fn refusal(&self) -> Option<&crate::ConfigError> {
        self.refusal.as_ref()
    }
    /// Over: nothing more will be sent or accepted.
    pub fn is_done(&self) -> bool {
        self.state == State::Closed
    }
    /// What the handshake negotiated, once a SYN was received.
    pub fn negotiated(&self) -> Option<Negotiated> {
        self.negotiated
    }
    /// The core's configuration after negotiation.
    pub fn core_config(&self) -> Option<&TcpConfig> {
        self.core_cfg.as_ref()
    }
    /// The peer's address and port (the port learned from its SYN after `listen`).
    pub fn remote(&self) -> ([u8; 4], u16) {
        self.cfg.remote
    }
    /// The core sender, once established (Sender role).
    pub fn sender(&self) -> Option<&Sender> {
        match &self.core {
            Core::Sender(s) => Some(s),
            _ => None,
        }
    }
    /// Mutable access to the core sender (to drain its loss responses and log).
    pub fn sender_mut(&mut self) -> Option<&mut Sender> {
        match &mut self.core {
            Core::Sender(s) => Some(s),
            _ => None,
        }
    }
    /// The data segment the last [`Connection::poll_packet`] carried and what it was (new
    /// data or which retransmission), once: what a driver records as the transmission's
    /// fact.
    pub fn take_transmitted(&mut self) -> Option<(DataSegment, TxKind)> {
        self.transmitted.take()
    }
    /// The IP identification of the last packet polled: with the sequence number it names
    /// one transmission on the wire (a drop in an emulator's log, a packet in a capture).
    pub fn last_ident(&self) -> u16 {
        self.next_ident.wrapping_sub(1)
    }
    /// The core receiver, once established (Receiver role).
    pub fn receiver(&self) -> Option<&Receiver> {
        match &self.core {
            Core::Receiver(r) => Some(r),
            _ => None,
        }
    }
    /// Mutable access to the core receiver (to `read` what arrived).
    pub fn receiver_mut(&mut self) -> Option<&mut Receiver> {
        match &mut self.core {
            Core::Receiver(r) => Some(r),
            _ => None,
        }
    }

    /// The application is done: a sending connection stops writing (its FIN follows the
    /// acknowledgment of the last byte), a receiving one sends its FIN. Before the
    /// handshake completes the connection just closes.
    pub fn close(&mut self) {
        match self.state {
            State::Listen | State::SynSent => self.finish(Outcome::Orderly),
            State::Closed => {}
            _ => {
                self.fin_wanted = true;
                if let Core::Sender(s) = &mut self.core {
                    s.close();
                }
            }
        }
    }

    /// Resets the connection: a RST goes out (if it was synchronized) and it closes.
    pub fn abort(&mut self) {
        if !matches!(self.state, State::Listen | State::SynSent | State::Closed) {
            self.send_rst = Some((
                self.snd_nxt_wire(),
                self.rcv_nxt_wire(),
                true,
                self.cfg.remote.1,
            ));
        }
        self.finish(Outcome::Aborted);
    }

    /// When [`Connection::on_timeout`] is due.
    pub fn poll_timeout(&self) -> Option<Time> {
        let core = match &self.core {
            Core::Sender(s) if self.data_flows() => s.poll_timeout(),
            Core::Receiver(r) if self.data_flows() => r.poll_timeout(),
            _ => None,
        };
        [core, self.rtx.map(|b| b.deadline), self.time_wait_until]
            .into_iter()
            .flatten()
            .min()
    }

    /// Timers due at `now` fire: the core's, SYN / SYN-ACK / FIN retransmission with
    /// exponential backoff (giving up after the configured retries), the end of TIME_WAIT.
    pub fn on_timeout(&mut self, now: Time) {
        if self.time_wait_until.is_some_and(|t| t <= now) {
            self.time_wait_until = None;
            self.finish(Outcome::Orderly);
            return;
        }
        if let Some(b) = self.rtx.filter(|b| b.deadline <= now) {
            let limit = match self.state {
                State::SynSent => self.cfg.syn_retries,
                State::SynReceived => self.cfg.synack_retries,
                _ => self.cfg.fin_retries,
            };
            if b.tries >= limit {
                self.finish(Outcome::TimedOut);
                return;
            }
            let tries = b.tries + 1;
            let base = match (self.state, &self.core) {
                (State::SynSent | State::SynReceived, _) => self.cfg.syn_rto,
                (_, Core::Sender(s)) => s.rtt().rto(),
                _ => self.cfg.tcp.rto_initial,
            };
            self.rtx = Some(Backoff {
                deadline: now + base.saturating_mul(1 << tries.min(20)),
                tries,
            });
            match self.state {
                State::SynSent | State::SynReceived => self.send_syn = true,
                _ => self.send_fin = self.fin_sent.is_some() && !self.fin_acked,
            }
        }
        if self.data_flows() {
            match &mut self.core {
                Core::Sender(s) => s.on_timeout(now),
                Core::Receiver(r) => r.on_timeout(now),
                Core::None => {}
            }
        }
    }

    /// States in which the core runs.
    fn data_flows(&self) -> bool {
        matches!(
            self.state,
            State::Established
                | State::FinWait1
                | State::FinWait2
                | State::Closing
                | State::CloseWait
                | State::LastAck
        )
    }

    fn finish(&mut self, outcome: Outcome) {
        self.state = State::Closed;
        self.outcome = Some(outcome);
        self.rtx = None;
        self.time_wait_until = None;
        self.send_syn = false;
        self.send_ack = false;
        self.send_fin = false;
    }
}

#[cfg(test)]
mod payload_tests {
    use super::payload_byte;

    #[test]
    fn the_payload_is_the_linux_endpoints_stream_of_big_endian_word_numbers() {
        // python/tcplab/live/linux_endpoint.py: word k (bytes 8k..8k+8) holds k, big-endian
        let bytes: Vec<u8> = (0..24).map(payload_byte).collect();
        assert_eq!(&bytes[..8], &[0; 8]);
        assert_eq!(&bytes[8..16], &[0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(&bytes[16..24], &[0, 0, 0, 0, 0, 0, 0, 2]);
        let k: u64 = 0x0102_0304_0506_0708;
        let word: Vec<u8> = (8 * k..8 * k + 8).map(payload_byte).collect();
        assert_eq!(word, k.to_be_bytes());
    }
}
