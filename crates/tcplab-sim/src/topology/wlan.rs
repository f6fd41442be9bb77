//! WLAN segments of a topology (explicit `wlan` entries, the `wlan_access` preset): their
//! nodes resolved into the layout, and every rule of a segment (names, stations, DCF/PHY and
//! channel parameters), each a structured [`Problem`]. These rules live here only: the
//! Python schema words the problems at the TOML path (`tcplab.scenario.rules`).

use super::{borrowed, finish, host, push_link, router, Layout, WlanLayout};
use crate::error::Problem;
use crate::scenario::{NodeKind, WlanAccess, WlanSpec};
use crate::wlan::phy::{BASIC_RATES, RATES};
use serde_json::Value;
use tcplab_core::Dur;

/// The MAC's counts and their ranges: (field, lo, hi), in `check_params`' order.
const MAC_COUNTS: [(&str, u32, u32); 5] = [
    ("buffer", 1, 1_000_000),
    ("retry_limit", 1, 255),
    ("cw_min", 1, 65_535),
    ("mac_overhead", 0, 10_000),
    ("ack_bytes", 1, 10_000),
];

/// The node names the `wlan_access` preset gives its wired nodes.
pub const WLAN_ACCESS_NODES: [&str; 3] = ["server", "router", "ap"];

/// What the scenario format's WLAN fields may hold, for schemas in other languages (the
/// Python one reads it instead of a copy): the data and basic rates (bit/s), the channel
/// presets, the Dummynet pipe presets (`{name: [rate bit/s, one-way delay ns, buffer
/// packets]}`), the MAC and channel defaults, and the `wlan_access` preset's default
/// access link (canonical, both directions).
pub fn vocabulary() -> Value {
    use crate::scenario::{ChannelPreset, ChannelSpec, MacSpec, PipePreset};
    let pipes: serde_json::Map<String, Value> = PipePreset::ALL
        .iter()
        .map(|p| {
            let (rate, delay, packets) = p.params();
            let params = serde_json::json!([rate, delay.as_nanos(), packets]);
            (p.as_str().to_string(), params)
        })
        .collect();
    let presets: Vec<&str> = ChannelPreset::ALL.iter().map(|p| p.as_str()).collect();
    serde_json::json!({
        "rates": RATES,
        "basic_rates": BASIC_RATES,
        "channel_presets": presets,
        "pipes": pipes,
        "mac": MacSpec::default(),
        "channel": ChannelSpec::default(),
        "access_nodes": WLAN_ACCESS_NODES,
        "access": WlanAccess::default_access(),
    })
}

/// The `wlan_access` preset: host `server`, routers `router` and `ap`, then the stations.
pub(super) fn wlan_access<'a>(w: &'a WlanAccess, errs: &mut Vec<Problem>) -> Layout<'a> {
    let mut nodes = vec![host("server".into()), router("router"), router("ap")];
    let before = errs.len();
    for (j, s) in w.wlan.stations.iter().enumerate() {
        if WLAN_ACCESS_NODES.contains(&s.node.as_str()) {
            let path = format!("topology.wlan.stations[{j}].node");
            let expected = "a name the wlan_access topology uses for another node";
            let (rule, v) = (Problem::RESERVED_NAME, s.node.as_str());
            errs.push(Problem::new(
                path,
                rule,
                v,
                WLAN_ACCESS_NODES.to_vec(),
                expected,
            ));
        } else if !nodes.iter().any(|n| n.name == s.node) {
            nodes.push(host(s.node.clone()));
        }
    }
    let mut links = Vec::with_capacity(2);
    let (f, r) = borrowed(&w.access);
    push_link(&nodes, &mut links, (0, 1), f, r, "topology.access".into());
    let (f, r) = borrowed(&w.pipe);
    push_link(&nodes, &mut links, (1, 2), f, r, "topology.pipe".into());
    let mut layout = finish(nodes, links);
    if errs.len() == before {
        wlan_segment(&mut layout, &w.wlan, "topology.wlan".into(), errs);
    }
    layout
}

/// The `wlan` segments of an explicit topology, each name unique.
pub(super) fn explicit_segments<'a>(
    layout: &mut Layout<'a>,
    segments: &'a [WlanSpec],
    errs: &mut Vec<Problem>,
) {
    for (i, w) in segments.iter().enumerate() {
        let path = format!("topology.wlan[{i}]");
        if let Some(first) = segments[..i].iter().position(|o| o.name == w.name) {
            let expected = format!("also the name of topology.wlan[{first}]");
            let (rule, v) = (Problem::DUPLICATE_WLAN_NAME, w.name.as_str());
            errs.push(Problem::new(
                format!("{path}.name"),
                rule,
                v,
                first,
                &expected,
            ));
            continue;
        }
        wlan_segment(layout, w, path, errs);
    }
}

