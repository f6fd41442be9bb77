"""Shimonishi, Hama, Murase, "TCP-Adaptive Reno": the laboratory measurement (§IV-B, Fig. 10
and 11): 300 Mb/s emulated bottleneck with random loss 1e-5; a lone Reno flow 18.3 Mb/s, a lone
AReno flow 232.1 Mb/s (12.6x); coexisting, AReno 227 and Reno 18.5 Mb/s (Reno not hurt).
The lab's delay and buffer are not in the text: tcplab uses the RTT (100 ms) and buffer
(= BDP) of its Fig. 6/7 runs (the dumbbell of the shipped ``scenarios/areno-fig6.toml``).
"""

from __future__ import annotations

import polars as pl

from tcplab.reproduce.areno_setup import PAPER, TRACE_OFF, dumbbell_doc
from tcplab.reproduce.areno_claims import ARENO_MAIN_READING, ARENO_READINGS_OPEN, ARENO_WITHOUT_SACK, readings_note
from tcplab.reproduce.common import (
    ARENO_HEADLINE,
    areno_controller,
    areno_reading_list,
    bulk_flows,
    figure,
    headline_reading,
    points,
    row,
    seed_values,
    stats,
)
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row, Sensitivity
from tcplab.reproduce.readings import Reading, combined, set_controller_param
from tcplab.reproduce.verdict import ABOUT, Test, about, ratio_of_means, within
from tcplab.sweep import SweepResult, point_dir

#: the full mode's seeds in quick mode too: 10 left the coexistence claim inconclusive
SEEDS = {"quick": 20, "full": 20}
SECS = {"quick": 300, "full": 600}
MBPS = 300
LOSS = 1e-5
#: Flow sets: the two lone runs (Fig. 10) and the coexisting run (Fig. 11).
PUBLISHED_GAIN = 232.1 / 18.3
RUNS = {"reno alone": ["reno"], "areno alone": ["areno"], "coexisting": ["reno", "areno"]}


def _doc(controllers: list[str], secs: int, reading: str | None = None) -> dict:
    """``reading``: AReno's W_inc reading (None: this build's headline reading)."""
    areno = areno_controller(reading if reading is not None else headline_reading())
    controllers = [areno if c == "areno" else c for c in controllers]
    doc = dumbbell_doc("areno-fig6", MBPS, LOSS, secs)
    doc["topology"]["pairs"] = len(controllers)
    # the runs' own flow sets; windows every 200 ms for the plots
    doc["flows"] = bulk_flows(controllers, "sack")
    return {**doc, "name": "areno-lab", "trace": {**TRACE_OFF, "series": "interval", "interval": "200ms"}}


def _rtt_250(doc: dict) -> dict:
    """The lab path at an RTT of 250 ms (2 x 1 ms access each way + 123 ms), buffer one BDP."""
    doc["topology"]["bottleneck"]["delay"] = "123ms"
    doc["topology"]["bottleneck"]["buffer"] = round(MBPS * 1e6 * 0.25 / 8 / 1500)
    return doc


def _rate_100(doc: dict) -> dict:
    """The lab path at 100 Mb/s (access links 10x), buffer one BDP at its RTT of 100 ms."""
    topo = doc["topology"]
    topo["bottleneck"]["rate"] = "100Mbps"
    topo["bottleneck"]["buffer"] = round(100e6 * 0.1 / 8 / 1500)
    for side in ("sender_access", "receiver_access"):
        topo[side]["rate"] = "1000Mbps"
    return doc


def lab_points(mode: Mode):
    pts = []
    for run, ccs in RUNS.items():
        pts += points(_doc(ccs, SECS[mode]), SEEDS[mode], params={"run": run})
    return pts


def lab_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    f = res.flows().with_columns((pl.col("throughput_bps") / 1e6).alias("mbps"))
    return f.select("run", "seed", "key", "id", "controller", "mbps").sort("run", "seed", "id")


def _runs(frame: pl.DataFrame, run: str, controller: str):
    return seed_values(frame, "mbps", run=run, controller=controller)


def _claim_gain(frame: pl.DataFrame) -> Test:
    est = ratio_of_means(_runs(frame, "areno alone", "areno"), _runs(frame, "reno alone", "reno"))
    return about("AReno alone / Reno alone", est, PUBLISHED_GAIN)


