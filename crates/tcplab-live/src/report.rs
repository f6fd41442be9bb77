//! What the emulator writes when it stops: `stats.json` (per link direction: packets
//! offered and delivered, the model's counts and drops by cause; per host: packets sent and
//! delivered, drops outside the model, lateness percentiles of its deliveries; an 802.11b
//! hop: offered, delivered, frames acknowledged and drops by cause; for a scenario, the
//! `links` table's rows as the simulator builds them: `link_rows`),
//! the stalls ([`crate::stalls`]: when deliveries were late, as columns),
//! `drops.jsonl` (every drop: model time, link direction, cause, packet identity),
//! `queues.jsonl` (what each wired link direction held, when the scenario records series),
//! `tcp_sends.csv` (every TCP data segment a host sent, when it traces segments:
//! [`crate::tcp_sends`]) and `<name>.pcap` per capture file of the scenario's `trace.pcap` (model time stamps). The
//! one-link plan also keeps the first step's `forward` / `reverse` sections.

use crate::driver::{Direction, Emulator, Host};
use serde_json::{json, Map, Value};
use std::fs;
use std::io::Write;
use std::path::Path;
use tcplab_core::{Dur, Time};
use tcplab_sim::packet::DropCause;
use tcplab_sim::results::LinkSummary;
use tcplab_sim::summary::{wired_link_row, wlan_hop_row};

fn direction(d: &Direction, now: Time) -> Map<String, Value> {
    let st = d.link.stats_at(now);
    let drops: Map<String, Value> = DropCause::ALL
        .iter()
        .map(|c| (c.as_str().to_string(), json!(st.drops[*c as usize])))
        .collect();
    let v = json!({
        "offered": d.offered,
        "delivered": d.delivered,
        "serialized": st.packets_sent,
        "serialized_bytes": st.bytes_sent,
        "busy_ns": st.busy.as_nanos(),
        "ecn_marks": st.ecn_marks,
        "held_at_end": d.link.held_packets(),
        "drops": drops,
    });
    v.as_object().expect("an object").clone()
}

fn lateness(h: &Host) -> Value {
    let l = &h.lateness;
    json!({
        "count": l.count(),
        "p50": l.quantile(0.5),
        "p99": l.quantile(0.99),
        "max": l.max(),
        "mean": l.mean(),
    })
}

fn host(h: &Host, addr: &str) -> Value {
    json!({
        "addr": addr,
        "sent": h.sent,
        "delivered": h.delivered,
        "delivered_bytes": h.delivered_bytes,
        "first_write_ns": h.first_write.map(|t| t.as_nanos()),
        "last_write_ns": h.last_write.map(|t| t.as_nanos()),
        "outside_model": {
            "tun_write_errors": h.write_errors,
            "not_ipv4": h.not_ipv4,
            "no_route": h.no_route,
        },
        "lateness_ns": lateness(h),
        "kernel": h.kernel,
        "answers": h.answers,
        "answers_late": h.answers_late,
        "answers_behind": h.answers_behind,
        "offload": h.vnet,
        "super_packets": h.super_packets,
        "segments": h.segments,
    })
}

/// The first step's section of one direction of the one-link plan: the direction's counts,
/// the deliveries and lateness of the host it leads to (`delivered` counts writes), the
/// non-IPv4 packets of the host it starts at.
fn one_link_direction(emu: &Emulator, i: usize, now: Time) -> Value {
    let (from, to) = (&emu.hosts[i], &emu.hosts[1 - i]);
    let mut m = direction(&emu.dirs[i], now);
    let extra = json!({
        "delivered": to.delivered,
        "delivered_bytes": to.delivered_bytes,
        "first_write_ns": to.first_write.map(|t| t.as_nanos()),
        "last_write_ns": to.last_write.map(|t| t.as_nanos()),
        "outside_model": {"tun_write_errors": to.write_errors, "not_ipv4": from.not_ipv4},
        "lateness_ns": lateness(to),
    });
    m.extend(extra.as_object().expect("an object").clone());
    Value::Object(m)
}

/// The `links` table's rows (the simulator's columns, built by its own row functions): every
/// link direction of the plan in the simulator's order, wired then 802.11b hops, with the
/// counts when the emulator stopped and the utilization over the scenario's `duration`.
fn link_rows(emu: &Emulator, now: Time, duration: Dur) -> Vec<Value> {
    let span = Time::ZERO + duration;
    let name = |n: u32| emu.plan.nodes[n as usize].name.as_str();
    let mut rows: Vec<LinkSummary> = emu
        .dirs
        .iter()
        .zip(&emu.plan.dirs)
        .map(|(d, p)| {
            let ends = (name(p.from), name(p.to));
            wired_link_row((&p.link, p.direction), ends, d.link.link(), now, span)
        })
        .collect();
    for s in &emu.segments {
        for hop in 0..s.wlan.hop_count() as u32 {
            let (link, direction, from, to) = emu.plan.dir_name(s.first + hop);
            let st = s.wlan.hop_stats(hop);
            let ends = (name(from), name(to));
            rows.push(wlan_hop_row(
                (link, direction),
                ends,
                s.wlan.wlan(),
                st,
                span,
            ));
        }
    }
    tcplab_sim::columns::links(rows).rows_json()
}

