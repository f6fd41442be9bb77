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
    /// Whether IPv4 packet `p` has no counterpart in a simulation (updates the connection's
    /// state when `p` carries payload).
    pub fn is_unmodelled(&mut self, p: &[u8]) -> bool {
        let Some(s) = tcp(p) else {
            return false;
        };
        let (a, b) = (s.src, s.dst);
        let conn = if a <= b { (a, b) } else { (b, a) };
        if s.payload > 0 {
            self.carrying.insert(conn);
            return false;
        }
        s.flags & (SYN | FIN | RST) != 0 || !self.carrying.contains(&conn)
    }
}

struct Tcp {
    src: (Ipv4Addr, u16),
    dst: (Ipv4Addr, u16),
    flags: u8,
    payload: usize,
}

/// The TCP header facts of an IPv4 packet; None for anything else (other protocols, later
/// fragments, headers cut short).
fn tcp(p: &[u8]) -> Option<Tcp> {
    if p.len() < 20 || p[0] >> 4 != 4 || p[9] != 6 {
        return None;
    }
    let be16 = |i: usize| u16::from_be_bytes([p[i], p[i + 1]]);
    if be16(6) & 0x1fff != 0 {
        return None;
    }
    let ihl = (p[0] & 0x0f) as usize * 4;
    let l4 = p.get(ihl..).filter(|l| ihl >= 20 && l.len() >= 20)?;
    let headers = ihl + (l4[12] >> 4) as usize * 4;
    let addr = |i: usize| Ipv4Addr::new(p[i], p[i + 1], p[i + 2], p[i + 3]);
    Some(Tcp {
        src: (addr(12), u16::from_be_bytes([l4[0], l4[1]])),
        dst: (addr(16), u16::from_be_bytes([l4[2], l4[3]])),
        flags: l4[13],
        payload: (be16(2) as usize).saturating_sub(headers),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(u.is_unmodelled(&seg(false, SYN, 0)), "SYN");
        assert!(u.is_unmodelled(&seg(true, SYN | ACK, 0)), "SYN+ACK");
        assert!(u.is_unmodelled(&seg(false, ACK, 0)), "the handshake's ACK");
        assert!(!u.is_unmodelled(&seg(false, ACK, 1448)), "data");
        assert!(
            !u.is_unmodelled(&seg(true, ACK, 0)),
            "the receiver's ACK of data"
        );
        assert!(
            !u.is_unmodelled(&seg(false, ACK | FIN, 100)),
            "a FIN with the last data"
        );
        assert!(u.is_unmodelled(&seg(false, ACK | FIN, 0)), "a bare FIN");
        assert!(u.is_unmodelled(&seg(true, RST, 0)), "RST");
    }

    #[test]
    fn other_packets_are_modelled() {
        let mut u = Unmodelled::default();
        let mut udp = seg(false, 0, 10);
        udp[9] = 17;
        assert!(!u.is_unmodelled(&udp));
        assert!(!u.is_unmodelled(&[0x45, 0, 0]), "cut short");
        let mut later_fragment = seg(false, SYN, 0);
        later_fragment[7] = 8;
        assert!(!u.is_unmodelled(&later_fragment));
    }

    #[test]
    fn a_second_connection_has_its_own_handshake() {
        let mut u = Unmodelled::default();
        assert!(!u.is_unmodelled(&seg(false, ACK, 1448)));
        let mut other = seg(false, ACK, 0);
        other[21] = 99; // another source port
        assert!(
            u.is_unmodelled(&other),
            "a connection that has carried nothing"
        );
    }
}
