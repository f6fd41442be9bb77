"""Fu & Liew, "TCP Veno", IEEE JSAC 21(2) 2003, Table I: Veno's loss classification (#FF4/5
and #FF1/2 by the actual cause of the loss). Claims quote §III-A
(thresholds: :mod:`tcplab.reproduce.verdict`); the points are ``scenarios/veno-table1.toml`` with the
Veno flavor and the UDP background varied."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from tcplab.reproduce.common import VENO_LINUX, figure, points, row, seeds_text, shipped_doc, stats, with_kbps
from tcplab.reproduce.experiment import Claim, Experiment, Mode, Plot, Row, Sensitivity
from tcplab.reproduce.readings import Reading
from tcplab.reproduce.verdict import Estimate, Test, at_least, at_most, pooled_ratio
from tcplab.sweep import SweepResult

PAPER = "Fu & Liew, TCP Veno, IEEE JSAC 21(2), 2003"
SEEDS = {"quick": 10, "full": 20}


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
    """``scenarios/veno-table1.toml`` with the flow's controller ``cc`` and the UDP background at
    rate ``udp`` (None: none); without the file's description, and recording no trace (the
    flows table has the counts)."""
    doc = shipped_doc("veno-table1")
    del doc["description"]
    doc["flows"][0]["controller"] = cc
    if udp is None:
        del doc["udp"]
    else:
        doc["udp"][0]["rate"] = udp
    doc["trace"] = {"series": "off", "segments": False, "drops": False, "events": False}
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


#: The published 4/5 accuracy per run (#FF4/5 on random losses / all #FF4/5): 97.6% .. 100%.
PUBLISHED_WORST_ACCURACY = min(r[0][1] / (r[0][0] + r[0][1]) for runs in PUBLISHED_RUNS.values() for r in runs)
#: "no more than 17% (two out of twelve ...)"
PUBLISHED_MISDIAGNOSIS_MAX = 0.17


def _sel(frame: pl.DataFrame, flavor: str, udp: str) -> pl.DataFrame:
    s = frame.filter((pl.col("flavor") == flavor) & (pl.col("udp") == udp)).sort("seed")
    if s.height == 0:
        raise KeyError(f"no runs for {flavor}, {udp}")
    return s


def accuracy(s: pl.DataFrame) -> Estimate:
    """4/5 decisions on random losses / all 4/5 decisions, pooled over the seeds (bootstrap)."""
    all45 = s["ff45_congestion"] + s["ff45_random"] + s["ff45_none"]
    return pooled_ratio(s["ff45_random"].to_numpy(), all45.to_numpy())


def misdiagnosis(s: pl.DataFrame) -> Estimate:
    """Congestion losses answered 4/5 / all congestion fast retransmits, pooled (bootstrap)."""
    cong = s["ff45_congestion"] + s["ff12_congestion"]
    return pooled_ratio(s["ff45_congestion"].to_numpy(), cong.to_numpy())


def _accuracy_claim(flavor: str, udp: str):
    def check(frame: pl.DataFrame) -> Test:
        return at_least(f"4/5 accuracy, UDP {udp}", accuracy(_sel(frame, flavor, udp)), PUBLISHED_WORST_ACCURACY)

    return check


def _misdiagnosis_claim(frame: pl.DataFrame) -> list[Test]:
    return [
        at_most(f"congestion misdiagnosis, UDP {udp}", misdiagnosis(_sel(frame, "paper", udp)), PUBLISHED_MISDIAGNOSIS_MAX)
        for udp in UDP
    ]


ACCURACY_QUOTE = (
    "For the 84 fast retransmits, there was only one wrong estimation [...] The accuracy of the estimation is "
    "close to 83/84 = 99%. Data with zero and 1 Mb/s UDP background traffic, as well as those in the other two "
    "runs of the experiment show consistently high estimation accuracy"
)
#: Sensitivity: the wireless hop's loss rate (the headline 0.02 first).
WIRELESS_LOSSES = [0.02, 0.01, 0.04]


def _wireless_loss(p: float):
    """A reading's ``apply``: the wireless hop's loss rate `p`."""

    def apply(doc: dict) -> dict:
        doc["topology"]["receiver_access"][0]["forward"]["loss"] = p
        return doc

    return apply


def _paper_veno(**params: str):
    """A reading's ``apply``: the paper flavor's Veno with `params` (the Linux flavor's runs,
    whose controller is a table, unchanged)."""

    def apply(doc: dict) -> dict:
        for f in doc["flows"]:
            if f["controller"] == "veno":
                f["controller"] = {"name": "veno", **params}
        return doc

    return apply


def _wlan_hop(doc: dict) -> dict:
    """A reading's ``apply``: the Veno receiver's last hop an 802.11b segment (11 Mb/s, the
    station at the WLAN paper's HL placement: 1e-2 of frames lost after the MAC's retries)
    instead of a 10 Mb/s wired hop losing data packets at random; the background's receiver
    keeps its wired hop. The dumbbell becomes the same nodes and links, named."""
    t = doc.pop("topology")
    doc["nodes"] = [{"name": n, "kind": k} for n, k in
                    (("s0", "host"), ("s1", "host"), ("left", "router"), ("ap", "router"), ("r0", "host"), ("r1", "host"))]
    doc["links"] = [{"from": "s0", "to": "left", **t["sender_access"]}, {"from": "s1", "to": "left", **t["sender_access"]},
                    {"from": "left", "to": "ap", **t["bottleneck"]}, {"from": "ap", "to": "r1", **t["receiver_access"][1]}]
    doc["wlan"] = [{"ap": "ap", "rate": "11Mbps", "stations": [{"node": "r0", "preset": "HL"}]}]
    for f in doc["flows"]:
        f.update(src="s0", dst="r0")
    for u in doc.get("udp", []):
        u.update(src="s1", dst="r1")
    return doc


def table1_sensitivity_points(mode: Mode):
    pts = []
    for p in WIRELESS_LOSSES:
        for label, udp in UDP.items():
            doc = _wireless_loss(p)(_table1_doc("veno", udp))
            pts += points(doc, SEEDS[mode], params={"flavor": "paper", "udp": label, "wireless_loss": p})
    return pts


def table1_sensitivity(res: SweepResult, mode: Mode) -> list[Row]:
    f = res.flows()
    rows = []
    for p in WIRELESS_LOSSES:
        head = "headline" if p == WIRELESS_LOSSES[0] else ""
        for udp in UDP:
            s = f.filter((pl.col("wireless_loss") == p) & (pl.col("udp") == udp)).sort("seed")
            if s.height == 0:
                continue
            rows.append(Row.of(f"wireless loss {p:g}, UDP {udp}: 4/5 accuracy", head, accuracy(s), "ratio"))
            rows.append(Row.of(f"wireless loss {p:g}, UDP {udp}: congestion misdiagnosis", head, misdiagnosis(s), "ratio"))
    return rows


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
        *(
            Claim(
                f"4/5 accuracy ≥ {PUBLISHED_WORST_ACCURACY:.3f}, UDP background {udp} (paper flavor, pooled over seeds)",
                _accuracy_claim("paper", udp),
                PUBLISHED_ACCURACY[udp],
                quote=ACCURACY_QUOTE,
                section="§III-A, Table I",
                threshold=(
                    "\"consistently high\" is read against the paper's own per-run accuracies, 97.6% .. 100% "
                    "(Table I): at least the worst of its nine published runs, 0.976 (an earlier reading "
                    "allowed ABOUT's 10% below it, 0.88, looser than every run the paper shows)."
                ),
            )
            for udp in UDP
        ),
        Claim(
            "Congestion losses answered 4/5 ≤ 17% of all congestion fast retransmits, at every UDP level (paper flavor, pooled)",
            _misdiagnosis_claim,
            "≤ 17% (2 of 12)",
            quote=(
                "Looking at all the results, the rate of misdiagnosing congestive loss as random losses is no more "
                "than 17% (two out of twelve in the first run when UDP traffic is 1 Mb/s), and usually much lower than that"
            ),
            section="§III-A, Table I",
            threshold=(
                "the paper's bound as printed, 17%. The paper divides by #FF1/2 on congestion (2/12); tcplab divides by "
                "all congestion fast retransmits (#FF4/5 + #FF1/2, 2/14 = 14% for the same run), the natural rate; "
                "17% is the looser of the two readings of the paper's words. Pooled over seeds, bootstrap interval."
            ),
            weakened=(
                "the paper bounds every run; tcplab bounds the rate pooled over seeds (without background a run has "
                "about one congestion loss, so a per-run rate is 0 or 1)."
            ),
        ),
    ),
    sensitivity=Sensitivity(
        table1_sensitivity_points,
        table1_sensitivity,
        "The wireless loss rate is not in the paper (tcplab chose p = 0.02 from the paper's count of random-loss fast "
        "retransmits); the headline numbers at p = 0.01, 0.02 and 0.04, paper flavor, same seeds. Pooled over seeds, "
        "bootstrap intervals.",
    ),
    seeds=SEEDS,
    reading="Wireless loss 0.02 (not in the paper: what reproduces its count of random-loss fast retransmits "
            "without background, 169..225 per 12 MB); Veno's RTT from the sender's samples at full resolution.",
    readings=tuple(
        Reading("wireless loss", f"{p:g}", "the paper gives no wireless loss rate (Fig. 3(b): \"Random loss actually "
                "occurs in the wireless link\"); its counts of random-loss fast retransmits are matched by 0.02, and "
                f"{p:g} is {'half' if p < 0.02 else 'twice'} that.", _wireless_loss(p))
        for p in WIRELESS_LOSSES[1:]
    ) + (
        Reading("Veno's RTT clock", "ms timestamps from the end of slow start",
                "§II: \"In Veno, a millisecond resolution timestamp is recorded for each transmitted segment once the "
                "connection leaves the initial slow start stage\": samples rounded to whole milliseconds, none before "
                "the first loss, RTT their own smoothed value (veno `rtt_clock = \"ms\"`); the main runs take the "
                "sender's samples at full resolution from the first ACK.", _paper_veno(rtt_clock="ms")),
        Reading("wireless hop", "802.11b, 1e-2 lost after retries",
                "Fig. 3(b): the random losses are the wireless link's; the main runs lose packets at random on a wired "
                "10 Mb/s hop. Here that hop is an 802.11b segment (11 Mb/s, MAC retries; docs/wlan.md) with the station "
                "at the WLAN paper's HL placement, 1e-2 of frames lost after retries (the paper gives no placement; "
                "compare the wired hop at 0.01 above).", _wlan_hop),
        Reading("BaseRTT", "kept across losses",
                "not the paper's (§II: BaseRTT \"is reset whenever packet loss is detected\"): the paper flavor with "
                "only this rule changed (veno `base_rtt_reset = \"never\"`, as Linux's tcp_veno.c), to test the "
                "explanation below of the misses with 1 Mb/s of background.", _paper_veno(base_rtt_reset="never"), diagnostic=True),
    ),
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
        "In earlier runs (3 seeds) the accuracy held without background and with 500 kb/s; with 1 Mb/s it "
        "did not (about 0.81), and tcplab's misdiagnosis rate is far above the paper's with "
        "1 Mb/s (and noisy without background, where each run has a single congestion loss, the "
        "slow-start overshoot). The cause, tested: the paper flavor forgets BaseRTT at every loss and "
        "re-learns it from RTT samples taken while the CBR stream (62% of the bottleneck) keeps the "
        "router queue occupied, and it judges with the smoothed RTT; so it underestimates the "
        "backlog N, and the Veno flow's own share of a full 12-packet buffer, about 0.38 x 12 = 4.6 "
        "packets, is close to beta = 3 anyway. The diagnostic reading \"BaseRTT: kept across losses\" "
        "changes only that rule (the readings table): in the quick run of 2026-11-29 (10 seeds) the "
        "accuracy with 1 Mb/s went from 0.798 [0.748, 0.844] to 0.974 [0.959, 0.988], the published "
        "runs' 0.976 inside its interval, and no other reading moved it above 0.96; the paper's "
        "words do not allow that rule, so it is never a headline. The wired hop's loss model does not "
        "explain the misses: with the wireless hop an 802.11b segment losing 1e-2 of frames after the MAC's "
        "retries, the accuracy in that run was 0.95, 0.947 and 0.80 without background, with 500 kb/s and with "
        "1 Mb/s, against the wired hop's 0.948, 0.923 and 0.486 at the same rate: the model matters with 1 Mb/s, "
        "and the claims miss under both. The Linux flavor (BaseRTT never forgotten, the "
        "latest RTT sample) keeps its accuracy (about 0.98; shown in the table, not a claim: the paper has no "
        "Linux flavor).\n\n"
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

