//! What the emulator writes when it stops: `stats.json` (per direction: packets offered,
//! delivered, the model's counts and drops by cause, drops outside the model, lateness
//! percentiles) and `drops.jsonl` (every drop: model time, direction, cause, identity).

use crate::driver::{Direction, Emulator};
use serde_json::{json, Value};
use std::fs;
use std::io::Write;
use std::path::Path;
use tcplab_sim::packet::DropCause;

fn direction(d: &Direction, now: tcplab_core::Time) -> Value {
    let st = d.link.stats_at(now);
    let drops: serde_json::Map<String, Value> = DropCause::ALL
        .iter()
        .map(|c| (c.as_str().to_string(), json!(st.drops[*c as usize])))
        .collect();
    let h = &d.lateness;
    json!({
        "offered": d.offered,
        "delivered": d.delivered,
        "delivered_bytes": d.delivered_bytes,
        "first_write_ns": d.first_write.map(|t| t.as_nanos()),
        "last_write_ns": d.last_write.map(|t| t.as_nanos()),
        "serialized": st.packets_sent,
        "serialized_bytes": st.bytes_sent,
        "busy_ns": st.busy.as_nanos(),
        "ecn_marks": st.ecn_marks,
        "held_at_end": d.link.held_packets(),
        "drops": drops,
        "outside_model": {"tun_write_errors": d.write_errors, "not_ipv4": d.not_ipv4},
        "lateness_ns": {
            "count": h.count(),
            "p50": h.quantile(0.5),
            "p99": h.quantile(0.99),
            "max": h.max(),
            "mean": h.mean(),
        },
    })
}

/// Writes `stats.json` and `drops.jsonl` into `dir` (each written whole to a temporary
/// name, then renamed); `realtime` is the scheduling the emulator ran with.
pub fn write(emu: &Emulator, realtime: &str, dir: &Path) -> std::io::Result<()> {
    let now = emu.clock.now();
    let stats = json!({
        "clock_origin_monotonic_ns": emu.clock.origin_monotonic_ns(),
        "duration_ns": now.as_nanos(),
        "realtime": realtime,
        "forward": direction(&emu.dirs[0], now),
        "reverse": direction(&emu.dirs[1], now),
    });
    let tmp = dir.join(".stats.json.tmp");
    fs::write(&tmp, serde_json::to_string_pretty(&stats)? + "\n")?;
    fs::rename(&tmp, dir.join("stats.json"))?;
    let tmp = dir.join(".drops.jsonl.tmp");
    let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
    for d in &emu.drops {
        let line = json!({
            "t_ns": d.at.as_nanos(),
            "direction": d.direction,
            "cause": d.cause.as_str(),
            "packet": d.ident,
        });
        writeln!(f, "{line}")?;
    }
    f.flush()?;
    drop(f);
    fs::rename(&tmp, dir.join("drops.jsonl"))
}
