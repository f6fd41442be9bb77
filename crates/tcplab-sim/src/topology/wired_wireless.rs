//! Wired-cum-wireless: servers on a wired path to a base station whose last hop to each
//! mobile host is lossy (Venoplus Fig. 2; Veno Fig. 3b).
//!
//! Nodes: servers `server0..`, router `router` (R2 in Venoplus), base station `bs` (R1),
//! mobile hosts `mobile0..` (in that order). Links: `server{i}-router` (wired access),
//! `router-bs` (the wired bottleneck), `bs-mobile{i}` (the wireless hop); forward is from
//! server to mobile host. Random loss on the wireless hop is the `wireless` link's `loss`,
//! in either direction or both (ACK-path loss is its reverse direction), and its
//! `report_losses` feeds the cross-layer channel (Venoplus).

use super::{borrowed, finish, host, one_or_each, push_link, router, Layout};
pub use crate::scenario::WiredCumWireless;

pub fn expand<'a>(w: &'a WiredCumWireless, errs: &mut Vec<String>) -> Layout<'a> {
    let n = w.pairs as usize;
    if n == 0 {
        errs.push("topology.pairs = 0: expected at least 1 server/mobile pair".into());
    }
    let mut nodes: Vec<_> = (0..n).map(|i| host(format!("server{i}"))).collect();
    let (r, bs) = (n as u32, n as u32 + 1);
    nodes.push(router("router"));
    nodes.push(router("bs"));
    nodes.extend((0..n).map(|i| host(format!("mobile{i}"))));
    let mut links = Vec::with_capacity(2 * n + 1);
    for i in 0..n {
        if let Some((d, path)) = one_or_each("wired", &w.wired, n, i, errs) {
            let (f, b) = borrowed(d);
            push_link(&nodes, &mut links, (i as u32, r), f, b, path);
        }
    }
    let (f, b) = borrowed(&w.bottleneck);
    push_link(
        &nodes,
        &mut links,
        (r, bs),
        f,
        b,
        "topology.bottleneck".into(),
    );
    for i in 0..n {
        if let Some((d, path)) = one_or_each("wireless", &w.wireless, n, i, errs) {
            let (f, b) = borrowed(d);
            push_link(&nodes, &mut links, (bs, bs + 1 + i as u32), f, b, path);
        }
    }
    super::dedup(errs);
    finish(nodes, links)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{Buffer, Duplex, LinkDir};
    use tcplab_core::Dur;

    #[test]
    fn layout() {
        let d = Duplex::symmetric(LinkDir::new(
            10_000_000,
            Dur::from_millis(1),
            Buffer::Packets(50),
        ));
        let w = WiredCumWireless {
            pairs: 2,
            wired: vec![d.clone()],
            bottleneck: d.clone(),
            wireless: vec![d.clone(), d.clone()],
        };
        let mut errs = Vec::new();
        let l = expand(&w, &mut errs);
        assert!(errs.is_empty());
        let names: Vec<&str> = l.links.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "server0-router",
                "server1-router",
                "router-bs",
                "bs-mobile0",
                "bs-mobile1"
            ]
        );
        assert_eq!(l.links[4].spec_path, "topology.wireless[1]");
        let bad = WiredCumWireless {
            wireless: vec![d.clone(), d.clone(), d],
            ..w
        };
        let mut errs = Vec::new();
        expand(&bad, &mut errs);
        assert_eq!(
            errs,
            ["topology.wireless has 3 entries: expected 1 (for all) or 2 (one each)"]
        );
    }
}
