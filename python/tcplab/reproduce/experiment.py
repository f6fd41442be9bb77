"""What an experiment of the reproduction suite is, and running a set of them.

An :class:`Experiment` names a figure or table of a paper and says how to reproduce it:
the sweep points (scenario documents) for a mode (quick or full), an analysis that turns the
runs into a polars frame, plots in the paper's form, the published values next to the
measured ones, the paper's claims as predicates, and the explanation of every known gap.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl
from matplotlib.figure import Figure

from tcplab.sweep import Point, SweepResult, run_sweep

Mode = Literal["quick", "full"]


@dataclass(frozen=True)
class ClaimResult:
    """A claim checked on the measured data."""

    text: str
    holds: bool
    numbers: str
    published: str = ""


@dataclass(frozen=True)
class Claim:
    """A qualitative statement of the paper as a predicate on the analysis frame:
    ``check(frame) -> (holds, numbers)``; ``numbers`` says what was measured."""

    text: str
    check: Callable[[pl.DataFrame], tuple[bool, str]]
    published: str = ""

    def evaluate(self, frame: pl.DataFrame) -> ClaimResult:
        try:
            holds, numbers = self.check(frame)
        except Exception as e:  # a claim whose data is missing does not hold
            holds, numbers = False, f"could not be evaluated: {type(e).__name__}: {e}"
        return ClaimResult(self.text, bool(holds), numbers, self.published)


@dataclass(frozen=True)
class Row:
    """One line of the published-vs-measured table: ``measured`` is a mean with its 95% CI
    half-width over seeds (``ci`` None when there is one seed) in ``unit``."""

    quantity: str
    published: str
    mean: float | None
    ci: float | None
    unit: str = ""
    n: int = 0

    def measured(self, digits: int = 3) -> str:
        if self.mean is None:
            return "—"
        m = f"{self.mean:.{digits}g}"
        if self.ci is None:
            return f"{m} (n={self.n})" if self.n else m
        return f"{m} ± {self.ci:.2g} (n={self.n})"


@dataclass(frozen=True)
class Plot:
    figure: Figure
    caption: str
    alt: str


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper.

    ``points(mode)``: the runs; ``analyze(result, mode)``: a polars frame; ``plots(frame,
    result, mode)``: figures with captions; ``table(frame)``: published vs measured rows;
    ``claims``: predicates on the frame; ``setting`` and ``explanation``: Markdown text for the
    report and docs/reproductions.md (the explanation says why tcplab's numbers differ from
    the paper's). ``pending``: the feature the experiment still needs (then it cannot run).
    """

    id: str
    title: str
    paper: str
    reference: str
    points: Callable[[Mode], list[Point]] | None = None
    analyze: Callable[[SweepResult, Mode], pl.DataFrame] | None = None
    plots: Callable[[pl.DataFrame, SweepResult, Mode], list[Plot]] | None = None
    table: Callable[[pl.DataFrame], list[Row]] | None = None
    claims: tuple[Claim, ...] = ()
    setting: str = ""
    explanation: str = ""
    seeds: dict[str, int] = field(default_factory=lambda: {"quick": 3, "full": 10})
    pending: str | None = None

    def command(self, mode: Mode) -> str:
        return f"tcplab reproduce {self.id}" + (" --full" if mode == "full" else " --quick")


@dataclass
class Outcome:
    """An experiment after it ran: frame, plots, table rows, claim results."""

    experiment: Experiment
    mode: Mode
    frame: pl.DataFrame
    plots: list[Plot]
    rows: list[Row]
    claims: list[ClaimResult]
    runs: int
    error: str | None = None


@dataclass
class Suite:
    outcomes: list[Outcome]
    mode: Mode
    started_at: datetime
    wall_time_s: float
    out: Path
    computed: int = 0
    cached: int = 0


def run_suite(
    experiments: list[Experiment],
    *,
    mode: Mode = "quick",
    out: str | Path = "results/reproduce",
    jobs: int | None = None,
    scheduler: str | Any | None = None,
    progress: bool | Any = True,
) -> Suite:
    """Runs the points of every experiment as one sweep (shared store under ``out``; points
    already stored are reused), then analyzes, plots and checks each experiment."""
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    out = Path(out)
    runnable = [e for e in experiments if e.pending is None]
    per_exp: dict[str, list[Point]] = {e.id: e.points(mode) for e in runnable}
    seen: dict[str, Point] = {}
    for pts in per_exp.values():
        for p in pts:
            seen.setdefault(p.key, p)
    res = run_sweep(list(seen.values()), out, jobs=jobs, scheduler=scheduler, progress=progress, label=f"reproduce ({mode})")
    outcomes = []
    for e in runnable:
        sub = SweepResult(out=out, points=per_exp[e.id])
        outcomes.append(_outcome(e, sub, mode))
    return Suite(
        outcomes=outcomes,
        mode=mode,
        started_at=started,
        wall_time_s=time.perf_counter() - t0,
        out=out,
        computed=len(res.computed),
        cached=len(res.cached),
    )


def _outcome(e: Experiment, res: SweepResult, mode: Mode) -> Outcome:
    assert e.analyze is not None
    frame = e.analyze(res, mode)
    plots = e.plots(frame, res, mode) if e.plots else []
    rows = e.table(frame) if e.table else []
    claims = [c.evaluate(frame) for c in e.claims]
    return Outcome(e, mode, frame, plots, rows, claims, runs=len(res.points))
