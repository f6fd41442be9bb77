"""The campaign's self-contained HTML report: each of the ETH report's figures and tables
redone on the campaign's probes, next to the published values, and the published
directions checked as predicates. Built with the reports' HTML toolkit (tcplab.report.html)."""

from __future__ import annotations

from typing import Any

import polars as pl

from tcplab.campaign import analysis, plots, published
from tcplab.report.drawing import drawn_page
from tcplab.report.html import esc, figure_html, fmt, html_table, page

__all__ = ["render_campaign_report"]


def _pct(v: Any) -> str:
    return "–" if v is None else f"{100 * v:.1f} %"


def _change(v: Any) -> str:
    """A relative change, signed: +8.6 %, −86.3 %."""
    return "–" if v is None else f"{100 * v:+.1f} %".replace("-", "−")


def _num(v: Any, digits: int = 3) -> str:
    return fmt(float(v), digits) if v is not None else "–"


def _overview(result: Any) -> str:
    cfg = result.cfg
    df = result.probes
    s = cfg.schedule
    t = cfg.transfer
    rows = [
        ["paths", len(result.paths)],
        ["probes", df.height],
        ["completed transfers", f"{int(df['completed'].sum())} of {df.height}" if df.height else "0"],
        ["protocols", ", ".join(s.protocols)],
        [
            "schedule",
            f"{s.span_h:g} h, mean gap per path {s.mean_interval_h:g} h (exponential), diurnal amplitude {s.diurnal_amplitude:g}",
        ],
        [
            "transfer",
            f"{t.bytes} bytes, {t.packet_bytes}-byte packets, ssthresh {t.initial_ssthresh_bytes} B, "
            f"receive buffer {t.rcv_buf_bytes} B, initial window {t.initial_cwnd}, {t.sack_blocks} SACK blocks ({t.sack_style}), "
            f"RTO min {t.rto_min_ms:g} ms, time limit {t.time_limit_s:g} s",
        ],
        ["seed", cfg.seed],
        ["jobs", result.jobs],
        ["wall time", f"{result.wall_time_s:.1f} s"],
        ["CPU time (all processes)", f"{result.cpu_time_s:.1f} s"],
    ]
    return html_table(["", ""], rows, left=2)


def _throughput_html(df: pl.DataFrame, order: list[str]) -> str:
    m = analysis.throughput_medians(df, order)
    rows = [
        [
            r["protocol"],
            r["connections"],
            _num(r["median_mbps"]),
            _num(r["published_mbps"]),
            _num(r["median_normalized"]),
            _pct(r["completed_share"]),
        ]
        for r in m.iter_rows(named=True)
    ]
    return (
        html_table(
            [
                "protocol",
                "connections",
                "median Mbit/s",
                "report (Fig. 2a)",
                "median throughput / bottleneck",
                "completed",
            ],
            rows,
        )
        + f"<p class='muted'>The report: FACK's median normalized throughput is {published.FACK_NORMALIZED_MEDIAN} (Fig. 5).</p>"
    )


def _loss_bins_html(df: pl.DataFrame, order: list[str]) -> str:
    m = analysis.median_by_loss_bin(df, order=order)
    bins = sorted(set(m["loss_bin"].to_list()))[:8]
    head = ["protocol"] + [("0" if b == 0 else f"≤{b:g}") for b in bins]
    rows = []
    for p in order:
        d = {r["loss_bin"]: r for r in m.filter(pl.col("protocol") == p).iter_rows(named=True)}
        rows.append([p] + [f"{d[b]['median']:.3f} ({d[b]['connections']})" if b in d else "–" for b in bins])
    statements = "".join(f"<li>{esc(s)}</li>" for s in published.FIG4_STATEMENTS)
    corr = analysis.loss_throughput_correlation(df, order)
    crow = [
        [r["protocol"], _num(r["correlation"], 2), _num(r["published"], 2)]
        for r in corr.iter_rows(named=True)
    ]
    return (
        html_table(head, rows)
        + "<p class='muted'>Median throughput / bottleneck rate (connections) per loss-rate bin (first 8 bins).</p>"
        + f"<p>The report states (Fig. 4, §8.2.2):</p><ul>{statements}</ul>"
        + html_table(["protocol", "corr(log normalized throughput, loss rate)", "report (§8.2.1)"], crow)
    )


