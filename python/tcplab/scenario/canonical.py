"""The canonical form of a scenario (what the simulator reads: durations in ns, rates in
bit/s, sizes in bytes, every default filled), as dicts (``canonical()``) or as its JSON text
made from the texts of the pieces alike flows share (``canonical_json()``), as a mixin of
:class:`tcplab.scenario.model.Scenario`."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from tcplab.scenario.checks import LONG_INTEGER, Piece, given_key
from tcplab.scenario.flows import Flow, Udp
from tcplab.scenario.topologies import Dumbbell, ParkingLot, WiredCumWireless
from tcplab.scenario.vocabulary import default_access
from tcplab.scenario.wlan import WlanAccess


class ScenarioCanonical:
    """The canonical form; reads the Scenario's fields and its topology views (``pairs``,
    ``topology_canonical``, ``_default_endpoints``) and the pieces of
    :class:`tcplab.scenario.checks.ScenarioChecks`."""

    if TYPE_CHECKING:  # what it reads of the Scenario (tcplab.scenario.model)
        name: str
        description: str
        seed: int
        duration: int
        topology: Any
        nodes: Any
        links: Any
        routing: Any
        static_routes: Any
        wlan: Any
        tcp: Any
        flows: list[Flow]
        udp: list[Udp]
        trace: Any
        _merged: dict[Any, Any]

        def pairs(self) -> int: ...
        def topology_canonical(self) -> dict[str, Any]: ...
        def _default_endpoints(self) -> list[tuple[str, str]]: ...
        def _scenario_tcp(self) -> Piece: ...
        def _flow_pieces(self, i: int, scenario_tcp: Any, cache: Any = None) -> tuple[Piece, Piece, Piece]: ...
        def _all_flow_pieces(self, scenario_tcp: Any, cache: Any) -> list[tuple[Piece, Piece, Piece]]: ...

    def _routing_canonical(self) -> dict[str, Any]:
        """``routing`` and ``static_routes`` of an explicit topology, when given."""
        out: dict[str, Any] = {}
        if self.routing is not None:
            out["routing"] = self.routing
        if self.static_routes:
            out["static_routes"] = [r.model_dump() for r in self.static_routes]
        return out

    def _topology_any(self) -> dict[str, Any]:
        """The canonical ``topology`` of any kind (presets, dumbbell, explicit)."""
        if isinstance(self.topology, (ParkingLot, WiredCumWireless, WlanAccess)):
            return self.topology_canonical()
        if self.topology is not None:
            topo = self.topology
            n = self.pairs()
            default_duplex = default_access(
                max(topo.bottleneck.direction("forward")["rate"], topo.bottleneck.direction("reverse")["rate"])
            )
            return {
                "kind": "dumbbell",
                "pairs": n,
                "bottleneck": topo.bottleneck.canonical(),
                "sender_access": [d.canonical() for d in topo.sender_access]
                if topo.sender_access
                else [default_duplex],
                "receiver_access": [d.canonical() for d in topo.receiver_access]
                if topo.receiver_access
                else [default_duplex],
            }
        topology: dict[str, Any] = {
            "kind": "explicit",
            "nodes": [{"name": n.name, "kind": n.kind} for n in self.nodes or []],
            "links": [
                {"from": link.from_, "to": link.to, **link.canonical()} for link in self.links or []
            ],
            **self._routing_canonical(),
        }
        if self.wlan:
            topology["wlan"] = [w.canonical_segment(w.name or f"wlan{i}", w.ap) for i, w in enumerate(self.wlan)]
        return topology

    def _endpoint_defaults(self) -> list[tuple[str, str]] | None:
        """Every flow's (src, dst) defaults, TCP then UDP (None: an explicit topology, where
        both are given)."""
        return None if self.topology is None else self._default_endpoints()

    def _ends(self, f: Flow | Udp, k: int, defaults: list[tuple[str, str]] | None) -> tuple[Any, Any]:
        """(src, dst) of flow ``f``, the ``k``-th of TCP then UDP flows (:meth:`_endpoints`)."""
        if defaults is None:
            assert f.src is not None and f.dst is not None
            return f.src, f.dst
        d_src, d_dst = defaults[k]
        return f.src or d_src, f.dst or d_dst

    def _udp_canonical(self, defaults: list[tuple[str, str]] | None) -> list[dict[str, Any]]:
        n = len(self.flows)
        udp = []
        for i, u in enumerate(self.udp):
            src, dst = self._ends(u, n + i, defaults)
            udp.append(
                {
                    "name": u.name if u.name is not None else f"udp{i}",
                    "src": src,
                    "dst": dst,
                    "rate": u.rate,
                    "packet_size": u.packet_size,
                    "start": u.start,
                    "stop": u.stop,
                    **_route_of(u),
                }
            )
        return udp

    def canonical(self) -> dict[str, Any]:
        """The scenario in canonical units, as the simulator's ``Scenario`` deserializes it."""
        with gc_paused():
            return self._canonical()

    def _canonical(self) -> dict[str, Any]:
        topology = self._topology_any()
        defaults = self._endpoint_defaults()
        scenario_tcp = given_key(self.tcp)
        cache = self._merged
        flows = []
        for i, f in enumerate(self.flows):
            src, dst = self._ends(f, i, defaults)
            tcp, controller, recovery = self._flow_pieces(i, scenario_tcp, cache)
            flows.append(
                {
                    "name": f.name if f.name is not None else f"flow{i}",
                    "src": src,
                    "dst": dst,
                    "controller": controller.copy(),
                    "recovery": recovery.copy(),
                    "start": f.start,
                    "bytes": f.bytes,
                    "stop": f.stop,
                    "tcp": tcp.copy(),
                    **_route_of(f),
                    **{k: v for k in ("stack", "framing", "receiver") if (v := getattr(f, k)) is not None},
                }
            )
        return {
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "duration": self.duration,
            "topology": topology,
            "tcp": self._scenario_tcp().copy(),
            "flows": flows,
            "udp": self._udp_canonical(defaults),
            "trace": self.trace.model_dump(exclude_none=True),
        }

    def _canonical_text(
        self, pieces: list[tuple[Piece, Piece, Piece]] | None = None, indent: int | None = None
    ) -> tuple[str, bool] | None:
        """``json.dumps(self.canonical(), allow_nan=False, indent=indent)`` made faster: each
        flow's text from the texts of the pieces alike flows share (``pieces``: every flow's,
        when the caller has them). Also whether the text may hold an integer the simulator
        cannot hold (19 digits or more: :data:`tcplab.scenario.checks.LONG_INTEGER`). None
        when some value is not plain JSON (NaN, an infinity, another type): the caller then
        takes the slow way, json.dumps of :meth:`canonical`; also when :meth:`canonical` is
        not this class's own (a subclass's or a patched one: what it gives is what runs)."""
        if type(self).canonical is not _OWN_CANONICAL:
            return None
        # json.dumps's layout: compact (", " and ": "), or each item on its own line, its
        # level's indent ahead of it (",\n" and ": "; an empty table or list is {} or []).
        if indent is None:
            top_open, top_sep, top_close = "{", ", ", "}"
            list_open, list_sep, list_close = "[", ", ", "]"
            open_, sep, close = "{", ", ", "}"  # a flow's

            def at(value: Any, level: int) -> str:
                return _dumps(value)

            def text_of(piece: Piece, level: int) -> str | None:
                return piece.text
        else:
            pad = " " * indent
            top_open, top_sep, top_close = "{\n" + pad, ",\n" + pad, "\n}"
            list_open, list_sep, list_close = "[\n" + pad * 2, ",\n" + pad * 2, "\n" + pad + "]"
            open_, sep, close = "{\n" + pad * 3, ",\n" + pad * 3, "\n" + pad * 2 + "}"

            def at(value: Any, level: int) -> str:
                return _dumps_at(value, indent, level)

            def text_of(piece: Piece, level: int) -> str | None:
                return None if piece.text is None else piece.indented(indent, level)

        try:
            head = {
                "name": self.name,
                "description": self.description,
                "seed": self.seed,
                "duration": self.duration,
                "topology": self._topology_any(),
            }
            parts = [f"{_dumps(k)}: {at(v, 1)}" for k, v in head.items()]
            candidate = any(LONG_INTEGER.search(p) is not None for p in parts)
            parts = [top_open + top_sep.join(parts)]
            scenario = self._scenario_tcp()
            scenario_text = text_of(scenario, 1)
            if scenario_text is None:
                return None
            candidate = candidate or scenario.long_integer
            parts.append(f'{top_sep}"tcp": {scenario_text}{top_sep}')
            if pieces is None:
                scenario_tcp, cache = given_key(self.tcp), self._merged
                pieces = self._all_flow_pieces(scenario_tcp, cache)
            # A dumbbell's default endpoints are made here (a list of them all costs a
            # microsecond a flow): s{i} and r{i} where the flow gives none, as _ends.
            dumbbell = isinstance(self.topology, Dumbbell)
            defaults = None if dumbbell else self._endpoint_defaults()
            # The whole text as a list of strings joined once: a flow's own fields, then the
            # texts it shares with alike flows (not copied until the join).
            parts.append('"flows": ' + (list_open if self.flows else "["))
            append = parts.append
            enc = _encode_str
            tcp = controller = recovery = None
            tcp_text = mid = ""
            before = ""  # ahead of a flow: nothing for the first, then list_sep
            for i, (f, trio) in enumerate(zip(self.flows, pieces, strict=True)):
                if trio[0] is not tcp or trio[1] is not controller or trio[2] is not recovery:
                    tcp, controller, recovery = trio
                    texts = (text_of(tcp, 3), text_of(controller, 3), text_of(recovery, 3))
                    if texts[0] is None or texts[1] is None or texts[2] is None:
                        return None
                    if tcp.long_integer or controller.long_integer or recovery.long_integer:
                        candidate = True
                    tcp_text = texts[0]
                    mid = f'{sep}"controller": {texts[1]}{sep}"recovery": {texts[2]}{sep}"start": '
                if dumbbell:
                    src, dst = f.src, f.dst
                    if src is None:
                        src = f"s{i}"
                    if dst is None:
                        dst = f"r{i}"
                else:
                    src, dst = self._ends(f, i, defaults)
                name, start, size, stop = f.name, f.start, f.bytes, f.stop
                if name is None:
                    name = f"flow{i}"
                if type(start) is int and -_BIG < start < _BIG:
                    start_text = int.__repr__(start)
                else:
                    start_text = at(start, 3)
                    candidate = candidate or LONG_INTEGER.search(start_text) is not None
                if size is None and stop is None:
                    sizes = f'"bytes": null{sep}"stop": null'
                else:
                    if not (size is None or (type(size) is int and -_BIG < size < _BIG)) or not (
                        stop is None or (type(stop) is int and -_BIG < stop < _BIG)
                    ):
                        candidate = candidate or LONG_INTEGER.search(_dumps([size, stop])) is not None
                    sizes = (
                        f'"bytes": {"null" if size is None else at(size, 3)}{sep}'
                        f'"stop": {"null" if stop is None else at(stop, 3)}'
                    )
                append(
                    f'{before}{open_}"name": {enc(name) if type(name) is str else at(name, 3)}{sep}'
                    f'"src": {enc(src) if type(src) is str else at(src, 3)}{sep}'
                    f'"dst": {enc(dst) if type(dst) is str else at(dst, 3)}{mid}{start_text}{sep}'
                    f'{sizes}{sep}"tcp": '
                )
                before = list_sep
                append(tcp_text)
                if f.route is None and f.stack is None and f.framing is None and f.receiver is None:
                    append(close)
                    continue
                extra = ""
                if f.route is not None:
                    route = list(f.route)
                    extra = f'{sep}"route": {at(route, 3)}'
                    candidate = candidate or LONG_INTEGER.search(_dumps(route)) is not None
                for k in ("stack", "framing", "receiver"):
                    v = getattr(f, k)
                    if v is not None:
                        extra += f"{sep}{_dumps(k)}: {at(v, 3)}"
                append(extra + close)
            append(list_close if self.flows else "]")
            if dumbbell and self.udp:
                defaults = self._endpoint_defaults()
            for k, v in (("udp", self._udp_canonical(defaults)), ("trace", self.trace.model_dump(exclude_none=True))):
                candidate = candidate or LONG_INTEGER.search(_dumps(v)) is not None
                append(f"{top_sep}{_dumps(k)}: {at(v, 1)}")
        except (ValueError, TypeError):  # not JSON without NaN: the slow way names it
            return None
        return "".join(parts) + top_close, candidate

    def canonical_json(self, indent: int | None = None) -> str:
        """``json.dumps(self.canonical(), indent=indent)``."""
        if indent is None or (type(indent) is int and indent > 0):
            with gc_paused():
                fast = self._canonical_text(indent=indent)
            if fast is not None:
                return fast[0]
        return json.dumps(self.canonical(), indent=indent)


