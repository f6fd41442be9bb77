//! ECN in the IPv4 header: whether a packet is ECN-capable (ECT(0), ECT(1)) and setting
//! Congestion Experienced when the model's discipline marked it, with the header checksum
//! recomputed (RFC 3168: the two low bits of the TOS byte).

use tcplab_sim::pcap::checksum;

const CE: u8 = 0b11;

/// The packet carries ECT(0) or ECT(1) (not Not-ECT, not already CE).
pub fn ect(p: &[u8]) -> bool {
    matches!(p.get(1).map(|tos| tos & CE), Some(0b01 | 0b10))
}

/// Sets CE and recomputes the IPv4 header checksum. `p` must be an IPv4 packet (checked by
/// [`crate::ident::ipv4`] before it was offered).
pub fn set_ce(p: &mut [u8]) {
    p[1] |= CE;
    let ihl = ((p[0] & 0x0f) as usize * 4).min(p.len());
    p[10] = 0;
    p[11] = 0;
    let sum = checksum(&p[..ihl]);
    p[10..12].copy_from_slice(&sum.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marking_sets_ce_and_keeps_the_header_checksum_valid() {
        // A real header (checksum 0xb861), ECT(0).
        let mut p = vec![
            0x45, 0x02, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let sum = checksum(&p);
        p[10..12].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(checksum(&p), 0, "a valid header sums to zero");
        assert!(ect(&p));
        set_ce(&mut p);
        assert_eq!(p[1] & 3, 3);
        assert!(!ect(&p));
        assert_eq!(checksum(&p), 0);
        p[1] = 0;
        assert!(!ect(&p));
    }
}
