"""Topology fields of a scenario: the dumbbell, the parking-lot and wired-cum-wireless
presets, the ``[topology]`` kind dispatch, and the nodes, links and static routes of an
explicit topology. (The graph a canonical topology expands to is :mod:`tcplab.topology`.)"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, Field, model_validator

from tcplab.scenario.errors import FieldError, validate_nested
from tcplab.scenario.fields import StrictModel, count_field, unit_field
from tcplab.scenario.links import Duplex, duplex_or_list, queue_discipline
from tcplab.scenario.vocabulary import DEFAULTS, default_access, names
from tcplab.scenario.wlan import WlanAccess
from tcplab.units import parse_size


class Dumbbell(StrictModel):
    """N sender hosts s0.. on access links to router ``left``, the bottleneck ``left``-``right``,
    N receiver hosts r0.. on access links from ``right``."""

    kind: Literal["dumbbell"] = "dumbbell"
    pairs: Annotated[int, count_field("host pairs", 1, 100_000)] | None = None
    bottleneck: Duplex
    sender_access: Annotated[list[Duplex], BeforeValidator(duplex_or_list)] | None = None
    receiver_access: Annotated[list[Duplex], BeforeValidator(duplex_or_list)] | None = None


def _pair_counts(v: Any) -> list[int]:
    """Cross pairs per hop: one count for every hop, or a list with one per hop."""
    items = v if isinstance(v, list) else [v]
    for k, x in enumerate(items):
        if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 10_000:
            raise FieldError("is not a number of host pairs within [0, 10000]", (k,) if isinstance(v, list) else (), x)
    if not items:
        raise FieldError("is empty (give one count for every hop, or one per hop)")
    return list(items)


def _defaults(default: dict[str, Any], many: bool):
    """A duplex table (or, with ``many``, one table or a list of them) whose missing
    top-level fields come from ``default`` (so ``wireless = { loss = 0.01 }`` keeps the
    preset's rate, delay and buffer)."""

    def merge(x: Any) -> Any:
        return {**default, **x} if isinstance(x, dict) else x

    def validate(v: Any) -> Any:
        if many:
            return duplex_or_list([merge(x) for x in v] if isinstance(v, list) else merge(v))
        return validate_nested(Duplex, merge(v), ()) if isinstance(v, dict) else v

    return BeforeValidator(validate)


#: Venoplus Fig. 2: 10 Mb/s everywhere, an 80 ms bottleneck, 50-packet buffers; the wired
#: and wireless hops 1 ms one way (the figure; the text says 0.1 ms round trip; as in
#: scenarios/venoplus.toml).
VENOPLUS_WIRED = {"rate": "10Mbps", "delay": "1ms", "buffer": 50}
VENOPLUS_BOTTLENECK = {"rate": "10Mbps", "delay": "80ms", "buffer": 50}
VENOPLUS_WIRELESS = {"rate": "10Mbps", "delay": "1ms", "buffer": 50}


class ParkingLot(StrictModel):
    """Routers r0..r{hops} in a chain; long pairs ls{i} -> lr{i} across every hop, cross
    pairs cs{h}_{i} -> cr{h}_{i} on hop h, reverse pairs vs{i} -> vr{i} backwards across
    every hop (Adaptive Reno Fig. 5)."""

    kind: Literal["parking_lot"]
    hops: Annotated[int, count_field("router-to-router links", 1, 1000)] = 3
    bottleneck: Annotated[list[Duplex], BeforeValidator(duplex_or_list)]
    access: Duplex | None = None
    long_pairs: Annotated[int, count_field("host pairs", 0, 10_000)] = 1
    cross_pairs: Annotated[list[int], BeforeValidator(_pair_counts)] = [1]
    reverse_pairs: Annotated[int, count_field("host pairs", 0, 10_000)] = 1
    queue: Annotated[dict, BeforeValidator(queue_discipline)] | None = None
    packet_size: Annotated[int, unit_field(parse_size)] = DEFAULTS["parking_lot"]["packet_size"]

    @model_validator(mode="after")
    def _lengths(self) -> ParkingLot:
        for key in ("bottleneck", "cross_pairs"):
            given = getattr(self, key)
            if len(given) not in (1, self.hops):
                raise FieldError(
                    f"has {len(given)} entries for {self.hops} hops (give one for every hop, or one per hop)",
                    (key,),
                    show=False,
                )
        if self.long_pairs == 0 and self.reverse_pairs == 0 and not any(self.cross_pairs):
            raise FieldError("are all 0: expected at least one host pair", ("long_pairs",), show=False)
        return self  # packet_size >= 1 byte: the simulator's rule (at_least)

    def canonical(self) -> dict[str, Any]:
        rates = [d.direction(x)["rate"] for d in self.bottleneck for x in ("forward", "reverse")]
        access = self.access.canonical() if self.access is not None else default_access(max(rates))
        out: dict[str, Any] = {
            "kind": "parking_lot",
            "hops": self.hops,
            "bottleneck": [d.canonical() for d in self.bottleneck],
            "access": access,
            "long_pairs": self.long_pairs,
            "cross_pairs": list(self.cross_pairs),
            "reverse_pairs": self.reverse_pairs,
            "packet_size": self.packet_size,
        }
        if self.queue is not None:
            out["queue"] = self.queue
        return out


class WiredCumWireless(StrictModel):
    """Servers server{i} on wired links to ``router``, the bottleneck ``router``-``bs`` (base
    station), and lossy wireless hops ``bs``-mobile{i} (Venoplus Fig. 2, Veno Fig. 3b).
    Missing rates, delays and buffers are Venoplus's."""

    kind: Literal["wired_cum_wireless"]
    pairs: Annotated[int, count_field("host pairs", 1, 100_000)] | None = None
    wired: Annotated[list[Duplex], _defaults(VENOPLUS_WIRED, True)] | None = None
    bottleneck: Annotated[Duplex, _defaults(VENOPLUS_BOTTLENECK, False)] | None = None
    wireless: Annotated[list[Duplex], _defaults(VENOPLUS_WIRELESS, True)] | None = None

    def canonical(self, pairs: int) -> dict[str, Any]:
        def one(given: list[Duplex] | None, default: dict[str, Any]) -> list[dict[str, Any]]:
            if given is None:
                return [Duplex.model_validate(default).canonical()]
            return [d.canonical() for d in given]

        bottleneck = self.bottleneck or Duplex.model_validate(VENOPLUS_BOTTLENECK)
        return {
            "kind": "wired_cum_wireless",
            "pairs": pairs,
            "wired": one(self.wired, VENOPLUS_WIRED),
            "bottleneck": bottleneck.canonical(),
            "wireless": one(self.wireless, VENOPLUS_WIRELESS),
        }


_PRESETS: dict[str, type[StrictModel]] = {}


#: The topology presets by kind (an explicit topology is [[nodes]] and [[links]]); with
#: "explicit" they are the simulator's kinds (a test holds them to ``names("topology")``).
PRESETS: dict[str, Any] = {
    "dumbbell": Dumbbell,
    "parking_lot": ParkingLot,
    "wired_cum_wireless": WiredCumWireless,
    "wlan_access": WlanAccess,
}


def topology_by_kind(v: Any) -> Any:
    """``[topology]``: ``kind`` picks the model (default ``dumbbell``)."""
    if isinstance(v, BaseModel):
        return v
    if not isinstance(v, dict):  # else pydantic names a member of the union: topology.Dumbbell
        raise FieldError("is not a table (expected {key = value, ...} or a [section])")
    kind = v.get("kind", "dumbbell")
    if not isinstance(kind, str) or kind not in names("topology") or kind not in PRESETS:
        known = ", ".join(k for k in names("topology") if k in PRESETS)
        raise FieldError(
            f"is not a known topology kind (known: {known}; for any graph use [[nodes]] and [[links]])",
            ("kind",),
            kind,
        )
    return validate_nested(PRESETS[kind], v, ())


class StaticRoute(StrictModel):
    """At node ``at``, packets for host ``dst`` go to the neighbour ``next``."""

    at: str
    dst: str
    next: str


class Node(StrictModel):
    name: str
    kind: Literal["host", "router"]


class Link(Duplex):
    """A duplex link between two named nodes; ``forward`` carries packets from ``from`` to ``to``."""

    from_: str = Field(alias="from")
    to: str


#: Access links of a dumbbell when the scenario gives none (the simulator's
#: ``Dumbbell::default_access``, :func:`~tcplab.scenario.vocabulary.default_access`): never
#: the bottleneck, at least this rate (bit/s), this many packets of buffer.
DEFAULT_ACCESS_MIN_RATE: int = DEFAULTS["access"]["min_rate"]
DEFAULT_ACCESS_BUFFER_PACKETS: int = DEFAULTS["access"]["buffer_packets"]