def _claim_same(frame: pl.DataFrame) -> list[Test]:
    return [
        within(
            f"{cc if cc == 'reno' else 'AReno'} coexisting / alone".replace("reno", "Reno"),
            ratio_of_means(_runs(frame, "coexisting", cc), _runs(frame, f"{cc} alone", cc)),
            1 - ABOUT,
            1 + ABOUT,
        )
        for cc in ("reno", "areno")
    ]


def lab_sensitivity_points(mode: Mode):
    pts = []
    for r in areno_reading_list():
        for run, ccs in RUNS.items():
            pts += points(_doc(ccs, SECS[mode], r), SEEDS[mode], params={"run": run, "reading": r or "default"})
    return pts


def lab_sensitivity(res: SweepResult, mode: Mode) -> list[Row]:
    rows = []
    for r in areno_reading_list():
        sub = SweepResult(out=res.out, points=[p for p in res.points if p.params["reading"] == (r or "default")])
        f = lab_analyze(sub, mode)
        head = "headline" if r in (ARENO_HEADLINE, None) else ""
        label = "default reading" if r is None else f"W_inc {r!r}"
        rows.append(Row.of(f"{label}: AReno alone / Reno alone", head, _claim_gain(f).estimate, "ratio"))
        for t in _claim_same(f):
            rows.append(Row.of(f"{label}: {t.label}", head, t.estimate, "ratio"))
    return rows


def lab_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(1, 2, width=10, height=3.6)
    for i, (title, runs) in enumerate(
        (("separate runs (Fig. 10)", ("reno alone", "areno alone")), ("coexisting (Fig. 11)", ("coexisting",)))
    ):
        a = ax[0][i]
        for run in runs:
            sel = frame.filter((pl.col("run") == run) & (pl.col("seed") == 1))
            if sel.height == 0:
                continue
            s = pl.read_parquet(point_dir(res.out, sel["key"][0]) / "series.parquet")
            for fid, cc in zip(sel["id"].to_list(), sel["controller"].to_list()):
                d = s.filter(pl.col("flow") == fid).sort("time_ns")
                a.plot(d["time_ns"].to_numpy() / 1e9, d["cwnd"].to_numpy() / 1460, lw=0.7, label=cc)
        a.set_title(title)
        a.set_xlabel("time (s)")
        a.set_ylabel("cwnd (segments of 1460 B)")
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    cap = (
        f"Congestion windows sampled every 200 ms (seed 1), {MBPS} Mb/s bottleneck, random loss 1e-5, "
        f"RTT 100 ms, buffer = BDP ({round(MBPS * 1e6 * 0.1 / 8 / 1500)} packets), SACK recovery, "
        f"{SECS[mode]} s ({mode} mode)."
    )
    return [Plot(fig, cap, "Congestion windows of AReno and Reno, alone and coexisting")]


def lab_explanation(frame: pl.DataFrame) -> str:
    """Why the gain misses, with the numbers of this run (the table beside it)."""
    import statistics

    areno = statistics.fmean(_runs(frame, "areno alone", "areno"))
    reno = statistics.fmean(_runs(frame, "reno alone", "reno"))
    gain = areno / reno if reno else float("nan")
    return (
        "The paper ran AReno in a Linux-based TCP proxy over a hardware emulator whose delay it does "
        "not state, so absolute rates are not comparable: a lone Reno flow's rate at this loss rate "
        "is set by the RTT (Mathis: about MSS/RTT x 1.22/sqrt(p)), and the paper's 18.3 Mb/s suggests "
        "a longer RTT than tcplab's 100 ms, which gives Reno more. The claims compare ratios: AReno's "
        "gain over Reno alone, and Reno's rate next to AReno against its rate alone. Here AReno alone "
        f"gets {areno:.0f} Mb/s (the lab: 232.1) and Reno alone {reno:.1f} Mb/s, {reno / 18.3:.1f}x the "
        f"lab's 18.3, so the gain is {gain:.1f}x instead of 12.6x; with the lab's (unknown, apparently "
        "longer) RTT Reno would get less and the gain would be larger. Nothing was tuned to close the "
        "gap. Earlier versions tested a weaker stand-in (gain ≥ 5x) and only Reno's side of \"almost "
        "the same\"; the claims now state the paper's 12.6x and both flows. Runs this long see few "
        "losses at 1e-5, so the lone Reno rate varies between seeds; the run's length differs between "
        "quick (300 s) and full (600 s) mode, and AReno alone gets less in the longer runs."
    )


