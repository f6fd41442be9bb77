"""Fu & Liew, "TCP Veno", IEEE JSAC 21(2) 2003: Fig. 4, 5, 6, 7 (Table I: veno_table1.py).

Each claim quotes the paper and takes its threshold from the paper's words
(:mod:`tcplab.reproduce.verdict`); ``crates/tcplab-sim/tests/claims_veno.rs`` keeps its own,
older tolerances. Each experiment's points are its shipped scenario (``scenarios/veno-fig5.toml``,
``veno-fig6.toml``, ``veno-fig7.toml``, ``veno-table1.toml``) with what the figure varies changed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import polars as pl

from tcplab.reproduce.common import (
    VENO_LINUX,
    figure,
    lossfmt,
    points,
    row,
    seed_values,
    seeds_text,
    shipped_doc,
    stats,
    value,
    with_kbps,
)
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row, Sensitivity
from tcplab.reproduce.readings import Reading
from tcplab.reproduce.verdict import ABOUT, Estimate, Test, about, above, at_most, bootstrap, ratio_of_means, t_interval, within
from tcplab.reproduce.veno_table1 import TABLE1
from tcplab.sweep import SweepResult, point_dir

PAPER = "Fu & Liew, TCP Veno, IEEE JSAC 21(2), 2003"
#: Seeds, the same in both modes (runs take a fraction of a second). Fig. 5's headline ratio
#: at 1e-2 was inconclusive with 10 seeds (quick) and with 20 (full: 1.64 [1.60, 1.68] against
#: the bound 1.61, about 36 seeds projected to decide it at that spread), so both modes run 40.
SEEDS = {"quick": 40, "full": 40}
FIG5_LOSSES = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]
FIG5_VARIANTS = {"reno": "reno", "veno": "veno", "veno (Linux flavor)": VENO_LINUX}

SETTING = (
    "Fig. 3(a): a sender on 10 Mb/s Ethernet (0 delay, 100-packet buffer), the Dummynet pipe as "
    "bottleneck with 60 ms one way both ways (RTT 120 ms) and a drop-tail buffer both ways, "
    "Bernoulli loss on the forward pipe, receivers on fast links. TCP as NetBSD 1.1: MSS 1460, "
    "**Reno** fast recovery, no SACK, growth per ACK, delayed ACKs, 1 s minimum RTO, timestamps "
    "(12 bytes per segment). Veno flavor \"paper\", beta = 3. Full transfers (32 MB, 12 MB), flows "
    "started 10 ms apart. Seeds change only the random-loss streams, so runs without random loss "
    "are identical for every seed. kB = 1000 bytes."
)


#: What the Fig. 4/5 runs record: the series Fig. 4 plots, nothing more.
FIG5_TRACE = {"series": "interval", "interval": "160ms", "segments": False, "drops": False, "events": False}


def shipped_base(name: str, trace: dict) -> dict:
    """``scenarios/<name>.toml`` as the base of an experiment's points: without its description
    (the points' parameters tell them apart), recording ``trace`` (what the experiment reads)."""
    doc = shipped_doc(name)
    del doc["description"]
    doc["trace"] = dict(trace)
    return doc


def with_controllers(doc: dict, controllers: Sequence[Any], recovery: str | None = None) -> dict:
    """``doc`` with its flows running ``controllers`` (and ``recovery``), unnamed: a file names
    its flows after its own mix."""
    flows = [{k: v for k, v in f.items() if k != "name"} for f in doc["flows"]]
    for f, cc in zip(flows, controllers, strict=True):
        f["controller"] = cc
        if recovery is not None:
            f["recovery"] = recovery
    doc["flows"] = flows
    return doc


def fig5_doc(cc: Any, recovery: str | None = None, trace: dict = FIG5_TRACE) -> dict:
    """``scenarios/veno-fig5.toml`` with its one flow run by ``cc`` (and ``recovery``)."""
    return with_controllers(shipped_base("veno-fig5", trace), [cc], recovery)


# ---- Fig. 4 and 5: one flow against random loss ----------------------------------------------


def fig5_points(mode: Mode):
    pts = []
    for label, cc in FIG5_VARIANTS.items():
        pts += points(
            fig5_doc(cc),
            SEEDS[mode],
            {"topology.bottleneck.forward.loss.p": FIG5_LOSSES},
            params={"variant": label},
        )
    return pts


def fig5_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    f = with_kbps(res.flows()).rename({"topology.bottleneck.forward.loss.p": "loss"})
    return f.select("variant", "loss", "seed", "kBps", "point", "key")


def _fig5_stats(frame: pl.DataFrame) -> pl.DataFrame:
    return stats(frame, "kBps", ["variant", "loss"])


def _ratio(frame: pl.DataFrame, loss: float) -> float:
    st = _fig5_stats(frame)
    return value(st, variant="veno", loss=loss) / value(st, variant="reno", loss=loss)


def _mathiswith_kbps(p: np.ndarray) -> np.ndarray:
    # B = MSS / RTT * sqrt(3 / (2 b p)), b = 2 segments per ACK (delayed ACKs), RTT 120 ms,
    # capped at the 1.6 Mb/s pipe's payload rate (1460 of 1552 bytes per packet on the wire).
    b = 1460 / 0.12 * np.sqrt(3 / (2 * 2 * p)) / 1000
    return np.minimum(b, 1.6e6 / 8 / 1000 * 1460 / 1552)


def fig5_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    st = _fig5_stats(frame)
    fig, ax = figure(width=8, height=4.6)
    a = ax[0][0]
    for i, label in enumerate(FIG5_VARIANTS):
        s = st.filter(pl.col("variant") == label).sort("loss")
        a.errorbar(
            s["loss"].to_numpy(),
            s["mean"].to_numpy(),
            yerr=s["ci"].fill_null(0).to_numpy(),
            marker="os^"[i],
            capsize=3,
            label=f"tcplab {label}",
        )
    p = np.logspace(-5, -1, 50)
    a.plot(p, _mathiswith_kbps(p), "k--", lw=1, label="Mathis et al. (b = 2, RTT 120 ms), capped at the link")
    a.set_yscale("log")
    fig5_axes(a, "Veno Fig. 5: throughput vs random loss", legend_size=8)
    cap = (
        f"One flow; 1.6 Mb/s pipe, buffer 12, RTT 120 ms, 32 MB transfer, Reno recovery; mean ± 95% CI "
        f"over {seeds_text(SEEDS[mode])} ({mode} mode)."
    )
    return [Plot(fig, cap, "Throughput vs loss rate, log axes, with the Mathis line")]


def fig5_axes(a: Any, title: str, legend_size: int) -> None:
    """What every Fig. 5 plot has: the published points, a logarithmic loss axis, labels,
    title, grid and legend."""
    a.plot([1e-2], [146.5], "r*", ms=12, label="published Veno (146.5 kB/s)")
    a.plot([1e-2], [81.9], "kX", ms=10, label="published Reno (81.9 kB/s)")
    a.set_xscale("log")
    a.set_xlabel("random loss rate (per packet)")
    a.set_ylabel("throughput (kB/s)")
    a.set_title(title)
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=legend_size, loc="lower left")


