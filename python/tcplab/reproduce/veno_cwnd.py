"""Fu & Liew, "TCP Veno", IEEE JSAC 21(2) 2003: Fig. 1 and Fig. 2, window evolution of Veno
and Reno.

Fig. 1 (no random loss, a campus-network trace): "Veno experiences fewer oscillations than a
Reno does ... stays at the large window region longer", and in a 100 s trace "almost 40% less
congestion loss (excluding the losses of the initial slow start) than Reno". Fig. 2 (random
loss): Veno cuts its window to 4/5 at the losses it judges random, so its window stays
larger. The paper's paths are not specified beyond that; tcplab runs ``scenarios/veno-fig5.toml``
(the Fig. 3(a) pipe: 1.6 Mb/s, RTT 120 ms, buffer 12) with a bulk flow for 120 s.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from tcplab.reproduce.common import figure, lossfmt, points, row, seed_values, stats
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row
from tcplab.reproduce.readings import Reading, set_tcp
from tcplab.reproduce.verdict import ABOUT, Estimate, Test, about, above, ratio_of_means
from tcplab.reproduce.veno import PAPER, SETTING, fig5_doc
from tcplab.sweep import SweepResult, point_dir

SEEDS = {"quick": 10, "full": 20}
SPAN_S = 120.0
LOSSES = [0.0, 1e-2]


def _bottleneck_delay(delay: str):
    """A reading's ``apply``: the bottleneck's one-way delay `delay`."""

    def apply(doc: dict) -> dict:
        doc["topology"]["bottleneck"]["delay"] = delay
        return doc

    return apply


def cwnd_points(mode: Mode):
    # drops and events: the reading that counts the whole slow-start episode reads them
    trace = {"series": "change", "segments": False, "drops": True, "events": True}
    pts = []
    for cc in ("reno", "veno"):
        base = fig5_doc(cc, trace=trace)
        base["name"] = "veno-fig1"
        # the window over a fixed span, not a transfer: a bulk flow, stopped at the span's end
        del base["flows"][0]["bytes"]
        base["duration"] = f"{SPAN_S:g}s"
        pts += points(base, SEEDS[mode], {"topology.bottleneck.forward.loss.p": LOSSES}, params={"variant": cc})
    return pts


def mean_cwnd_segments(series: pl.DataFrame, end_s: float, mss: int = 1460) -> float:
    """Time-weighted mean of a step series of cwnd (bytes) from its first sample to
    ``end_s``, in segments."""
    s = series.sort("time_ns")
    t = s["time_ns"].to_numpy().astype(float) / 1e9
    c = s["cwnd"].to_numpy().astype(float)
    if len(t) == 0:
        return float("nan")
    dt = np.diff(np.append(t, max(end_s, t[-1])))
    return float((c * dt).sum() / dt.sum() / mss) if dt.sum() > 0 else float(c[-1] / mss)


def cwnd_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    f = res.flows().rename({"topology.bottleneck.forward.loss.p": "loss"})
    mean = [
        mean_cwnd_segments(pl.read_parquet(point_dir(res.out, k) / "series.parquet"), SPAN_S) for k in f["key"]
    ]
    return f.with_columns(
        pl.Series("mean_cwnd", mean),
        # Every window reduction but the first, which ends the initial slow start.
        (pl.col("loss_events") - 1).clip(lower_bound=0).alias("reductions_after_slow_start"),
        (pl.col("throughput_bps") / 8000).alias("kBps"),
    ).select("variant", "loss", "seed", "key", "mean_cwnd", "reductions_after_slow_start", "kBps")


def reductions_after_episode(events: pl.DataFrame, drops: pl.DataFrame) -> int:
    """Window reductions (fast retransmits and timeouts) from the first drop after the
    initial slow start's first loss response on: the reductions that answer the slow-start
    overshoot's drops (those dropped before its first response), and what they cause (a
    timeout, a false fast retransmit after it), are the episode's, not counted."""
    resp = events.filter(pl.col("event").is_in(["recovery_enter", "timeout"]))["time_ns"].sort()
    if resp.len() == 0:
        return 0
    later = drops.filter(pl.col("time_ns") > resp[0])["time_ns"]
    if later.len() == 0:
        return 0
    return int((resp >= later.min()).sum())


def episode_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    """:func:`cwnd_analyze` with ``reductions_after_slow_start`` counted from the end of the
    initial slow start's loss episode (:func:`reductions_after_episode`)."""
    frame = cwnd_analyze(res, mode)
    after = [
        reductions_after_episode(pl.read_parquet(point_dir(res.out, k) / "events.parquet"),
                                 pl.read_parquet(point_dir(res.out, k) / "drops.parquet"))
        for k in frame["key"]
    ]
    return frame.with_columns(pl.Series("reductions_after_slow_start", after, dtype=pl.Int64))


def _ratio(frame: pl.DataFrame, col: str, loss: float) -> Estimate:
    return ratio_of_means(
        seed_values(frame, col, variant="veno", loss=loss), seed_values(frame, col, variant="reno", loss=loss)
    )


def _claim_fewer_losses(frame: pl.DataFrame) -> Test:
    est = _ratio(frame, "reductions_after_slow_start", 0.0)
    return about(f"Veno/Reno window reductions after slow start, {SPAN_S:g} s, no random loss", est, 0.6)


def _claim_larger_window(frame: pl.DataFrame) -> Test:
    return above("Veno/Reno time-averaged cwnd at loss 1e-2", _ratio(frame, "mean_cwnd", 1e-2), 1 + ABOUT)


