"""A self-contained HTML report of a run: the standard plots (PNG, base64-embedded) and tables.

Plots (matplotlib, Agg canvas; no pyplot global state):

* congestion window and slow-start threshold vs time per flow, with fast-retransmit and
  timeout markers from the events table;
* throughput vs time per flow, binned from the ``delivered`` series;
* queue length vs time for the (at most 4) busiest link directions where packets queued;
* time-sequence plot per flow (segments table): originals, retransmissions, drops.

Tables: per-flow summary, UDP flows, the loss classification in Veno's Table I form (when
any flow had loss responses), the ETH report's measurements (``report_eth``: timeouts by
cause as stacked bars, loss events, dup ACKs per recovery, SACK-block use), scenario
parameters, links.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab.run import RunResult
from tcplab.units import format_duration, format_rate

__all__ = ["write_report", "render_report"]

#: ssthresh at or above this is "unbounded" (u64::MAX before the first loss).
_UNBOUNDED = 2**62
_MAX_POINTS = 200_000
_COLORS = [
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:brown",
    "tab:pink",
    "tab:olive",
]


def _png(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, pil_kwargs={"compress_level": 1})
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _layout(fig: Figure, rows: int) -> None:
    """Fixed margins (in inches): much cheaper than constrained/tight layout."""
    w, h = fig.get_size_inches()
    fig.subplots_adjust(
        left=1.0 / w, right=1 - 0.2 / w, top=1 - 0.35 / h, bottom=0.55 / h, hspace=0.45 if rows > 1 else 0.2
    )


def _figure(rows: int, height: float = 2.6, sharex: bool = True) -> tuple[Figure, list[Any]]:
    fig = Figure(figsize=(10, 0.9 + height * rows))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, sharex=sharex, squeeze=False)[:, 0]
    _layout(fig, rows)
    return fig, list(axes)


def _flow_names(result: RunResult) -> list[str]:
    return [str(n) for n in result.flows["name"].to_list()] or [f["name"] for f in result.canonical["flows"]]


def _mss(result: RunResult, flow: int) -> int:
    try:
        return int(result.canonical["flows"][flow]["tcp"]["mss"])
    except (IndexError, KeyError, TypeError):
        return int(result.canonical["tcp"]["mss"])


def _flow_label(result: RunResult, flow: int) -> str:
    f = result.canonical["flows"][flow]
    return f"{f['name']} ({f['controller']['name']} + {f['recovery']['name']})"


def _thin(n: int) -> int:
    return max(1, n // _MAX_POINTS)


# ---- plots -----------------------------------------------------------------------------------


def plot_windows(result: RunResult) -> Figure | None:
    s = result.series
    nflows = len(result.canonical["flows"])
    if s.height == 0 or nflows == 0:
        return None
    fig, axes = _figure(nflows)
    ev = result.events
    for f, ax in enumerate(axes):
        mss = _mss(result, f)
        rows = s.filter(pl.col("flow") == f)
        t = rows["time_ns"].to_numpy() / 1e9
        cwnd = rows["cwnd"].to_numpy() / mss
        ss = rows["ssthresh"].to_numpy().astype(np.float64)
        ss[ss >= _UNBOUNDED] = np.nan
        ss /= mss
        ax.plot(t, cwnd, drawstyle="steps-post", lw=0.8, color="tab:blue", label="cwnd")
        ax.plot(t, ss, drawstyle="steps-post", lw=0.8, color="tab:green", ls="--", label="ssthresh")
        e = ev.filter(pl.col("flow") == f)
        for kind, marker, color, label in (
            ("recovery_enter", "v", "tab:red", "fast retransmit"),
            ("timeout", "X", "black", "timeout"),
        ):
            k = e.filter(pl.col("event") == kind)
            if k.height:
                ax.plot(
                    k["time_ns"].to_numpy() / 1e9,
                    k["cwnd"].to_numpy() / mss,
                    ls="none",
                    marker=marker,
                    ms=5,
                    color=color,
                    label=f"{label} ({k.height})",
                )
        ax.set_ylabel(f"window (segments,\nMSS {mss} B)")
        ax.set_title(_flow_label(result, f), fontsize=10, loc="left")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8, ncols=4)
    axes[-1].set_xlabel("time (s)")
    return fig


def throughput_bins(result: RunResult) -> tuple[np.ndarray, list[np.ndarray], float]:
    """(bin start times in s, per-flow throughput in Mb/s, bin width in s) from `delivered`."""
    dur = int(result.canonical["duration"])
    end = max(dur, int(result.stats.get("sim_time_ns", 0) or 0))
    width = max(end // 100, 1_000_000)
    edges = np.arange(0, end + width, width, dtype=np.int64)
    s = result.series
    out = []
    for f in range(len(result.canonical["flows"])):
        rows = s.filter(pl.col("flow") == f)
        t = rows["time_ns"].to_numpy().astype(np.int64)
        d = rows["delivered"].to_numpy().astype(np.float64)
        idx = np.searchsorted(t, edges, side="right") - 1
        at = np.where(idx >= 0, d[np.clip(idx, 0, None)] if d.size else 0.0, 0.0)
        out.append(np.diff(at) * 8 / (width / 1e9) / 1e6)
    return edges[:-1] / 1e9, out, width / 1e9


def plot_throughput(result: RunResult) -> tuple[Figure, float] | None:
    if result.series.height == 0 or not result.canonical["flows"]:
        return None
    t, per_flow, width = throughput_bins(result)
    fig, (ax,) = _figure(1, height=2.8)
    for f, y in enumerate(per_flow):
        ax.step(t, y, where="post", lw=1.0, color=_COLORS[f % len(_COLORS)], label=_flow_label(result, f))
    if len(per_flow) > 1:
        ax.step(t, np.sum(per_flow, axis=0), where="post", lw=0.8, color="gray", ls=":", label="all flows")
    topo = result.canonical["topology"]
    if topo.get("kind") == "dumbbell":
        rate = topo["bottleneck"]["forward"]["rate"] / 1e6
        ax.axhline(rate, color="black", lw=0.8, ls="--", label=f"bottleneck {rate:g} Mb/s")
    ax.set_xlabel("time (s)")
    ax.set_ylabel("throughput (Mb/s)")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize=8)
    return fig, width


def _wlan_text(w: dict[str, Any]) -> str:
    """One line describing a canonical WLAN segment."""

    def place(st: dict[str, Any]) -> str:
        if st.get("distance") is not None:
            return f"{st['node']} at {st['distance']:g} m"
        return f"{st['node']} {st.get('preset') or w.get('preset')}"

    m = w["mac"]
    placed = ", ".join(place(st) for st in w["stations"])
    return f"{m['rate'] / 1e6:g} Mb/s, buffer {m['buffer']} pkts, retry limit {m['retry_limit']}; {placed}"


def _link_specs(canonical: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(link name, direction) -> canonical LinkDir."""
    topo = canonical["topology"]
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if topo.get("kind") == "dumbbell":
        n = topo["pairs"]
        for i in range(n):
            sa = topo["sender_access"][i if len(topo["sender_access"]) > 1 else 0]
            ra = topo["receiver_access"][i if len(topo["receiver_access"]) > 1 else 0]
            for d in ("forward", "reverse"):
                out[(f"s{i}-left", d)] = sa[d]
                out[(f"right-r{i}", d)] = ra[d]
        for d in ("forward", "reverse"):
            out[("left-right", d)] = topo["bottleneck"][d]
    elif topo.get("kind") == "explicit":
        for link in topo.get("links", []):
            for d in ("forward", "reverse"):
                out[(f"{link['from']}-{link['to']}", d)] = link[d]
    else:  # other presets
        from tcplab.topology import graph

        for a, b, fwd, rev in graph(topo)[1]:
            out[(f"{a}-{b}", "forward")] = fwd
            out[(f"{a}-{b}", "reverse")] = rev
    return out