def fig5_table(frame: pl.DataFrame) -> list[Row]:
    st = _fig5_stats(frame)
    rows = [
        row(st, "Reno at loss 1e-2", "81.9", "kB/s", variant="reno", loss=1e-2),
        row(st, "Veno at loss 1e-2", "146.5", "kB/s", variant="veno", loss=1e-2),
    ]
    for p in (1e-5, 1e-4, 1e-3):
        for v in ("reno", "veno"):
            rows.append(row(st, f"{v.capitalize()} at loss {lossfmt(p)}", "≈ the other", "kB/s", variant=v, loss=p))
    rows.append(row(st, "Veno (Linux flavor) at loss 1e-2", "—", "kB/s", variant="veno (Linux flavor)", loss=1e-2))
    for p in (1e-1,):
        for v in ("reno", "veno"):
            rows.append(row(st, f"{v.capitalize()} at loss {lossfmt(p)}", "collapse", "kB/s", variant=v, loss=p))
    try:
        rows.append(Row("Veno/Reno at loss 1e-2", "1.79", _ratio(frame, 1e-2), None, "ratio of means"))
    except KeyError:
        pass
    return rows


def fig5_ratio(frame: pl.DataFrame, loss: float) -> Estimate:
    """Veno/Reno throughput at ``loss``: ratio of the means over seeds, bootstrap interval."""
    return ratio_of_means(
        seed_values(frame, "kBps", variant="veno", loss=loss), seed_values(frame, "kBps", variant="reno", loss=loss)
    )


