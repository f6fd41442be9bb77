"""Pang et al., "Performance study of TCP Veno over WLAN and RED router": Exp. 1 (Table I),
Exp. 2 (fairness cases 1-4) and Exp. 3 (RED vs drop-tail, 6 flows, thin pipe; on the 802.11b
network and on the wired-hop variant of ``claims_red.rs``). Claims and tolerances as
``crates/tcplab-sim/tests/claims_wlan.rs`` and ``claims_red.rs``; settings as
``scenarios/wlan-*.toml`` and ``scenarios/red-dumbbell.toml``."""

from __future__ import annotations

import numpy as np
import polars as pl

from tcplab.reproduce.common import figure, points, row, seeds_text, stats
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row
from tcplab.sweep import SweepResult

PAPER = "Pang et al., Performance study of TCP Veno over WLAN and RED router"
#: claims_wlan.rs: 100 s runs, 2 seeds; claims_red.rs: 120 s, 3 seeds.
SEEDS = {"quick": 2, "full": 5}
RED_SEEDS = {"quick": 3, "full": 5}
SECS = 100
RED_SECS = 120
TRACE_OFF = {"series": "off", "segments": False, "drops": False, "events": False}
#: The paper's RED (Dummynet): min_th 5, max_th 10, max_p 0.1, w_q 0.005, early drops spaced
#: uniformly over 1..1/p_b packets (``wait = false``).
RED = {"discipline": "red", "min_th": 5, "max_th": 10, "max_p": 0.1, "w_q": 0.005, "wait": False}

#: Table I: aggregate of 4 homogeneous flows, kb/s, (pipe, link) -> (Reno, Veno).
TABLE1 = {
    ("thin", "LL"): (1408, 1441),
    ("thin", "HL"): (1083, 1383),
    ("fat", "LL"): (2768, 2775),
    ("fat", "HL"): (1995, 2323),
}
#: Exp. 2: STD of the four per-flow throughputs, kb/s (cases 3, 4 not published).
EXP2_STD = {1: 112, 2: 66}
#: Exp. 2 cases: (stations, controllers), fat pipe.
CASES = {
    1: (["HL", "HL", "LL", "LL"], ["reno"] * 4),
    2: (["HL", "HL", "LL", "LL"], ["veno"] * 4),
    3: (["LL"] * 4, ["reno", "reno", "veno", "veno"]),
    4: (["HL"] * 4, ["reno", "reno", "veno", "veno"]),
}

SETTING = (
    "Fig. 3 of the paper as the `wlan_access` preset: server - 100 Mb/s - Dummynet router (thin "
    "pipe 1.6 Mb/s, 60 ms, 12 packets; fat pipe 16 Mb/s, 30 ms, 60 packets, both ways, drop-tail "
    "unless RED) - AP - 802.11b stations at 11 Mb/s placed by the LL / HL presets (residual loss "
    "after MAC retries 1e-4 / 1e-2, docs/wlan.md; AP and station queues 50 packets). TCP: MSS "
    "1460, Reno recovery, no SACK, growth per ACK, delayed ACKs (the paper names only MSS and "
    "Veno's beta = 3; the Veno paper's stack is assumed). Bulk flows from the server, one per "
    "station, started 10 ms apart, 100 s runs (the paper gives no run length)."
)

CHANNEL_GAP = (
    "Likely reason: the channel's shadowing is drawn independently per frame (the issue's "
    "model), so a residual loss of 1e-2 after 7 attempts needs about half of all attempts to "
    "fail. An HL station then costs about twice the air time per frame (retries plus doubled "
    "backoff windows), the WLAN becomes the bottleneck (fat HL carries about 1.7 Mb/s against "
    "the paper's 2.0-2.3) and its AP queue is full when the channel losses hit: Veno's backlog "
    'estimate says "congestive" and it halves like Reno. In the thin pipe the HL WLAN\'s '
    "capacity (~1.7 Mb/s) is barely above the pipe's 1.6 Mb/s, so queues build at both. In the "
    "paper's testbed losses were probably bursty (fades longer than a retry sequence), which "
    "costs little air time and leaves the queue short at the loss. Nothing was tuned to close "
    "the gap: the defaults (per-frame shadowing, 50-packet MAC queues) were chosen before any "
    "run. Explorations (`channel_and_buffer_exploration` in `claims_wlan.rs`, ignored; 100 s, 2 "
    "seeds, HL Veno vs Reno aggregate): block fading of 5 ms gave +14.7% (thin) / +1.3% (fat), "
    "20-packet MAC queues +4.8% / +5.2%, both together +17.6% / +7.6% (paper +27.7% / +16.4%): "
    "bursty losses with little air-time cost and a shorter AP queue both move tcplab towards "
    "the paper. The paper reports neither quantity, so the default model stays the issue's."
)