def plot_queues(result: RunResult) -> tuple[Figure, list[str]] | None:
    q = result.queues
    if q.height == 0:
        return None
    busy = (
        q.group_by("link")
        .agg(pl.col("packets").max().alias("peak"))
        .filter(pl.col("peak") > 1)  # 1 = only the packet in service: no queue
        .sort("peak", descending=True)
        .head(4)
        .sort("link")
    )
    if busy.height == 0:
        return None
    links = result.links
    specs = _link_specs(result.canonical)
    fig, axes = _figure(busy.height, height=2.2)
    names = []
    for ax, link in zip(axes, busy["link"].to_list()):
        rows = q.filter(pl.col("link") == link)
        t = rows["time_ns"].to_numpy() / 1e9
        ax.plot(
            t, rows["packets"].to_numpy(), drawstyle="steps-post", lw=0.8, color="tab:purple", label="queue"
        )
        if link < links.height:
            name, direction = links["link"][link], links["direction"][link]
            label = f"{name} {direction} ({links['from'][link]} → {links['to'][link]})"
            spec = specs.get((name, direction))
            peak = int(rows["packets"].max() or 0)
            if spec and "packets" in spec["buffer"]:
                cap = spec["buffer"]["packets"]
                if cap <= 2 * peak:
                    ax.axhline(cap, color="tab:red", lw=0.8, ls="--", label=f"buffer {cap} packets")
                else:
                    label += f", buffer {cap} packets (off scale)"
            elif spec:
                label += f", buffer {spec['buffer']['bytes']} B"
        else:
            label = f"link {link}"
        names.append(label)
        ax.set_title(label, fontsize=10, loc="left")
        ax.set_ylabel("queue (packets)")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1].set_xlabel("time (s)")
    return fig, names