#: Fig. 5 as published: Veno/Reno at 1e-2 = 146.5 / 81.9.
FIG5_RATIO = 146.5 / 81.9


def claim_gain(frame: pl.DataFrame) -> Test:
    return about("Veno/Reno at 1e-2", fig5_ratio(frame, 1e-2), FIG5_RATIO)


def equal_at(frame: pl.DataFrame, losses: Iterable[float]) -> list[Test]:
    """Fig. 5's second claim at each of `losses`: Veno/Reno within 1 ± ABOUT."""
    return [within(f"Veno/Reno at {lossfmt(p)}", fig5_ratio(frame, p), 1 - ABOUT, 1 + ABOUT) for p in losses]


def _claim_equal(frame: pl.DataFrame) -> list[Test]:
    return equal_at(frame, (1e-5, 1e-4, 1e-3))


# ---- sensitivity of the headline (loss 1e-2) to the stack ------------------------------------
#: growth × delayed ACKs × recovery; the first value of each is the paper's (NetBSD) stack.
FIG5_STACKS = [
    (growth, delack, recovery)
    for growth in ("per_ack", "byte_counting")
    for delack in (True, False)
    for recovery in ("reno", "newreno")
]


def stack_label(growth: str, delack: bool, recovery: str) -> str:
    return f"growth {growth.replace('_', ' ')}, delayed ACK {'on' if delack else 'off'}, {recovery} recovery"


def fig5_sensitivity_points(mode: Mode):
    pts = []
    for growth, delack, recovery in FIG5_STACKS:
        for cc in ("reno", "veno"):
            base = fig5_doc(cc, recovery)
            # the paper's stack is the main runs' document as is (same key, run once)
            if growth != "per_ack":
                base["tcp"]["growth"] = growth
            if not delack:
                base["tcp"]["delayed_ack"] = False
            pts += points(
                base,
                SEEDS[mode],
                {"topology.bottleneck.forward.loss.p": [1e-2]},
                params={"variant": cc, "stack": stack_label(growth, delack, recovery)},
            )
    return pts


def fig5_sensitivity(res: SweepResult, mode: Mode) -> list[Row]:
    f = with_kbps(res.flows())
    rows = []
    for i, stack in enumerate(stack_label(*s) for s in FIG5_STACKS):
        sub = f.filter(pl.col("stack") == stack)
        head = "headline (the paper's stack)" if i == 0 else ""
        try:
            reno, veno = seed_values(sub, "kBps", variant="reno"), seed_values(sub, "kBps", variant="veno")
        except KeyError:
            continue
        rows.append(Row.of(f"{stack}: Reno", head, t_interval(reno), "kB/s"))
        rows.append(Row.of(f"{stack}: Veno", head, t_interval(veno), "kB/s"))
        rows.append(Row.of(f"{stack}: Veno/Reno (published 1.79)", head, ratio_of_means(veno, reno), "ratio"))
    return rows