def lab_table(frame: pl.DataFrame) -> list[Row]:
    st = stats(frame, "mbps", ["run", "controller"])
    return [
        row(st, "Reno alone", "18.3", "Mb/s", run="reno alone", controller="reno"),
        row(st, "AReno alone", "232.1", "Mb/s", run="areno alone", controller="areno"),
        row(st, "Reno next to AReno", "18.5", "Mb/s", run="coexisting", controller="reno"),
        row(st, "AReno next to Reno", "227", "Mb/s", run="coexisting", controller="areno"),
    ]


LAB = Experiment(
    id="areno-lab",
    title="Laboratory measurement: 300 Mb/s, random loss 1e-5, alone and coexisting",
    paper=PAPER,
    reference="§IV-B, Fig. 10, Fig. 11",
    points=lab_points,
    analyze=lab_analyze,
    plots=lab_plots,
    table=lab_table,
    claims=(
        Claim(
            "A lone AReno flow gets 12.6 ± 10% times a lone Reno flow",
            _claim_gain,
            "232.1 vs 18.3 Mb/s (12.6x)",
            quote=(
                "average throughput of a TCP-Reno flow is just 18.3Mbps. On the other hand, average throughput of a "
                "TCP-AReno flow is as high as 232.1Mbps, 12.6 times improvement"
            ),
            section="§IV-B, Fig. 10",
            threshold="a published number reproduced within ±10% (ABOUT, verdict.py): [11.3, 13.9]; a ratio, as the lab's RTT is unknown.",
        ),
        Claim(
            "Coexisting, Reno and AReno each get within 1 ± 10% of what they get alone",
            _claim_same,
            "227.4 / 232.1, 18.5 / 18.3",
            quote=(
                "Average throughputs of the TCP-AReno and TCP-Reno flows are 227.4Mbps and 18.5Mbps, respectively, which "
                "are almost the same as they solely exist"
            ),
            section="§IV-B, Fig. 11",
            threshold="\"almost the same\" = within ±10% (ABOUT; the paper's own differences are 2.0% and 1.1%).",
        ),
    ),
    sensitivity=Sensitivity(lab_sensitivity_points, lab_sensitivity, readings_note("The lab measurement")),
    reading=ARENO_MAIN_READING + " SACK recovery for every flow; RTT 100 ms and a buffer of one BDP (the lab's "
            "are not given).",
    readings=(
        *ARENO_READINGS_OPEN,
        ARENO_WITHOUT_SACK,
        Reading(
            "RTT",
            "250 ms",
            "the paper's own Reno number: 18.3 Mb/s at loss 1e-5 (§IV-B) is what the Mathis et al. law "
            "(MSS/RTT x 1.22/sqrt(p), MSS 1460) gives at an RTT of 246 ms; bottleneck delay 123 ms each way and "
            "the buffer one BDP at that RTT.",
            _rtt_250,
        ),
        Reading(
            "RTT and RTT_cong update",
            "250 ms, congestion losses only",
            "the two readings above together: they interact (at 250 ms Reno's window is larger and AReno's judgement "
            "of each loss decides more of its rate).",
            combined(_rtt_250, set_controller_param("areno", rtt_cong_update="congestive")),
        ),
        Reading(
            "bottleneck rate",
            "100 Mb/s",
            "the captions of Fig. 10 and 11 say \"Laboratory measurement, 100Mbps, 10^{-5} packet loss\"; the text "
            "(§IV-B) says 300 Mb/s, which the main runs use.",
            _rate_100,
        ),
    ),
    seeds=SEEDS,
    setting=(
        f"A dumbbell with a {MBPS} Mb/s bottleneck (the lab's network emulator), Bernoulli loss 1e-5 on "
        "its data direction, 1 ms access links at 10x the rate; one Reno flow alone, one AReno flow "
        "alone, and the two together. TCP as in the Fig. 6/7 runs (MSS 1460, an ACK per segment, "
        "growth per ACK, SACK recovery). The lab's delay and buffer are not given: RTT 100 ms and a "
        "buffer of one BDP, as in tcplab's Fig. 6/7 runs."
    ),
    explanation=lab_explanation,
)

EXPERIMENTS = [LAB]