/// Resolves segment `w`'s nodes; problems go to `errs` and a bad segment is left out.
fn wlan_segment<'a>(
    layout: &mut Layout<'a>,
    w: &'a WlanSpec,
    path: String,
    errs: &mut Vec<Problem>,
) {
    let before = errs.len();
    let ap_path = format!("{path}.ap");
    let ap = match layout.node(&w.ap) {
        None => {
            let names: Vec<&str> = layout.nodes.iter().map(|n| n.name.as_str()).collect();
            let rule = Problem::UNKNOWN_NODE;
            errs.push(Problem::new(
                ap_path,
                rule,
                w.ap.as_str(),
                names,
                "unknown node",
            ));
            None
        }
        Some(id) if layout.nodes[id as usize].kind != NodeKind::Router => {
            let expected = "a host; the access point must be a router (it relays)";
            let (rule, v) = (Problem::AP_NOT_ROUTER, w.ap.as_str());
            errs.push(Problem::new(ap_path, rule, v, Value::Null, expected));
            None
        }
        Some(id) => Some(id),
    };
    if w.stations.is_empty() {
        let (p, rule) = (format!("{path}.stations"), Problem::NO_STATIONS);
        let expected = "expected at least 1 station";
        errs.push(Problem::new(p, rule, Vec::<Value>::new(), 1, expected));
    }
    let mut stations: Vec<u32> = Vec::with_capacity(w.stations.len());
    for (j, s) in w.stations.iter().enumerate() {
        let p = format!("{path}.stations[{j}].node");
        let v = s.node.as_str();
        match layout.node(&s.node) {
            None => {
                let (rule, hosts) = (Problem::STATION_NOT_A_HOST, layout.hosts_shown());
                errs.push(Problem::new(p, rule, v, hosts, "unknown node"));
            }
            Some(id) if layout.nodes[id as usize].kind != NodeKind::Host => {
                let (rule, hosts) = (Problem::STATION_NOT_A_HOST, layout.hosts_shown());
                let expected = "a router; stations are hosts";
                errs.push(Problem::new(p, rule, v, hosts, expected));
            }
            Some(id) if stations.contains(&id) => {
                let first = w.stations.iter().position(|o| o.node == s.node);
                let expected = "listed twice in this segment";
                errs.push(Problem::new(
                    p,
                    Problem::DUPLICATE_STATION,
                    v,
                    first,
                    expected,
                ));
            }
            Some(id) => match layout.wlans.iter().find(|o| o.stations.contains(&id)) {
                Some(other) => {
                    let rule = Problem::STATION_OF_OTHER_SEGMENT;
                    let expected = format!("already a station of segment {:?}", other.spec.name);
                    let segment = other.spec.name.as_str();
                    errs.push(Problem::new(p, rule, v, segment, &expected));
                }
                None => stations.push(id),
            },
        }
    }
    if errs.len() == before {
        if let Some(ap) = ap {
            layout.wlans.push(WlanLayout {
                spec: w,
                ap,
                stations,
                spec_path: path,
            });
        }
    }
}

