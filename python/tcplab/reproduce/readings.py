"""Readings: the settings a paper leaves open, varied.

A paper rarely states every parameter its result depends on: the RTT of a lab, which loss
events update an estimator, the initial window of the stack of its time. The suite's main
runs pick one setting for each (the experiment's ``reading`` text says which, and why); a
:class:`Reading` is another setting the paper equally allows, with where it comes from (the
paper's words, its figures, the stack or simulator of its time). The suite runs every
experiment's points again under each of its readings (the same points, each scenario
document changed by :attr:`Reading.apply`; same seeds) and judges every claim under each. A
reading of what the paper counts rather than of how it ran (which losses "result from
initial slow start", over which interval a throughput is taken) changes no run: it reads
the main runs with its own :attr:`Reading.analyze`.

Per claim the report then gives the verdict under each reading and the measured value
beside the published one, and a headline that names its reading (:func:`headline`): the
claim holds when it holds under the main setting or under one of the readings (named); a
claim that holds under none says so.

A *diagnostic* reading is a setting the paper does not allow, run to test an explanation of
a miss (Veno Table I: BaseRTT kept across losses, where the paper forgets it at each): it is
judged and shown like the others, labelled as such, and never makes a headline hold.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from tcplab.reproduce.verdict import FAILS, HOLDS, INCONCLUSIVE, ClaimResult
from tcplab.sweep import Point, expand


@dataclass(frozen=True)
class Reading:
    """One setting of parameters the paper leaves open: ``parameter`` names what is varied,
    ``value`` this reading's setting, ``source`` where the reading comes from; ``apply``
    returns a scenario document under this reading (it gets a copy, and may change it);
    None: the main runs themselves. ``analyze``: the experiment's analysis under this
    reading (a counting choice: the frame its claims are judged on), else the experiment's.
    ``diagnostic``: a setting the paper does not allow, run to test an explanation; never a
    headline."""

    parameter: str
    value: str
    source: str
    apply: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    analyze: Callable[..., pl.DataFrame] | None = None
    diagnostic: bool = False

    def __post_init__(self) -> None:
        if self.apply is None and self.analyze is None:
            raise ValueError(f"reading {self.name!r}: neither runs (apply) nor counts (analyze) differently")

    @property
    def name(self) -> str:
        return f"{self.parameter}: {self.value}"

    @property
    def label(self) -> str:
        """The name as a report shows it: a diagnostic reading says what it is."""
        return self.name + (" (a test of the explanation, not a reading of the paper)" if self.diagnostic else "")

    def points(self, points: Sequence[Point]) -> list[Point]:
        """`points` under this reading: the same indices and parameters (so that an analysis
        reads them as it reads the main runs), each document changed, validated and keyed;
        without ``apply``, `points` themselves."""
        if self.apply is None:
            return list(points)
        out = []
        for p in points:
            doc = self.apply(copy.deepcopy(p.document))
            seed = doc.pop("seed", p.params.get("seed", 1))
            extra = {k: v for k, v in p.params.items() if k != "seed"}
            q = expand(doc, {"grid": {}, "seeds": [seed]}, params=extra)[0]
            out.append(Point(p.index, p.params, q.document, q.key))
        return out


@dataclass(frozen=True)
class ReadingOutcome:
    """The claims of an experiment judged under one reading (``error``: the runs or the
    analysis failed under it, in one line)."""

    reading: Reading
    claims: list[ClaimResult]
    error: str | None = None


def headline(main: ClaimResult, main_reading: str, under: Sequence[ReadingOutcome], index: int) -> dict[str, Any]:
    """The headline of claim `index` over the main setting (`main`, named `main_reading`) and
    the readings: ``verdict`` holds when any setting holds (``reading`` names the first that
    does, the main one first; ``main``: that is the main setting); otherwise the main
    setting's verdict, with ``note`` saying that no tested reading holds; a diagnostic
    reading is never the one that holds. ``settings``: every setting's verdict and measured
    value. ``qualifier``: what a report prints beside the
    verdict ("under <reading>" for a reading other than the main one, the note when there
    are readings and none holds, else "")."""
    settings = [{"reading": main_reading or "main runs", "verdict": main.verdict, "measured": main.measured(),
                 "diagnostic": False}]
    for r in under:
        c = r.claims[index] if r.error is None and index < len(r.claims) else None
        settings.append({"reading": r.reading.name, "verdict": c.verdict if c else INCONCLUSIVE,
                         "measured": c.measured() if c else (r.error or "—"), "diagnostic": r.reading.diagnostic})
    holding = [i for i, s in enumerate(settings) if s["verdict"] == HOLDS and not s["diagnostic"]]
    if holding:
        i = holding[0]
        return {"verdict": HOLDS, "reading": settings[i]["reading"], "main": i == 0, "note": "",
                "qualifier": f"under {settings[i]['reading']}" if i else "", "settings": settings}
    verdicts = {s["verdict"] for s in settings if not s["diagnostic"]}
    note = ("holds under no tested reading" if verdicts == {FAILS}
            else "holds under no tested reading; undecided under some")
    return {"verdict": main.verdict, "reading": settings[0]["reading"], "main": True, "note": note,
            "qualifier": note if len(settings) > 1 else "", "settings": settings}


# ---- changes to scenario documents the readings share --------------------------------------


def set_tcp(**values: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A reading's ``apply``: scenario-wide ``tcp`` settings `values`, over every flow's own
    ``tcp`` table too (a flow's table overrides the scenario's)."""

    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        doc.setdefault("tcp", {}).update(values)
        for f in doc.get("flows", []):
            if isinstance(f.get("tcp"), dict):
                f["tcp"].update(values)
        return doc

    return apply


def set_controller_param(controller: str, **values: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A reading's ``apply``: parameters `values` on every flow whose controller is
    `controller` (a name, or a table naming it)."""

    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        for f in doc.get("flows", []):
            c = f.get("controller")
            if c == controller:
                f["controller"] = {"name": controller, **values}
            elif isinstance(c, dict) and c.get("name") == controller:
                c.update(values)
        return doc

    return apply


def set_recovery(recovery: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A reading's ``apply``: every flow's loss recovery `recovery`."""

    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        for f in doc.get("flows", []):
            f["recovery"] = recovery
        return doc

    return apply


def combined(*applies: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """A reading's ``apply``: each of `applies` in turn (readings that interact, together)."""

    def apply(doc: dict[str, Any]) -> dict[str, Any]:
        for a in applies:
            doc = a(doc)
        return doc

    return apply
