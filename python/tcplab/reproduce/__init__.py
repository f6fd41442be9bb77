"""``tcplab reproduce``: the papers' figures and tables as experiments (docs/reproductions.md).

    from tcplab import reproduce
    suite = reproduce.run_suite(reproduce.select(["veno-fig5"]), mode="quick", out="results/repro")
    reproduce.write_report(suite, "results/repro/report.html")

One module per paper (some split in two); each exports ``EXPERIMENTS``. Claims quote the
papers and are decided three-valued from 95% intervals over seeds (:mod:`tcplab.reproduce.verdict`);
``write_report`` also writes ``summary.json``, the claims in machine-readable form. Experiments whose feature is not built
yet are listed in :mod:`tcplab.reproduce.pending`.
"""

from __future__ import annotations

from tcplab.reproduce import areno, areno_fig8, areno_lab, eth, pending, veno, veno_cwnd, venoplus, wlan, wlan_red
from tcplab.reproduce.docs import write_docs
from tcplab.reproduce.experiment import Claim, Experiment, Outcome, Row, Suite, run_suite
from tcplab.report.reproduce import render_report, write_report

__all__ = [
    "ALL",
    "Claim",
    "Experiment",
    "Outcome",
    "Row",
    "Suite",
    "get",
    "list_table",
    "render_report",
    "run_suite",
    "select",
    "write_docs",
    "write_report",
]

#: Every experiment, runnable ones first, in the order of DIGEST.md.
ALL: list[Experiment] = [
    *veno_cwnd.EXPERIMENTS,
    *veno.EXPERIMENTS,
    *wlan.EXPERIMENTS,
    *wlan_red.EXPERIMENTS,
    *eth.EXPERIMENTS,
    *areno.EXPERIMENTS,
    *areno_fig8.EXPERIMENTS,
    *areno_lab.EXPERIMENTS,
    *venoplus.EXPERIMENTS,
    *pending.EXPERIMENTS,
]


def get(id: str) -> Experiment:
    for e in ALL:
        if e.id == id:
            return e
    raise KeyError(f"unknown experiment {id!r} (known: {', '.join(e.id for e in ALL)})")


def select(ids: list[str]) -> list[Experiment]:
    """The experiments named (``all``: every runnable one). Pending ones cannot be selected."""
    if not ids or "all" in ids:
        return [e for e in ALL if e.pending is None]
    out = []
    for i in ids:
        e = get(i)
        if e.pending is not None:
            raise KeyError(f"experiment {i!r} is pending: needs {e.pending}")
        out.append(e)
    return out


def list_table():
    from rich.table import Table

    t = Table(title="tcplab reproduce: experiments")
    for col in ("id", "paper", "figure/table", "title", "status"):
        t.add_column(col)
    for e in ALL:
        status = (
            f"pending: needs {e.pending}"
            if e.pending
            else f"ready; {len(e.claims)} claims; seeds quick {e.seeds['quick']}, full {e.seeds['full']}"
        )
        t.add_row(e.id, e.paper, e.reference, e.title, status)
    return t
