"""Shimonishi, Hama, Murase, "TCP-Adaptive Reno": Fig. 6 (capacity sweep) and Fig. 7 (loss
sweep). The claims (the paper's words, thresholds from them) are in
:mod:`tcplab.reproduce.areno_claims`; the points vary the shipped ``scenarios/areno-fig6.toml`` and
``areno-fig7.toml`` (:func:`tcplab.reproduce.areno_setup.areno_doc`)."""

from __future__ import annotations

import numpy as np
import polars as pl

from tcplab.reproduce.areno_claims import (
    ARENO_MAIN_READING,
    ARENO_READINGS_OPEN,
    ARENO_WITHOUT_SACK,
    FIG6_CLAIMS,
    FIG7_CLAIMS,
    fig6_sensitivity,
    fig6_sensitivity_points,
    fig7_sensitivity,
    fig7_sensitivity_points,
    readings_note,
)
from tcplab.reproduce.common import (
    figure,
    lossfmt,
    points,
    row,
    seeds_text,
    stats,
)
from tcplab.reproduce.areno_setup import (
    CAPACITIES,
    FIG6_SEEDS,
    FIG7_SECS,
    LOSSES,
    OTHERS,
    PAPER,
    SEEDS,
    SETTING,
    areno_doc,
    areno_pairs,
)
from tcplab.reproduce.experiment import Experiment, Mode, Plot, Row, Sensitivity
from tcplab.sweep import SweepResult

def _ratios(frame: pl.DataFrame, by: str) -> pl.DataFrame:
    """Per value of ``by`` and other: mean Reno and peer throughput, Reno's share, pair gain."""
    m = frame.group_by(by, "other").agg(pl.col("reno").mean(), pl.col("peer").mean())
    base = m.filter(pl.col("other") == "reno").select(by, ((pl.col("reno") + pl.col("peer")) / 2).alias("reno_mean"), (pl.col("reno") + pl.col("peer")).alias("reno_total"))
    return (
        m.join(base, on=by)
        .with_columns(
            (pl.col("reno") / pl.col("reno_mean")).alias("share"),
            ((pl.col("reno") + pl.col("peer")) / pl.col("reno_total")).alias("gain"),
        )
        .sort(by, "other")
    )


def _plot(frame: pl.DataFrame, by: str, xlabel: str, title: str, caption: str) -> list[Plot]:
    fig, ax = figure(1, 2, width=11, height=4.4)
    a, b = ax[0][0], ax[0][1]
    per = stats(frame.rename({"peer": "mbps"}), "mbps", [by, "other"])
    ren = stats(frame.rename({"reno": "mbps"}), "mbps", [by, "other"])
    for i, (other, m) in enumerate(zip(OTHERS, "os^", strict=True)):
        p = per.filter(pl.col("other") == other).sort(by)
        r = ren.filter(pl.col("other") == other).sort(by)
        c = f"C{i}"
        a.errorbar(p[by].to_numpy(), p["mean"].to_numpy(), yerr=p["ci"].fill_null(0).to_numpy(), marker=m, color=c, capsize=3, label=f"{other} (second flow)")
        a.errorbar(r[by].to_numpy(), r["mean"].to_numpy(), yerr=r["ci"].fill_null(0).to_numpy(), marker=m, color=c, ls="--", mfc="none", capsize=3, label=f"Reno next to {other}")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel(xlabel)
    a.set_ylabel("throughput (Mb/s)")
    a.set_title(title)
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=7)
    rat = _ratios(frame, by)
    for other, m in (("highspeed", "s"), ("areno", "^")):
        s = rat.filter(pl.col("other") == other)
        b.plot(s[by].to_numpy(), s["share"].to_numpy(), marker=m, label=f"Reno's share vs {other}")
    b.axhline(0.9, color="gray", ls=":", label="friendliness threshold 0.9")
    b.axhline(0.5, color="gray", ls="--", label="\"severely\" threshold 0.5")
    b.set_xscale("log")
    b.set_xlabel(xlabel)
    b.set_ylabel("Reno's share (ratio)")
    b.set_title("Friendliness")
    b.set_ylim(0, 1.4)
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=7)
    return [Plot(fig, caption, title)]


# ---- Fig. 6 ----------------------------------------------------------------------------------


def fig6_points(mode: Mode):
    pts = []
    for mbps, secs in CAPACITIES[mode].items():
        for other in OTHERS:
            pts += points(
                areno_doc("areno-fig6", mbps, 1e-6, other, secs),
                FIG6_SEEDS[mode],
                params={"capacity": mbps, "loss": 1e-6, "other": other},
            )
    return pts


def fig6_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    return areno_pairs(res)


