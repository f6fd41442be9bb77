"""Fu & Liew, "TCP Veno", IEEE JSAC 21(2) 2003, Table I: Veno's loss classification (#FF4/5
and #FF1/2 by the actual cause of the loss). Claims as ``table1_*`` in
``crates/tcplab-sim/tests/claims_veno.rs``; setting as ``scenarios/veno-table1.toml``."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl

from tcplab.reproduce.common import NETBSD_TCP, VENO_LINUX, figure, points, row, seeds_text, stats, with_kbps
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row
from tcplab.sweep import SweepResult

PAPER = "Fu & Liew, TCP Veno, IEEE JSAC 21(2), 2003"
SEEDS = {"quick": 3, "full": 10}


UDP = {"none": None, "500 kb/s": "500kbps", "1 Mb/s": "1Mbps"}
TABLE1_VARIANTS = {"paper": "veno", "linux": VENO_LINUX}
PUBLISHED_ACCURACY = {"none": "215/215 = 1.0", "500 kb/s": "228/231 = 0.987", "1 Mb/s": "226/231 = 0.978"}
PUBLISHED_MISDIAGNOSIS = {"none": "0/12", "500 kb/s": "3/30", "1 Mb/s": "5/52"}


#: Table I as printed, per run: (#FF4/5, #FF1/2) each as (congestion, random).
PUBLISHED_RUNS = {
    "none": [((0, 105), (6, 120)), ((0, 64), (3, 110)), ((0, 46), (3, 123))],
    "500 kb/s": [((1, 83), (10, 146)), ((1, 78), (8, 102)), ((1, 67), (9, 139))],
    "1 Mb/s": [((2, 90), (12, 136)), ((2, 83), (16, 127)), ((1, 53), (19, 132))],
}


def _table1_doc(cc: Any, udp: str | None) -> dict:
    wired = {"rate": "10Mbps", "delay": "1ms", "buffer": 100}
    doc: dict[str, Any] = {
        "name": "veno-table1",
        "duration": "3000s",
        "topology": {
            "pairs": 2,
            "bottleneck": {"rate": "1.6Mbps", "delay": "29ms", "buffer": 12},
            "sender_access": {"rate": "10Mbps", "delay": "0ms", "buffer": 100},
            "receiver_access": [{**wired, "forward": {"loss": 0.02}}, dict(wired)],
        },
        "tcp": dict(NETBSD_TCP),
        "flows": [{"name": "veno", "controller": cc, "recovery": "reno", "bytes": "12MB"}],
        "trace": {"series": "off", "segments": False, "drops": False, "events": False},
    }
    if udp is not None:
        doc["udp"] = [{"name": "background", "rate": udp, "packet_size": 1500}]
    return doc


def table1_points(mode: Mode):
    pts = []
    for flavor, cc in TABLE1_VARIANTS.items():
        for label, udp in UDP.items():
            pts += points(_table1_doc(cc, udp), SEEDS[mode], params={"flavor": flavor, "udp": label})
    return pts


def table1_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    f = with_kbps(res.flows())
    cols = [f"ff{a}_{c}" for a in ("45", "12") for c in ("congestion", "random", "none")]
    return f.select("flavor", "udp", "seed", "kBps", "ff45_accuracy", "congestion_misdiagnosis", *cols)


def _pooled(frame: pl.DataFrame, flavor: str, udp: str) -> tuple[float, float, str]:
    s = frame.filter((pl.col("flavor") == flavor) & (pl.col("udp") == udp))
    if s.height == 0:
        raise KeyError(f"no runs for {flavor}, {udp}")
    t = {c: int(s[c].sum()) for c in s.columns if c.startswith("ff4") or c.startswith("ff1")}
    all45 = t["ff45_congestion"] + t["ff45_random"] + t["ff45_none"]
    acc = t["ff45_random"] / all45 if all45 else math.nan
    cong = t["ff45_congestion"] + t["ff12_congestion"]
    mis = t["ff45_congestion"] / cong if cong else math.nan
    return acc, mis, f"{t['ff45_random']}/{all45}"


def _accuracy_claim(flavor: str, udp: str):
    def check(frame: pl.DataFrame) -> tuple[bool, str]:
        acc, mis, frac = _pooled(frame, flavor, udp)
        return acc >= 0.9, f"4/5 accuracy {frac} = {acc:.3f}; congestion misdiagnosis {mis:.3f}"

    return check


def table1_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(1, 2, width=10, height=4.2)
    colors = {"congestion": "tab:red", "random": "tab:blue", "none": "tab:gray"}
    for j, flavor in enumerate(TABLE1_VARIANTS):
        a = ax[0][j]
        x = np.arange(len(UDP))
        for k, kind in enumerate(("45", "12")):
            bottom = np.zeros(len(UDP))
            for cause in ("congestion", "random", "none"):
                h = []
                for udp in UDP:
                    s = frame.filter((pl.col("flavor") == flavor) & (pl.col("udp") == udp))
                    h.append(float(s[f"ff{kind}_{cause}"].mean()) if s.height else 0.0)
                a.bar(x + (k - 0.5) * 0.38, h, 0.36, bottom=bottom, color=colors[cause], hatch="" if kind == "45" else "//", edgecolor="black", lw=0.4, label=f"#FF{'4/5' if kind == '45' else '1/2'} {cause}")
                bottom += np.array(h)
        a.set_xticks(x, [f"UDP {u}" for u in UDP])
        a.set_ylabel("fast retransmits per 12 MB run (mean)")
        a.set_title(f"Veno, {flavor} flavor")
        a.grid(True, axis="y", alpha=0.3)
        a.legend(fontsize=7, ncol=2)
    cap = f"One Veno flow, 12 MB over 1.6 Mb/s (buffer 12, RTT about 60 ms) to a wireless hop with loss 0.02; left bar #FF4/5, right bar #FF1/2, by actual cause; mean over {seeds_text(SEEDS[mode])}."
    return [Plot(fig, cap, "Fast retransmits by Veno's decision and actual cause")]


def table1_table(frame: pl.DataFrame) -> list[Row]:
    rows = []
    paper = frame.filter(pl.col("flavor") == "paper")
    for udp, runs in PUBLISHED_RUNS.items():
        for k, kind in enumerate(("45", "12")):
            for c, cause in enumerate(("congestion", "random")):
                col = f"ff{kind}_{cause}"
                pub = [r[k][c] for r in runs]
                st = stats(paper.with_columns(pl.col(col).cast(pl.Float64)), col, ["udp"])
                name = "#FF4/5" if kind == "45" else "#FF1/2"
                text = f"{', '.join(map(str, pub))} (mean {sum(pub) / len(pub):.1f})"
                rows.append(row(st, f"UDP {udp}: {name} on {cause} losses per run", text, "count", udp=udp))
    for flavor in TABLE1_VARIANTS:
        acc = stats(frame.filter(pl.col("flavor") == flavor).drop_nulls("ff45_accuracy"), "ff45_accuracy", ["udp"])
        mis = stats(frame.filter(pl.col("flavor") == flavor).drop_nulls("congestion_misdiagnosis"), "congestion_misdiagnosis", ["udp"])
        for udp in UDP:
            pa = PUBLISHED_ACCURACY[udp] if flavor == "paper" else "—"
            pm = PUBLISHED_MISDIAGNOSIS[udp] if flavor == "paper" else "—"
            rows.append(row(acc, f"{flavor} flavor, UDP {udp}: 4/5 accuracy per run", pa, "ratio", udp=udp))
            rows.append(row(mis, f"{flavor} flavor, UDP {udp}: congestion misdiagnosis per run", pm, "ratio", udp=udp))
    return rows


TABLE1 = Experiment(
    id="veno-table1",
    title="Loss classification: #FF4/5 and #FF1/2 by actual cause",
    paper=PAPER,
    reference="Table I",
    points=table1_points,
    analyze=table1_analyze,
    plots=table1_plots,
    table=table1_table,
    claims=(
        Claim("≥ 90% of 4/5 decisions on random losses, no background", _accuracy_claim("paper", "none"), "215/215"),
        Claim("same, 500 kb/s UDP", _accuracy_claim("paper", "500 kb/s"), "228/231"),
        Claim("same, 1 Mb/s UDP", _accuracy_claim("paper", "1 Mb/s"), "226/231"),
        Claim("(tcplab, not the paper) the Linux flavor keeps ≥ 90% with 1 Mb/s UDP", _accuracy_claim("linux", "1 Mb/s"), "—"),
    ),
    seeds=SEEDS,
    setting=(
        "Fig. 3(b): one Veno flow, 12 MB, through the router (1.6 Mb/s, buffer 12, both ways; 29 ms "
        "one way, RTT about 60 ms) to a wireless client whose 10 Mb/s hop loses data packets at "
        "random; an optional UDP CBR stream (1500-byte packets) across the same router to another "
        "host. Not in the paper: the wireless loss rate. **p = 0.02** reproduces the paper's own "
        "count of random-loss fast retransmits without background (169..225 per 12 MB). Causes come "
        "from the simulator's drop records (docs/loss-classification.md). Accuracy = 4/5 decisions "
        "on random losses / all 4/5 decisions (spurious triggers count as misses), pooled over the "
        "runs for the claims; misdiagnosis = congestion losses answered 4/5 / all congestion fast "
        "retransmits (`scenarios/veno-table1.toml`)."
    ),
    explanation=(
        "The accuracy claim holds without background and with 500 kb/s; with 1 Mb/s it does not "
        "(about 0.81 with 3 seeds), and tcplab's misdiagnosis rate is far above the paper's with "
        "1 Mb/s (and noisy without background, where each run has a single congestion loss, the "
        "slow-start overshoot). Likely reason: the paper flavor forgets BaseRTT at every loss and "
        "re-learns it from RTT samples taken while the CBR stream (62% of the bottleneck) keeps the "
        "router queue occupied, and it judges with the smoothed RTT; so it underestimates the "
        "backlog N, and the Veno flow's own share of a full 12-packet buffer, about 0.38 x 12 = 4.6 "
        "packets, is close to beta = 3 anyway. The Linux flavor (BaseRTT never forgotten, the "
        "latest RTT sample) keeps its accuracy (about 0.98).\n\n"
        "Other differences from the published table: tcplab's Veno answers far fewer random losses "
        "with 1/2 (8..36 per run vs 102..146): the paper reports most random losses as arriving "
        "while the connection was \"trapped into congestive states\", which tcplab's queue rarely "
        "produces at this loss rate; and tcplab has spurious fast retransmits (cause \"none\"): with "
        "Reno recovery, the duplicate ACKs caused by go-back-N after a timeout trigger a fast "
        "retransmit of a segment whose retransmission is on its way. The paper's packet-log "
        "inference had no such column. (The paper's \"no more than 17% (two out of twelve)\" "
        "divides by #FF1/2 of congestion only; over all congestion fast retransmits its worst run "
        "is 2/14 = 14%.)"
    ),
)

