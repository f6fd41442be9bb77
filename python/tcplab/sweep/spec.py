"""What a ``[sweep]`` table declares (:class:`SweepSpec`: grid axes, zipped lists, seeds) and
how one of its dotted paths replaces a field of a scenario document (:func:`set_path`).
:mod:`tcplab.sweep.points` expands a spec into points; docs/sweeps.md describes the table."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from tcplab.sweep.store import SweepError

__all__ = ["SeedRange", "SweepSpec", "base_seed", "set_path"]


def base_seed(doc: dict[str, Any]) -> int:
    """The scenario document's seed (1 when it has none or a bad one, which its
    validation reports): where ``seeds = N`` starts."""
    seed = doc.get("seed", 1)
    return seed if isinstance(seed, int) else 1


@dataclass(frozen=True)
class SweepSpec:
    """What a ``[sweep]`` table declares: grid axes, zipped lists, seeds (None: the
    scenario's own seed only)."""

    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    seeds: Sequence[int] | None = None

    @classmethod
    def parse(cls, table: Any, *, base_seed: int = 1) -> SweepSpec:
        """Validates a ``[sweep]`` table (or a dict of the same shape)."""
        if table is None:
            return cls()
        if isinstance(table, SweepSpec):
            return table
        if not isinstance(table, dict):
            raise SweepError(f"sweep: must be a table (grid, zip, seeds), not {type(table).__name__}")
        extra = sorted(set(table) - {"grid", "zip", "seeds"})
        if extra:
            raise SweepError(f"sweep.{extra[0]}: is not a known field (allowed: grid, zip, seeds)")
        grid = _axes(table.get("grid", {}), "grid")
        zipped = _axes(table.get("zip", {}), "zip")
        lengths = {k: len(v) for k, v in zipped.items()}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k!r} has {n}" for k, n in lengths.items())
            raise SweepError(f"sweep.zip: the lists must have equal lengths ({shown})")
        both = sorted(set(grid) & set(zipped))
        if both:
            raise SweepError(f"sweep: {both[0]!r} is in both grid and zip")
        for k in [*grid, *zipped]:
            if k == "seed" or k.startswith("sweep"):
                raise SweepError(f"sweep: {k!r} cannot be swept (use sweep.seeds for seeds)")
        return cls(grid=grid, zip=zipped, seeds=_seeds(table.get("seeds"), base_seed))


def _axes(table: Any, where: str) -> dict[str, list[Any]]:
    if not isinstance(table, dict):
        raise SweepError(f"sweep.{where}: must be a table of dotted path = [values]")
    out = {}
    for path, values in table.items():
        if not isinstance(values, list):
            raise SweepError(f"sweep.{where}.{path!r}: must be a list of values, not {values!r}")
        if not values:
            raise SweepError(f"sweep.{where}.{path!r}: is empty")
        _split(path, f"sweep.{where}")
        out[path] = list(values)
    return out


def _seeds(value: Any, base_seed: int) -> Sequence[int] | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise SweepError(f"sweep.seeds: {value!r} is not a number of seeds or a list of seeds")
    if isinstance(value, int):
        if value < 1:
            raise SweepError(f"sweep.seeds: {value} must be >= 1")
        if base_seed + value > 2**64:
            raise SweepError(f"sweep.seeds: {value} seeds from seed {base_seed} go past the largest seed, 2^64 - 1")
        return SeedRange(base_seed, value)
    if isinstance(value, list) and value:
        for s in value:
            if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < 2**64:
                raise SweepError(f"sweep.seeds: {s!r} is not a seed (a whole number >= 0)")
        if len(set(value)) != len(value):
            raise SweepError(f"sweep.seeds: {value!r} repeats a seed")
        return list(value)
    raise SweepError(f"sweep.seeds: {value!r} is not a number of seeds or a list of seeds")


class SeedRange(Sequence[int]):
    """``seeds = N``: the seeds ``start``, ``start + 1``, ..., ``start + N - 1`` without holding
    them (a sweep of 10^6 seeds keeps two numbers). Equal to any sequence of the same seeds
    (``SeedRange(7, 3) == [7, 8, 9]``)."""

    __slots__ = ("start", "length")

    def __init__(self, start: int, length: int):
        self.start, self.length = start, length

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, i: int) -> int: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[int]: ...
    def __getitem__(self, i: int | slice) -> int | Sequence[int]:
        r = range(self.start, self.start + self.length)
        return list(r[i]) if isinstance(i, slice) else r[i]

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.start, self.start + self.length))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SeedRange):
            return (self.start, self.length) == (other.start, other.length)
        if isinstance(other, (list, tuple, range)):
            return len(other) == self.length and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.start, self.length))

    def __repr__(self) -> str:
        return f"SeedRange({self.start}, {self.length})"


def _split(path: str, where: str) -> list[str | int]:
    if not isinstance(path, str) or not path or any(not p for p in path.split(".")):
        raise SweepError(f"{where}: {path!r} is not a dotted path (e.g. 'topology.bottleneck.rate')")
    return [int(p) if p.isdigit() else p for p in path.split(".")]


#: Shorthand scalars of the scenario format and the table each stands for, so that a path can
#: go through them: ``forward.loss = 0.01`` is ``forward.loss = {p = 0.01}``, so the path
#: ``...forward.loss.p`` reaches its probability.
def _expand_shorthand(key: str | int, value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if key == "loss" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return {"p": value}
    if key == "buffer" and isinstance(value, int) and not isinstance(value, bool):
        return {"packets": value}
    if key == "buffer" and isinstance(value, str):
        return {"bytes": value}
    if key in ("controller", "recovery") and isinstance(value, str):
        return {"name": value}
    if key == "growth" and isinstance(value, str):
        return {"mode": value}
    if key == "queue" and isinstance(value, str):
        return {"discipline": value}
    return None


def set_path(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A deep copy of ``doc`` with ``value`` at the dotted ``path``. Missing tables on the
    way are created (the schema then says whether the field exists); list items are
    addressed by index and must exist. Raises :class:`SweepError` naming the path."""
    parts = _split(path, "sweep")
    out = copy.deepcopy(doc)
    node: Any = out
    expanded: list[Any] | dict[str, Any] | None
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        here = ".".join(str(p) for p in parts[: i + 1])
        if isinstance(node, list):
            if not isinstance(part, int) or not 0 <= part < len(node):
                raise SweepError(f"sweep: {path!r}: {here!r} is not an item of a list of {len(node)}")
            if last:
                node[part] = copy.deepcopy(value)
                return out
            child = node[part]
            expanded = _expand_shorthand(parts[i - 1] if i else part, child)
        elif isinstance(node, dict):
            if isinstance(part, int):
                raise SweepError(f"sweep: {path!r}: {here!r} indexes a table, not a list")
            if last:
                node[part] = copy.deepcopy(value)
                return out
            if part not in node:
                node[part] = {}
            child = node[part]
            expanded = child if isinstance(child, list) else _expand_shorthand(part, child)
        else:
            raise SweepError(f"sweep: {path!r}: {here!r} does not exist")
        if expanded is None:
            shown = ".".join(str(p) for p in parts[: i + 1])
            raise SweepError(f"sweep: {path!r}: {shown!r} is a value ({child!r}), not a table")
        if expanded is not child:
            node[part] = expanded
        node = node[part]
    return out  # pragma: no cover (the loop returns)

