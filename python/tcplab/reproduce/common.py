"""Helpers shared by the experiment modules: scenario documents, points, statistics rows,
figures."""

from __future__ import annotations

from functools import lru_cache
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tcplab.aggregate import mean_ci
from tcplab.reproduce.experiment import Row
from tcplab.sweep import Point, expand

#: The Veno paper's stack (NetBSD 1.1): MSS 1460, no SACK, growth per ACK; delayed ACKs and
#: a 1 s minimum RTO are tcplab's defaults.
# The BSD senders of the Veno and WLAN papers (NetBSD 1.1, FreeBSD 4.3): per-ACK growth, no
# SACK, and ssthresh recomputed at every timer expiry (4.4BSD tcp_timer.c; docs/tcp.md).
NETBSD_TCP = {"profile": "rfc", "mss": 1460, "sack_blocks": 0, "growth": "per_ack", "repeated_rto": "bsd"}

#: Veno as Linux's tcp_veno.c does it (BaseRTT never reset, the latest RTT sample).
VENO_LINUX = {"name": "veno", "flavor": "linux"}


def shipped_doc(name: str) -> dict[str, Any]:
    """The shipped scenario ``scenarios/<name>.toml`` as a document: a paper setting's one
    definition, which an experiment copies and varies (its grid, flows, seeds, trace)."""
    from tcplab.shipped import shipped_dir
    from tcplab.toml_file import read_toml

    doc, _ = read_toml(shipped_dir() / f"{name}.toml")
    return doc


def with_kbps(df: pl.DataFrame) -> pl.DataFrame:
    """Adds ``kBps``: throughput in kB/s (kB = 1000 bytes), the Veno paper's unit."""
    return df.with_columns((pl.col("throughput_bps") / 8000).alias("kBps"))


def bulk_flows(controllers: Sequence[Any], recovery: str, *, bytes: str | None = None, gap_ms: int = 10) -> list:
    """One bulk flow per controller, started ``gap_ms`` apart."""
    flows = []
    for i, cc in enumerate(controllers):
        f: dict[str, Any] = {"controller": cc, "recovery": recovery}
        if bytes is not None:
            f["bytes"] = bytes
        if i:
            f["start"] = f"{i * gap_ms}ms"
        flows.append(f)
    return flows


def points(
    base: dict[str, Any], seeds: int, grid: dict[str, list] | None = None, params: dict[str, Any] | None = None
) -> list[Point]:
    """The points of ``base`` over ``grid`` and seeds 1..``seeds``."""
    return expand(base, {"grid": grid or {}, "seeds": seeds}, params=params)


def stats(frame: pl.DataFrame, value: str, by: Sequence[str]) -> pl.DataFrame:
    """Mean, std and 95% CI of ``value`` over the rows (one per seed) of each ``by`` group."""
    return mean_ci(frame, value, by)


def row(
    st: pl.DataFrame, quantity: str, published: str, unit: str = "", scale: float = 1.0, **where: Any
) -> Row:
    """A table row from a :func:`stats` frame, selecting the group by ``where``."""
    sel = st
    for k, v in where.items():
        sel = sel.filter(pl.col(k) == v)
    if sel.height == 0:
        return Row(quantity, published, None, None, unit)
    r = sel.row(0, named=True)
    ci = r["ci"] * scale if r["ci"] is not None else None
    return Row(quantity, published, r["mean"] * scale, ci, unit, int(r["n"]))


def value(st: pl.DataFrame, col: str = "mean", **where: Any) -> float:
    """One number of a frame, selected by ``where``; KeyError if there is no such row."""
    sel = st
    for k, v in where.items():
        sel = sel.filter(pl.col(k) == v)
    if sel.height == 0:
        raise KeyError(f"no data for {where}")
    return float(sel[col][0])


def figure(rows: int = 1, cols: int = 1, width: float = 9.0, height: float = 4.0) -> tuple[Figure, Any]:
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, cols, squeeze=False)
    fig.subplots_adjust(left=0.09, right=0.98, top=0.9, bottom=0.14, wspace=0.28, hspace=0.45)
    return fig, axes



def lossfmt(p: float) -> str:
    """A loss rate as the papers write it: 0, 1e-4, 2.5e-3, 0.1."""
    if p == 0 or p >= 0.1:
        return f"{p:g}"
    m, e = f"{p:.3e}".split("e")
    m = m.rstrip("0").rstrip(".")
    return f"{m}e{int(e)}"


def seeds_text(n: int) -> str:
    return f"{n} seed{'s' if n != 1 else ''}"


def seed_values(frame: pl.DataFrame, col: str, **where: Any) -> np.ndarray:
    """The per-seed values of ``col`` in the rows selected by ``where`` (one row per seed),
    in seed order; KeyError if there is no such row."""
    sel = frame
    for k, v in where.items():
        sel = sel.filter(pl.col(k) == v)
    if sel.height == 0:
        raise KeyError(f"no data for {where}")
    if "seed" in sel.columns:
        sel = sel.sort("seed")
    return sel[col].cast(pl.Float64).to_numpy()


# ---- AReno's two readings of W_inc (and its RTT_cong update) -------------------------------
#: The controller parameters that select the readings, in one place (the core's names may
#: still change): ``w_inc`` = "printed" (the paper's formula as printed) or "prose" (as its
#: text describes it); ``rtt_cong_update`` = "every_loss" or "congestive".
ARENO_W_INC = "w_inc"
ARENO_READINGS = ("printed", "prose")
#: The reading the claims are checked on; the other is reported in the sensitivity table.
ARENO_HEADLINE = "printed"


def areno_controller(reading: str | None) -> Any:
    """AReno's controller entry for a W_inc reading (None: the core's default, no parameter)."""
    if reading is None:
        return "areno"
    return {"name": "areno", ARENO_W_INC: reading}


@lru_cache(maxsize=1)
def areno_readings_supported() -> bool:
    """Whether this build's AReno takes the W_inc reading parameter (built before the core
    change it does not; then the experiments run the default reading only and say so)."""
    import json

    from tcplab import _native
    from tcplab.scenario import Scenario

    doc = {
        "name": "probe",
        "duration": "1s",
        "topology": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 10}},
        "flows": [{"controller": areno_controller(ARENO_HEADLINE), "recovery": "sack"}],
    }
    try:
        _native.Simulation(json.dumps(Scenario.from_dict(doc).canonical()))
    except Exception:
        return False
    return True


def areno_reading_list() -> list[str | None]:
    """The readings the AReno experiments run: both when the build supports them, else the
    default only (None)."""
    return list(ARENO_READINGS) if areno_readings_supported() else [None]


def headline_reading() -> str | None:
    return ARENO_HEADLINE if areno_readings_supported() else None
