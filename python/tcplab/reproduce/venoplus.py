"""TCP Venoplus: Fig. 3 (normalized throughput TH_venoplus / TH_veno) and Fig. 4 (Jain index)
vs the number of flows and the wireless loss rate. Claims quote the
paper (thresholds: :mod:`tcplab.reproduce.verdict`); the points are ``scenarios/venoplus.toml`` with
the number of flows, their controller, the loss rate and the run length varied."""

from __future__ import annotations

import numpy as np
import polars as pl

from tcplab.aggregate import jain_index, mean_ci
from tcplab.reproduce.common import (
    bulk_flows,
    figure,
    lossfmt,
    points,
    row,
    seed_values,
    seeds_text,
    shipped_doc,
    value,
)
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row
from tcplab.reproduce.readings import Reading, set_controller_param, set_tcp
from tcplab.reproduce.verdict import ABOUT, Estimate, Test, about, above, at_least, bootstrap, ratio_of_means, t_interval, within
from tcplab.sweep import SweepResult

PAPER = "TCP Venoplus, wired-cum-wireless with cross-layer loss reports"
LOSSES = [1e-4, 1e-3, 1e-2, 1e-1]
FLOWS = {"quick": [1, 4, 16, 64], "full": [1, 2, 4, 8, 16, 32, 64]}
SEEDS = {"quick": 10, "full": 20}
#: Run length (s) for one flow and for more flows, per mode (the paper gives none; one flow takes
#: longer to settle; 200 s is the shipped file's).
SECS = {"quick": {1: 400, "many": 200}, "full": {1: 1000, "many": 200}}


def _doc(n: int, cc: str, secs: int) -> dict:
    """``scenarios/venoplus.toml`` with ``n`` bulk flows of ``cc`` (the file's recovery, 10 ms
    apart as its flows) for ``secs``; without its description, recording no trace."""
    doc = shipped_doc("venoplus")
    del doc["description"]
    doc["duration"] = f"{secs}s"
    doc["topology"]["pairs"] = n
    doc["flows"] = bulk_flows([cc] * n, doc["flows"][0]["recovery"])
    doc["trace"] = {"series": "off", "segments": False, "drops": False, "events": False}
    return doc


def venoplus_points(mode: Mode):
    pts = []
    for n in FLOWS[mode]:
        secs = SECS[mode][1] if n == 1 else SECS[mode]["many"]
        for cc in ("veno", "venoplus"):
            pts += points(
                _doc(n, cc, secs),
                SEEDS[mode],
                {"topology.receiver_access.forward.loss.p": LOSSES},
                params={"flows": n, "controller": cc},
            )
    return pts


def venoplus_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    f = res.flows().rename({"topology.receiver_access.forward.loss.p": "loss"})
    f = f.with_columns((pl.col("throughput_bps") / 1e6).alias("mbps"))
    return f.select("point", "flows", "controller", "loss", "seed", "id", "mbps")


def _norm(frame: pl.DataFrame) -> pl.DataFrame:
    """TH_norm per (flows, loss): mean per-flow throughput of Venoplus over Veno's (means over
    all flows and seeds)."""
    m = frame.group_by("flows", "loss", "controller").agg(pl.col("mbps").mean())
    plus = m.filter(pl.col("controller") == "venoplus").select("flows", "loss", pl.col("mbps").alias("plus"))
    veno = m.filter(pl.col("controller") == "veno").select("flows", "loss", pl.col("mbps").alias("veno"))
    return plus.join(veno, on=["flows", "loss"]).with_columns((pl.col("plus") / pl.col("veno")).alias("norm")).sort("flows", "loss")


def _jain(frame: pl.DataFrame) -> pl.DataFrame:
    """Jain's index of each run (its flows), with the run's parameters."""
    j = jain_index(frame, "mbps", ["point"])
    keys = frame.select("point", "flows", "controller", "loss", "seed").unique()
    return j.join(keys, on="point")