def _timeouts_html(df: pl.DataFrame, order: list[str]) -> str:
    free = analysis.timeout_free_share(df, order)
    mean = {
        r["protocol"]: r
        for r in df.group_by("protocol").agg(pl.col("timeouts").mean().alias("m")).iter_rows(named=True)
    }
    reno_mean = mean.get("reno", {}).get("m")
    rows = []
    for r in free.iter_rows(named=True):
        p = r["protocol"]
        m = mean[p]["m"]
        change = (m / reno_mean - 1) if reno_mean else None
        pub = published.TIMEOUT_CHANGE_VS_RENO.get((p, "all"))
        rows.append(
            [
                p,
                r["connections"],
                _pct(r["timeout_free"]),
                _pct(r["published"]),
                _num(m),
                _change(change) if p != "reno" else "",
                _change(pub),
            ]
        )
    return html_table(
        [
            "protocol",
            "connections",
            "timeout-free",
            "report (§10.1)",
            "mean timeouts",
            "vs Reno",
            "report (§10.8.1)",
        ],
        rows,
    )


def _causes_html(df: pl.DataFrame, order: list[str]) -> str:
    b = analysis.timeout_breakdown(df, order)
    classes = list(analysis.FIG8_CLASSES)
    per = {(r["protocol"], r["class"]): r for r in b.iter_rows(named=True)}
    rows = []
    for p in order:
        rows.append(
            [p] + [f"{_num(per[(p, c)]['per_connection'])} ({_pct(per[(p, c)]['share'])})" for c in classes]
        )
    rows.append(["reno (report)"] + [f"({_pct(published.RENO_TIMEOUT_BREAKDOWN.get(c))})" for c in classes])
    # changes vs Reno, next to the report's
    ch = []
    for (p, c), pub in published.TIMEOUT_CHANGE_VS_RENO.items():
        if c == "all" or p not in order or "reno" not in order:
            continue
        ours = per[(p, c)]["per_connection"]
        base = per[("reno", c)]["per_connection"]
        ch.append([p, c, _change(ours / base - 1) if base else "– (Reno has none)", _change(pub)])
    return (
        html_table(["protocol", *classes], rows)
        + "<p class='muted'>Mean timeouts per connection by cause (share of the protocol's timeouts). "
        "mpl = multiple packet loss (missing ACKs + lost MPL retransmission); other = none of the report's classes "
        "(spurious, or a pattern the rules do not describe; docs/timeouts.md).</p>"
        + html_table(["protocol", "class", "change vs Reno", "report (§10.4–10.7)"], ch)
    )


def _mpl_html(df: pl.DataFrame, order: list[str]) -> str:
    m = {r["protocol"]: r for r in analysis.mpl_breakdown(df, order).iter_rows(named=True)}
    pub = published.MPL_BREAKDOWN["missing_acks_per_connection"]
    rows = [[p, _num(m[p]["missing_acks"]), _num(pub.get(p)), _num(m[p]["lost_rtx"])] for p in order]
    rel = []
    if "rh" in m and "fack" in m and m["fack"]["lost_rtx"]:
        rel.append(
            [
                "rh vs fack",
                _change(m["rh"]["lost_rtx"] / m["fack"]["lost_rtx"] - 1),
                _change(published.MPL_BREAKDOWN["lost_rtx_rh_vs_fack"]),
            ]
        )
    if "lrd" in m and "rh" in m and m["rh"]["lost_rtx"]:
        rel.append(
            [
                "lrd vs rh",
                _change(m["lrd"]["lost_rtx"] / m["rh"]["lost_rtx"] - 1),
                _change(published.MPL_BREAKDOWN["lost_rtx_lrd_vs_rh"]),
            ]
        )
    return html_table(
        [
            "protocol",
            "missing-ACK timeouts / connection",
            "report (§10.4.1)",
            "lost-MPL-rtx timeouts / connection",
        ],
        rows,
    ) + (html_table(["lost MPL retransmission timeouts", "campaign", "report (§10.4.2)"], rel) if rel else "")


def _table3_html(df: pl.DataFrame, order: list[str]) -> str:
    t = analysis.loss_event_percentiles(df, order=order)
    qs = published.PERCENTILES
    rows = []
    for kind in ("any", "multiple"):
        for r in t.filter(pl.col("kind") == kind).iter_rows(named=True):
            p = r["protocol"]
            pub = published.LOSS_EVENT_PERCENTILES[kind].get(p)
            rows.append(
                [kind, p] + [f"{r[f'p{q}']:g}" + (f" ({pub[i]})" if pub else "") for i, q in enumerate(qs)]
            )
    return html_table(["loss", "protocol", *[f"p{q}" for q in qs]], rows, left=2) + (
        "<p class='muted'>Loss events per connection, campaign (report's Table 3); the single/multiple "
        "split is the simulator's <code>loss_events_single</code>/<code>_multiple</code> flow columns.</p>"
    )


