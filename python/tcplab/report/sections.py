"""The run report's HTML sections (per-flow summary, conservation, loss classification, scenario parameters,
links, embedded figures)."""

from __future__ import annotations

from typing import Any

from tcplab.report.html import esc, fmt, html_table, ms
from tcplab.report.selection import flows_note, shown_note, table_flows, table_links
from tcplab.schema import RunLike
from tcplab.units import format_duration, format_rate


def _wlan_text(w: dict[str, Any]) -> str:
    """One line describing a canonical WLAN segment."""

    def place(st: dict[str, Any]) -> str:
        if st.get("distance") is not None:
            return f"{st['node']} at {st['distance']:g} m"
        return f"{st['node']} {st.get('preset') or w.get('preset')}"

    m = w["mac"]
    placed = ", ".join(place(st) for st in w["stations"])
    return f"{m['rate'] / 1e6:g} Mb/s, buffer {m['buffer']} pkts, retry limit {m['retry_limit']}; {placed}"



def params_html(result: RunLike) -> str:
    c = result.canonical
    rows = [
        ["name", c["name"]],
        ["description", c.get("description") or "–"],
        ["seed", c["seed"]],
        ["duration", format_duration(c["duration"])],
    ]
    topo = c["topology"]
    if topo.get("kind") == "dumbbell":
        rows.append(["topology", f"dumbbell, {topo['pairs']} host pair(s)"])
        for d in ("forward", "reverse"):
            rows.append([f"bottleneck {d}", _linkdir(topo["bottleneck"][d])])
        for key in ("sender_access", "receiver_access"):
            for i, a in enumerate(topo[key]):
                tag = f" [{i}]" if len(topo[key]) > 1 else ""
                rows.append([f"{key.replace('_', ' ')}{tag}", _linkdir(a["forward"]) + " (forward)"])
    elif topo.get("kind") == "wlan_access":
        w = topo["wlan"]
        rows.append(["topology", f"wlan_access (WLAN paper Fig. 3), {len(w['stations'])} station(s)"])
        for d in ("forward", "reverse"):
            rows.append([f"pipe router-ap {d}", _linkdir(topo["pipe"][d])])
        rows.append(["802.11b", _wlan_text(w)])
    elif topo.get("kind") != "explicit":  # other presets: every link
        from tcplab.topology import graph

        nodes, links = graph(topo)
        rows.append(["topology", f"{topo['kind']}: {len(nodes)} nodes, {len(links)} links"])
        for a, b, fwd, rev in links:
            rows.append([f"{a}-{b} forward", _linkdir(fwd)])
            rows.append([f"{a}-{b} reverse", _linkdir(rev)])
    else:
        rows.append(["topology", f"explicit: {len(topo['nodes'])} nodes, {len(topo['links'])} links"])
        for w in topo.get("wlan", []):
            rows.append([f"802.11b {w['name']} (AP {w['ap']})", _wlan_text(w)])
        for link in topo["links"]:
            for d in ("forward", "reverse"):
                rows.append([f"{link['from']}-{link['to']} {d}", _linkdir(link[d])])
    out = html_table(["parameter", "value"], rows, left=2)
    frows = []
    shown = table_flows(result)
    for f in (c["flows"][i] for i in shown):
        t = f["tcp"]
        growth = t["growth"]["mode"] + (f" (L={t['growth']['limit']})" if "limit" in t["growth"] else "")
        frows.append(
            [
                f["name"],
                f"{f['src']} → {f['dst']}",
                f["controller"]["name"] + _params(f["controller"]["params"]),
                f["recovery"]["name"] + _params(f["recovery"]["params"]),
                format_duration(f["start"]),
                "–" if f["bytes"] is None else f"{f['bytes']} B",
                t["mss"],
                t["initial_cwnd"],
                t["sack_blocks"],
                "on" if t["delayed_ack"] else "off",
                growth,
                format_duration(t["rto_min"]),
            ]
        )
    out += html_table(
        [
            "flow",
            "path",
            "controller",
            "recovery",
            "start",
            "bytes",
            "MSS (B)",
            "IW (seg)",
            "SACK blocks",
            "delayed ACK",
            "growth",
            "RTO min",
        ],
        frows,
        left=4,
    )
    return out + flows_note(len(shown), len(c["flows"]))


def _params(p: dict[str, Any]) -> str:
    return "" if not p else " (" + ", ".join(f"{k}={v}" for k, v in p.items()) + ")"


def _linkdir(d: dict[str, Any]) -> str:
    buf = d["buffer"]
    b = f"{buf['packets']} packets" if "packets" in buf else f"{buf['bytes']} B"
    model = d["loss"]["model"]
    if model == "none":
        loss = "no random loss"
    elif "p" in d["loss"]:
        loss = f"loss p={d['loss']['p']:g}"
    else:
        loss = f"{model} loss"
    out = f"{format_rate(d['rate'])}, delay {format_duration(d['delay'])}, buffer {b}, {d['queue']['discipline']}, {loss}"
    if d.get("report_losses"):
        delay = d.get("report_delay") or 0
        out += ", reports random drops to the sender" + (f" after {format_duration(delay)}" if delay else "")
    return out


