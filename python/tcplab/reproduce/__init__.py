"""``tcplab reproduce``: the papers' figures and tables as experiments (docs/reproductions.md).

    from tcplab import reproduce
    suite = reproduce.run_suite(reproduce.select(["veno-fig5"]), mode="quick", out="results/repro")
    reproduce.write_report(suite, "results/repro/report.html")

One module per paper (some split in two); each exports ``EXPERIMENTS``. Claims quote the
papers and are decided three-valued from 95% intervals over seeds (:mod:`tcplab.reproduce.verdict`);
``write_report`` also writes ``summary.json``, the claims in machine-readable form. Experiments marked live (``Experiment.live``:
they run points on real packets, root or user namespaces, in real time) run only when named:
``all`` leaves them out.
"""

from __future__ import annotations

from tcplab.reproduce import areno, areno_fig8, areno_lab, eth, veno, veno_cwnd, veno_live, venoplus, wlan, wlan_red
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
    *veno_live.EXPERIMENTS,
]


def get(id: str) -> Experiment:
    for e in ALL:
        if e.id == id:
            return e
    raise KeyError(f"unknown experiment {id!r} (known: {', '.join(e.id for e in ALL)})")


def select(ids: list[str]) -> list[Experiment]:
    """The experiments named (``all``: every runnable one that is not marked live; a live one
    runs only when named, with ``all`` or alone)."""
    out = [e for e in ALL if e.live is None] if not ids or "all" in ids else []
    for i in ids or []:
        if i == "all":
            continue
        e = get(i)
        if e in out:
            continue
        out.append(e)
    return out


def list_table():
    from rich.table import Table

    t = Table(title="tcplab reproduce: experiments")
    for col in ("id", "paper", "figure/table", "title", "status"):
        t.add_column(col)
    for e in ALL:
        status = f"ready; {len(e.claims)} claims; seeds quick {e.seeds['quick']}, full {e.seeds['full']}"
        if e.live is not None:
            status = f"LIVE (root; runs only when named, not with 'all'); {status}"
        t.add_row(e.id, e.paper, e.reference, e.title, status)
    return t