def _directions_html(dirs: list[dict[str, Any]]) -> str:
    rows = []
    for d in dirs:
        verdict = {
            "holds": "<span class='ok'>holds</span>",
            "does not hold": "<span class='bad'>does not hold</span>",
            "inconclusive": "<span class='muted'>inconclusive</span>"
            + (f" <span class='muted'>(about {d['decide_n']} connections per protocol would decide)</span>"
               if d.get("decide_n") else ""),
        }.get(d.get("verdict", ""), "<span class='muted'>not probed</span>")
        nums = "<br>".join(
            esc(n) + ("" if s is None else f" <span class='muted'>(bootstrap support {s:.2f})</span>")
            for n, s in zip(d["numbers"], d["support"])
        )
        rows.append(
            f"<tr><td class='l'>{esc(d['claim'])}</td><td class='l'>{verdict}</td><td class='l'>{nums}</td></tr>"
        )
    return (
        "<table><thead><tr><th class='l'>published direction</th><th class='l'>here</th>"
        "<th class='l'>numbers</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
        "<p class='muted'>Bootstrap support: the share of 1000 resamples of the connections in which the comparison "
        "holds (near 1: robust; near 0.5: within the noise of this campaign's size).</p>"
    )


def render_campaign_report(result: Any) -> str:
    """The campaign report as one HTML string."""
    return drawn_page(lambda: _campaign_page(result))


def _campaign_page(result: Any) -> str:
    cfg = result.cfg
    df = result.probes
    order = result.protocols
    title = f"tcplab campaign: {cfg.name}"
    parts = [
        f"<h1>Campaign {esc(cfg.name)}</h1>",
        f"<p class='muted'>{esc(cfg.description)}</p>",
        "<p>A virtual rerun of the measurement campaign of Bolliger, Hengartner and Gross, <i>The effectiveness "
        "of end-to-end congestion control mechanisms</i> (ETH TR 313, 1999), on simulated paths. Published values "
        "are in the columns marked <i>report</i>; the population is not the report's Internet (docs/campaign.md).</p>",
        _overview(result),
    ]
    if df.height == 0:
        return page(title, [*parts, "<p>No probes ran.</p>"])
    parts += [
        "<h2>Published directions</h2>",
        _directions_html(analysis.directions(df, seed=cfg.seed)),
        "<h2>Throughput (Fig. 2, Fig. 5)</h2>",
        _throughput_html(df, order),
        figure_html(
            plots.plot_throughput_cdf(df, order),
            "Fig. 2: application throughput per connection (CDF, log x).",
            "throughput CDF",
        ),
        figure_html(
            plots.plot_normalized_cdf(df, order),
            "Fig. 5: throughput / bottleneck rate (CDF, log x).",
            "normalized throughput CDF",
        ),
        "<h2>Throughput vs loss rate (Fig. 4)</h2>",
        figure_html(
            plots.plot_loss_bins(df, order),
            "Fig. 4: median throughput / bottleneck rate per data-loss-rate bin (x stands for (x − 0.02, x]).",
            "median normalized throughput per loss bin",
        ),
        _loss_bins_html(df, order),
        "<h2>Timeouts per connection (Fig. 7)</h2>",
        figure_html(
            plots.plot_timeouts_cdf(df, order),
            "Fig. 7: timeouts per connection (CDF of timeouts + 1, log x).",
            "timeouts CDF",
        ),
        _timeouts_html(df, order),
        "<h2>Timeout causes (Fig. 8, Fig. 9)</h2>",
        figure_html(
            plots.plot_timeout_causes(df, order),
            "Fig. 8: timeouts per connection by cause, absolute and relative.",
            "timeout causes",
        ),
        _causes_html(df, order),
        figure_html(
            plots.plot_mpl_causes(df, order),
            "Fig. 9: multiple-packet-loss timeouts by cause.",
            "MPL timeout causes",
        ),
        _mpl_html(df, order),
        "<h2>Loss events (Table 3)</h2>",
        _table3_html(df, order),
    ]
    return page(title, parts)
