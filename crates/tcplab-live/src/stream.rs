//! The application's byte stream: a deterministic pattern the sender writes and the
//! receiver checks. The receiver keeps the payloads that arrived (keyed by sequence number)
//! and, for each in-order range tcplab-core's receiver hands to the application
//! (`Receiver::read`), assembles those bytes from the payloads and compares them with the
//! pattern: a byte missing, read twice, out of order or different is counted.

use std::collections::BTreeMap;

/// The byte at stream offset `k`: a 64-bit mix of the offset, so a shifted or repeated
/// range never matches by accident.
#[inline]
pub fn pattern_byte(k: u64) -> u8 {
    let x = (k / 8).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> (8 * (k % 8))) as u8 ^ (x >> 61) as u8
}

/// Fills `out` with the pattern from offset `start`.
pub fn fill(start: u64, out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = pattern_byte(start + i as u64);
    }
}

/// What the application received.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StreamCheck {
    /// Bytes handed to the application in order, each once.
    pub delivered: u64,
    /// Bytes of reads that were not there to assemble (the core delivered a range no
    /// payload covered).
    pub missing: u64,
    /// Bytes delivered whose value differs from the pattern.
    pub corrupt: u64,
    /// Reads that did not start where the previous one ended (a byte twice or a gap).
    pub out_of_order_reads: u64,
    /// Payload bytes that arrived again (retransmissions of held or delivered data).
    pub duplicate_arrivals: u64,
    /// Payloads whose bytes were all there already (spurious retransmissions).
    pub duplicate_segments: u64,
}

impl StreamCheck {
    /// True when every byte reached the application once, in order, intact.
    pub fn intact(&self) -> bool {
        self.missing == 0 && self.corrupt == 0 && self.out_of_order_reads == 0
    }
}

/// Payloads held until the application reads them.
#[derive(Default)]
pub struct Reassembly {
    held: BTreeMap<u64, Vec<u8>>,
    pub check: StreamCheck,
}

impl Reassembly {
    /// A payload starting at stream offset `seq` arrived.
    pub fn arrive(&mut self, seq: u64, payload: &[u8]) {
        let end = seq + payload.len() as u64;
        if end <= self.check.delivered {
            self.check.duplicate_arrivals += payload.len() as u64;
            self.check.duplicate_segments += 1;
            return;
        }
        match self.held.get(&seq) {
            Some(p) if p.len() >= payload.len() => {
                self.check.duplicate_arrivals += payload.len() as u64;
                self.check.duplicate_segments += 1;
            }
            _ => {
                self.held.insert(seq, payload.to_vec());
            }
        }
    }

    /// The application reads `[first, first + len)`: assembles and checks it, then forgets
    /// the payloads below its end.
    pub fn read(&mut self, first: u64, len: u64) {
        let c = &mut self.check;
        if first != c.delivered {
            c.out_of_order_reads += 1;
        }
        let end = first + len;
        let mut at = first;
        while at < end {
            let hit = self
                .held
                .range(..=at)
                .next_back()
                .filter(|(&s, p)| s + p.len() as u64 > at);
            let Some((&s, p)) = hit else {
                // Skip to the next held payload (or the end): those bytes are missing.
                let next = self
                    .held
                    .range(at..)
                    .next()
                    .map_or(end, |(&s, _)| s.min(end));
                c.missing += next - at;
                at = next;
                continue;
            };
            let upto = (s + p.len() as u64).min(end);
            for k in at..upto {
                if p[(k - s) as usize] != pattern_byte(k) {
                    c.corrupt += 1;
                }
            }
            at = upto;
        }
        c.delivered = c.delivered.max(end);
        let mut keep = self.held.split_off(&end);
        // A payload that straddles `end` stays for the next read.
        if let Some((s, p)) = self.held.pop_last() {
            if s + p.len() as u64 > end {
                keep.insert(s, p);
            }
        }
        self.held = keep;
    }

    /// Payloads held (out of order, or not yet read).
    pub fn held(&self) -> usize {
        self.held.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(start: u64, len: usize) -> Vec<u8> {
        let mut v = vec![0; len];
        fill(start, &mut v);
        v
    }

    #[test]
    fn the_pattern_is_not_periodic_in_small_shifts() {
        let a = chunk(0, 4096);
        for shift in [1, 8, 256, 1024, 1448] {
            let b = chunk(shift, 4096);
            let same = a.iter().zip(&b).filter(|(x, y)| x == y).count();
            assert!(same < 100, "shift {shift}: {same} equal bytes");
        }
    }

    #[test]
    fn in_order_and_reordered_payloads_read_intact() {
        let mut r = Reassembly::default();
        r.arrive(0, &chunk(0, 100));
        r.arrive(200, &chunk(200, 100));
        r.read(0, 100);
        r.arrive(100, &chunk(100, 100));
        r.arrive(200, &chunk(200, 100)); // a spurious retransmission
        r.read(100, 200);
        assert!(r.check.intact(), "{:?}", r.check);
        assert_eq!((r.check.delivered, r.check.duplicate_arrivals), (300, 100));
        assert_eq!(r.check.duplicate_segments, 1);
        assert_eq!(r.held(), 0);
    }

    #[test]
    fn missing_corrupt_and_repeated_bytes_are_counted() {
        let mut r = Reassembly::default();
        let mut bad = chunk(0, 100);
        bad[10] ^= 1;
        r.arrive(0, &bad);
        r.arrive(150, &chunk(150, 50));
        r.read(0, 200); // bytes 100..150 never arrived
        assert_eq!((r.check.corrupt, r.check.missing), (1, 50));
        r.arrive(100, &chunk(100, 100));
        r.read(100, 100); // read again: out of order
        assert_eq!(r.check.out_of_order_reads, 1);
        assert!(!r.check.intact());
    }

    #[test]
    fn a_payload_straddling_a_read_stays_for_the_next() {
        let mut r = Reassembly::default();
        r.arrive(0, &chunk(0, 100));
        r.read(0, 60);
        r.read(60, 40);
        assert!(r.check.intact(), "{:?}", r.check);
        assert_eq!(r.held(), 0);
    }
}