def summary_html(result: RunLike, flows: list[dict[str, Any]]) -> str:
    """The per-flow summary table; ``flows``: ``result.flow_summary()`` (the page builds it
    once for its sections)."""
    rows = []
    shown = table_flows(result)
    for r in (flows[i] for i in shown):
        rows.append(
            [
                r["name"],
                r["controller"],
                r["recovery"],
                f"{r['throughput_mbps']:.3f}",
                fmt(r["goodput"]),
                r["bytes_delivered"],
                "yes" if r["completed"] else "no",
                r["segments_sent"],
                r["retransmits"],
                r["fast_retransmits"],
                r["timeouts"],
                r["data_drops"],
                r["spurious_retransmits"],
                ms(r["min_rtt_ns"]),
                ms(r["mean_rtt_ns"]),
            ]
        )
    out = html_table(
        [
            "flow",
            "controller",
            "recovery",
            "throughput (Mb/s)",
            "goodput",
            "bytes delivered",
            "completed",
            "segments sent",
            "retransmits",
            "fast retransmits",
            "timeouts",
            "data drops",
            "spurious rtx",
            "min RTT (ms)",
            "mean RTT (ms)",
        ],
        rows,
        left=3,
    ) + flows_note(len(shown), len(flows))
    if result.udp.height:
        out += html_table(
            ["UDP flow", "src", "dst", "sent", "received", "dropped", "throughput (Mb/s)"],
            [
                [
                    r["name"],
                    r["src"],
                    r["dst"],
                    r["packets_sent"],
                    r["packets_received"],
                    r["packets_dropped"],
                    f"{r['throughput_bps'] / 1e6:.3f}",
                ]
                for r in result.udp.iter_rows(named=True)
            ],
            left=3,
        )
    return out


def classification_html(result: RunLike, flows: list[dict[str, Any]]) -> str:
    """Per flow with loss responses: Veno's Table I (verdict by actual cause of the loss).
    Only where it applies: empty unless some flow's controller classified a loss as random
    (a 4/5 decision, Veno's); then every flow with loss responses gets its table, for
    comparison. ``flows``: ``result.flow_summary()``."""
    parts = []
    if not any(sum(r["table_one"]["ff45"].values()) for r in flows):
        return ""
    shown = table_flows(result)
    for r in (flows[i] for i in shown):
        t = r["table_one"]
        if not any(sum(t[k].values()) for k in ("ff45", "ff12", "ff_other", "timeouts")):
            continue
        rows = []
        for key, label in (
            ("ff45", "#FF4/5"),
            ("ff12", "#FF1/2"),
            ("ff_other", "#FF other"),
            ("timeouts", "timeouts"),
        ):
            by = t[key]
            rows.append([label, by["congestion"], by["random"], by["none"], sum(by.values())])
        parts.append(f"<h3>{esc(r['name'])} ({esc(r['controller'])})</h3>")
        parts.append(html_table(["response", "congestion", "random", "none", "total"], rows))
        parts.append(
            f"<p class='muted'>4/5 accuracy (share of 4/5 decisions that answered a random loss): "
            f"{fmt(t['ff45_accuracy'])}; congestion misdiagnosis (congestion losses answered with "
            f"4/5 among those answered with 4/5 or 1/2): {fmt(t['congestion_misdiagnosis'])}.</p>"
        )
    if not parts:
        return ""
    return (
        "<h2>Loss classification (Veno Table I form)</h2>"
        "<p class='muted'>Loss responses by the controller's verdict (rows) and the actual cause of the "
        "loss that triggered them (columns): congestion = buffer overflow or AQM, random = link error "
        "or MAC, none = the segment was not lost (spurious trigger). #FF = fast retransmits.</p>"
        + flows_note(len(shown), len(flows))
        + "\n".join(parts)
    )


def links_html(result: RunLike) -> str:
    causes = [c for c in result.links.columns if c.startswith("drops_")]
    rows = []
    shown = table_links(result)
    for r in result.links[shown].iter_rows(named=True):
        rows.append(
            [
                r["link"],
                r["direction"],
                f"{r['from']} → {r['to']}",
                format_rate(r["rate_bps"]),
                format_duration(r["delay_ns"]),
                r["packets_sent"],
                f"{r['utilization']:.3f}",
            ]
            + [r[c] for c in causes]
            + [r.get("ecn_marks", 0)]
        )
    return html_table(
        ["link", "direction", "path", "rate", "delay", "packets sent", "utilization"]
        + [c.removeprefix("drops_").replace("_", " ") + " drops" for c in causes]
        + ["ECN marks"],
        rows,
        left=3,
    ) + shown_note(
        len(shown), result.links.height, "link directions", "the busiest (by utilization, then packets sent)",
        "links.parquet and summary.json",
    )


def conservation_html(result: RunLike) -> str:
    c = result.conservation
    status = '<span class="ok">OK</span>' if c.get("ok") else '<span class="bad">VIOLATED</span>'
    items = "".join(f"<li>{esc(v)}</li>" for v in c.get("violations", []))
    counts = ", ".join(
        f"{k.replace('_', ' ')}: {c[k]}"
        for k in ("packets_sent", "packets_delivered", "packets_dropped", "packets_in_flight")
        if k in c
    )
    s = result.stats
    stats = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in s.items())
    return (
        f"<p>Packet conservation: {status} ({esc(counts)}).</p>"
        + (f"<ul>{items}</ul>" if items else "")
        + f"<p class='muted'>Run: {esc(stats)}; wall time {result.wall_time_s:.2f} s; tcplab {esc(result.version)}; "
        f"started {esc(result.started_at.isoformat(timespec='seconds'))}.</p>"
    )