/// Checks of one WLAN segment's parameters (its nodes were checked by the expansion).
pub(crate) fn check_params(p: &str, w: &WlanSpec, errs: &mut Vec<Problem>) {
    let m = &w.mac;
    if w.name.is_empty() {
        errs.push(format!("{p}.name = \"\": expected a non-empty name").into());
    }
    if !RATES.contains(&m.rate) {
        errs.push(
            format!(
                "{p}.mac.rate = {}: expected an 802.11b rate in bit/s: {RATES:?}",
                m.rate
            )
            .into(),
        );
    }
    if !BASIC_RATES.contains(&m.basic_rate) {
        errs.push(
            format!(
                "{p}.mac.basic_rate = {}: expected a basic rate in bit/s: {BASIC_RATES:?}",
                m.basic_rate
            )
            .into(),
        );
    }
    let counts = [
        m.buffer,
        m.retry_limit,
        m.cw_min,
        m.mac_overhead,
        m.ack_bytes,
    ];
    for ((field, lo, hi), v) in MAC_COUNTS.into_iter().zip(counts) {
        if !(lo..=hi).contains(&v) {
            let expected = format!("expected within [{lo}, {hi}]");
            let path = format!("{p}.mac.{field}");
            errs.push(Problem::new(path, Problem::RANGE, v, [lo, hi], &expected));
        }
    }
    if m.cw_max < m.cw_min || m.cw_max > 65_535 {
        let expected = format!("expected between cw_min ({}) and 65535", m.cw_min);
        let path = format!("{p}.mac.cw_max");
        errs.push(if m.cw_max < m.cw_min {
            Problem::new(
                path,
                Problem::CW_MAX_BELOW_MIN,
                m.cw_max,
                m.cw_min,
                &expected,
            )
        } else {
            Problem::new(
                path,
                Problem::RANGE,
                m.cw_max,
                [m.cw_min, 65_535],
                &expected,
            )
        });
    }
    for (field, d) in [("slot", m.slot), ("sifs", m.sifs), ("difs", m.difs)] {
        if d == Dur::ZERO {
            errs.push(format!("{p}.mac.{field} = 0: expected a positive duration in ns").into());
        }
    }
    let c = &w.channel;
    for (field, v) in [
        ("tx_power_dbm", c.tx_power_dbm),
        ("ref_loss_db", c.ref_loss_db),
    ] {
        if !v.is_finite() {
            errs.push(format!("{p}.channel.{field} = {v}: expected a finite number").into());
        }
    }
    if !(c.exponent.is_finite() && c.exponent > 0.0) {
        let (path, x) = (format!("{p}.channel.exponent"), c.exponent);
        let message = format!("{path} = {x}: expected a positive path-loss exponent");
        errs.push(Problem::worded(path, Problem::ABOVE, x, 0, message));
    }
    if !(c.shadowing_db.is_finite() && c.shadowing_db >= 0.0) {
        let (path, x) = (format!("{p}.channel.shadowing_db"), c.shadowing_db);
        let message = format!("{path} = {x}: expected a standard deviation >= 0 dB");
        errs.push(Problem::worded(path, Problem::AT_LEAST, x, 0, message));
    }
    if let Some(t) = c.rx_threshold_dbm {
        if !t.is_finite() {
            errs.push(
                format!("{p}.channel.rx_threshold_dbm = {t}: expected a finite power in dBm")
                    .into(),
            );
        }
    }
    if !w.report_losses && w.report_delay != Dur::ZERO {
        errs.push(report_delay_without_losses(p, w.report_delay));
    }
    for (j, st) in w.stations.iter().enumerate() {
        let sp = format!("{p}.stations[{j}]");
        match (st.distance, st.preset) {
            (Some(d), None) => {
                if !(d.is_finite() && d > 0.0) {
                    let path = format!("{sp}.distance");
                    let message = format!("{path} = {d}: expected a positive distance in metres");
                    errs.push(Problem::worded(path, Problem::ABOVE, d, 0, message));
                }
            }
            (Some(d), Some(pr)) => {
                let expected = "give a distance or a preset, not both";
                let (path, rule) = (format!("{sp}.preset"), Problem::DISTANCE_AND_PRESET);
                errs.push(Problem::new(path, rule, pr.as_str(), d, expected));
            }
            (None, pr) => match pr.or(w.preset) {
                None => {
                    let message = format!("{sp}: no distance and no preset (station or segment): expected one to place the station");
                    let rule = Problem::NO_PLACEMENT;
                    errs.push(Problem::worded(sp, rule, Value::Null, Value::Null, message));
                }
                Some(pr) if c.shadowing_db <= 0.0 => {
                    let message = format!(
                        "{sp}.preset = {:?}: presets need shadowing_db > 0 ({p}.channel.shadowing_db = {})",
                        pr.as_str(),
                        c.shadowing_db
                    );
                    let (path, rule) = (format!("{sp}.preset"), Problem::PRESET_NEEDS_SHADOWING);
                    let shadowing = c.shadowing_db;
                    errs.push(Problem::worded(path, rule, pr.as_str(), shadowing, message));
                }
                Some(_) => {}
            },
        }
    }
}

/// `report_delay` given without `report_losses` (a link direction's or a WLAN segment's).
pub(crate) fn report_delay_without_losses(p: &str, delay: Dur) -> Problem {
    let (path, rule) = (
        format!("{p}.report_delay"),
        Problem::REPORT_DELAY_NEEDS_LOSSES,
    );
    let expected = "only meaningful with report_losses = true";
    Problem::new(path, rule, delay.as_nanos(), Value::Null, expected)
}
