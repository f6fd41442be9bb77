//! Which packets a simulation of the same scenario has no counterpart of.
//!
//! The simulator starts a TCP flow at its first data segment and ends it at its last ACK: it
//! has no handshake and no teardown. A real TCP connection through the emulator sends a SYN,
//! a SYN+ACK and the handshake's ACK before its first byte, and FINs after its last. If the
//! loss model drew for them, the SYN and the handshake's ACK would take the forward loss
//! stream's first two draws, and every data packet after them would meet the draw of the
//! packet two places later than in the simulated run: the same seed, other losses (measured:
//! kernel drops at data transmissions 8 and 36 where the simulation dropped 10 and 38).
//!
//! [`Unmodelled::is_unmodelled`] names those packets: a TCP segment without payload that
//! carries SYN, FIN or RST, and a pure ACK of a connection that has not yet carried a byte
//! of payload in either direction (the handshake's ACK). They are still queued and serialized
//! (they take the link's time); only the loss model skips them. Everything else (UDP,
//! tcplab's own transport, pure ACKs of a connection that carries data) is modelled.

use crate::ident::Ident;
use std::collections::HashSet;
use std::net::Ipv4Addr;

const FIN: u8 = 0x01;
const SYN: u8 = 0x02;
const RST: u8 = 0x04;

/// A connection, the lower endpoint first (both directions map to one key).
type Conn = ((Ipv4Addr, u16), (Ipv4Addr, u16));

/// The connections that have carried payload (see the module docs).
#[derive(Default)]
pub struct Unmodelled {
    carrying: HashSet<Conn>,
}

impl Unmodelled {
    /// Whether the packet of identity `id` ([`crate::ident::ipv4`], which the emulator reads
    /// for every packet) has no counterpart in a simulation; updates the connection's state
    /// when it carries payload.
    pub fn is_unmodelled(&mut self, id: &Ident) -> bool {
        let (Some(sport), Some(dport), Some(payload), Some(flags)) =
            (id.sport, id.dport, id.tcp_payload, id.tcp_flags)
        else {
            return false; // not TCP, or a later fragment, or a header cut short
        };
        let (a, b) = ((id.src, sport), (id.dst, dport));
        let conn = if a <= b { (a, b) } else { (b, a) };
        if payload > 0 {
            self.carrying.insert(conn);
            return false;
        }
        flags & (SYN | FIN | RST) != 0 || !self.carrying.contains(&conn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ident;

    fn unmodelled(u: &mut Unmodelled, p: &[u8]) -> bool {
        ident::ipv4(p).is_some_and(|id| u.is_unmodelled(&id))
    }

    /// An IPv4 TCP segment from 10.0.0.1:`sport` to 10.0.0.2:`dport` (or back when `back`)
    /// with `flags` and `payload` bytes.
    fn seg(back: bool, flags: u8, payload: usize) -> Vec<u8> {
        let (a, b) = ([10, 0, 0, 1], [10, 0, 0, 2]);
        let (src, dst, sp, dp) = if back {
            (b, a, 5001u16, 40000u16)
        } else {
            (a, b, 40000, 5001)
        };
        let len = (40 + payload) as u16;
        let mut p = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0];
        p[2..4].copy_from_slice(&len.to_be_bytes());
        p.extend_from_slice(&src);
        p.extend_from_slice(&dst);
        p.extend_from_slice(&sp.to_be_bytes());
        p.extend_from_slice(&dp.to_be_bytes());
        p.extend_from_slice(&[0; 8]);
        p.extend_from_slice(&[0x50, flags, 0, 0, 0, 0, 0, 0]);
        p.extend(std::iter::repeat_n(0u8, payload));
        p
    }

    const ACK: u8 = 0x10;

    #[test]
    fn the_handshake_and_the_teardown_are_unmodelled_the_transfer_is_not() {
        let mut u = Unmodelled::default();
        assert!(unmodelled(&mut u, &seg(false, SYN, 0)), "SYN");
        assert!(unmodelled(&mut u, &seg(true, SYN | ACK, 0)), "SYN+ACK");
        assert!(
            unmodelled(&mut u, &seg(false, ACK, 0)),
            "the handshake's ACK"
        );
        assert!(!unmodelled(&mut u, &seg(false, ACK, 1448)), "data");
        assert!(
            !unmodelled(&mut u, &seg(true, ACK, 0)),
            "the receiver's ACK of data"
        );
        assert!(
            !unmodelled(&mut u, &seg(false, ACK | FIN, 100)),
            "a FIN with the last data"
        );
        assert!(unmodelled(&mut u, &seg(false, ACK | FIN, 0)), "a bare FIN");
        assert!(unmodelled(&mut u, &seg(true, RST, 0)), "RST");
    }

    #[test]
    fn other_packets_are_modelled() {
        let mut u = Unmodelled::default();
        let mut udp = seg(false, 0, 10);
        udp[9] = 17;
        assert!(!unmodelled(&mut u, &udp));
        assert!(!unmodelled(&mut u, &[0x45, 0, 0]), "cut short");
        let mut later_fragment = seg(false, SYN, 0);
        later_fragment[7] = 8;
        assert!(!unmodelled(&mut u, &later_fragment));
    }

    #[test]
    fn a_second_connection_has_its_own_handshake() {
        let mut u = Unmodelled::default();
        assert!(!unmodelled(&mut u, &seg(false, ACK, 1448)));
        let mut other = seg(false, ACK, 0);
        other[21] = 99; // another source port
        assert!(
            unmodelled(&mut u, &other),
            "a connection that has carried nothing"
        );
    }
}
