"""The points of a sweep, produced lazily: :class:`SweepPoints` is the sequence grid × zip ×
seeds over a scenario document, each point resolved, validated and keyed only when it is
read (iterated or indexed), so a sweep of 10^6 seeds holds two numbers for its seeds and
starts running at once.

Points that differ only in their seed share the work: the combination of grid and zip
values is validated once (the scenario schema, then the simulator's own checks) and its
canonical JSON is hashed up to the seed, so each further seed costs a hash of the rest of the
text (:class:`_Combination`). That holds because the seed reaches the canonical scenario only
as its ``seed`` field, which every seed in ``[0, 2^64)`` passes; a flow group with a start
jitter draws its starts from the seed (:func:`tcplab.scenario.flows.seed_dependent`), so such
combinations are validated point by point, as every point was before."""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, overload

from tcplab.scenario import Scenario, ScenarioError
from tcplab.scenario.flows import seed_dependent
from tcplab.scenario.model import resolve_files
from tcplab.sweep.spec import SweepSpec, base_seed, set_path
from tcplab.sweep.store import Point, SweepError, cache_key, key_text

__all__ = ["SweepPoints", "expand", "sweep_points"]

#: Combinations whose shared work a :class:`SweepPoints` keeps (the seeds vary fastest, so
#: one is enough when the points are read in order).
COMBINATIONS_KEPT = 16

#: Stands for the seed in a combination's canonical JSON (a string no scenario holds).
_SEED_MARK = "\x00tcplab-seed\x00"


def _validated_key(document: dict[str, Any], where: str) -> tuple[dict[str, Any], str]:
    """The canonical scenario of ``document`` and its cache key, after the schema and the
    simulator checks; :class:`SweepError` naming the point (``where``) otherwise."""
    try:
        canonical = Scenario.from_dict(document).canonical()
        from tcplab.run import simulator_check  # the package's heavier half, only here

        simulator_check(canonical)
    except ScenarioError as e:
        raise SweepError(f"sweep point ({where}): {e}") from None
    return canonical, cache_key(canonical)


class _Combination:
    """One combination of grid and zip values: its document (seed not yet set), its
    parameters, and the cache key of any of its seeds."""

    def __init__(self, doc: dict[str, Any], flat: list[tuple[str, Any]], first_seed: int):
        d = doc
        for path, value in flat:
            d = set_path(d, path, value)
        self.document = d
        self.params = dict(flat)
        self.where = ", ".join(f"{k} = {v!r}" for k, v in flat) or "the base scenario"
        self._hash: Any = None
        self._tail = b""
        if seed_dependent(d.get("flows")):
            return  # every seed is validated on its own (key_for)
        canonical, key = _validated_key({**d, "seed": first_seed}, self.where)
        text = key_text({**canonical, "seed": _SEED_MARK})
        mark = json.dumps(_SEED_MARK)
        if text.count(mark) != 1:  # pragma: no cover - the mark is in no scenario
            return
        head, tail = text.split(mark)
        self._hash, self._tail = hashlib.sha256(head.encode()), tail.encode()
        if self._key(first_seed) != key:  # pragma: no cover - the seed is more than one field
            self._hash = None

    def _key(self, seed: int) -> str:
        h = self._hash.copy()
        h.update(str(seed).encode())
        h.update(self._tail)
        return h.hexdigest()[:24]

    def key_for(self, seed: int) -> str:
        if self._hash is not None:
            return self._key(seed)
        return _validated_key({**self.document, "seed": seed}, self.where)[1]

    def validate(self, seeds: Sequence[int]) -> None:
        """Validates the combination with every seed (one check when the seed only names
        the random streams)."""
        if self._hash is None:
            for s in seeds:
                self.key_for(s)


