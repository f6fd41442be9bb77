//! Every TCP segment with payload that a host sends into the emulator, as it leaves the host
//! (model time, addresses, ports, raw sequence number, payload bytes): the kernel's own
//! transmissions on the wire. The kernel's trace (`tcp:tcp_retransmit_skb`) says when a
//! segment was retransmitted but not which one; this log says which. Kept when the scenario
//! traces segments; written as `tcp_sends.csv`. At most [`MAX_ROWS`] rows are kept; the rest
//! are counted.

use crate::ident::Ident;
use std::io::Write;
use std::net::Ipv4Addr;
use tcplab_core::Time;

/// Rows kept at most (about 32 bytes each in memory).
pub const MAX_ROWS: usize = 4_000_000;

/// The header of `tcp_sends.csv`.
pub const HEADER: &str = "t_ns,src,dst,sport,dport,seq,len\n";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSend {
    pub at: Time,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub len: u16,
}

#[derive(Debug, Default)]
pub struct TcpSends {
    pub rows: Vec<TcpSend>,
    /// Rows not kept past [`MAX_ROWS`].
    pub cut: u64,
}

impl TcpSends {
    /// Records the packet of identity `id` read from a host at `at` when it is a TCP segment
    /// carrying data.
    pub fn record(&mut self, at: Time, id: &Ident) {
        let (Some(seq), Some(len @ 1..), Some(sport), Some(dport)) =
            (id.tcp_seq, id.tcp_payload, id.sport, id.dport)
        else {
            return;
        };
        if self.rows.len() >= MAX_ROWS {
            self.cut += 1;
            return;
        }
        self.rows.push(TcpSend {
            at,
            src: id.src,
            dst: id.dst,
            sport,
            dport,
            seq,
            len,
        });
    }

    /// The rows as CSV, [`HEADER`] first.
    pub fn write_csv(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(HEADER.as_bytes())?;
        for r in &self.rows {
            writeln!(
                w,
                "{},{},{},{},{},{},{}",
                r.at.as_nanos(),
                r.src,
                r.dst,
                r.sport,
                r.dport,
                r.seq,
                r.len
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ident;

    /// An IPv4 + TCP packet from 10.0.0.1:5400 to 10.0.0.2:80 with `payload` bytes.
    fn tcp(seq: u32, payload: usize, flags: u8) -> Vec<u8> {
        let len = 40 + payload;
        let mut p = vec![0u8; len];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 0, 0, 1]);
        p[16..20].copy_from_slice(&[10, 0, 0, 2]);
        p[20..22].copy_from_slice(&5400u16.to_be_bytes());
        p[22..24].copy_from_slice(&80u16.to_be_bytes());
        p[24..28].copy_from_slice(&seq.to_be_bytes());
        p[32] = 5 << 4;
        p[33] = flags;
        p
    }

    #[test]
    fn data_segments_are_logged_with_their_sequence_numbers_pure_acks_are_not() {
        let mut s = TcpSends::default();
        for (t, p) in [
            (1, tcp(1000, 1448, 0x10)),
            (2, tcp(2448, 0, 0x10)),
            (3, tcp(1000, 1448, 0x18)),
        ] {
            s.record(Time::from_micros(t), &ident::ipv4(&p).unwrap());
        }
        let mut out = Vec::new();
        s.write_csv(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!(
                "{HEADER}1000,10.0.0.1,10.0.0.2,5400,80,1000,1448\n\
                 3000,10.0.0.1,10.0.0.2,5400,80,1000,1448\n"
            )
        );
        assert_eq!(s.cut, 0);
    }
}
