"""What an experiment of the reproduction suite is, and running a set of them.

An :class:`Experiment` names a figure or table of a paper and says how to reproduce it:
the sweep points (scenario documents) for a mode (quick or full), an analysis that turns the
runs into a polars frame, plots in the paper's form, the published values next to the
measured ones, the paper's claims as predicates, and the explanation of every known gap.
Its ``readings`` (:mod:`tcplab.reproduce.readings`) are the other settings the paper allows
for what it leaves open; its claims are judged under each of them too.

An experiment marked live (``Experiment.live``, a :class:`Live`) also runs points on real
packets: one at a time through :func:`tcplab.live.run.run_live` (root or user namespaces),
stored whole under ``<out>/live/points/<key>/`` (a point already stored is reused), next to
its simulated points in the shared sweep. Its ``analyze`` gets a :class:`LiveSweepResult`
(the simulated points, with ``live``: the live ones). When live runs cannot be made here it
is reported as not run, with the one-line reason; ``all`` never selects it.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import polars as pl
from matplotlib.figure import Figure

from tcplab.reproduce.readings import Reading, ReadingOutcome, headline
from tcplab.reproduce.verdict import FAILS, HOLDS, INCONCLUSIVE, VERDICTS, ClaimResult, Estimate, Test, combine
from tcplab.sweep import Point, SweepResult, run_sweep

Mode = Literal["quick", "full"]


Check = Callable[[pl.DataFrame], "Test | list[Test]"]


@dataclass(frozen=True)
class Claim:
    """A statement of the paper, tested on the analysis frame.

    ``quote``: the paper's exact words; ``section``: where (section, figure, table);
    ``published``: the paper's value; ``text``: the statement as tcplab tests it;
    ``threshold``: how the words became a bound and why (from the paper's own numbers);
    ``weakened``: empty, or why the tested statement is deliberately weaker than the quote.
    ``check(frame)`` returns one :class:`~tcplab.reproduce.verdict.Test` or several (all must
    hold); the headline measured value is the first test that decides the verdict."""

    text: str
    check: Check
    published: str = ""
    quote: str = ""
    section: str = ""
    threshold: str = ""
    weakened: str = ""

    def evaluate(self, frame: pl.DataFrame) -> ClaimResult:
        meta = dict(published=self.published, quote=self.quote, section=self.section, threshold=self.threshold, weakened=self.weakened)
        try:
            out = self.check(frame)
        except Exception as e:  # a claim whose data is missing cannot be decided
            return ClaimResult(self.text, INCONCLUSIVE, f"could not be evaluated: {type(e).__name__}: {e}", **meta)
        tests = [out] if isinstance(out, Test) else list(out)
        verdict = combine(t.verdict for t in tests)
        # the headline: the first test that decides the verdict (a failing one, else an
        # inconclusive one, else the first)
        head = next((t for t in tests if t.verdict == verdict), tests[0]) if tests else None
        return ClaimResult(
            self.text,
            verdict,
            "; ".join(t.outcome() for t in tests),
            estimate=head.estimate if head else None,
            estimate_label=head.label if head and len(tests) > 1 else "",
            samples_to_decide=head.samples_to_decide() if head else None,
            **meta,
        )


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
    #: an asymmetric interval (e.g. a bootstrap's) instead of ± ci
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, quantity: str, published: str, est: Estimate, unit: str = "") -> Row:
        """A row from an :class:`Estimate` (its interval as printed)."""
        ok = math.isfinite(est.low) and math.isfinite(est.high)
        val = est.value if math.isfinite(est.value) else None
        return cls(quantity, published, val, None, unit, est.n, est.low if ok else None, est.high if ok else None)

    def measured(self, digits: int = 3) -> str:
        if self.mean is None:
            return "—"
        m = f"{self.mean:.{digits}g}"
        if self.low is not None and self.high is not None:
            return f"{m} [{self.low:.{digits}g}, {self.high:.{digits}g}] (n={self.n})"
        if self.ci is None:
            return f"{m} (n={self.n})" if self.n else m
        return f"{m} ± {self.ci:.2g} (n={self.n})"


@dataclass(frozen=True)
class Plot:
    figure: Figure
    caption: str
    alt: str


@dataclass(frozen=True)
class Sensitivity:
    """The headline numbers over a small grid of the stack choices a reader will question:
    ``points(mode)`` (runs of their own; those equal to the main runs are shared through the
    store), ``table(result, mode)`` rows (``quantity`` names the setting, ``published`` marks
    the headline setting), ``note`` what is varied and why."""

    points: Callable[[Mode], list[Point]]
    table: Callable[[SweepResult, Mode], list[Row]]
    note: str


@dataclass(frozen=True)
class Live:
    """The live half of an experiment: ``points(mode)`` run on real packets, one at a time
    (:func:`run_live_points`), stored under ``<out>/live``; ``note`` says what runs live;
    ``realtime`` asks SCHED_FIFO for the emulator and tcplab's endpoints (docs/live.md: on a
    loaded machine they wake up milliseconds late without it)."""

    points: Callable[[Mode], list[Point]]
    note: str = ""
    realtime: bool = True


@dataclass
class LiveSweepResult(SweepResult):
    """A live experiment's simulated points (this result) and its live points (``live``,
    stored under ``<out>/live``)."""

    live: SweepResult | None = None


#: where a live experiment's runs are stored, under the suite's ``out``
LIVE_STORE = "live"


@dataclass(frozen=True)
class Experiment:
    """One figure or table of a paper.

    ``points(mode)``: the runs; ``analyze(result, mode)``: a polars frame; ``plots(frame,
    result, mode)``: figures with captions; ``table(frame)``: published vs measured rows;
    ``claims``: predicates on the frame; ``setting`` and ``explanation``: Markdown text for the
    report and docs/reproductions.md (the explanation says why tcplab's numbers differ from
    the paper's; a function of the frame when it quotes measured numbers, so that the text
    says what the table beside it shows: :meth:`explain`). ``reading``: the main runs' setting of what
    ``readings`` vary (and where it comes from); ``readings``: the other settings the paper
    allows, each judged on the same points and seeds.
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
    explanation: str | Callable[[pl.DataFrame], str] = ""
    seeds: dict[str, int] = field(default_factory=lambda: {"quick": 3, "full": 10})
    sensitivity: Sensitivity | None = None
    live: Live | None = None
    reading: str = ""
    readings: tuple[Reading, ...] = ()

    def explain(self, frame: pl.DataFrame | None) -> str:
        """The explanation, its measured numbers taken from `frame` (the outcome's analysis);
        without a frame (an experiment that did not run) a function gives nothing."""
        if callable(self.explanation):
            return self.explanation(frame) if frame is not None and frame.height else ""
        return self.explanation

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
    sensitivity: list[Row] = field(default_factory=list)
    #: the claims under each of the experiment's readings
    readings: list[ReadingOutcome] = field(default_factory=list)

    def headlines(self) -> list[dict[str, Any]]:
        """Per claim, its headline over the main setting and the readings
        (:func:`tcplab.reproduce.readings.headline`)."""
        return [headline(c, self.experiment.reading, self.readings, i) for i, c in enumerate(self.claims)]