class SweepPoints(Sequence[Point]):
    """The points of ``spec`` over the scenario document ``doc`` (without ``[sweep]``), in the
    order grid × zip × seeds (the last varying fastest), produced when read: ``len()`` is
    known at once, ``points[i]`` and iteration resolve, validate and key the point then
    (:class:`SweepError` naming the point and the field for an invalid one). ``params`` are
    extra columns every point carries. The points equal those of :func:`expand` (same index,
    parameters, document and key)."""

    def __init__(self, doc: dict[str, Any], spec: SweepSpec, params: dict[str, Any] | None = None):
        self.doc, self.spec, self.extra = doc, spec, dict(params or {})
        self.seeds: Sequence[int] = spec.seeds if spec.seeds is not None else [base_seed(doc)]
        self.axes: list[list[list[tuple[str, Any]]]] = [[[(k, v)] for v in vs] for k, vs in spec.grid.items()]
        rows = [list(zip(spec.zip, vals, strict=True)) for vals in zip(*spec.zip.values(), strict=True)]
        self.axes.append(rows or [[]])
        self.combinations = 1
        for axis in self.axes:
            self.combinations *= len(axis)
        self._kept: OrderedDict[int, _Combination] = OrderedDict()

    def __len__(self) -> int:
        return self.combinations * len(self.seeds)

    def combination(self, c: int) -> _Combination:
        """The ``c``-th combination of grid and zip values (validated; a few kept)."""
        comb = self._kept.get(c)
        if comb is not None:
            self._kept.move_to_end(c)
            return comb
        flat: list[tuple[str, Any]] = []
        rest = c
        picks = []
        for axis in reversed(self.axes):
            rest, i = divmod(rest, len(axis))
            picks.append(axis[i])
        for pick in reversed(picks):
            flat.extend(pick)
        comb = _Combination(self.doc, flat, self.seeds[0])
        self._kept[c] = comb
        if len(self._kept) > COMBINATIONS_KEPT:
            self._kept.popitem(last=False)
        return comb

    def _point(self, i: int, comb: _Combination, seed: int) -> Point:
        params = {**self.extra, **comb.params, "seed": seed}
        return Point(i, params, {**comb.document, "seed": seed}, comb.key_for(seed))

    @overload
    def __getitem__(self, i: int) -> Point: ...
    @overload
    def __getitem__(self, i: slice) -> list[Point]: ...
    def __getitem__(self, i: int | slice) -> Point | list[Point]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"point {i} of a sweep of {n}")
        i %= n
        c, s = divmod(i, len(self.seeds))
        return self._point(i, self.combination(c), self.seeds[s])

    def __iter__(self) -> Iterator[Point]:
        i = 0
        for c in range(self.combinations):
            comb = self.combination(c)
            for seed in self.seeds:
                yield self._point(i, comb, seed)
                i += 1

    def validate(self) -> int:
        """Validates every point (each combination once when its points differ only in
        seed) without keying them; the number of points."""
        for c in range(self.combinations):
            self.combination(c).validate(self.seeds)
        return len(self)


def _base_document(base: dict[str, Any] | Scenario) -> dict[str, Any]:
    doc = dict(base.source.get("given") or {}) if isinstance(base, Scenario) else dict(base)
    if isinstance(base, Scenario):
        doc.setdefault("name", base.name)
        doc["seed"] = base.seed
        doc = resolve_files(doc, base.source.get("base_dir"))  # its time-trace files
    doc.pop("sweep", None)
    return doc


def sweep_points(
    base: dict[str, Any] | Scenario,
    sweep: SweepSpec | dict[str, Any] | None = None,
    *,
    params: dict[str, Any] | None = None,
) -> SweepPoints:
    """The points of ``sweep`` over the scenario document ``base`` (a TOML-shaped dict without
    ``[sweep]``, or a Scenario), produced lazily (:class:`SweepPoints`): each is resolved and
    validated when read. ``params`` are extra columns every point carries (e.g. an
    experiment's variant label). Raises :class:`SweepError` at once for a bad ``[sweep]``
    table, and naming the point and the field when an invalid point is read."""
    doc = _base_document(base)
    return SweepPoints(doc, SweepSpec.parse(sweep, base_seed=base_seed(doc)), params)


def expand(
    base: dict[str, Any] | Scenario,
    sweep: SweepSpec | dict[str, Any] | None = None,
    *,
    params: dict[str, Any] | None = None,
) -> list[Point]:
    """Every point of :func:`sweep_points`, resolved and validated now (a list). Raises
    :class:`SweepError` naming the point and the field when a point is invalid (schema or
    simulator checks)."""
    return list(sweep_points(base, sweep, params=params))