def _per_seed(frame: pl.DataFrame, n: int, cc: str, loss: float):
    """Per seed: the mean per-flow throughput (Mb/s) of the run with ``n`` flows of ``cc``."""
    s = frame.filter((pl.col("flows") == n) & (pl.col("controller") == cc) & (pl.col("loss") == loss))
    if s.height == 0:
        raise KeyError(f"no runs with {n} {cc} flows at loss {loss}")
    return s.group_by("seed").agg(pl.col("mbps").mean()).sort("seed")["mbps"].to_numpy()


def th_norm(frame: pl.DataFrame, n: int, loss: float) -> Estimate:
    """TH_venoplus / TH_veno at ``n`` flows and ``loss``: ratio of means, bootstrap."""
    return ratio_of_means(_per_seed(frame, n, "venoplus", loss), _per_seed(frame, n, "veno", loss))


def _losses(frame: pl.DataFrame) -> list[float]:
    return sorted(set(frame["loss"].to_list()))


def _claim_one(frame: pl.DataFrame) -> list[Test]:
    return [above(f"TH_norm, 1 flow, loss {lossfmt(p)}", th_norm(frame, 1, p), 1 + ABOUT) for p in _losses(frame)]


def _claim_max(frame: pl.DataFrame) -> Test:
    ls = _losses(frame)
    groups = [g for p in ls for g in (_per_seed(frame, 1, "venoplus", p), _per_seed(frame, 1, "veno", p))]
    est = bootstrap(lambda *g: max(g[2 * k].mean() / g[2 * k + 1].mean() for k in range(len(ls))), *groups)
    return about("largest TH_norm over loss rates, 1 flow", est, 1.8)


def _claim_heavy(frame: pl.DataFrame) -> list[Test]:
    n = max(frame["flows"].to_list())
    return [within(f"TH_norm, {n} flows, loss {lossfmt(p)}", th_norm(frame, n, p), 1 - ABOUT, 1 + ABOUT) for p in _losses(frame)]


def _claim_fair(frame: pl.DataFrame) -> list[Test]:
    j = _jain(frame).filter((pl.col("controller") == "venoplus") & (pl.col("flows") > 1))
    out = []
    for n in sorted(set(j["flows"].to_list())):
        for p in _losses(frame):
            out.append(at_least(f"Jain, {n} Venoplus flows, loss {lossfmt(p)}", t_interval(seed_values(j, "jain", flows=n, loss=p)), 1 - ABOUT))
    return out


def venoplus_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    nm = _norm(frame)
    flows = sorted(set(nm["flows"].to_list()))
    fig, ax = figure(1, 2, width=11, height=4.4)
    a, b = ax[0][0], ax[0][1]
    grid = np.full((len(flows), len(LOSSES)), np.nan)
    for r in nm.iter_rows(named=True):
        grid[flows.index(r["flows"]), LOSSES.index(r["loss"])] = r["norm"]
    im = a.imshow(grid, cmap="RdBu", vmin=0.5, vmax=1.5, aspect="auto", origin="lower")
    for i in range(len(flows)):
        for k in range(len(LOSSES)):
            if np.isfinite(grid[i, k]):
                a.text(k, i, f"{grid[i, k]:.2f}", ha="center", va="center", fontsize=8)
    a.set_xticks(range(len(LOSSES)), [f"{lossfmt(p)}" for p in LOSSES])
    a.set_yticks(range(len(flows)), [str(n) for n in flows])
    a.set_xlabel("wireless loss rate (per packet)")
    a.set_ylabel("number of flows")
    a.set_title("Fig. 3: TH_venoplus / TH_veno")
    fig.colorbar(im, ax=a, label="normalized throughput (ratio)")
    j = mean_ci(_jain(frame), "jain", ["controller", "loss", "flows"])
    for cc, ls in (("venoplus", "-"), ("veno", ":")):
        for p, m in zip(LOSSES, "os^v", strict=True):
            s = j.filter((pl.col("controller") == cc) & (pl.col("loss") == p) & (pl.col("flows") > 1)).sort("flows")
            b.errorbar(s["flows"].to_numpy(), s["mean"].to_numpy(), yerr=s["ci"].fill_null(0).to_numpy(), marker=m, ls=ls, capsize=2, label=f"{cc}, loss {lossfmt(p)}")
    b.set_xscale("log", base=2)
    many = [n for n in flows if n > 1]
    if many:
        b.set_xticks(many, [str(n) for n in many])
    b.set_xlabel("number of flows")
    b.set_ylabel("Jain's fairness index")
    b.set_ylim(0.5, 1.02)
    b.set_title("Fig. 4: Jain index")
    b.grid(True, alpha=0.3)
    b.legend(fontsize=6, ncol=2)
    secs = SECS[mode]
    cap = (
        f"Wired 10 Mb/s, 80 ms bottleneck, 10 Mb/s wireless hops with Bernoulli loss reported over the "
        f"cross-layer channel, buffers 50; {secs[1]} s runs with one flow, {secs['many']} s otherwise; "
        f"{seeds_text(SEEDS[mode])}; Jain: mean ± 95% CI over seeds ({mode} mode)."
    )
    return [Plot(fig, cap, "Normalized-throughput heatmap and Jain index vs number of flows")]