def cwnd_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(1, 2, width=10, height=3.6)
    for i, loss in enumerate(LOSSES):
        a = ax[0][i]
        for variant in ("reno", "veno"):
            sel = frame.filter((pl.col("variant") == variant) & (pl.col("loss") == loss) & (pl.col("seed") == 1))
            if sel.height == 0:
                continue
            s = pl.read_parquet(point_dir(res.out, sel["key"][0]) / "series.parquet").sort("time_ns")
            a.step(s["time_ns"].to_numpy() / 1e9, s["cwnd"].to_numpy() / 1460, where="post", lw=0.8, label=variant)
        a.set_title("no random loss (Fig. 1)" if loss == 0 else f"random loss {lossfmt(loss)} (Fig. 2)")
        a.set_xlabel("time (s)")
        a.set_ylabel("cwnd (segments of 1460 B)")
        a.set_xlim(0, SPAN_S)
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    cap = (
        f"Congestion window of one Reno and one Veno flow (seed 1, {SPAN_S:g} s), each alone on the "
        "1.6 Mb/s pipe of Fig. 3(a), RTT 120 ms, buffer 12, Reno recovery, growth per ACK. The "
        "spikes are Reno fast recovery's window inflation (cwnd = ssthresh + duplicate ACKs), "
        "which the time averages include."
    )
    return [Plot(fig, cap, "Window evolution of Veno and Reno without and with random loss")]


def cwnd_table(frame: pl.DataFrame) -> list[Row]:
    red = stats(frame, "reductions_after_slow_start", ["variant", "loss"])
    win = stats(frame, "mean_cwnd", ["variant", "loss"])
    rows = [
        row(red, "Reno window reductions after slow start, no random loss", "—", f"per {SPAN_S:g} s", variant="reno", loss=0.0),
        row(red, "Veno window reductions after slow start, no random loss", "≈ 40% fewer than Reno (100 s trace)", f"per {SPAN_S:g} s", variant="veno", loss=0.0),
    ]
    for loss in LOSSES:
        for v in ("reno", "veno"):
            rows.append(row(win, f"{v.capitalize()} mean cwnd at loss {lossfmt(loss)}", "curves only", "segments", variant=v, loss=loss))
    return rows


FIG1 = Experiment(
    id="veno-fig1",
    title="Window evolution: Veno vs Reno without and with random loss",
    paper=PAPER,
    reference="Fig. 1, Fig. 2",
    points=cwnd_points,
    analyze=cwnd_analyze,
    plots=cwnd_plots,
    table=cwnd_table,
    claims=(
        Claim(
            "Without random loss Veno has 0.6 ± 10% of Reno's window reductions (slow start excluded)",
            _claim_fewer_losses,
            "almost 40% less",
            quote=(
                "In Fig. 1 of 100s experimental trace, we see Veno experiences almost 40% less congestion loss (if "
                "excluding packet losses resulted by initial slow start) than Reno does"
            ),
            section="§II-B, Fig. 1",
            threshold="\"40% less\" = a ratio of 0.6, reproduced within ±10% (ABOUT, verdict.py): [0.54, 0.66].",
        ),
        Claim(
            "With random loss 1e-2 Veno's time-averaged window is > 1.1x Reno's",
            _claim_larger_window,
            "more robust (curves only)",
            quote="seeing Fig. 2(a) and (b), Veno's window evolution seems more robust and has sort of immune capability to random loss",
            section="§II-B, Fig. 2",
            threshold="\"more robust\" read as a larger time-averaged window, beyond the ±10% band of \"the same\" (ABOUT).",
            weakened="the paper gives no quantity for \"more robust\" (Fig. 2 is a trace); tcplab tests only the direction of the mean window.",
        ),
    ),
    seeds=SEEDS,
    reading=(
        "RTT 120 ms (the pipe of Fig. 3(a), as the other Veno experiments) and tcplab's initial window of 2 "
        "segments (the paper states neither for these traces); of the losses \"resulted by initial slow start\", "
        "the first window reduction, which ends slow start."
    ),
    readings=(
        Reading("RTT", "180 ms", "§II-B, Fig. 2's path: \"the round-trip time as traced by traceroute is 180 ms\" "
                "(bottleneck delay 90 ms each way).", _bottleneck_delay("90ms")),
        Reading("initial window", "1 segment", "the paper's Veno \"has been implemented in NetBSD1.1, FreeBSD4.2 and Linux 2.2\" (§I), and NetBSD 1.1's 4.4BSD-Lite "
                "TCP starts with a window of one segment.", set_tcp(initial_cwnd=1)),
        Reading("losses resulted by initial slow start", "the whole episode",
                "§II-B: \"excluding packet losses resulted by initial slow start\" (plural): the slow start's overshoot "
                "drops many packets at once (on this pipe 15), and with Reno recovery they cost several reductions "
                "(fast retransmits, a timeout, a false fast retransmit after it) before the first drop of a packet "
                "sent after the overshoot; all of them are excluded (the same runs, counted so).",
                analyze=episode_analyze),
    ),
    setting=SETTING + f" One flow alone, 1.6 Mb/s, buffer 12, {SPAN_S:g} s, cwnd series recorded at every change.",
    explanation=(
        "The paper's Fig. 1 and 2 are traces over a campus network and a lossy path whose rates, "
        "delays and buffers it does not give, so tcplab runs them on the pipe of its Fig. 3(a). "
        "Without random loss the path and the run are deterministic (all seeds give the same run). "
        "The paper counts congestion losses; tcplab counts window reductions (fast retransmits "
        "and timeouts) after the first, which ends slow start - without random loss each is a "
        "buffer overflow. Veno's slower growth once its backlog estimate N exceeds beta = 3 "
        "delays each overflow, which is where the difference comes from."
    ),
)

EXPERIMENTS = [FIG1]