#: ScenarioCanonical.canonical as defined here (see ScenarioCanonical._canonical_text).
_OWN_CANONICAL = ScenarioCanonical.canonical


@contextmanager
def gc_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a scenario is validated or written out:
    what these make stays reachable (a collection finds nothing), and each full collection
    walks every object there is (a quarter of the validation's time at 300,000 flows). On
    again afterwards; left alone when it is off already (by the caller, or by an enclosing
    or concurrent use)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


#: Integers below this in magnitude have at most 18 digits (no :data:`LONG_INTEGER`).
_BIG = 10**18

_encode_str = json.encoder.encode_basestring_ascii  # what json.dumps writes a str with


def _dumps(value: Any) -> str:
    """``json.dumps(value, allow_nan=False)``, quicker for a string, an int and None."""
    t = type(value)
    if t is str:
        return _encode_str(value)
    if t is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    return json.dumps(value, allow_nan=False)


def _dumps_at(value: Any, indent: int, level: int) -> str:
    """``json.dumps(value, allow_nan=False, indent=indent)`` as it is written at ``level``
    inside an indented document (its lines after the first indented ``level`` times more)."""
    t = type(value)
    if t is str or t is int or value is None:
        return _dumps(value)
    return json.dumps(value, allow_nan=False, indent=indent).replace("\n", "\n" + " " * (indent * level))


def _route_of(flow: Flow | Udp) -> dict[str, Any]:
    """A flow's pinned route for the canonical form (absent when not given)."""
    return {"route": list(flow.route)} if flow.route is not None else {}
