//! The Internet checksum (RFC 1071): a one's-complement sum of 16-bit big-endian words.
//!
//! Sums are accumulated in a `u64` so that any packet (and any number of chunks) can be
//! summed without overflow; [`fold`] turns a sum into the 16-bit checksum field.

/// Adds `bytes` to the running sum `acc` as 16-bit big-endian words. An odd final byte is
/// padded with a zero byte, so only the last chunk of a checksummed range may have odd
/// length. Sums are equal after [`fold`], not before (words are added 32 bits at a time).
#[inline]
pub fn sum16(mut acc: u64, bytes: &[u8]) -> u64 {
    // 32-bit words: since 2^16 = 1 in one's-complement arithmetic (mod 2^16 - 1), a sum of
    // big-endian 32-bit words folds to the same checksum as the sum of their 16-bit halves,
    // in half the steps.
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        acc += u32::from_be_bytes([w[0], w[1], w[2], w[3]]) as u64;
    }
    match *words.remainder() {
        [a, b, c] => acc += ((a as u64) << 8 | b as u64) + ((c as u64) << 8),
        [a, b] => acc += (a as u64) << 8 | b as u64,
        [a] => acc += (a as u64) << 8,
        _ => {}
    }
    acc
}

/// Folds a running sum to 16 bits and complements it: the value of a checksum field. A
/// range that includes a correct checksum field folds to 0.
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    !(acc as u16)
}

/// The Internet checksum of `bytes`.
#[inline]
pub fn checksum(bytes: &[u8]) -> u16 {
    fold(sum16(0, bytes))
}

/// The running sum of the IPv4 pseudo-header of a TCP or UDP checksum (RFC 793, RFC 768):
/// source and destination addresses, protocol and transport length (header + payload).
/// The length is added as given: callers pass the same value the header carries.
#[inline]
pub fn pseudo_header_sum(src: [u8; 4], dst: [u8; 4], protocol: u8, l4_len: u32) -> u64 {
    let acc = sum16(0, &src);
    let acc = sum16(acc, &dst);
    acc + protocol as u64 + l4_len as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3: the words 0001 f203 f4f5 f6f7 sum to ddf2 (folded).
        let b = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(fold(sum16(0, &b)), !0xddf2);
        assert_eq!(checksum(&b), !0xddf2);
    }

    #[test]
    fn odd_length_pads_with_zero_and_checksum_verifies() {
        let mut b = vec![0x12, 0x34, 0x56, 0, 0];
        let c = checksum(&b[..3]);
        assert_eq!(c, checksum(&[0x12, 0x34, 0x56, 0x00]));
        // Place the checksum after an even prefix: the whole range sums to zero.
        b.truncate(2);
        let c = checksum(&b);
        b.extend_from_slice(&c.to_be_bytes());
        assert_eq!(checksum(&b), 0);
    }

    #[test]
    fn chunks_sum_like_the_whole() {
        let b: Vec<u8> = (0..=255u8).cycle().take(3001).collect();
        let whole = checksum(&b);
        let parts = fold(sum16(sum16(sum16(0, &b[..100]), &b[100..2000]), &b[2000..]));
        assert_eq!(whole, parts);
    }

    #[test]
    fn matches_a_plain_16_bit_sum() {
        let plain = |b: &[u8]| {
            let mut acc = 0u64;
            for c in b.chunks(2) {
                acc += (c[0] as u64) << 8 | c.get(1).copied().unwrap_or(0) as u64;
            }
            fold(acc)
        };
        let b: Vec<u8> = (0..2000u32).map(|i| (i * 7919 % 251) as u8).collect();
        for len in 0..b.len() {
            for start in [0, 1, 2, 3] {
                if start <= len {
                    assert_eq!(
                        checksum(&b[start..len]),
                        plain(&b[start..len]),
                        "{start}..{len}"
                    );
                }
            }
        }
    }

    #[test]
    fn large_sums_do_not_overflow() {
        let b = vec![0xffu8; 1 << 20];
        assert_eq!(checksum(&b), 0);
    }
}
