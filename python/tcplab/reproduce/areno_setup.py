"""The setting shared by AReno's Fig. 6 and Fig. 7 experiments and their claims: the
paper, seeds, capacities and run lengths, the scenario of one point (from the shipped
``scenarios/areno-fig6.toml`` / ``areno-fig7.toml``), and the per-run frame."""

from __future__ import annotations

import polars as pl

from tcplab.reproduce.common import areno_controller, headline_reading, shipped_doc
from tcplab.sweep import SweepResult

PAPER = "Shimonishi, Hama, Murase, TCP-Adaptive Reno, PFLDnet 2006"
OTHERS = ("reno", "highspeed", "areno")
#: Fig. 7 (100 Mb/s runs, about a second each): 40 seeds in both modes. Reno's share next to
#: AReno was inconclusive with 10 (quick) and 20 seeds (full: 0.864 [0.825, 0.902] against 0.9,
#: about 23 seeds projected). Fig. 6's capacity sweep costs about a minute of CPU per seed
#: (300 and 500 Mb/s runs), so quick mode keeps 5.
SEEDS = {"quick": 40, "full": 40}
FIG6_SEEDS = {"quick": 5, "full": 10}
#: Capacity (Mb/s) -> run length (s) per mode; 1 Gb/s is left out of quick mode.
#: 200 Mb/s is the paper's HighSpeed example; quick mode replaces 1 Gb/s by 500 Mb/s (300 s), the
#: cheapest capacity above the 300 Mb/s of "use up the rest".
CAPACITIES = {
    "quick": {10: 300, 50: 300, 100: 300, 200: 300, 300: 300, 500: 300},
    "full": {10: 300, 50: 300, 100: 300, 200: 300, 300: 300, 500: 300, 1000: 1000},
}
LOSSES = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2]
FIG7_SECS = {"quick": 300, "full": 300}
TRACE_OFF = {"series": "off", "segments": False, "drops": False, "events": False}

SETTING = (
    "Topology (1), Fig. 4: a dumbbell, one Reno flow against one flow of Reno, HighSpeed or AReno "
    "(started 10 ms later), drop-tail buffer = bandwidth-delay product in 1500-byte packets, "
    "Bernoulli loss on the bottleneck's data direction. The figure's delays are lost from the "
    "text: **RTT 100 ms** (48 ms one way on the bottleneck, 1 ms access links at 10x the "
    "bottleneck rate), from the paper's \"a TCP-Reno flow can only utilize the bottleneck link "
    "bandwidth up to 150 Mbps\" at loss 1e-6. TCP as ns-2 runs it: MSS 1460, an ACK per segment, "
    "growth per ACK, SACK recovery for every flow. AReno a = 0.15, alpha = 10, M = 10 Mb/s; "
    "HighSpeed per RFC 3649. \"Reno's share\": the Reno flow's throughput against the other, over "
    "the mean per-flow throughput of the two Reno flows at the same point. \"Pair gain\": total "
    "of the pair with the other protocol over the total of the two Renos."
)


def dumbbell_doc(shipped: str, mbps: int, loss: float, secs: int) -> dict:
    """The shipped ``scenarios/<shipped>.toml`` (the Fig. 6/7 dumbbell) at ``mbps`` (buffer one BDP, access
    links at 10x) and random loss ``loss``, ``secs`` long, tracing nothing; its name and flows are the
    caller's."""
    doc = shipped_doc(shipped)
    doc.pop("description", None)  # as the suite's points always were (it is in a point's key)
    topo = doc["topology"]
    topo["bottleneck"].update(rate=f"{mbps}Mbps", buffer=round(mbps * 1e6 * 0.1 / 8 / 1500))
    topo["bottleneck"]["forward"]["loss"] = loss
    for side in ("sender_access", "receiver_access"):
        topo[side]["rate"] = f"{mbps * 10}Mbps"
    return {**doc, "duration": f"{secs}s", "trace": dict(TRACE_OFF)}


def areno_doc(shipped: str, mbps: int, loss: float, other: str, secs: int, reading: str | None = None) -> dict:
    """A point of Fig. 6 or 7 (``shipped``: areno-fig6 or areno-fig7): the file's Reno flow against its second
    flow run as ``other``. ``reading``: AReno's W_inc reading (None: the headline reading of this build)."""
    peer = areno_controller(reading if reading is not None else headline_reading()) if other == "areno" else other
    doc = dumbbell_doc(shipped, mbps, loss, secs)
    for f in doc["flows"]:
        f.pop("name", None)  # flow0, flow1, as the suite's points always were
    doc["flows"][1]["controller"] = peer
    return {**doc, "name": "areno"}


def areno_pairs(res: SweepResult) -> pl.DataFrame:
    """One row per run: the Reno flow's and the other flow's throughput (Mb/s)."""
    f = res.flows().with_columns((pl.col("throughput_bps") / 1e6).alias("mbps"))
    return (
        f.group_by("point", "capacity", "loss", "other", "seed")
        .agg(
            pl.col("mbps").filter(pl.col("id") == 0).first().alias("reno"),
            pl.col("mbps").filter(pl.col("id") == 1).first().alias("peer"),
        )
        .sort("capacity", "loss", "other", "seed")
    )
