"""The HTML page of ``tcplab diff --html``: both runs' cwnd and time-sequence plots of the
compared flow overlaid on one time axis (each run from its first data transmission), the
first divergence marked, and the comparison's tables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import polars as pl

from tcplab.report.html import esc, figure_html, html_table, page
from tcplab.report.plots import figure

if TYPE_CHECKING:
    from tcplab.diff import Run


def _plots(a: Run, b: Run, doc: dict[str, Any]) -> str:
    fig, (cw, ts) = figure(2, height=3.0)
    for run, label, color in ((a, "A", "tab:blue"), (b, "B", "tab:orange")):
        s = run.tables["series"].sort("time_ns")
        t = (s["time_ns"].cast(pl.Int64) - run.t0).to_numpy() / 1e9
        cw.step(t, s["cwnd"].to_numpy() / 1e3, where="post", color=color, lw=0.9, label=f"{label} cwnd")
        seg = run.tables["segments"]
        ts_t = (seg["time_ns"].cast(pl.Int64) - run.t0).to_numpy() / 1e9
        rtx = seg["retransmission"].to_numpy() > 0
        ts.plot(ts_t[~rtx], seg["seq"].to_numpy()[~rtx] / 1e6, ",", color=color, label=f"{label} sent")
        ts.plot(ts_t[rtx], seg["seq"].to_numpy()[rtx] / 1e6, "x", ms=3, color=color, label=f"{label} resent")
    d = doc["first_divergence"]
    if d is not None:
        when = min(e["time_ms"] for e in (d["a"], d["b"]) if e) / 1e3
        for ax in (cw, ts):
            ax.axvline(when, color="tab:red", lw=1, ls="--")
    cw.set_ylabel("cwnd (kB)")
    ts.set_ylabel("sequence (MB)")
    ts.set_xlabel("time from the first data transmission (s)")
    cw.legend(loc="upper right", fontsize=7)
    ts.legend(loc="lower right", fontsize=7, markerscale=3)
    return figure_html(fig, "cwnd and time-sequence, A and B overlaid; dashed: the first divergence",
                       "cwnd and time-sequence plots of both runs")


def diff_page(a: Run, b: Run, doc: dict[str, Any]) -> str:
    body = [f"<h1>tcplab diff: {esc(a.path)} vs {esc(b.path)}, flow {esc(a.name)}</h1>",
            f"<p>Time tolerance {doc['time_tolerance_ms']:g} ms; times from each run's first data "
            "transmission.</p>"]
    d = doc["first_divergence"]
    if d is None:
        body.append("<p>No divergence: every stream has the same events in the same order.</p>")
    else:
        ev = [f"{e['stream']} {tuple(e['key'])} at {e['time_ms']:.3f} ms" if e else "(stream ended)"
              for e in (d["a"], d["b"])]
        body.append(f"<h2>First divergence: {esc(d['stream'])} event #{d['index']}</h2>")
        body.append(html_table(["", "A", "B"], [["event", *ev]] + [
            [k, *(s.get(k, "–") for s in d["state"])] for k in d["state"][0]]))
    body.append(_plots(a, b, doc))
    ep = doc["episodes"]
    rows = [[k, *(f"{r['trigger']} {r['verdict']} at {r['time_ms']:.1f} ms, cwnd {r['cwnd_before']} -> "
                  f"ssthresh {r['ssthresh_after']}" if r else "–" for r in pair)]
            for k, pair in enumerate(ep["loss_responses"])]
    body.append("<h2>Loss responses</h2>" + html_table(["#", "A", "B"], rows))
    return page(f"tcplab diff {a.name}", body)