def _zoom_windows(result: RunResult) -> list[tuple[float, float] | None]:
    """Per flow, a time range (ns) around its first loss: 5 RTTs before, 15 after."""
    out: list[tuple[float, float] | None] = []
    drops = result.drops.filter((pl.col("flow_kind") == "tcp") & (pl.col("packet") == "data"))
    ev = result.events.filter(pl.col("event").is_in(["recovery_enter", "timeout"]))
    for f in range(len(result.canonical["flows"])):
        times = (
            drops.filter(pl.col("flow") == f)["time_ns"].to_list()
            + ev.filter(pl.col("flow") == f)["time_ns"].to_list()
        )
        if not times:
            out.append(None)
            continue
        srtt = result.series.filter((pl.col("flow") == f) & (pl.col("srtt_ns") > 0))["srtt_ns"]
        rtt = float(srtt.median()) if srtt.len() else 100e6
        t0 = min(times)
        out.append((max(0.0, t0 - 5 * rtt), t0 + 15 * rtt))
    return out


def plot_time_sequence(result: RunResult, zoom: bool = False) -> Figure | None:
    """Time-sequence plot per flow; ``zoom`` restricts each flow to the time around its first
    loss (None when no flow lost anything)."""
    g = result.segments
    nflows = len(result.canonical["flows"])
    if g.height == 0 or nflows == 0:
        return None
    windows = _zoom_windows(result) if zoom else [None] * nflows
    if zoom and all(w is None for w in windows):
        return None
    drops = result.drops.filter((pl.col("flow_kind") == "tcp") & (pl.col("packet") == "data"))
    fig, axes = _figure(nflows, height=3.0, sharex=not zoom)
    if zoom:
        fig.subplots_adjust(hspace=0.6)
    for f, ax in enumerate(axes):
        rows = g.filter(pl.col("flow") == f)
        d = drops.filter(pl.col("flow") == f)
        w = windows[f]
        if w is not None:
            rows = rows.filter(pl.col("time_ns").is_between(w[0], w[1]))
            d = d.filter(pl.col("time_ns").is_between(w[0], w[1]))
        scale = 1e6 if not zoom else float(_mss(result, f))
        orig = rows.filter(pl.col("retransmission") == 0)
        rtx = rows.filter(pl.col("retransmission") > 0)
        step = _thin(orig.height)
        ax.scatter(
            orig["time_ns"].to_numpy()[::step] / 1e9,
            orig["seq"].to_numpy()[::step] / scale,
            s=1 if not zoom else 6,
            color="tab:blue",
            label="segment sent" + (f" (1 in {step} shown)" if step > 1 else ""),
            rasterized=True,
        )
        if rtx.height:
            ax.scatter(
                rtx["time_ns"].to_numpy() / 1e9,
                rtx["seq"].to_numpy() / scale,
                s=10 if not zoom else 22,
                color="tab:red",
                label=f"retransmission ({rtx.height})",
                rasterized=True,
            )
        if d.height:
            ax.scatter(
                d["time_ns"].to_numpy() / 1e9,
                d["seq"].to_numpy() / scale,
                s=18 if not zoom else 40,
                marker="x",
                color="black",
                label=f"dropped ({d.height})",
                rasterized=True,
            )
        title = _flow_label(result, f)
        if zoom:
            title += " — around the first loss" if w is not None else " — no loss"
        ax.set_title(title, fontsize=10, loc="left")
        ax.set_ylabel(
            "sequence number (MB)" if not zoom else f"sequence number\n(segments of {int(scale)} B)"
        )
        ax.grid(alpha=0.3)
        ax.legend(loc="upper left", fontsize=8, markerscale=2 if not zoom else 1)
        if zoom or f == nflows - 1:
            ax.set_xlabel("time (s)")
    return fig