@dataclass
class Suite:
    outcomes: list[Outcome]
    mode: Mode
    started_at: datetime
    wall_time_s: float
    out: Path
    computed: int = 0
    cached: int = 0
    #: of ``cached``: runs taken over from another build's store (``adopt_from``)
    adopted: int = 0
    #: live runs made now and reused from ``<out>/live`` (experiments marked live)
    live_computed: int = 0
    live_cached: int = 0

    def tally(self) -> str:
        """The verdicts counted in one sentence: the headlines (and how many hold only under a
        reading), then the main runs alone."""
        heads = [h for o in self.outcomes for h in o.headlines()]
        count = {v: sum(h["verdict"] == v for h in heads) for v in VERDICTS}
        other = sum(h["verdict"] == HOLDS and not h["main"] for h in heads)
        main = {v: sum(c.verdict == v for o in self.outcomes for c in o.claims) for v in VERDICTS}
        return (f"Of {len(heads)} claims, {count[HOLDS]} hold ({other} of them under a reading other than the main "
                f"runs'), {count[FAILS]} do not hold, {count[INCONCLUSIVE]} are inconclusive; under the main runs "
                f"alone {main[HOLDS]} hold, {main[FAILS]} do not, {main[INCONCLUSIVE]} are inconclusive")

    def reading_counts(self) -> list[tuple[str, str, dict[str, int]]]:
        """Per experiment with readings and per setting (the main runs first, then each reading
        by its label): how many of the experiment's claims get each verdict under it (a
        reading whose runs failed counts its claims inconclusive)."""
        rows = []
        for o in self.outcomes:
            if not o.readings:
                continue
            rows.append((o.experiment.id, "main runs", {v: sum(c.verdict == v for c in o.claims) for v in VERDICTS}))
            for r in o.readings:
                verdicts = [c.verdict for c in r.claims] if r.error is None else [INCONCLUSIVE] * len(o.claims)
                rows.append((o.experiment.id, r.reading.label, {v: verdicts.count(v) for v in VERDICTS}))
        return rows


