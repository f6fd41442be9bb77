//! The ETH framework's framing (`framing = "eth"`, tcplab-stack flows live): what it can
//! carry. The one home of the rule: scenario validation ([`crate::validate`]) and the live
//! transport's flow config (`tcplab_live::flow_config`, where the framing can also be
//! given apart from the scenario) both apply it.

use crate::error::Problem;
use crate::scenario::{ETH_FLOWS, ETH_PACKET};

/// What the ETH framing cannot carry for flow `index` (at `path`, its mss at `mss_path`):
/// packets other than [`ETH_PACKET`] bytes, a byte count that is not a whole number of
/// them, a flow number past [`ETH_FLOWS`].
pub fn eth_framing(
    path: &str,
    index: usize,
    mss_path: &str,
    mss: u32,
    bytes: Option<u64>,
) -> Vec<Problem> {
    let mut out = Vec::new();
    if mss != ETH_PACKET {
        out.push(Problem::new(
            mss_path.to_string(),
            Problem::ETH_FRAMING,
            mss,
            ETH_PACKET,
            &format!("framing = \"eth\" sends {ETH_PACKET}-byte packets"),
        ));
    }
    if let Some(b) = bytes.filter(|b| !b.is_multiple_of(ETH_PACKET as u64)) {
        out.push(Problem::new(
            format!("{path}.bytes"),
            Problem::ETH_FRAMING,
            b,
            ETH_PACKET,
            &format!("framing = \"eth\" needs whole {ETH_PACKET}-byte packets"),
        ));
    }
    if index >= ETH_FLOWS {
        out.push(Problem::new(
            format!("{path}.framing"),
            Problem::ETH_FRAMING,
            "eth",
            ETH_FLOWS as u64,
            &format!("the ETH header numbers at most {ETH_FLOWS} flows"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_names_its_field_and_value() {
        assert!(eth_framing("flows[0]", 0, "tcp.mss", 1024, Some(4096)).is_empty());
        assert!(eth_framing("flows[0]", 0, "tcp.mss", 1024, None).is_empty());
        let p = eth_framing("flows[3]", 3, "flows[3].tcp.mss", 1448, Some(5000));
        let m: Vec<&str> = p.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            m,
            [
                "flows[3].tcp.mss = 1448: framing = \"eth\" sends 1024-byte packets",
                "flows[3].bytes = 5000: framing = \"eth\" needs whole 1024-byte packets",
            ]
        );
        assert!(p.iter().all(|p| p.rule == Problem::ETH_FRAMING));
        let p = eth_framing("flows[256]", 256, "tcp.mss", 1024, None);
        assert_eq!(
            p[0].message,
            "flows[256].framing = \"eth\": the ETH header numbers at most 256 flows"
        );
    }
}
