"""``tcplab compare``: one scenario run in several modes over the same seeds, then one report
side by side (docs/compare.md).

Modes (:data:`MODES`):

- ``simulated``: :func:`tcplab.run.run` and the results directory of ``tcplab run``;
- ``live``: :func:`tcplab.live.run.run_live` (the scenario on real packets through the
  emulator; its flows on their own stack, tcplab's transport by default);
- ``linux``: the same live run with every flow whose controller the kernel has
  (:func:`tcplab.live.linux.available_congestion_controls`) set to ``stack = "linux"``;
  the other flows keep their stack and are listed as not compared, with the reason.

The live side is imported only when a live mode runs, so ``compare`` works without it: a
mode that cannot run (no ``tcplab.live.run`` in this build, no root, a scenario the
emulator refuses) is skipped with its one-line reason, and the rest is compared.

The output directory holds ``<mode>/seed-<N>/`` (results directories), ``compare.json`` and
``report.html``; it is built in a hidden sibling and renamed when complete
(:func:`tcplab.out_dir.building`), so an interrupted comparison leaves nothing behind.
"""

from __future__ import annotations

import copy
import importlib
import importlib.util
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tcplab.out_dir import building
from tcplab.report.compare_stats import Comparison, compare_runs
from tcplab.report.compare_page import write_compare
from tcplab.scenario import Scenario, ScenarioError, as_scenario

__all__ = [
    "MODES",
    "CompareOutcome",
    "ComparePlan",
    "linux_variant",
    "live_unavailable",
    "parse_modes",
    "parse_seeds",
    "plan_compare",
    "run_compare",
]

#: The modes, in the order they run and appear in the report (the first is the reference).
MODES = ("simulated", "live", "linux")

#: The module that runs a scenario live (``tcplab run --live``).
LIVE_MODULE = "tcplab.live.run"

#: A progress callback: ``(mode, seed, state)``, state "start", "done" or "failed".
Progress = Callable[[str, int, str], None]


def parse_seeds(text: str) -> list[int]:
    """``"1-3"``, ``"1,4,7"``, ``"2"`` or a mix (``"1-3,8"``) as a list of distinct seeds in
    the given order; ValueError (one line) otherwise."""
    seeds: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ValueError(f"--seeds {text!r}: expected seeds such as 1-3 or 1,4,7") from None
        if a < 0 or b < a or b >= 2**64:
            raise ValueError(f"--seeds {text!r}: {part!r} is not a range of seeds within [0, 2^64 - 1]")
        seeds += [s for s in range(a, b + 1) if s not in seeds]
    return seeds


def parse_modes(text: str) -> list[str]:
    """``"simulated,live,linux"`` (any subset, any order) as modes in :data:`MODES` order;
    ValueError (one line) for an unknown or empty list."""
    given = [m.strip() for m in str(text).split(",") if m.strip()]
    unknown = [m for m in given if m not in MODES]
    if unknown or not given:
        raise ValueError(f"--modes {text!r}: expected modes among {', '.join(MODES)}")
    return [m for m in MODES if m in given]


def live_unavailable() -> str | None:
    """Why live modes cannot run here (no ``tcplab.live.run`` in this build, or what
    :func:`tcplab.live.live_support` says: privileges, ``ip``, TUN); None when they can."""
    try:
        found = importlib.util.find_spec(LIVE_MODULE) is not None
    except ImportError:
        found = False
    if not found:
        return f"live runs are not available: {LIVE_MODULE} is not in this build"
    from tcplab.live import live_support

    return live_support()


def linux_variant(scenario: Scenario, available: Sequence[str]) -> tuple[Scenario | None, dict[str, str], str | None]:
    """The scenario with ``stack = "linux"`` on every ``[[flows]]`` entry whose controller is
    in ``available`` (the kernel's congestion controls): (that scenario, {flow name: why it
    is not compared}, why there is no such scenario). Entries are changed as written, so a
    flow group changes as a whole (its flows share their controller)."""
    if not isinstance(scenario.source.get("given"), dict):
        return None, {}, "the scenario's document (as given) is not at hand to set the flows' stack"
    given = copy.deepcopy(scenario.source["given"])
    canonical_flows = scenario.canonical()["flows"]
    entries = given.get("flows") or []
    excluded: dict[str, str] = {}
    pos = 0
    linux = 0
    for entry in entries:
        count = entry.get("count", 1) if isinstance(entry, dict) else 1
        members = canonical_flows[pos : pos + count]
        pos += count
        name = members[0]["controller"]["name"] if members else None
        if name in available:
            entry["stack"] = "linux"
            linux += len(members)
        else:
            why = f"the kernel has no congestion control {name!r} (it has {', '.join(available) or 'none'})"
            excluded.update({m["name"]: why for m in members})
    if linux == 0:
        return None, excluded, f"no flow's controller is one the kernel has ({', '.join(available) or 'none'})"
    source = {k: v for k, v in scenario.source.items() if k not in ("given", "base_dir", "toml")}
    try:
        sc = Scenario.from_dict(given, source=source, base_dir=scenario.source.get("base_dir"))
    except ScenarioError as e:
        return None, excluded, f"the scenario with stack = \"linux\" is refused: {e}"
    return sc, excluded, None