/// Writes `stats.json`, `drops.jsonl` and `queues.jsonl` (the queue rows: model time,
/// link direction as the simulator numbers it, packets, bytes) into `dir` (each written
/// whole to a temporary
/// name, then renamed); `realtime` is the scheduling the emulator ran with.
pub fn write(emu: &Emulator, realtime: &str, dir: &Path) -> std::io::Result<()> {
    let now = emu.clock.now();
    let mut links = Map::new();
    for (d, p) in emu.dirs.iter().zip(&emu.plan.dirs) {
        let entry = links.entry(p.link.clone()).or_insert_with(|| json!({}));
        entry[p.direction] = Value::Object(direction(d, now));
    }
    for s in &emu.segments {
        for hop in 0..s.wlan.hop_count() as u32 {
            let (link, direction, _, _) = emu.plan.dir_name(s.first + hop);
            let st = s.wlan.hop_stats(hop);
            let drops: Map<String, Value> = DropCause::ALL
                .iter()
                .map(|c| (c.as_str().to_string(), json!(st.drops[*c as usize])))
                .collect();
            let entry = links.entry(link.to_string()).or_insert_with(|| json!({}));
            entry[direction] = json!({
                "offered": s.offered[hop as usize],
                "delivered": s.delivered[hop as usize],
                "serialized": st.packets_sent,
                "serialized_bytes": st.bytes_sent,
                "drops": drops,
            });
        }
    }
    let hosts: Map<String, Value> = emu
        .hosts
        .iter()
        .zip(&emu.plan.hosts)
        .map(|(h, p)| (p.name.clone(), host(h, &p.addr.to_string())))
        .collect();
    let mut stats = json!({
        "clock_origin_monotonic_ns": emu.clock.origin_monotonic_ns(),
        "duration_ns": now.as_nanos(),
        "realtime": realtime,
        "links": links,
        "hosts": hosts,
        "queue_rows": emu.queue_rows.len(),
        "queue_rows_cut": emu.queue_rows_cut,
        "tcp_sends": emu.tcp_sends.rows.len(),
        "tcp_sends_cut": emu.tcp_sends.cut,
        "breaks": emu.breaks_taken,
        "stalls": {
            "threshold_ns": crate::stalls::THRESHOLD_NS,
            "count": emu.stalls.stalls.len() as u64 + emu.stalls.cut,
            "total_ns": emu.stalls.total_ns(),
            "cut": emu.stalls.cut,
            "from_ns": emu.stalls.stalls.iter().map(|s| s.from.as_nanos()).collect::<Vec<_>>(),
            "until_ns": emu.stalls.stalls.iter().map(|s| s.until.as_nanos()).collect::<Vec<_>>(),
            "worst_ns": emu.stalls.stalls.iter().map(|s| s.worst_ns).collect::<Vec<_>>(),
            "packets": emu.stalls.stalls.iter().map(|s| s.packets).collect::<Vec<_>>(),
        },
        "pcap": emu.plan.pcap.iter().zip(&emu.captures).map(|(p, c)| json!({
            "name": p.name,
            "link": p.link,
            "directions": p.directions,
            "file": format!("{}.pcap", p.name),
            "packets": c.packets,
            "cut": c.cut,
        })).collect::<Vec<_>>(),
    });
    if let Some(duration) = emu.plan.duration {
        stats["link_rows"] = Value::Array(link_rows(emu, now, duration));
    }
    if emu.plan.point_to_point {
        stats["forward"] = one_link_direction(emu, 0, now);
        stats["reverse"] = one_link_direction(emu, 1, now);
    }
    let tmp = dir.join(".stats.json.tmp");
    fs::write(&tmp, serde_json::to_string_pretty(&stats)? + "\n")?;
    fs::rename(&tmp, dir.join("stats.json"))?;
    let tmp = dir.join(".drops.jsonl.tmp");
    let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
    let node = |n: u32| emu.plan.nodes[n as usize].name.as_str();
    for d in &emu.drops {
        let (link, direction, from, to) = emu.plan.dir_name(d.dir);
        let line = json!({
            "t_ns": d.at.as_nanos(),
            "link": link,
            "direction": direction,
            "from": node(from),
            "to": node(to),
            "cause": d.cause.as_str(),
            "packet": d.ident,
        });
        writeln!(f, "{line}")?;
    }
    f.flush()?;
    drop(f);
    fs::rename(&tmp, dir.join("drops.jsonl"))?;
    let tmp = dir.join(".queues.jsonl.tmp");
    let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
    for q in &emu.queue_rows {
        writeln!(
            f,
            r#"{{"t_ns":{},"dir":{},"packets":{},"bytes":{}}}"#,
            q.at.as_nanos(),
            q.dir,
            q.packets,
            q.bytes
        )?;
    }
    f.flush()?;
    drop(f);
    fs::rename(&tmp, dir.join("queues.jsonl"))?;
    if emu.plan.tcp_sends {
        let tmp = dir.join(".tcp_sends.csv.tmp");
        let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
        emu.tcp_sends.write_csv(&mut f)?;
        f.flush()?;
        drop(f);
        fs::rename(&tmp, dir.join("tcp_sends.csv"))?;
    }
    for (p, c) in emu.plan.pcap.iter().zip(&emu.captures) {
        let tmp = dir.join(format!(".{}.pcap.tmp", p.name));
        fs::write(&tmp, &c.bytes)?;
        fs::rename(&tmp, dir.join(format!("{}.pcap", p.name)))?;
    }
    Ok(())
}