def _doc(pipe: str, stations: list[str], controllers: list[str], queue: dict | None = None) -> dict:
    topo: dict = {
        "kind": "wlan_access",
        "pipe": pipe,
        "stations": [{"node": f"sta{i}", "preset": q} for i, q in enumerate(stations)],
    }
    if queue is not None:
        topo["queue"] = dict(queue)
    return {
        "name": "wlan",
        "duration": f"{SECS}s",
        "topology": topo,
        "tcp": {"mss": 1460, "sack_blocks": 0, "growth": "per_ack"},
        "flows": [
            {"dst": f"sta{i}", "controller": cc, "recovery": "reno", "start": f"{10 * i}ms"}
            for i, cc in enumerate(controllers)
        ],
        "trace": TRACE_OFF,
    }


def _kbps(res: SweepResult) -> pl.DataFrame:
    """Every flow of every run, with ``kbps`` (kb/s, kb = 1000 bits)."""
    return res.flows().with_columns((pl.col("throughput_bps") / 1e3).alias("kbps"))


def _per_run(flows: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """One row per run: aggregate and population STD of the per-flow throughputs (kb/s)."""
    return (
        flows.group_by([*by, "seed"])
        .agg(pl.col("kbps").sum().alias("total"), pl.col("kbps").std(ddof=0).alias("std"))
        .sort([*by, "seed"])
    )


# ---- Exp. 1: Table I -------------------------------------------------------------------------


def exp1_points(mode: Mode):
    pts = []
    for pipe in ("thin", "fat"):
        for q in ("LL", "HL"):
            for cc in ("reno", "veno"):
                pts += points(
                    _doc(pipe, [q] * 4, [cc] * 4),
                    SEEDS[mode],
                    params={"pipe": pipe, "link": q, "controller": cc},
                )
    return pts


def exp1_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    return _per_run(_kbps(res), ["pipe", "link", "controller"])


def _mean(frame: pl.DataFrame, col: str = "total", **where) -> float:
    sel = frame
    for k, v in where.items():
        sel = sel.filter(pl.col(k) == v)
    if sel.height == 0:
        raise KeyError(f"no data for {where}")
    return float(sel[col].mean())


def _exp1_ratios(frame: pl.DataFrame, link: str) -> dict[str, float]:
    return {
        p: _mean(frame, pipe=p, link=link, controller="veno")
        / _mean(frame, pipe=p, link=link, controller="reno")
        for p in ("thin", "fat")
    }


def _exp1_ll(frame: pl.DataFrame) -> tuple[bool, str]:
    r = _exp1_ratios(frame, "LL")
    return all(abs(x - 1) <= 0.10 for x in r.values()), ", ".join(
        f"{p} {100 * (x - 1):+.1f}%" for p, x in r.items()
    )


def _exp1_hl(frame: pl.DataFrame) -> tuple[bool, str]:
    r = _exp1_ratios(frame, "HL")
    return all(x >= 1.15 for x in r.values()), ", ".join(f"{p} {100 * (x - 1):+.1f}%" for p, x in r.items())


def exp1_table(frame: pl.DataFrame) -> list[Row]:
    st = stats(frame, "total", ["pipe", "link", "controller"])
    rows = []
    for (pipe, q), pub in TABLE1.items():
        for cc, p in zip(("reno", "veno"), pub, strict=True):
            rows.append(
                row(
                    st,
                    f"{pipe} pipe, {q}: {cc.capitalize()} aggregate",
                    str(p),
                    "kb/s",
                    pipe=pipe,
                    link=q,
                    controller=cc,
                )
            )
    return rows


def exp1_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(1, 1, width=9, height=4.2)
    a = ax[0][0]
    st = stats(frame, "total", ["pipe", "link", "controller"])
    groups = list(TABLE1)
    x = np.arange(len(groups))
    for k, cc in enumerate(("reno", "veno")):
        means, cis = [], []
        for pipe, q in groups:
            s = st.filter((pl.col("pipe") == pipe) & (pl.col("link") == q) & (pl.col("controller") == cc))
            means.append(float(s["mean"][0]) if s.height else np.nan)
            cis.append(float(s["ci"][0] or 0) if s.height else 0)
        a.bar(
            x + (k - 0.5) * 0.38,
            means,
            0.36,
            yerr=cis,
            capsize=3,
            color=f"C{k}",
            label=f"{cc.capitalize()} (tcplab)",
        )
        a.plot(
            x + (k - 0.5) * 0.38,
            [TABLE1[g][k] for g in groups],
            "k_",
            ms=18,
            mew=2,
            label="paper" if k == 0 else None,
        )
    a.set_xticks(x, [f"{p} pipe, {q}" for p, q in groups])
    a.set_ylabel("aggregate throughput (kb/s)")
    a.set_title("WLAN Exp. 1 (Table I): 4 homogeneous flows")
    a.grid(True, axis="y", alpha=0.3)
    a.legend(fontsize=8)
    cap = f"Aggregate throughput of 4 Reno or 4 Veno flows per pipe and link quality; bars: tcplab, mean ± 95% CI over {seeds_text(SEEDS[mode])} of {SECS} s ({mode} mode); black marks: Table I."
    return [Plot(fig, cap, "WLAN Table I: aggregate throughput per pipe and link quality")]


EXP1 = Experiment(
    id="wlan-exp1",
    title="4 homogeneous flows over 802.11b, thin/fat pipe, LL/HL",
    paper=PAPER,
    reference="Table I (Exp. 1)",
    points=exp1_points,
    analyze=exp1_analyze,
    plots=exp1_plots,
    table=exp1_table,
    claims=(
        Claim(
            "Veno/Reno aggregate within ±10% on LL links (thin and fat pipe)",
            _exp1_ll,
            "+2.3% thin, +0.3% fat",
        ),
        Claim("Veno above Reno by ≥ 15% on HL links (thin and fat pipe)", _exp1_hl, "+28% thin, +16% fat"),
    ),
    seeds=SEEDS,
    setting=SETTING
    + " Four stations of one link quality, 4 Reno or 4 Veno flows (`scenarios/wlan-exp1-*.toml`).",
    explanation=(
        "What holds: the fat pipe stays far below 11 Mb/s (about 3.3 Mb/s for 4 LL flows: DCF "
        "overhead, contention between the AP's data and the stations' ACKs, MAC retries), the LL "
        "results match the paper within about 6% (thin) and 18% (fat: tcplab's WLAN carries more "
        "than the paper's), and Veno ≈ Reno on LL. **Gap**: Veno's HL gain is a few percent "
        "instead of +28% / +16% (`exp1_veno_beats_reno_on_high_loss_links`, ignored in Rust). " + CHANNEL_GAP
    ),
)


# ---- Exp. 2: fairness, cases 1-4 -------------------------------------------------------------


def exp2_points(mode: Mode):
    pts = []
    for case, (stations, ccs) in CASES.items():
        pts += points(_doc("fat", stations, ccs), SEEDS[mode], params={"case": case})
    # the baselines of the Reno-keeps claim: the same placements with 4 Reno flows (Exp. 1's runs)
    for q in ("LL", "HL"):
        pts += points(_doc("fat", [q] * 4, ["reno"] * 4), SEEDS[mode], params={"case": f"4 reno {q}"})
    return pts


def exp2_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    f = _kbps(res).with_columns(pl.col("case").cast(pl.String))
    return f.select("case", "seed", "id", "controller", "kbps").sort("case", "id", "seed")


def _flow_means(frame: pl.DataFrame, case: str) -> np.ndarray:
    """Per-flow throughput of a case, mean over seeds, in flow order (as claims_wlan.rs)."""
    m = frame.filter(pl.col("case") == case).group_by("id").agg(pl.col("kbps").mean()).sort("id")
    if m.height == 0:
        raise KeyError(f"no runs of case {case}")
    return m["kbps"].to_numpy()


def _exp2_reno_keeps(frame: pl.DataFrame) -> tuple[bool, str]:
    out, ok = [], True
    for case, q in (("3", "LL"), ("4", "HL")):
        mixed = _flow_means(frame, case)[:2].sum()
        alone = _flow_means(frame, f"4 reno {q}")[:2].sum()
        ok &= mixed >= 0.9 * alone
        out.append(f"{q}: {mixed:.0f} vs {alone:.0f} kb/s ({mixed / alone:.3f})")
    return ok, "; ".join(out)


def _exp2_fairer(frame: pl.DataFrame) -> tuple[bool, str]:
    reno, veno = float(np.std(_flow_means(frame, "1"))), float(np.std(_flow_means(frame, "2")))
    return veno < reno, f"STD Veno (case 2) {veno:.0f} vs Reno (case 1) {reno:.0f} kb/s"


def exp2_table(frame: pl.DataFrame) -> list[Row]:
    rows = []
    for case in ("1", "2", "3", "4"):
        v = _flow_means(frame, case)
        n = frame.filter(pl.col("case") == case)["seed"].n_unique()
        rows.append(
            Row(
                f"case {case}: STD of per-flow throughput (flows {', '.join(f'{x:.0f}' for x in v)})",
                str(EXP2_STD.get(int(case), "—")),
                float(np.std(v)),
                None,
                "kb/s",
                n,
            )
        )
    return rows


def exp2_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(1, 1, width=9, height=4.2)
    a = ax[0][0]
    for c, case in enumerate(("1", "2", "3", "4")):
        stations, ccs = CASES[int(case)]
        st = stats(frame.filter(pl.col("case") == case), "kbps", ["id"]).sort("id")
        xs = c * 5 + np.arange(4)
        colors = ["C0" if cc == "reno" else "C1" for cc in ccs]
        a.bar(
            xs,
            st["mean"].to_numpy(),
            0.8,
            yerr=st["ci"].fill_null(0).to_numpy(),
            capsize=2,
            color=colors,
            hatch=None,
        )
        for x, q in zip(xs, stations, strict=True):
            a.text(x, 5, q, ha="center", va="bottom", fontsize=7, color="white")
    a.set_xticks([c * 5 + 1.5 for c in range(4)], [f"case {c}" for c in range(1, 5)])
    a.bar([0], [0], color="C0", label="Reno")
    a.bar([0], [0], color="C1", label="Veno")
    a.set_ylabel("per-flow throughput (kb/s)")
    a.set_ylim(bottom=0)
    a.set_title("WLAN Exp. 2: per-flow throughput, fat pipe")
    a.grid(True, axis="y", alpha=0.3)
    a.legend(fontsize=8)
    cap = (
        "Per-flow throughput of the four flows of each case (labels: the station's link quality); "
        f"case 1: 2 HL + 2 LL Reno, case 2: 2 HL + 2 LL Veno, case 3: 2 Reno + 2 Veno on LL, case 4: "
        f"the same on HL; mean ± 95% CI over {seeds_text(SEEDS[mode])} of {SECS} s ({mode} mode; "
        "with 2 seeds the CI's t factor is 12.7, so the bars are wide)."
    )
    return [Plot(fig, cap, "WLAN Exp. 2 per-flow throughput")]


EXP2 = Experiment(
    id="wlan-exp2",
    title="Fairness (STD) of mixed link qualities, fat pipe",
    paper=PAPER,
    reference="Exp. 2",
    points=exp2_points,
    analyze=exp2_analyze,
    plots=exp2_plots,
    table=exp2_table,
    claims=(
        Claim(
            "Reno flows next to 2 Veno flows keep ≥ 90% of what they get next to 2 Reno flows (cases 3, 4)",
            _exp2_reno_keeps,
            "Veno does not take from Reno",
        ),
        Claim("Veno fairer across HL/LL stations: STD case 2 < case 1", _exp2_fairer, "66 vs 112 kb/s"),
    ),
    seeds=SEEDS,
    setting=SETTING
    + " Fat pipe, four stations (`scenarios/wlan-exp2-case{1..4}.toml`); STD = population standard deviation of the four per-flow throughputs (each a mean over seeds), as `claims_wlan.rs`. The Reno-keeps claim compares the Reno flows of cases 3 and 4 with the same placements carrying 4 Reno flows (Exp. 1's fat-pipe runs).",
    explanation=(
        "Veno does not take from Reno (as published). **Gap**: with HL and LL stations mixed, "
        "the LL flows take about three times the HL flows' share under both Reno and Veno; the "
        "paper found Veno much fairer (STD 66 vs 112 kb/s; `exp2_veno_is_fairer_across_mixed_links`, "
        "ignored in Rust). " + CHANNEL_GAP
    ),
)


# ---- Exp. 3: RED vs drop-tail ----------------------------------------------------------------


def _wired_doc(cc: str, red: bool) -> dict:
    """``scenarios/red-dumbbell.toml``: the thin pipe between wired 100 Mb/s hops."""
    bottleneck: dict = {"rate": "1.6Mbps", "delay": "60ms", "buffer": 12}
    if red:
        bottleneck["queue"] = {**RED, "gentle": False, "mode": "packets", "ecn": False}
    access = {"rate": "100Mbps", "delay": "0.1ms", "buffer": 1000}
    return {
        "name": "red-dumbbell",
        "duration": f"{RED_SECS}s",
        "topology": {
            "kind": "dumbbell",
            "pairs": 6,
            "bottleneck": bottleneck,
            "sender_access": access,
            "receiver_access": dict(access),
        },
        "tcp": {"mss": 1460, "growth": "per_ack"},
        "flows": [
            {"controller": cc, "recovery": "newreno", **({"start": f"{100 * i}ms"} if i else {})}
            for i in range(6)
        ],
        "trace": TRACE_OFF,
    }


def exp3_points(mode: Mode):
    pts = []
    for cc in ("reno", "veno"):
        for queue in ("drop-tail", "RED"):
            red = queue == "RED"
            pts += points(
                _doc("thin", ["LL"] * 6, [cc] * 6, RED if red else None),
                SEEDS[mode],
                params={"network": "802.11b", "controller": cc, "queue": queue},
            )
            pts += points(
                _wired_doc(cc, red),
                RED_SEEDS[mode],
                params={"network": "wired", "controller": cc, "queue": queue},
            )
    return pts


def exp3_analyze(res: SweepResult, mode: Mode) -> pl.DataFrame:
    return _per_run(_kbps(res), ["network", "controller", "queue"])


def _exp3_parts(frame: pl.DataFrame, network: str) -> dict[str, tuple[float, float, float, float]]:
    """controller -> (aggregate drop-tail, RED, STD drop-tail, RED), means over seeds."""
    out = {}
    for cc in ("reno", "veno"):
        w = {"network": network, "controller": cc}
        out[cc] = (
            _mean(frame, "total", queue="drop-tail", **w),
            _mean(frame, "total", queue="RED", **w),
            _mean(frame, "std", queue="drop-tail", **w),
            _mean(frame, "std", queue="RED", **w),
        )
    return out


def _agg_claim(network: str, tol: float):
    def check(frame: pl.DataFrame) -> tuple[bool, str]:
        p = _exp3_parts(frame, network)
        ok = all(abs(r / d - 1) < tol for d, r, _, _ in p.values())
        return ok, ", ".join(
            f"{cc.capitalize()} {100 * (r / d - 1):+.1f}% ({d:.0f} → {r:.0f} kb/s)"
            for cc, (d, r, _, _) in p.items()
        )

    return check


def _std_claim(network: str, factor: float):
    def check(frame: pl.DataFrame) -> tuple[bool, str]:
        p = _exp3_parts(frame, network)
        ok = all(sr < factor * sd for _, _, sd, sr in p.values())
        return ok, ", ".join(
            f"{cc.capitalize()} {sd:.1f} → {sr:.1f} kb/s" for cc, (_, _, sd, sr) in p.items()
        )

    return check


def exp3_table(frame: pl.DataFrame) -> list[Row]:
    st = stats(frame, "total", ["network", "controller", "queue"])
    sd = stats(frame, "std", ["network", "controller", "queue"])
    rows = []
    for net in ("wired", "802.11b"):
        for cc in ("reno", "veno"):
            for q in ("drop-tail", "RED"):
                w = {"network": net, "controller": cc, "queue": q}
                rows.append(
                    row(
                        st,
                        f"{net}, {cc.capitalize()}, {q}: aggregate",
                        "no obvious difference" if q == "RED" else "—",
                        "kb/s",
                        **w,
                    )
                )
                rows.append(
                    row(
                        sd,
                        f"{net}, {cc.capitalize()}, {q}: STD of per-flow throughput",
                        "lower with RED" if q == "RED" else "—",
                        "kb/s",
                        **w,
                    )
                )
    return rows


def exp3_plots(frame: pl.DataFrame, res: SweepResult, mode: Mode) -> list[Plot]:
    fig, ax = figure(1, 2, width=11, height=4.2)
    labels = [(n, c) for n in ("wired", "802.11b") for c in ("reno", "veno")]
    x = np.arange(len(labels))
    for k, (col, title, ylabel) in enumerate(
        (("total", "Aggregate throughput", "kb/s"), ("std", "STD of per-flow throughput", "kb/s"))
    ):
        a = ax[0][k]
        st = stats(frame, col, ["network", "controller", "queue"])
        for j, q in enumerate(("drop-tail", "RED")):
            m, c = [], []
            for n, cc in labels:
                s = st.filter(
                    (pl.col("network") == n) & (pl.col("controller") == cc) & (pl.col("queue") == q)
                )
                m.append(float(s["mean"][0]) if s.height else np.nan)
                c.append(float(s["ci"][0] or 0) if s.height else 0)
            a.bar(x + (j - 0.5) * 0.38, m, 0.36, yerr=c, capsize=3, label=q, color=f"C{j + 2}")
        a.set_xticks(x, [f"{n}\n{cc.capitalize()}" for n, cc in labels])
        a.set_ylabel(ylabel)
        a.set_ylim(bottom=0)
        a.set_title(f"WLAN Exp. 3: {title}")
        a.grid(True, axis="y", alpha=0.3)
        a.legend(fontsize=8)
    cap = (
        "Six homogeneous flows on the thin pipe, drop-tail vs RED (min_th 5, max_th 10, max_p 0.1, "
        f"w_q 0.005): wired hops ({RED_SECS} s, {seeds_text(RED_SEEDS[mode])}) and the 802.11b LL network "
        f"({SECS} s, {seeds_text(SEEDS[mode])}); mean ± 95% CI over seeds ({mode} mode)."
    )
    return [Plot(fig, cap, "WLAN Exp. 3: RED vs drop-tail")]


EXP3 = Experiment(
    id="wlan-exp3",
    title="RED vs drop-tail, 6 flows, thin pipe",
    paper=PAPER,
    reference="Exp. 3",
    points=exp3_points,
    analyze=exp3_analyze,
    plots=exp3_plots,
    table=exp3_table,
    claims=(
        Claim(
            "Wired hops: RED leaves the aggregate within ±5% of drop-tail (Reno, Veno)",
            _agg_claim("wired", 0.05),
            "no obvious difference",
        ),
        Claim(
            "Wired hops: RED lowers the STD of per-flow throughput below 0.8x drop-tail's",
            _std_claim("wired", 0.8),
            "lower, Reno and Veno",
        ),
        Claim(
            "802.11b LL hops: RED leaves the aggregate within ±10% of drop-tail",
            _agg_claim("802.11b", 0.10),
            "no obvious difference",
        ),
        Claim(
            "802.11b LL hops: RED lowers the STD of per-flow throughput",
            _std_claim("802.11b", 1.0),
            "lower, Reno and Veno",
        ),
    ),
    seeds=SEEDS,
    setting=(
        "Digest §2, Fig. 6/7: six homogeneous flows share the thin Dummynet pipe (1.6 Mb/s, 60 ms "
        "each way, buffer 12); RED min_th 5, max_th 10, max_p 0.1, w_q 0.005 (RED as in Dummynet: "
        "the average counts what the pipe holds, early drops spaced uniformly over 1..1/p_b "
        "packets, i.e. `wait = false`; docs/network-models.md). Two networks: (1) the wired-hop "
        "variant of `claims_red.rs` (`scenarios/red-dumbbell.toml`): 100 Mb/s hops instead of the "
        "802.11b one, NewReno recovery, delayed ACKs, flows started 100 ms apart, 120 s; (2) the "
        "paper's 802.11b network: "
        + SETTING
        + " Six LL stations (`scenarios/wlan-exp3-{droptail,red}-{reno,veno}.toml`). "
        "STD = population standard deviation of the six per-flow throughputs of a run, averaged over seeds."
    ),
    explanation=(
        "Published (Fig. 6, 7): no obvious difference in throughput; RED lowers the STD for both "
        "Reno and Veno (the figures' values did not survive in the text). On the wired hops RED "
        "costs a few percent of the aggregate (the average sometimes lets the 12-packet queue "
        "drain) and halves or more the spread; the drop-tail runs draw nothing random, so their "
        "seeds give the same run. The wired variant does not model the 802.11b hop: on the thin "
        "pipe the router, not the WLAN, is the bottleneck, but the WLAN's random losses are "
        "absent there. On the 802.11b network both directions also hold in the runs so far, but "
        "per-seed STDs vary by a factor of 3 or more, so with 2 seeds the STD reduction is weak "
        "on its own; the wired-hop claims (3 seeds, 120 s, the Rust test's tolerances) are the "
        "checked ones; the 802.11b claims use looser tolerances (±10%; lower at all) and have "
        "no Rust test."
    ),
)

EXPERIMENTS = [EXP1, EXP2, EXP3]
