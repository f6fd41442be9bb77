//! The application's byte stream: a deterministic pattern the sender writes and the
//! receiver checks. The receiver keeps the payloads that arrived (keyed by sequence number;
//! a payload overlapping ones held keeps only its new bytes, so segments cut differently on
//! retransmission, as a kernel's may be, assemble too) and, for each in-order range
//! tcplab-core's receiver hands to the application (`Receiver::read`), assembles those
//! bytes from the payloads and compares them with the pattern: a byte missing, read twice,
//! out of order or different is counted, and the first such offset kept. The pattern is
//! tcplab's own ([`pattern_byte`], the UDP transport's) or any other
//! ([`Reassembly::with_pattern`]: the Linux endpoints' stream for real TCP).

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
    /// The first offset missing, different from the pattern, or where a read did not
    /// continue the stream.
    pub first_bad: Option<u64>,
}

impl StreamCheck {
    /// True when every byte reached the application once, in order, intact.
    pub fn intact(&self) -> bool {
        self.missing == 0 && self.corrupt == 0 && self.out_of_order_reads == 0
    }
}

/// Payloads held until the application reads them.
pub struct Reassembly {
    /// Disjoint payloads by first offset.
    held: BTreeMap<u64, Vec<u8>>,
    pattern: fn(u64) -> u8,
    pub check: StreamCheck,
}

impl Default for Reassembly {
    fn default() -> Self {
        Reassembly::with_pattern(pattern_byte)
    }
}

impl Reassembly {
    /// Checks the stream against `pattern` (the byte at each offset).
    pub fn with_pattern(pattern: fn(u64) -> u8) -> Self {
        Reassembly {
            held: BTreeMap::new(),
            pattern,
            check: StreamCheck::default(),
        }
    }

    /// A payload starting at stream offset `seq` arrived: its bytes not delivered or held
    /// yet are kept, the others counted as duplicates.
    pub fn arrive(&mut self, seq: u64, payload: &[u8]) {
        if payload.is_empty() {
            return;
        }
        let end = seq + payload.len() as u64;
        let lo = seq.max(self.check.delivered);
        let mut at = lo;
        // A held payload starting before `lo` may cover its start.
        if let Some((&s, p)) = self.held.range(..=at).next_back() {
            at = at.max((s + p.len() as u64).min(end));
        }
        let mut new = 0;
        while at < end {
            let next = self
                .held
                .range(at..end)
                .next()
                .map(|(&s, p)| (s, s + p.len() as u64));
            let gap_end = next.map_or(end, |(s, _)| s);
            if gap_end > at {
                let bytes = payload[(at - seq) as usize..(gap_end - seq) as usize].to_vec();
                self.held.insert(at, bytes);
                new += gap_end - at;
            }
            at = next.map_or(end, |(_, e)| e.min(end));
        }
        self.check.duplicate_arrivals += payload.len() as u64 - new;
        self.check.duplicate_segments += (new == 0) as u64;
    }

    /// The application reads `[first, first + len)`: assembles and checks it, then forgets
    /// the payloads below its end.
    pub fn read(&mut self, first: u64, len: u64) {
        let c = &mut self.check;
        if first != c.delivered {
            c.out_of_order_reads += 1;
            c.first_bad.get_or_insert(first.min(c.delivered));
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
                c.first_bad.get_or_insert(at);
                at = next;
                continue;
            };
            let upto = (s + p.len() as u64).min(end);
            for k in at..upto {
                if p[(k - s) as usize] != (self.pattern)(k) {
                    c.corrupt += 1;
                    c.first_bad.get_or_insert(k);
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
        assert_eq!(r.check.first_bad, Some(10));
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

    #[test]
    fn payloads_cut_differently_on_retransmission_assemble_from_their_new_bytes() {
        let mut r = Reassembly::default();
        r.arrive(100, &chunk(100, 100)); // held: 100..200
        r.arrive(300, &chunk(300, 50)); // held: 300..350
                                        // A retransmission spanning both, cut elsewhere: only 0..100 and 200..300 are new.
        r.arrive(0, &chunk(0, 400));
        assert_eq!(r.check.duplicate_arrivals, 150);
        assert_eq!(r.check.duplicate_segments, 0);
        r.arrive(150, &chunk(150, 100)); // nothing new
        assert_eq!(r.check.duplicate_segments, 1);
        r.read(0, 250);
        r.read(250, 150);
        assert!(r.check.intact(), "{:?}", r.check);
        assert_eq!(r.check.delivered, 400);
        assert_eq!(r.held(), 0);
    }

    #[test]
    fn another_pattern_is_checked_and_a_later_read_names_the_first_bad_offset() {
        fn word_numbers(k: u64) -> u8 {
            ((k / 8) >> (8 * (7 - k % 8))) as u8
        }
        let bytes: Vec<u8> = (0..64).map(word_numbers).collect();
        let mut r = Reassembly::with_pattern(word_numbers);
        r.arrive(0, &bytes);
        r.read(0, 64);
        assert!(r.check.intact() && r.check.first_bad.is_none());
        let mut tcplab = Reassembly::default();
        tcplab.arrive(0, &bytes);
        tcplab.read(0, 64);
        assert!(!tcplab.check.intact());
        let mut gap = Reassembly::with_pattern(word_numbers);
        gap.arrive(0, &bytes[..8]);
        gap.read(0, 8);
        gap.read(16, 8); // 8..16 skipped
        assert_eq!(gap.check.first_bad, Some(8));
    }
}