@dataclass
class ComparePlan:
    """What a comparison runs: the scenario of each mode to run (``scenarios``), the seeds,
    and why a mode is skipped (``skipped``) or a flow of a mode not compared (``excluded``)."""

    scenario: Scenario
    seeds: list[int]
    scenarios: dict[str, Scenario]
    skipped: dict[str, str] = field(default_factory=dict)
    excluded: dict[str, dict[str, str]] = field(default_factory=dict)

    @property
    def modes(self) -> list[str]:
        return list(self.scenarios)


def plan_compare(
    scenario: str | Path | dict | Scenario,
    seeds: Sequence[int],
    modes: Sequence[str] = MODES,
    *,
    kernel_controls: Callable[[], list[str]] | None = None,
) -> ComparePlan:
    """Decides what runs: every mode of ``modes`` that can, the others in ``skipped`` with
    the reason. ``kernel_controls`` lists the kernel's congestion controls (default:
    :func:`tcplab.live.linux.available_congestion_controls`)."""
    sc = as_scenario(scenario)
    if not seeds:
        raise ValueError("no seeds to run")
    plan = ComparePlan(sc, list(seeds), {})
    live_missing = live_unavailable() if any(m != "simulated" for m in modes) else None
    for mode in MODES:
        if mode not in modes:
            continue
        if mode == "simulated":
            plan.scenarios[mode] = sc
        elif live_missing:
            plan.skipped[mode] = live_missing
        elif mode == "live":
            plan.scenarios[mode] = sc
        else:
            if kernel_controls is None:
                from tcplab.live.linux import available_congestion_controls

                kernel_controls = available_congestion_controls
            try:
                available = kernel_controls()
            except OSError as e:
                plan.skipped[mode] = f"cannot read the kernel's congestion controls: {e}"
                continue
            linux, excluded, why = linux_variant(sc, available)
            if linux is None:
                plan.skipped[mode] = str(why)
            else:
                plan.scenarios[mode] = linux
            if excluded:
                plan.excluded[mode] = excluded
    return plan


@dataclass
class CompareOutcome:
    """A finished comparison: its directory, the :class:`Comparison`, the report and the
    verdict file."""

    out: Path
    comparison: Comparison
    report: Path
    document: Path


def _run_simulated(sc: Scenario, target: Path, run_reports: bool) -> Path:
    from tcplab.results import write_results
    from tcplab.run import run

    return write_results(run(sc), target, report=run_reports)


def _run_live(sc: Scenario, target: Path, realtime: bool) -> Path:
    run_live = importlib.import_module(LIVE_MODULE).run_live  # here: compare works without it
    res: Any = run_live(sc, target, realtime=realtime)
    return Path(getattr(res, "out_dir", res))


def _live_errors() -> tuple[type[BaseException], ...]:
    """The errors a live run reports in one line (the mode is then skipped or cut short)."""
    from tcplab.live import LiveError

    return (LiveError, ScenarioError)


def run_compare(
    plan: ComparePlan,
    out: str | Path,
    *,
    realtime: bool = False,
    run_reports: bool = True,
    progress: Progress | None = None,
) -> CompareOutcome:
    """Runs every mode of ``plan`` for every seed into ``out/<mode>/seed-<N>`` and writes
    the report and compare.json. A live mode whose run fails with a one-line error
    (LiveError, ScenarioError) stops there: skipped when no seed finished, else compared
    over the seeds that did, with a note. The simulated mode's errors propagate (as for
    ``tcplab run``)."""
    out = Path(out)
    skipped = dict(plan.skipped)
    # the scenario in one line, without its own seed (each mode ran plan.seeds)
    notes = ["; ".join(p for p in plan.scenario.describe().split("; ") if not p.startswith("seed "))]
    done: dict[str, list[Path]] = {}
    with building(out) as tmp:
        for mode, sc in plan.scenarios.items():
            done[mode] = []
            for seed in plan.seeds:
                target = tmp / mode / f"seed-{seed}"
                if progress:
                    progress(mode, seed, "start")
                if mode == "simulated":
                    done[mode].append(_run_simulated(sc.with_seed(seed), target, run_reports))
                else:
                    try:
                        done[mode].append(_run_live(sc.with_seed(seed), target, realtime))
                    except _live_errors() as e:
                        if progress:
                            progress(mode, seed, "failed")
                        if done[mode]:
                            notes.append(f"{mode}: seed {seed} failed ({e}); compared over the seeds before it")
                        else:
                            skipped[mode] = str(e)
                            if (tmp / mode).is_dir() and not any((tmp / mode).iterdir()):
                                (tmp / mode).rmdir()
                        break
                if progress:
                    progress(mode, seed, "done")
        comparison = compare_runs(
            plan.scenario.name,
            {m: dirs for m, dirs in done.items() if dirs},
            excluded={m: v for m, v in plan.excluded.items() if done.get(m)},
            skipped=skipped,
            notes=notes,
            root=tmp,
        )
        write_compare(comparison, tmp)
    comparison.rebase(tmp, out)
    return CompareOutcome(out, comparison, out / "report.html", out / "compare.json")
