"""Comparing one scenario's runs across modes (simulated, live, Linux flows) over seeds:
per flow and per mode the mean and seed-to-seed spread of each compared quantity, and per
pair of modes a verdict: does the difference lie beyond the seed-to-seed spread?
(docs/compare.md states the spread and the rule; this module implements them once.)

- :func:`load_run` reads a results directory (``summary.json`` and the tables the
  comparison needs) into a :class:`RunDir`, which has the attributes the report's plot
  helpers read (``canonical``, ``series``, ``stats``...).
- :func:`spread` is one quantity's mean over seeds with its 95 % Student-t interval and
  its min–max; :func:`beyond_spread` is the rule (Welch's two-sample t test at 95 %).
- :func:`compare_runs` builds the :class:`Comparison` of named modes, each a list of
  results directories (one per seed); :meth:`Comparison.document` is ``compare.json``.
- The page (overlays over time, the verdict table) is :mod:`tcplab.report.compare_page`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from tcplab.aggregate import t_quantile

__all__ = [
    "COMPARE_SCHEMA",
    "CONFIDENCE",
    "METRICS",
    "VERDICTS",
    "BEYOND",
    "WITHIN",
    "UNDECIDED",
    "Comparison",
    "Metric",
    "RunDir",
    "Spread",
    "Verdict",
    "beyond_spread",
    "compare_runs",
    "load_run",
    "spread",
]

#: Version of compare.json's layout; bump when keys change meaning.
COMPARE_SCHEMA = 1

#: The confidence of the per-mode intervals and of the rule.
CONFIDENCE = 0.95

BEYOND = "beyond spread"
WITHIN = "within spread"
UNDECIDED = "undecided"
#: The verdicts of one quantity of one flow between two modes.
VERDICTS = (BEYOND, WITHIN, UNDECIDED)


# ---- reading a results directory ---------------------------------------------------------------


@dataclass
class RunDir:
    """One results directory (a seed of a mode), read lazily: ``summary`` (summary.json),
    ``canonical`` (the scenario the run ran), and the tables as polars frames."""

    path: Path
    summary: dict[str, Any]

    @property
    def canonical(self) -> dict[str, Any]:
        return self.summary["scenario"]["canonical"]

    @property
    def seed(self) -> int:
        return int(self.summary["seed"])

    @property
    def stats(self) -> dict[str, Any]:
        return self.summary.get("stats") or {}

    @property
    def flows_summary(self) -> list[dict[str, Any]]:
        return list(self.summary.get("flows") or [])

    def table(self, name: str) -> pl.DataFrame:
        """Table ``name`` (empty frame when the directory has none)."""
        entry = (self.summary.get("tables") or {}).get(name) or {}
        path = self.path / entry.get("file", f"{name}.parquet")
        if not path.exists():
            return pl.DataFrame()
        return pl.read_csv(path) if path.suffix == ".csv" else pl.read_parquet(path)

    @cached_property
    def series(self) -> pl.DataFrame:
        return self.table("series")

    @cached_property
    def delay_histogram(self) -> pl.DataFrame:
        return self.table("delay_histogram")


def load_run(path: str | Path) -> RunDir:
    """The results directory at ``path`` (written by ``tcplab run`` or a live run)."""
    p = Path(path)
    return RunDir(p, json.loads((p / "summary.json").read_text(encoding="utf-8")))


# ---- the compared quantities ---------------------------------------------------------------


def _flow_value(key: str, scale: float = 1.0) -> Callable[[RunDir, int], float | None]:
    def get(run: RunDir, flow: int) -> float | None:
        rows = run.flows_summary
        v = rows[flow].get(key) if flow < len(rows) else None
        return None if v is None else float(v) * scale

    return get


def _delay_value(key: str, scale: float = 1.0) -> Callable[[RunDir, int], float | None]:
    def get(run: RunDir, flow: int) -> float | None:
        for row in run.summary.get("delay") or []:
            if row.get("flow_kind") == "tcp" and row.get("flow") == flow:
                v = row.get(key)
                return None if v is None else float(v) * scale
        return None

    return get


@dataclass(frozen=True)
class Metric:
    """A per-flow quantity compared across modes: ``key`` (compare.json's), a label, its
    unit and how to read it from one run."""

    key: str
    label: str
    unit: str
    read: Callable[[RunDir, int], float | None] = field(repr=False, compare=False)


#: What is compared per flow (from summary.json's ``flows`` and ``delay``).
METRICS = (
    Metric("throughput_mbps", "throughput", "Mb/s", _flow_value("throughput_bps", 1e-6)),
    Metric("retransmits", "retransmissions", "segments", _flow_value("retransmits")),
    Metric("timeouts", "timeouts", "count", _flow_value("timeouts")),
    Metric("mean_rtt_ms", "mean RTT", "ms", _flow_value("mean_rtt_ns", 1e-6)),
    Metric("delay_mean_ms", "mean one-way delay", "ms", _delay_value("delay_mean_ns", 1e-6)),
)


# ---- spread and the rule ---------------------------------------------------------------------


@dataclass(frozen=True)
class Spread:
    """One quantity over the seeds of one mode: ``n`` seeds with a value, their ``mean``,
    sample standard deviation ``sd`` (ddof 1; None below 2 seeds), the 95 % Student-t
    interval of the mean [``ci_low``, ``ci_high``] (None below 2 seeds; for a quantity whose
    values are all >= 0, its part below 0 is cut off: the mean cannot be there, and the
    interval keeps its coverage), ``min``, ``max`` and the ``values`` in seed order."""

    n: int
    mean: float | None
    sd: float | None
    ci_low: float | None
    ci_high: float | None
    min: float | None
    max: float | None
    values: tuple[float, ...]

    def as_dict(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "mean": self.mean,
            "sd": self.sd,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "min": self.min,
            "max": self.max,
            "values": list(self.values),
        }


def spread(values: Sequence[float | None], confidence: float = CONFIDENCE) -> Spread:
    """The mean of the per-seed ``values`` (None and non-finite ones left out) with its
    Student-t interval (n - 1 degrees of freedom) and the min–max."""
    x = np.array([float(v) for v in values if v is not None and math.isfinite(float(v))], dtype=float)
    n = int(x.size)
    if n == 0:
        return Spread(0, None, None, None, None, None, None, ())
    mean = float(x.mean())
    sd = lo = hi = None
    if n >= 2:
        sd = float(x.std(ddof=1))
        half = t_quantile(confidence, n - 1) * sd / math.sqrt(n)
        lo, hi = mean - half, mean + half
        if float(x.min()) >= 0:
            lo = max(lo, 0.0)  # a throughput, a count, a time: never below 0
    return Spread(n, mean, sd, lo, hi, float(x.min()), float(x.max()), tuple(float(v) for v in x))


@dataclass(frozen=True)
class Verdict:
    """One quantity of one flow, mode ``b`` against mode ``a``: the difference of the means
    (b - a), its relative size (to a's mean; None when that is 0), the half-width of the
    difference's interval (Welch), its degrees of freedom and the verdict."""

    flow: int
    name: str
    metric: str
    a: str
    b: str
    diff: float | None
    rel_diff: float | None
    half_width: float | None
    df: int | None
    verdict: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def beyond_spread(a: Spread, b: Spread, confidence: float = CONFIDENCE) -> tuple[str, float | None, int | None]:
    """The rule (docs/compare.md, "The rule"): (verdict, half-width, degrees of freedom).

    Undecided when either mode has fewer than 2 seeds with a value. Otherwise Welch's
    two-sample t test: the difference of the means is beyond the seed-to-seed spread when
    |mean_b - mean_a| > t(confidence, ⌊ν⌋) · √(sd_a²/n_a + sd_b²/n_b), ν the
    Welch–Satterthwaite degrees of freedom rounded down (at least 1). When both modes
    gave the same value at every seed (both sd 0) the interval is a point: any difference
    of the means is beyond it."""
    if a.n < 2 or b.n < 2 or a.mean is None or b.mean is None or a.sd is None or b.sd is None:
        return UNDECIDED, None, None
    va, vb = a.sd**2 / a.n, b.sd**2 / b.n
    diff = abs(b.mean - a.mean)
    if va + vb == 0:
        return (BEYOND if diff > 0 else WITHIN), 0.0, None
    nu = (va + vb) ** 2 / (va**2 / (a.n - 1) + vb**2 / (b.n - 1))
    df = max(1, int(math.floor(nu + 1e-9)))
    half = t_quantile(confidence, df) * math.sqrt(va + vb)
    return (BEYOND if diff > half else WITHIN), half, df


# ---- the comparison --------------------------------------------------------------------------


@dataclass
class Comparison:
    """Modes (name -> runs, one per seed) of one scenario, with per flow and mode the
    :class:`Spread` of every :data:`METRICS` entry and the :class:`Verdict` of every pair
    of modes. ``excluded[mode][flow name]`` says why a flow of a mode is not compared (a
    Linux mode's flow whose controller the kernel lacks); ``skipped[mode]`` why a mode
    has no runs; ``notes`` anything else the report should say."""

    scenario: str
    runs: dict[str, list[RunDir]]
    excluded: dict[str, dict[str, str]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    confidence: float = CONFIDENCE
    #: The comparison's directory: compare.json names the runs relative to it.
    root: Path | None = None

    def rebase(self, old: Path, new: Path) -> None:
        """The runs (and ``root``) moved from under ``old`` to under ``new``."""
        for runs in self.runs.values():
            for r in runs:
                if r.path.is_relative_to(old):
                    r.path = new / r.path.relative_to(old)
        if self.root is not None and self.root.is_relative_to(old):
            self.root = new / self.root.relative_to(old)

    def run_name(self, run: RunDir) -> str:
        """``run``'s path, relative to ``root`` when under it."""
        if self.root is not None and run.path.is_relative_to(self.root):
            return run.path.relative_to(self.root).as_posix()
        return str(run.path)

    @property
    def modes(self) -> list[str]:
        """The modes with at least one run, in the given order."""
        return [m for m, runs in self.runs.items() if runs]

    @property
    def flows(self) -> list[dict[str, Any]]:
        """The scenario's TCP flows (id, name, controller, recovery) from the first run."""
        first = self.runs[self.modes[0]][0] if self.modes else None
        if first is None:
            return []
        return [
            {
                "flow": i,
                "name": f["name"],
                "controller": f["controller"]["name"],
                "recovery": f["recovery"]["name"],
            }
            for i, f in enumerate(first.canonical["flows"])
        ]

    def compared(self, mode: str, flow: dict[str, Any]) -> bool:
        return flow["name"] not in self.excluded.get(mode, {})

    @cached_property
    def spreads(self) -> dict[tuple[int, str, str], Spread]:
        """(flow, metric key, mode) -> Spread, for the flows each mode compares."""
        out = {}
        for f in self.flows:
            for mode in self.modes:
                if not self.compared(mode, f):
                    continue
                for m in METRICS:
                    out[(f["flow"], m.key, mode)] = spread(
                        [m.read(r, f["flow"]) for r in self.runs[mode]], self.confidence
                    )
        return out

    @cached_property
    def verdicts(self) -> list[Verdict]:
        """Every flow x metric x pair of modes (in mode order: b against a)."""
        out = []
        for f in self.flows:
            for a, b in combinations(self.modes, 2):
                if not (self.compared(a, f) and self.compared(b, f)):
                    continue
                for m in METRICS:
                    sa, sb = self.spreads[(f["flow"], m.key, a)], self.spreads[(f["flow"], m.key, b)]
                    verdict, half, df = beyond_spread(sa, sb, self.confidence)
                    diff = None if sa.mean is None or sb.mean is None else sb.mean - sa.mean
                    rel = None if diff is None or not sa.mean else diff / abs(sa.mean)
                    out.append(Verdict(f["flow"], f["name"], m.key, a, b, diff, rel, half, df, verdict))
        return out

    def counts(self) -> dict[str, int]:
        return {v: sum(1 for x in self.verdicts if x.verdict == v) for v in VERDICTS}

    def document(self) -> dict[str, Any]:
        """compare.json (docs/compare.md gives the layout)."""
        return (
            {
                "schema": COMPARE_SCHEMA,
                "scenario": self.scenario,
                "confidence": self.confidence,
                "rule": "welch-t",
                "metrics": [{"key": m.key, "label": m.label, "unit": m.unit} for m in METRICS],
                "modes": {
                    mode: {
                        "seeds": [r.seed for r in runs],
                        "runs": [self.run_name(r) for r in runs],
                        "excluded_flows": dict(self.excluded.get(mode, {})),
                    }
                    for mode, runs in self.runs.items()
                    if runs
                },
                "skipped": dict(self.skipped),
                "notes": list(self.notes),
                "flows": [
                    {
                        **f,
                        "metrics": {
                            m.key: {
                                mode: self.spreads[(f["flow"], m.key, mode)].as_dict()
                                for mode in self.modes
                                if (f["flow"], m.key, mode) in self.spreads
                            }
                            for m in METRICS
                        },
                    }
                    for f in self.flows
                ],
                "verdicts": [v.as_dict() for v in self.verdicts],
                "counts": self.counts(),
            }
        )


def compare_runs(
    scenario: str,
    runs: Mapping[str, Sequence[str | Path | RunDir]],
    *,
    excluded: Mapping[str, Mapping[str, str]] | None = None,
    skipped: Mapping[str, str] | None = None,
    notes: Sequence[str] = (),
    confidence: float = CONFIDENCE,
    root: str | Path | None = None,
) -> Comparison:
    """The comparison of the modes in ``runs`` (mode name -> results directories, one per
    seed; the first mode is the reference the page lists first). Every run must be of the
    same flows (names in the same order); a ValueError says which is not. ``root``: the
    directory compare.json names the runs relative to."""
    loaded = {mode: [r if isinstance(r, RunDir) else load_run(r) for r in dirs] for mode, dirs in runs.items()}
    names = None
    for mode, dirs in loaded.items():
        for r in dirs:
            these = [f["name"] for f in r.canonical["flows"]]
            if names is None:
                names = these
            elif these != names:
                raise ValueError(f"{r.path} ({mode}): flows {these} differ from the other runs' {names}")
    return Comparison(
        scenario,
        loaded,
        excluded={m: dict(v) for m, v in (excluded or {}).items()},
        skipped=dict(skipped or {}),
        notes=list(notes),
        confidence=confidence,
        root=None if root is None else Path(root),
    )