def run_suite(
    experiments: list[Experiment],
    *,
    mode: Mode = "quick",
    out: str | Path = "results/reproduce",
    jobs: int | None = None,
    scheduler: str | Any | None = None,
    progress: bool | Any = True,
    adopt_from: str | Path | None = None,
    readings: bool | None = None,
) -> Suite:
    """Runs the points of every experiment as one sweep (shared store under ``out``; points
    already stored are reused), then analyzes, plots and checks each experiment.
    ``readings``: run the experiments' readings too (default: in full mode only; with them
    the quick suite took 25 min on 2 cores against 8.5 without)."""
    with_readings = mode == "full" if readings is None else readings
    started = datetime.now(UTC)
    t0 = time.perf_counter()
    out = Path(out)
    runnable = list(experiments)
    # an experiment marked live that cannot run live here is not run at all (one line why)
    not_run: dict[str, str] = {}
    live_pts: dict[str, list[Point]] = {}
    for e in runnable:
        if e.live is not None:
            live_pts[e.id] = e.live.points(mode)
            if reason := live_refusal(live_pts[e.id]):
                not_run[e.id] = reason
    runnable_now = [e for e in runnable if e.id not in not_run]
    per_exp: dict[str, list[Point]] = {e.id: e.points(mode) for e in runnable_now}
    per_sens: dict[str, list[Point]] = {e.id: e.sensitivity.points(mode) for e in runnable_now if e.sensitivity}
    per_read: dict[str, list[tuple[Reading, list[Point]]]] = {
        e.id: [(r, r.points(per_exp[e.id])) for r in e.readings] for e in runnable_now
        if e.live is None and with_readings}
    seen: dict[str, Point] = {}
    for pts in [*per_exp.values(), *per_sens.values(), *(p for rs in per_read.values() for _, p in rs)]:
        for p in pts:
            seen.setdefault(p.key, p)
    res = run_sweep(
        list(seen.values()), out, jobs=jobs, scheduler=scheduler, progress=progress, label=f"reproduce ({mode})", adopt_from=adopt_from
    )
    live_res: dict[str, SweepResult] = {}
    for e in runnable_now:
        if e.id in live_pts:
            try:
                live_res[e.id] = run_live_points(live_pts[e.id], out / LIVE_STORE, progress=progress,
                                                 label=f"{e.id} live ({mode})", realtime=e.live is not None and e.live.realtime)
            except RuntimeError as err:  # LiveError: one line; the points stored so far stay
                not_run[e.id] = f"a live run failed: {err}"
    outcomes = []
    for e in runnable:
        if e.id in not_run:
            outcomes.append(Outcome(e, mode, pl.DataFrame(), [], [], [], runs=0, error=f"not run: {not_run[e.id]}"))
            continue
        sub: SweepResult = SweepResult(out=out, points=per_exp[e.id])
        if e.id in live_res:
            sub = LiveSweepResult(out=out, points=per_exp[e.id], live=live_res[e.id])
        sens = SweepResult(out=out, points=per_sens[e.id]) if e.id in per_sens else None
        o = _outcome(e, sub, mode, sens)
        o.readings = [_under(e, r, SweepResult(out=out, points=pts), mode) for r, pts in per_read.get(e.id, [])]
        outcomes.append(o)
    return Suite(
        outcomes=outcomes,
        mode=mode,
        started_at=started,
        wall_time_s=time.perf_counter() - t0,
        out=out,
        computed=len(res.computed),
        cached=len(res.cached),
        adopted=len(res.adopted),
        live_computed=sum(len(r.computed) for r in live_res.values()),
        live_cached=sum(len(r.cached) for r in live_res.values()),
    )