def fig6_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    secs = ", ".join(f"{c} Mb/s: {s} s" for c, s in CAPACITIES[mode].items())
    cap = f"One Reno flow against one flow of each protocol; loss 1e-6, RTT 100 ms, buffer = BDP; run lengths {secs}; mean ± 95% CI over {seeds_text(FIG6_SEEDS[mode])} ({mode} mode)."
    return _plot(frame, "capacity", "bottleneck capacity (Mb/s)", "AReno Fig. 6: throughput vs capacity", cap)


def fig6_table(frame: pl.DataFrame) -> list[Row]:
    rows = []
    per = stats(frame, "reno", ["capacity", "other"])
    peer = stats(frame, "peer", ["capacity", "other"])
    for c in sorted(set(frame["capacity"].to_list())):
        rows.append(row(per, f"{c} Mb/s: Reno vs HighSpeed", "10% of eligible" if c == 200 else "—", "Mb/s", capacity=c, other="highspeed"))
        rows.append(row(per, f"{c} Mb/s: Reno vs AReno", "fair share up to 300 Mb/s" if c <= 300 else "—", "Mb/s", capacity=c, other="areno"))
        rows.append(row(peer, f"{c} Mb/s: AReno vs Reno", "uses the rest beyond 300 Mb/s" if c > 300 else "—", "Mb/s", capacity=c, other="areno"))
    return rows


FIG6 = Experiment(
    id="areno-fig6",
    title="Throughput vs capacity: Reno against Reno, HighSpeed, AReno",
    paper=PAPER,
    reference="Fig. 6",
    points=fig6_points,
    analyze=fig6_analyze,
    plots=fig6_plots,
    table=fig6_table,
    claims=FIG6_CLAIMS,
    sensitivity=Sensitivity(fig6_sensitivity_points, fig6_sensitivity, readings_note("Fig. 6")),
    reading=ARENO_MAIN_READING + " SACK recovery for every flow.",
    readings=(*ARENO_READINGS_OPEN, ARENO_WITHOUT_SACK),
    seeds=FIG6_SEEDS,
    setting=SETTING + " Capacity sweep at loss 1e-6 (`scenarios/areno-fig6.toml`), 10, 50, 100, 200 (the paper's HighSpeed example), 300 and 500 Mb/s, 300 s per run; full mode adds 1 Gb/s (1000 s runs, minutes each) and seeds.",
    explanation=(
        "The claims now state the paper's words (equal shares below 300 Mb/s, HighSpeed leaving Reno "
        "about 10% at 200 Mb/s, AReno using up the rest above 300 Mb/s); earlier versions tested "
        "weaker stand-ins (Reno keeps ≥ 80%, HighSpeed < 50% at 100 Mb/s, pair total above two "
        "Renos'). In earlier 300 s runs Reno's share next to AReno was 0.68 and 0.64 at 10 and 50 Mb/s. Likely reason, from the formulas as "
        "published (`docs/controllers/areno.md`): W_inc(c) = W_inc_max e^(-alpha c) + beta c + gamma "
        "has W_inc(1) = 1 and, for W_inc_max = B/M ≤ 1 (B ≤ 10 Mb/s, B being the flow's own "
        "Westwood-style rate estimate), W_inc(c) ≥ gamma ≈ 1 − 0.2 W_inc_max ≥ 0.8 for every c. Its "
        "minimum is below zero (the \"U-curve\" that lets Reno catch up) only when W_inc_max > about "
        "9.8, i.e. when AReno's own rate exceeds about 98 Mb/s. Below that AReno adds 1.8..2 "
        "segments per RTT against Reno's 1 and halves at congestion like Reno: an AIMD with twice "
        "Reno's increase, which takes about twice Reno's throughput.\n\n"
        "**HighSpeed starves Reno** from 50 Mb/s up; at 10 Mb/s the windows are barely above "
        "HighSpeed's low_window (38), so it is nearly Reno. **AReno's total exceeds Reno's** at "
        "1 Gb/s (x2.80 in full mode); at 300 Mb/s two Renos already get 85% of the link (pair gain "
        "about 1.1); quick mode checks \"use up the rest\" at 500 Mb/s instead of 1 Gb/s. A lone Reno flow tops out between 120 and 200 Mb/s in these runs (the "
        "paper: about 150 Mb/s). With 100 s runs instead of 300 s the shares move by up to 0.15 "
        "(a Reno flow needs tens of seconds to grow its window at 300 Mb/s), so quick mode keeps "
        "the 300 s runs and saves on seeds and the 1 Gb/s point."
    ),
)


# ---- Fig. 7 ----------------------------------------------------------------------------------