FIG5 = Experiment(
    id="veno-fig5",
    title="Throughput vs random loss rate, one flow",
    paper=PAPER,
    reference="Fig. 5",
    points=fig5_points,
    analyze=fig5_analyze,
    plots=fig5_plots,
    table=fig5_table,
    claims=(
        Claim(
            "Veno/Reno throughput at loss 1e-2 within 1.79 ± 10%",
            claim_gain,
            "146.5 / 81.9 kB/s = 1.79",
            quote="at loss rate of 10^-2 packets/s, the throughput of TCP Veno (146.5 kB/s) is 80% higher than that of TCP Reno (81.9 kB/s)",
            section="§III-B, Fig. 5",
            threshold="a published number is reproduced within ±10% (ABOUT, verdict.py): ratio in [1.61, 1.97].",
        ),
        Claim(
            "Veno/Reno within 1 ± 10% at loss 1e-5, 1e-4 and 1e-3",
            _claim_equal,
            "roughly the same",
            quote="Under low-loss environments (random loss rate is less than or equal to 10^-3 packets/s), however, Veno and Reno have roughly the same throughput",
            section="§III-B, Fig. 5",
            threshold="\"roughly the same\" = within ±10% (ABOUT: between the 2.3% the authors call the same and the 21% they call an improvement, §III-D); every loss rate ≤ 1e-3 that tcplab runs.",
        ),
    ),
    sensitivity=Sensitivity(
        fig5_sensitivity_points,
        fig5_sensitivity,
        "The headline (loss 1e-2) over the stack choices the paper leaves to NetBSD 1.1: window growth per ACK "
        "vs byte counting (limit 2), delayed ACKs on vs off, Reno vs NewReno fast recovery; same seeds as the "
        "main runs. Mean ± 95% CI (t) for throughputs, bootstrap interval for the ratio.",
    ),
    seeds=SEEDS,
    setting=SETTING + " One flow, 1.6 Mb/s, buffer 12, 32 MB (`scenarios/veno-fig5.toml`).",
    explanation=(
        "The link carries at most 193 kB/s of payload. Gap: Veno at 1e-2 is about 15% below the "
        "published 146.5 kB/s (Reno about 7% below). Likely reasons: details of the NetBSD stack the "
        "paper ran and tcplab does not model (500 ms timer ticks, its RTO computation); Reno fast "
        "recovery ends at the first partial ACK, so two losses in a window often end in a timeout. "
        "With NewReno recovery instead (not the paper's stack, `scenarios/veno-fig5-reno.toml`) "
        "tcplab gives Reno 82.1, Veno 136.1 kB/s (x1.66) at 1e-2 (3 seeds). The Linux flavor of Veno "
        "(BaseRTT never forgotten, latest RTT sample) gains less from random loss."
    ),
)


