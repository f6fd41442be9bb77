//! The receive window and the ACKs of Linux 6.18's receiver, replayed: the kernel's own
//! exchange on the fidelity grid's 1.6 Mb/s path (cell `cubic-1.6M-loss0-shallow-short`,
//! seed 1: RTT 40 ms, a 2-packet buffer, the kernel's CUBIC sender), captured at the
//! emulator. Each data segment is fed when it reached the receiver (its departure + 7.5 ms
//! serialization + 20 ms) and every ACK the receiver sends must be the kernel's next one, at
//! the same arrival, with the same SACK blocks and window.
//!
//! What it holds the receiver to (the divergence at 334.7 ms in docs/fidelity.md): Linux sends the
//! ACK from the receive path, before the application reads, so the ACK that fills a hole
//! advertises the buffer less every segment that segment released (23,168 at 266.6 ms:
//! 69,120 bytes, nine segments held, where "read at once" gave 77,824), and
//! tcp_grow_window runs while the held segments are still held: the window grows on the
//! segment after the hole is filled (314.4 ms), and that growth sends its ACK at once.
//! The replay stops before the first full-sized segment the kernel marked PSH that the
//! receiver would read before its delayed ACK (41,992): Linux acknowledges such a segment
//! when the application reads it (tcp_measure_rcv_mss, ICSK_ACK_PUSHED); the simulator's
//! segments carry no PSH flag.

use tcplab_core::{DataSegment, Receiver, Seq, TcpConfig, Time};

enum Ev {
    /// A data segment: its departure (µs after the first) and its first byte.
    D(u64, u64),
    /// An ACK: cumulative ACK, window, SACK blocks (most recent first).
    A(u64, u64, &'static [(u64, u64)]),
}
use Ev::{A, D};

/// Departure to arrival at the receiver: 1,500 bytes at 1.6 Mb/s and 20 ms.
const TO_RECEIVER_US: u64 = 27_500;

#[rustfmt::skip]
const KERNEL: &[Ev] = &[
    D(0, 0),
    A(1448, 68096, &[]),
    D(7500, 1448),
    A(2896, 71168, &[]),
    D(47760, 14480),
    A(2896, 74240, &[(14480, 15928)]),
    D(55260, 15928),
    A(2896, 76800, &[(14480, 17376)]),
    D(62760, 17376),
    A(2896, 77824, &[(14480, 18824)]),
    D(95580, 2896),
    A(4344, 76800, &[(14480, 18824)]),
    D(103080, 4344),
    A(5792, 76288, &[(14480, 18824)]),
    D(110580, 5792),
    A(7240, 76288, &[(14480, 18824)]),
    D(143400, 7240),
    A(8688, 76288, &[(14480, 18824)]),
    D(150900, 8688),
    A(10136, 76288, &[(14480, 18824)]),
    D(158400, 10136),
    A(11584, 76288, &[(14480, 18824)]),
    D(165900, 11584),
    A(13032, 76288, &[(14480, 18824)]),
    D(191220, 18824),
    A(13032, 76288, &[(14480, 20272)]),
    D(198720, 20272),
    A(13032, 76288, &[(14480, 21720)]),
    D(206220, 21720),
    A(13032, 76288, &[(14480, 23168)]),
    D(213720, 24616),
    A(13032, 76288, &[(24616, 26064), (14480, 23168)]),
    D(221220, 27512),
    A(13032, 76288, &[(27512, 28960), (24616, 26064), (14480, 23168)]),
    D(239040, 13032),
    A(23168, 69120, &[(27512, 28960), (24616, 26064)]),
    D(246540, 28960),
    A(23168, 77824, &[(27512, 30408), (24616, 26064)]),
    D(254040, 30408),
    A(23168, 77824, &[(27512, 31856), (24616, 26064)]),
    D(261580, 23168),
    A(26064, 75264, &[(27512, 31856)]),
    D(269120, 26064),
    A(31856, 76288, &[]),
    D(286900, 31856),
    A(33304, 80896, &[]),
    D(294400, 33304),
    D(301900, 34752),
    A(36200, 80896, &[]),
    D(309400, 36200),
    D(316900, 37648),
    A(39096, 80896, &[]),
    D(334660, 39096),
    D(349660, 40544),
    A(41992, 80896, &[]),
];

#[test]
fn every_ack_and_window_is_the_kernels() {
    let mut r = Receiver::new(&TcpConfig::linux());
    let mut want = KERNEL.iter().peekable();
    let mut n = 0;
    while let Some(ev) = want.next() {
        let D(departure, seq) = ev else {
            panic!("ACK #{n} of the kernel's was not sent");
        };
        let now = Time::from_micros(departure + TO_RECEIVER_US);
        if let Some(due) = r.poll_timeout() {
            assert!(
                due > now,
                "a delayed ACK at {due:?} before segment {seq}: the kernel sent none"
            );
        }
        let seg = DataSegment {
            seq: Seq(*seq),
            len: 1448,
            ts_val: Some(now),
            ts_ecr: None,
            retransmission: 0,
            ect: false,
            ce: false,
            cwr: false,
        };
        r.on_segment(now, &seg);
        let sent = r.poll_transmit(now);
        match (sent, want.peek()) {
            (Some(a), Some(A(ack, window, sack))) => {
                let blocks: Vec<(u64, u64)> = a.sack.iter().map(|b| (b.start.0, b.end.0)).collect();
                assert_eq!(
                    (a.ack.0, a.window, blocks.as_slice()),
                    (*ack, *window, *sack),
                    "ACK #{n}, after segment {seq} at {now:?}"
                );
                want.next();
                n += 1;
            }
            (Some(a), _) => panic!(
                "segment {seq} at {now:?}: ACK {} sent, the kernel sent none",
                a.ack.0
            ),
            (None, Some(A(ack, ..))) => {
                panic!("segment {seq} at {now:?}: no ACK, the kernel sent ACK {ack}")
            }
            (None, _) => {}
        }
    }
    assert_eq!(n, 26, "every ACK of the kernel's was sent");
}