def venoplus_table(frame: pl.DataFrame) -> list[Row]:
    rows = []
    nm = _norm(frame)
    for n in (1, 16):
        for p in LOSSES:
            try:
                x = value(nm, "norm", flows=n, loss=p)
            except KeyError:
                continue
            rows.append(Row(f"TH_norm, {n} flow{'s' if n > 1 else ''}, loss {lossfmt(p)}", "up to about 1.8" if n == 1 else "→ 1", x, None, "ratio of means"))
    j = mean_ci(_jain(frame), "jain", ["controller", "flows", "loss"])
    for n in (16, 64):
        for p in (1e-2,):
            rows.append(row(j, f"Jain, {n} Venoplus flows, loss {lossfmt(p)}", "close to 1", "", controller="venoplus", flows=n, loss=p))
    return rows


EXPERIMENT = Experiment(
    id="venoplus",
    title="Normalized throughput and Jain index vs number of flows",
    paper=PAPER,
    reference="Fig. 3, Fig. 4",
    points=venoplus_points,
    analyze=venoplus_analyze,
    plots=venoplus_plots,
    table=venoplus_table,
    claims=(
        Claim(
            "One flow: TH_norm > 1.1 at every loss rate",
            _claim_one,
            "better with few connections",
            quote=(
                "As shown in Figure 3, TCP Venoplus is capable of better throughput improvements than Veno when the number "
                "of TCP connections is small"
            ),
            section="§4.2, Fig. 3",
            threshold="\"better\" = above the ±10% band of \"the same\" (ABOUT, verdict.py), at every loss rate of Fig. 3 (1e-4..1e-1).",
        ),
        Claim(
            "One flow: the largest TH_norm over the loss rates is 1.8 ± 10%",
            _claim_max,
            "close to 80%",
            quote="The maximum improvement is close to 80 % when the bit error rate is 10[exponent illegible in the text]",
            section="§4.2, Fig. 3",
            threshold="a published number reproduced within ±10% (ABOUT): [1.62, 1.98], the maximum over tcplab's loss rates (the paper's rate is illegible).",
        ),
        Claim(
            "Most flows run (64): TH_norm within 1 ± 10% at every loss rate",
            _claim_heavy,
            "similar to Veno when the load is heavy",
            quote=(
                "But as the number of TCP connections increase, which is an indicator of heavy network traffic, the "
                "throughput offered by Venoplus is closer to Veno. This proves our hypothesis that Venoplus is better than "
                "Veno when the network load is light and similar to Veno when the network load is heavy"
            ),
            section="§4.2, Fig. 3",
            threshold="\"similar\" = within ±10% (ABOUT) at the largest number of flows (64, the paper's N).",
        ),
        Claim(
            "Jain ≥ 0.9 for every number of Venoplus flows (> 1) and every loss rate",
            _claim_fair,
            "close to 1",
            quote=(
                "The fairness ratio is close to 1 from light traffic to heavy traffic and for low bit error rate to high bit "
                "error rate"
            ),
            section="§4.3, Fig. 4",
            threshold="\"close to 1\" = within ABOUT (10%) of 1: ≥ 0.9 (t-interval over seeds).",
        ),
    ),
    seeds=SEEDS,
    reading=(
        "the loss-monitoring window W of 100 received packets (tcplab's default; the paper gives no value); "
        "delayed ACKs, as the Veno setting; the loss rates as packet loss. Fig. 3's axis and §4.2 say \"bit error "
        "rate\", but §4.1 sets \"the random loss rate in the wireless links ... from 0.0001 to 0.1 in packet unit\"; "
        "read per bit, the same values would lose a 1500-byte packet with probability 1 - (1 - 1e-4)^12000 = 0.70 at "
        "the lowest and about 1 from 1e-3 on, where no flow moves, so that reading is not run."
    ),
    readings=(
        Reading("loss-monitoring window W", "1000 packets",
                "§3: W \"is a configurable parameter which represents the number of received packets for observation "
                "of packet losses\"; the paper gives no value, and a longer window keeps a report and the loss signal it "
                "explains in one window more often.", set_controller_param("venoplus", window=1000)),
        Reading("delayed ACKs", "none", "§4: \"We use network simulator ns-2\", whose default sink (Agent/TCPSink) "
                "acknowledges every segment; delayed ACKs need the DelAck sink, which the paper does not name.",
                set_tcp(delayed_ack=False)),
    ),
    setting=(
        "Fig. 2: wired sources → 10 Mb/s, 1 ms → R2 → bottleneck 10 Mb/s, 80 ms → R1 → 10 Mb/s, "
        "1 ms wireless hops → sinks, every buffer 50 packets (the text gives the access links 0.1 ms "
        "of round-trip time, the figure 1 ms one way: the figure is used). Bernoulli loss on the "
        "wireless hops' data direction, reported to the senders over the cross-layer channel "
        "(`report_losses`, no delay). TCP: the Veno setting (Reno recovery, no SACK, growth per "
        "ACK, delayed ACKs). Venoplus defaults: windows of 100 packets, EWMA gain 1/8, congestion "
        "losses \"net\". Bulk flows started 10 ms apart. The paper gives no run length "
        "(`scenarios/venoplus.toml`)."
    ),
    explanation=(
        "Earlier versions checked 16 flows (the paper states N = 64 and \"from light to heavy traffic\") "
        "and TH_norm > 1 with one flow below loss 1e-1; the claims now state the paper's words. **A model "
        "error, fixed (2026-11-29)**: with one flow Venoplus was *slower* than Veno below loss 1e-1 (TH_norm "
        "0.90 / 0.88 / 0.91 at 1e-4 / 1e-3 / 1e-2, 1000 s runs, four seeds), because tcplab netted each "
        "observation window's loss signals against that window's reports: a report (sent at the drop) and the "
        "sender's loss signal (about an RTT later, often the next window: 100 packets span less than this "
        "path's round trip) fell into different windows, the signal counted as a congestion loss and \"conw "
        "up\" halved (53 random losses of one seed at 1e-3 against Veno's 12). The W = 1000 reading, which "
        "keeps report and signal in one window more often, was the test of that explanation (TH_norm 0.90 → "
        "1.00 at 1e-3 in the quick suite). A report now names its segment and explains the first signal after "
        "it while that segment is unacknowledged (docs/controllers/venoplus.md): no random loss is halved, and "
        "the lone flow's TH_norm is 1.18 / 1.21 / 1.05 / 1.08 on the same runs. **Gap**: the published "
        "maximum gain of about 1.8 is not reached: a lone Veno flow already answers almost every random loss "
        "with 4/5 on this path (at 1e-3, 492 of 516 over two seeds), so Venoplus's gain comes only from the "
        "losses it answers with no reduction at all (\"keep\": 192 of 623); the paper's gain presumes a Veno "
        "that misjudges random losses here, which tcplab's Veno does not."
    ),
)

EXPERIMENTS = [EXPERIMENT]