def fig7_points(mode: Mode):
    pts = []
    for loss in LOSSES:
        for other in OTHERS:
            pts += points(
                areno_doc("areno-fig7", 100, loss, other, FIG7_SECS[mode]),
                SEEDS[mode],
                params={"capacity": 100, "loss": loss, "other": other},
            )
    return pts


def fig7_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    cap = f"One Reno flow against one flow of each protocol; 100 Mb/s, RTT 100 ms, buffer = BDP (833 packets), {FIG7_SECS[mode]} s runs; mean ± 95% CI over {seeds_text(SEEDS[mode])} ({mode} mode)."
    return _plot(frame, "loss", "random loss rate (per packet)", "AReno Fig. 7: throughput vs loss rate", cap)


def fig7_table(frame: pl.DataFrame) -> list[Row]:
    per = stats(frame, "reno", ["loss", "other"])
    peer = stats(frame, "peer", ["loss", "other"])
    rows = []
    for p in LOSSES:
        rows.append(row(per, f"loss {lossfmt(p)}: Reno vs AReno", "unaffected", "Mb/s", loss=p, other="areno"))
        rows.append(row(peer, f"loss {lossfmt(p)}: AReno vs Reno", "7x Reno at 1e-3" if p == 1e-3 else "—", "Mb/s", loss=p, other="areno"))
        rows.append(row(per, f"loss {lossfmt(p)}: Reno vs HighSpeed", "severely deteriorated below 1e-4" if p < 1e-4 else "—", "Mb/s", loss=p, other="highspeed"))
    m = frame.filter((pl.col("loss") == 1e-3) & (pl.col("other") == "areno"))
    if m.height:
        rows.append(Row("AReno/Reno at loss 1e-3", "7", float(np.mean(m["peer"].to_numpy()) / np.mean(m["reno"].to_numpy())), None, "ratio of means"))
    return rows


FIG7 = Experiment(
    id="areno-fig7",
    title="Throughput vs random loss at 100 Mb/s",
    paper=PAPER,
    reference="Fig. 7",
    points=fig7_points,
    analyze=fig6_analyze,
    plots=fig7_plots,
    table=fig7_table,
    claims=FIG7_CLAIMS,
    sensitivity=Sensitivity(fig7_sensitivity_points, fig7_sensitivity, readings_note("Fig. 7")),
    reading=ARENO_MAIN_READING + " SACK recovery for every flow.",
    readings=(*ARENO_READINGS_OPEN, ARENO_WITHOUT_SACK),
    seeds=SEEDS,
    setting=SETTING + " Loss sweep at 100 Mb/s (`scenarios/areno-fig7.toml`).",
    explanation=(
        "The \"7 times\" claim is now tested as the paper states it (it was \"pair total > two "
        "Renos\"). In earlier runs friendliness held at every loss rate (with the old 0.8 bound) and "
        "HighSpeed starved Reno at 1e-5 and not from 1e-4 on (as published). **Gap**: AReno gets "
        "about 2x Reno's throughput at 1e-3, not 7x. Likely reason, read from the `verdicts` "
        "table (`ff_value_mean_random`): AReno's mean congestion level at random losses is c = 0.62 "
        "at 1e-3 (0.56 at 1e-2, 0.38 at 1e-4), so it cuts its window to 1/(1 + c) ≈ 0.62 rather "
        "than barely at all. RTT_cong is smoothed over every loss event, random ones included (the "
        "paper: \"given that packet losses are mainly due to congestion\"); when most losses are "
        "random, RTT_cong drifts down to the RTT seen at random losses and small RTT fluctuations "
        "give a large c. At congestion losses c is 1.0 on average, as intended. The readings test "
        "this (quick suite of 2026-11-29): with RTT_cong updated at congestion losses only, AReno "
        "gets 17.4x [16.7, 18.0] Reno's throughput at 1e-3 (from 2.0x): the mechanism is the one "
        "named, and that reading overshoots the published 7x (2.5 times over) where the paper's "
        "words fall short of it (3.5 times under); with W_inc as the prose describes it 1.79x, with NewReno recovery 2.03x. Reno's share "
        "next to AReno at 1e-6 (\"fairly\", ≥ 0.9) is 0.867 as printed and holds only with W_inc "
        "as the prose describes it (1.05 [1.03, 1.08]); NewReno recovery makes it 0.713. In 100 s runs "
        "HighSpeed's share claim at 1e-5 turned marginal (Reno's share 0.50 over 3 seeds): at "
        "1e-6..1e-5 a flow sees only a handful of random losses in 100 s, so both modes run 300 s."
    ),
)

EXPERIMENTS = [FIG6, FIG7]