def fig4_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    losses = [1e-4, 1e-3, 1e-2, 1e-1]
    fig, ax = figure(2, 2, width=10, height=6.5)
    for i, p in enumerate(losses):
        a = ax[i // 2][i % 2]
        for label in ("reno", "veno"):
            sel = frame.filter((pl.col("variant") == label) & (pl.col("loss") == p) & (pl.col("seed") == 1))
            if sel.height == 0:
                continue
            s = pl.read_parquet(point_dir(res.out, sel["key"][0]) / "series.parquet").sort("time_ns")
            t = s["time_ns"].to_numpy() / 1e9
            d = s["bytes_sent"].to_numpy().astype(float)
            if len(t) < 2:
                continue
            rate = np.diff(d) / np.diff(t) / 1000
            keep = t[1:] <= 120
            a.plot(t[1:][keep], rate[keep], lw=0.8, label=label)
        a.set_title(f"loss {lossfmt(p)}")
        a.set_xlabel("time (s)")
        a.set_ylabel("rate (kB/s)")
        a.grid(True, alpha=0.3)
        if a.get_legend_handles_labels()[0]:
            a.legend(fontsize=8)
    cap = (
        "Sending rate (payload bytes put on the wire, retransmissions included, from the series "
        "table's `bytes_sent`) over 160 ms intervals, first 120 s of one run (seed 1); one flow, "
        "1.6 Mb/s, buffer 12, RTT 120 ms."
    )
    return [Plot(fig, cap, "Sending rate vs time per loss rate, Reno and Veno")]


def fig4_table(frame: pl.DataFrame) -> list[Row]:
    st = _fig5_stats(frame)
    return [
        row(st, f"{v.capitalize()} mean rate at loss {lossfmt(p)}", "see Fig. 4 (curves only)", "kB/s", variant=v, loss=p)
        for p in (1e-3, 1e-2)
        for v in ("reno", "veno")
    ]


FIG4 = Experiment(
    id="veno-fig4",
    title="Sending rate vs time per loss rate",
    paper=PAPER,
    reference="Fig. 4",
    points=fig5_points,  # the runs of Fig. 5 (shared store: computed once)
    analyze=fig5_analyze,
    plots=fig4_plots,
    table=fig4_table,
    claims=(),
    seeds=SEEDS,
    setting=SETTING + " The runs of Fig. 5; series sampled every 160 ms.",
    explanation=(
        "The paper shows curves, no numbers; tcplab plots the sending rate as the paper does "
        "(the slope of the series table's `bytes_sent`, retransmissions included). No claim is "
        "checked here; Fig. 5 checks the averages (of the delivery rate, the paper's throughput)."
    ),
)


# ---- Fig. 6: four flows, 4 Reno vs 2 Reno + 2 Veno --------------------------------------------

MIXES = {"4 reno": ["reno"] * 4, "2 reno + 2 veno": ["reno", "reno", "veno", "veno"]}


def fig6_points(mode: Mode):
    pts = []
    # series sampled every 100 ms: the reading that takes throughput over the common interval
    # reads each flow's delivered bytes at the first completion; segments: the sequence plots
    trace = {"series": "interval", "interval": "100ms", "drops": False, "events": False}
    for mix, ccs in MIXES.items():
        for loss in (0.0, 1e-2):
            base = with_controllers(shipped_base("veno-fig6", trace), ccs)
            base["topology"]["bottleneck"]["forward"]["loss"] = loss
            pts += points(base, SEEDS[mode], params={"mix": mix, "loss": loss})
    return pts


def fig6_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    return with_kbps(res.flows()).select("mix", "loss", "seed", "id", "controller", "kBps", "point", "key")


def common_interval_kbps(flows: pl.DataFrame, series: pl.DataFrame) -> list[float]:
    """Per flow of one run (`flows`' order): its throughput (kB/s) over the interval all
    the run's flows share, from its start to the run's first completion: the bytes
    delivered then (the last sample of `series` at or before it: with the 100 ms samples of
    the Fig. 6 runs at most 100 ms of a flow's bytes, about 0.15 %, go uncounted) over that
    time."""
    end = int(flows["end_ns"].min())
    out = []
    for fid, start in zip(flows["id"], flows["start_ns"], strict=True):
        s = series.filter((pl.col("flow") == fid) & (pl.col("time_ns") <= end))
        delivered = float(s.sort("time_ns")["delivered"][-1]) if s.height else 0.0
        out.append(delivered / max(end - int(start), 1) * 1e9 / 1000)
    return out


def fig6_common_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    """:func:`fig6_analyze` with each flow's ``kBps`` over the run's common interval
    (:func:`common_interval_kbps`) instead of its 32 MB over its own transfer time."""
    flows = res.flows()
    parts = []
    for key in flows["key"].unique(maintain_order=True):
        f = flows.filter(pl.col("key") == key).sort("id")
        series = pl.read_parquet(point_dir(res.out, key) / "series.parquet", columns=["flow", "time_ns", "delivered"])
        parts.append(f.with_columns(pl.Series("kBps", common_interval_kbps(f, series))))
    return pl.concat(parts).select("mix", "loss", "seed", "id", "controller", "kBps", "point", "key")


def _per_seed(frame: pl.DataFrame, mix: str, loss: float, controller: str | None = None) -> np.ndarray:
    """Per seed: the mean per-flow throughput (kB/s) of the mix's flows (of ``controller``)."""
    s = frame.filter((pl.col("mix") == mix) & (pl.col("loss") == loss))
    if controller is not None:
        s = s.filter(pl.col("controller") == controller)
    if s.height == 0:
        raise KeyError(f"no runs of {mix}, loss {loss}")
    return s.group_by("seed").agg(pl.col("kBps").mean()).sort("seed")["kBps"].to_numpy()


def _fig6_share(frame: pl.DataFrame) -> Test:
    est = ratio_of_means(_per_seed(frame, "2 reno + 2 veno", 1e-2, "reno"), _per_seed(frame, "4 reno", 1e-2))
    return within("Reno next to 2 Veno / 4-Reno mean, loss 1e-2", est, 1 - ABOUT, 1 + ABOUT)


def _fig6_veno_higher(frame: pl.DataFrame) -> Test:
    est = ratio_of_means(_per_seed(frame, "2 reno + 2 veno", 1e-2, "veno"), _per_seed(frame, "2 reno + 2 veno", 1e-2, "reno"))
    return above("Veno / coexisting Reno, loss 1e-2", est, 1 + ABOUT)


def _largest_deviation(frame: pl.DataFrame, mix: str, loss: float) -> np.ndarray:
    """Per seed: the largest |flow / mean of the run's flows - 1|."""
    s = frame.filter((pl.col("mix") == mix) & (pl.col("loss") == loss))
    if s.height == 0:
        raise KeyError(f"no runs of {mix}, loss {loss}")
    d = s.with_columns((pl.col("kBps") / pl.col("kBps").mean().over("seed") - 1).abs().alias("dev"))
    return d.group_by("seed").agg(pl.col("dev").max()).sort("seed")["dev"].to_numpy()


def _fig6_even(frame: pl.DataFrame) -> list[Test]:
    return [
        at_most(f"{mix}, no random loss: largest |flow / mean - 1|", t_interval(_largest_deviation(frame, mix, 0.0)), ABOUT)
        for mix in MIXES
    ]


def fig6_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(2, 2, width=10, height=6.5)
    for i, mix in enumerate(MIXES):
        for j, loss in enumerate((0.0, 1e-2)):
            a = ax[j][i]
            sel = frame.filter((pl.col("mix") == mix) & (pl.col("loss") == loss) & (pl.col("seed") == 1))
            if sel.height == 0:
                continue
            seg = pl.read_parquet(point_dir(res.out, sel["key"][0]) / "segments.parquet")
            seg = seg.filter(pl.col("retransmission") == 0)
            ccs = dict(zip(sel["id"].to_list(), sel["controller"].to_list(), strict=True))
            for flow in sorted(ccs):
                s = seg.filter(pl.col("flow") == flow)
                step = max(1, s.height // 2000)
                s = s.gather_every(step)
                a.plot(
                    s["time_ns"].to_numpy() / 1e9,
                    s["seq"].to_numpy() / 1e6,
                    lw=1,
                    ls="-" if ccs[flow] == "reno" else "--",
                    label=f"flow {flow} ({ccs[flow]})",
                )
            a.set_title(f"{mix}, loss {lossfmt(loss)}")
            a.set_xlabel("time (s)")
            a.set_ylabel("sequence number (MB)")
            a.grid(True, alpha=0.3)
            a.legend(fontsize=7)
    cap = "Sequence number of each flow's original segments vs time (seed 1); 4 flows, 4 Mb/s, buffer 28, RTT 120 ms, 32 MB each."
    return [Plot(fig, cap, "Per-flow sequence plots, 4 Reno vs 2 Reno + 2 Veno, lossless and lossy")]


def fig6_table(frame: pl.DataFrame) -> list[Row]:
    rows = []
    for mix in MIXES:
        for loss in (0.0, 1e-2):
            s = frame.filter((pl.col("mix") == mix) & (pl.col("loss") == loss))
            per = stats(
                s.group_by("seed", "controller").agg(pl.col("kBps").mean()), "kBps", ["controller"]
            )
            for cc in ("reno", "veno"):
                if per.filter(pl.col("controller") == cc).height:
                    pub = "close to 4-Reno" if (cc == "reno" and loss > 0 and "veno" in mix) else "—"
                    rows.append(row(per, f"{mix}, loss {lossfmt(loss)}: {cc} per flow", pub, "kB/s", controller=cc))
    return rows


FIG6 = Experiment(
    id="veno-fig6",
    title="Coexistence: per-flow sequence plots, 4 Reno vs 2 Reno + 2 Veno",
    paper=PAPER,
    reference="Fig. 6",
    points=fig6_points,
    analyze=fig6_analyze,
    plots=fig6_plots,
    table=fig6_table,
    claims=(
        Claim(
            "Loss 1e-2: the Reno flows next to 2 Veno get within ±10% of the per-flow mean of 4 Reno flows",
            _fig6_share,
            "close to",
            quote="Note, however, that the evolution of two Reno connections in Fig. 6(d) is close to that of Fig. 6(c), where Veno is absent",
            section="§III-C, Fig. 6(c), (d)",
            threshold="\"close to\" = within ±10% (ABOUT, verdict.py), two-sided: Reno's throughput neither lowered nor raised by the Veno flows.",
        ),
        Claim(
            "Loss 1e-2: Veno flows get > 1.1x the coexisting Reno flows",
            _fig6_veno_higher,
            "substantially higher",
            quote="As indicated in Fig. 6(d), Veno connections exhibit substantially higher throughput than coexisting Reno connections",
            section="§III-C, Fig. 6(d)",
            threshold="\"higher\" = above the ±10% band of \"the same\" (ABOUT); the paper gives no number for \"substantially\", so only the direction beyond the band is tested.",
            weakened="\"substantially\" has no number in the paper; the test only requires a difference larger than \"roughly the same\".",
        ),
        Claim(
            "No random loss: every flow within ±10% of its run's mean (4 Reno; 2 Reno + 2 Veno)",
            _fig6_even,
            "roughly the same",
            quote="As shown in the two graphs, Veno competes with Reno in a fair manner, since throughputs in all connections are roughly the same",
            section="§III-C, Fig. 6(a), (b)",
            threshold="\"roughly the same\" = within ±10% (ABOUT); the largest deviation of a run's flows from their mean, t-interval over seeds (the lossless runs are deterministic: zero width).",
        ),
    ),
    seeds=SEEDS,
    reading="Each flow's throughput is its 32 MB over its own transfer time (§III-B's definition for Fig. 5: "
            "\"Throughput is derived by dividing 32 MB by the time taken to transfer the file\").",
    readings=(
        Reading("throughput interval", "the flows' common interval",
                "Fig. 6 plots sequence number against time and the paper judges the slopes (\"the slopes of the Veno "
                "connections in Fig. 6(d) are roughly the same as those in Fig. 6(b)\"): each flow's bytes delivered "
                "from its start until the run's first flow completes, over that time (the same runs, counted so; "
                "whichever flow finishes last no longer has the link to itself in its tail).",
                analyze=fig6_common_analyze),
    ),
    setting=SETTING + " Four flows, 4 Mb/s, buffer 28, 32 MB each (`scenarios/veno-fig6.toml`).",
    explanation=(
        "Published: the two Reno flows next to Veno \"close to\" four-Reno; without random loss "
        "\"throughputs in all connections are roughly the same\" (now tested at ±10%, ABOUT; it was "
        "±15%). The lossless claim failed ±15% by one Reno flow (+16.0% in the 2+2 mix) in earlier runs. Reason: a deterministic phase effect of finite "
        "transfers, not Veno: each flow's throughput is 32 MB over its own transfer time, and "
        "whichever flow finishes last has the link to itself for its tail. With start times drawn "
        "at random in [0, 2 s) (8 patterns, one run each) the largest deviation ranged over "
        "5.2..18.3% for four Reno flows and 2.3..14.2% for two Reno + two Veno: four Reno flows "
        "miss ±15% as often as the mixed case does. The tail is not the whole of it: over the "
        "interval all flows share (the reading \"throughput interval\"; quick suite of "
        "2026-11-29) the largest deviation is larger, 0.235 with four Reno flows: in these "
        "deterministic drop-tail runs some flows get more than others while all run, Veno absent "
        "too (the mechanism is not traced here)."
    ),
)


# ---- Fig. 7: five flows, k of them Veno ----------------------------------------------------------


def fig7_points(mode: Mode):
    pts = []
    trace = {"series": "off", "segments": False, "drops": False, "events": False}
    for k in range(6):
        for loss in (0.0, 1e-2):
            base = with_controllers(shipped_base("veno-fig7", trace), ["reno"] * (5 - k) + ["veno"] * k)
            base["topology"]["bottleneck"]["forward"]["loss"] = loss
            pts += points(base, SEEDS[mode], params={"k": k, "loss": loss})
    return pts


def _lossy_at(loss: float):
    """A reading's ``apply``: the forward pipe's random loss `loss` where it has any."""

    def apply(doc: dict) -> dict:
        fwd = doc["topology"]["bottleneck"]["forward"]
        if fwd.get("loss"):
            fwd["loss"] = loss
        return doc

    return apply


def fig7_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    return with_kbps(res.flows()).select("k", "loss", "seed", "id", "controller", "kBps")


def _fig7_stats(frame: pl.DataFrame) -> pl.DataFrame:
    # Per-flow average per run, then over runs; std over all flows of all runs (the bars).
    per_run = stats(frame.group_by("k", "loss", "controller", "seed").agg(pl.col("kBps").mean()), "kBps", ["k", "loss", "controller"])
    spread = frame.group_by("k", "loss", "controller").agg(pl.col("kBps").std(ddof=0).alias("flow_std"))
    return per_run.join(spread, on=["k", "loss", "controller"]).sort("loss", "controller", "k")


def _flatness(frame: pl.DataFrame, controller: str, loss: float) -> Estimate:
    """The largest |value at k / mean over k - 1| of a Fig. 7 curve (per-flow average of
    ``controller`` vs k), bootstrap over the seeds of every k independently."""
    ks = range(0, 5) if controller == "reno" else range(1, 6)
    per = frame.filter((pl.col("controller") == controller) & (pl.col("loss") == loss))
    per = per.group_by("k", "seed").agg(pl.col("kBps").mean())
    groups = [seed_values(per, "kBps", k=k) for k in ks]

    def stat(*g):
        v = np.array([x.mean() for x in g])
        return float(np.max(np.abs(v / v.mean() - 1)))

    return bootstrap(stat, *groups)


def _fig7_flat(frame: pl.DataFrame) -> list[Test]:
    return [
        at_most(f"{cc.capitalize()}, loss {lossfmt(loss)}: largest |per-flow mean at k / mean over k - 1|", _flatness(frame, cc, loss), ABOUT)
        for cc in ("reno", "veno")
        for loss in (0.0, 1e-2)
    ]


def fig7_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    st = _fig7_stats(frame)
    fig, ax = figure(1, 2, width=10, height=4.2)
    for j, loss in enumerate((0.0, 1e-2)):
        a = ax[0][j]
        for cc, m in (("reno", "o-"), ("veno", "s--")):
            s = st.filter((pl.col("loss") == loss) & (pl.col("controller") == cc)).sort("k")
            a.errorbar(s["k"].to_numpy(), s["mean"].to_numpy(), yerr=s["flow_std"].fill_null(0).to_numpy(), fmt=m, capsize=3, label=cc)
        a.set_title(f"({'ab'[j]}) loss {lossfmt(loss)}")
        a.set_xlabel("number of Veno flows k (of 5)")
        a.set_ylabel("average throughput per flow (kB/s)")
        a.set_ylim(bottom=0)
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    cap = f"5 flows, 4 Mb/s, buffer 28, RTT 120 ms, 32 MB each; bars: standard deviation over flows and {seeds_text(SEEDS[mode])}."
    return [Plot(fig, cap, "Per-flow average throughput vs number of Veno flows, with std bars")]


def fig7_table(frame: pl.DataFrame) -> list[Row]:
    st = _fig7_stats(frame)
    rows = []
    for loss in (0.0, 1e-2):
        for cc, k in (("reno", 0), ("reno", 4), ("veno", 1), ("veno", 5)):
            rows.append(row(st, f"{cc} per flow, k = {k}, loss {lossfmt(loss)}", "nearly horizontal in k", "kB/s", loss=loss, controller=cc, k=k))
    return rows


FIG7 = Experiment(
    id="veno-fig7",
    title="Per-flow average vs number of Veno flows",
    paper=PAPER,
    reference="Fig. 7",
    points=fig7_points,
    analyze=fig7_analyze,
    plots=fig7_plots,
    table=fig7_table,
    claims=(
        Claim(
            "Reno (k = 0..4) and Veno (k = 1..5) per-flow averages each within ±10% of their curve's mean over k, lossless and loss 1e-2",
            _fig7_flat,
            "nearly horizontal",
            quote="The second observation is that the curves are nearly horizontal regardless of the combination of Reno and Veno connections",
            section="§III-C, Fig. 7(a), (b)",
            threshold="\"nearly horizontal\" = every point within ±10% (ABOUT) of the curve's mean; all four curves (Reno and Veno, without and with random loss), bootstrap over seeds.",
        ),
    ),
    seeds=SEEDS,
    reading="Fig. 7(b)'s random loss 1e-2, the rate of Fig. 6(c), (d) in the same section (Fig. 7's caption says "
            "only \"Lossy network\").",
    readings=(
        Reading("Fig. 7(b) loss rate", "2e-2",
                "§III-B calls 1e-2 \"more typical\" of wireless paths, citing RFC 3002's 1%-2% for IS-95 CDMA data "
                "service; 2e-2 is the other end of that range (the lossless runs are unchanged).", _lossy_at(2e-2)),
    ),
    setting=SETTING + " Five flows, the first 5 - k Reno, the others Veno; 4 Mb/s, buffer 28 (`scenarios/veno-fig7.toml`).",
    explanation=(
        "The paper states \"nearly horizontal\" for every curve, so the claim covers Veno's curves too "
        "(before, only Reno's was checked). In earlier runs Veno's lossy curve was not flat in tcplab (about "
        "121 kB/s at k = 1 down to about 95 at k = 5). In tcplab five Veno "
        "flows fill the link at 1e-2 (5 x 94.9 = 474 kB/s of 483 kB/s of payload capacity), so the "
        "unused bandwidth Veno takes is shared by more Veno flows as k grows."
    ),
)


EXPERIMENTS = [FIG4, FIG5, FIG6, FIG7, TABLE1]