def live_refusal(points: list[Point]) -> str | None:
    """Why these points cannot run live here (one line: no root or namespaces, a flow the
    live run refuses), or None. Checked on every distinct scenario before any runs."""
    from tcplab.live.run import refusal
    from tcplab.scenario import Scenario

    for p in points:
        if reason := refusal(Scenario.from_dict(p.document).canonical()):
            return reason
    return None


def run_live_points(points: list[Point], store: str | Path, *, progress: bool | Any = True, label: str = "live",
                    realtime: bool = False) -> SweepResult:
    """Runs each point not yet stored under ``store`` live, one at a time (real time: never
    in parallel), through :func:`tcplab.live.run.run_live`: the sweep engine's store, resume
    and progress (:func:`tcplab.sweep.run_sweep` in this process) with a live point function.
    ``realtime``: as ``run_live``'s. Raises ``LiveError`` (one line) when a run fails."""
    return run_sweep(points, store, jobs=1, progress=progress, label=label, unit="live runs",
                     point_fn=functools.partial(_live_point, realtime=realtime))


def _live_point(document: dict[str, Any], target: str, *, realtime: bool) -> None:
    """One live point stored at ``target``, written whole by the results writer."""
    from tcplab.live.run import run_live

    run_live(document, target, report=False, realtime=realtime)


def _under(e: Experiment, r: Reading, res: SweepResult, mode: Mode) -> ReadingOutcome:
    """The claims of `e` under reading `r` (its runs `res`, analyzed by the reading's own
    analysis where it has one); a failed analysis in one line."""
    analyze = r.analyze or e.analyze
    assert analyze is not None
    try:
        frame = analyze(res, mode)
    except Exception as err:  # noqa: BLE001 (an analysis that cannot read a reading's runs)
        return ReadingOutcome(r, [], f"{type(err).__name__}: {err}")
    return ReadingOutcome(r, [c.evaluate(frame) for c in e.claims])


def _outcome(e: Experiment, res: SweepResult, mode: Mode, sens: SweepResult | None = None) -> Outcome:
    assert e.analyze is not None
    frame = e.analyze(res, mode)
    plots = e.plots(frame, res, mode) if e.plots else []
    rows = e.table(frame) if e.table else []
    claims = [c.evaluate(frame) for c in e.claims]
    srows = e.sensitivity.table(sens, mode) if e.sensitivity and sens is not None else []
    runs = len({p.key for p in [*res.points, *(sens.points if sens is not None else [])]})
    return Outcome(e, mode, frame, plots, rows, claims, runs=runs, sensitivity=srows)