# ---- HTML ------------------------------------------------------------------------------------

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
h1 { margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th { background: #f3f3f3; } td.l, th.l { text-align: left; }
figure { margin: 1em 0; } figure img { max-width: 100%; }
figcaption { font-size: 0.9em; color: #444; margin-top: 0.3em; }
.ok { color: #176317; font-weight: bold; } .bad { color: #a00; font-weight: bold; }
.muted { color: #777; }
"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _table(headers: list[str], rows: list[list[Any]], left: int = 1) -> str:
    head = "".join(f'<th class="{"l" if i < left else ""}">{_e(h)}</th>' for i, h in enumerate(headers))
    body = "".join(
        "<tr>"
        + "".join(f'<td class="{"l" if i < left else ""}">{_e(v)}</td>' for i, v in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def _ms(ns: Any) -> str:
    return "–" if ns is None else f"{ns / 1e6:.1f}"


def _params_html(result: RunResult) -> str:
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
    out = _table(["parameter", "value"], rows, left=2)
    frows = []
    for f in c["flows"]:
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
    out += _table(
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
    return out


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


def _summary_html(result: RunResult) -> str:
    rows = []
    for r in result.flow_summary():
        rows.append(
            [
                r["name"],
                r["controller"],
                r["recovery"],
                f"{r['throughput_mbps']:.3f}",
                _fmt(r["goodput"]),
                r["bytes_delivered"],
                "yes" if r["completed"] else "no",
                r["segments_sent"],
                r["retransmits"],
                r["fast_retransmits"],
                r["timeouts"],
                r["data_drops"],
                r["spurious_retransmits"],
                _ms(r["min_rtt_ns"]),
                _ms(r["mean_rtt_ns"]),
            ]
        )
    out = _table(
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
    )
    if result.udp.height:
        out += _table(
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


def _classification_html(result: RunResult) -> str:
    """Per flow with loss responses: Veno's Table I (verdict by actual cause of the loss).
    Empty when no flow had any."""
    parts = []
    for r in result.flow_summary():
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
        parts.append(f"<h3>{_e(r['name'])} ({_e(r['controller'])})</h3>")
        parts.append(_table(["response", "congestion", "random", "none", "total"], rows))
        parts.append(
            f"<p class='muted'>4/5 accuracy (share of 4/5 decisions that answered a random loss): "
            f"{_fmt(t['ff45_accuracy'])}; congestion misdiagnosis (congestion losses answered with "
            f"4/5 among those answered with 4/5 or 1/2): {_fmt(t['congestion_misdiagnosis'])}.</p>"
        )
    if not parts:
        return ""
    return (
        "<h2>Loss classification (Veno Table I form)</h2>"
        "<p class='muted'>Loss responses by the controller's verdict (rows) and the actual cause of the "
        "loss that triggered them (columns): congestion = buffer overflow or AQM, random = link error "
        "or MAC, none = the segment was not lost (spurious trigger). #FF = fast retransmits.</p>"
        + "\n".join(parts)
    )


def _links_html(result: RunResult) -> str:
    causes = [c for c in result.links.columns if c.startswith("drops_")]
    rows = []
    for r in result.links.iter_rows(named=True):
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
    return _table(
        ["link", "direction", "path", "rate", "delay", "packets sent", "utilization"]
        + [c.removeprefix("drops_").replace("_", " ") + " drops" for c in causes]
        + ["ECN marks"],
        rows,
        left=3,
    )


def _conservation_html(result: RunResult) -> str:
    c = result.conservation
    status = '<span class="ok">OK</span>' if c.get("ok") else '<span class="bad">VIOLATED</span>'
    items = "".join(f"<li>{_e(v)}</li>" for v in c.get("violations", []))
    counts = ", ".join(
        f"{k.replace('_', ' ')}: {c[k]}"
        for k in ("packets_sent", "packets_delivered", "packets_dropped", "packets_in_flight")
        if k in c
    )
    s = result.stats
    stats = ", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in s.items())
    return (
        f"<p>Packet conservation: {status} ({_e(counts)}).</p>"
        + (f"<ul>{items}</ul>" if items else "")
        + f"<p class='muted'>Run: {_e(stats)}; wall time {result.wall_time_s:.2f} s; tcplab {_e(result.version)}; "
        f"started {_e(result.started_at.isoformat(timespec='seconds'))}.</p>"
    )


def _figure_html(fig: Figure, caption: str, alt: str) -> str:
    return f'<figure><img alt="{_e(alt)}" src="data:image/png;base64,{_png(fig)}"><figcaption>{caption}</figcaption></figure>'


def _eth_html(result: RunResult) -> str:
    from tcplab.report_eth import eth_html  # it imports this module's helpers

    return eth_html(result)


def render_report(result: RunResult) -> str:
    """The report as one HTML string (images embedded as data URIs)."""
    sc = result.scenario
    caption_base = _e(sc.describe())
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>tcplab report: {_e(result.name)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(result.name)}</h1>",
        f"<p class='muted'>{_e(result.canonical.get('description') or '')}</p>",
        "<h2>Per-flow summary</h2>",
        _summary_html(result),
        _conservation_html(result),
        _classification_html(result),
        _eth_html(result),
        "<h2>Plots</h2>",
    ]
    fig = plot_windows(result)
    if fig is not None:
        parts.append(
            _figure_html(
                fig,
                f"Congestion window and slow-start threshold (in segments of the flow's MSS) vs time; "
                f"▼ fast retransmit (recovery entry), ✕ retransmission timeout, at the window set by the response. "
                f"ssthresh is not drawn while unbounded. {caption_base}.",
                "cwnd and ssthresh vs time",
            )
        )
    else:
        parts.append(
            "<p class='muted'>No window plot: the series table is empty (trace.series = \"off\"?).</p>"
        )
    tp = plot_throughput(result)
    if tp is not None:
        fig, width = tp
        parts.append(
            _figure_html(
                fig,
                f"Throughput per flow (application bytes delivered in order, bins of {width * 1e3:.0f} ms; a bar above the bottleneck rate is data held out of order and released when a hole was repaired). {caption_base}.",
                "throughput vs time",
            )
        )
    qp = plot_queues(result)
    if qp is not None:
        fig, names = qp
        parts.append(
            _figure_html(
                fig,
                f"Queue length (packets, including the one being serialized) vs time of the link direction(s) where packets queued behind the one in service ({len(names)} shown, busiest first at most 4). {caption_base}.",
                "queue length vs time",
            )
        )
    else:
        parts.append("<p class='muted'>No queue plot: no packet ever waited behind the one in service.</p>")
    fig = plot_time_sequence(result)
    if fig is not None:
        parts.append(
            _figure_html(
                fig,
                f"Time-sequence plot: first byte of every data segment sent (blue), retransmissions (red), "
                f"data packets dropped anywhere in the network (black ✕). {caption_base}.",
                "time-sequence plot",
            )
        )
        fig = plot_time_sequence(result, zoom=True)
        if fig is not None:
            parts.append(
                _figure_html(
                    fig,
                    f"Time-sequence plot zoomed on each flow's first loss (5 RTTs before to 15 after): "
                    f"segments sent (blue), retransmissions (red), drops (black ✕). {caption_base}.",
                    "time-sequence plot around the first loss",
                )
            )
    else:
        parts.append(
            "<p class='muted'>No time-sequence plot: the segments table is empty (trace.segments = false?).</p>"
        )
    parts += [
        "<h2>Scenario</h2>",
        _params_html(result),
        "<h2>Links</h2>",
        _links_html(result),
        "</body></html>",
    ]
    return "\n".join(parts)


def write_report(result: RunResult, path: str | Path) -> Path:
    """Writes ``report.html`` for ``result`` to ``path``."""
    p = Path(path)
    p.write_text(render_report(result), encoding="utf-8")
    return p
