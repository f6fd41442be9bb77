"""The Scenario model's cross-field checks (names, endpoints, routes, schedules, pcap
selectors, WLAN segments, the merged TCP settings), as a mixin of
:class:`tcplab.scenario.model.Scenario`."""

from __future__ import annotations

import copy
import json
import math
import re
from typing import Any

from tcplab import _native
from tcplab.scenario.errors import FieldError, RawText, did_you_mean
from tcplab.scenario.flows import TcpOverrides, profile_defaults
from tcplab.scenario.links import Duplex
from tcplab.scenario.rules import HIDDEN, tcp_value, word, word_tcp
from tcplab.scenario.wlan import WlanAccess
from tcplab.units import format_duration


class ScenarioChecks:
    """Checks run by ``Scenario``'s after-validator; each raises :class:`FieldError`. They read
    the Scenario's fields and its topology views (``hosts``, ``link_names``, ``_graph``,
    ``_endpoints``, ...), which :mod:`tcplab.scenario.model` defines."""

    def _check_explicit(self) -> None:
        """Two links between the same nodes (either way round). Unknown and repeated node
        names and links from a node to itself are the simulator's rules (``_check_simulator``)."""
        pairs: dict[tuple[str, str], int] = {}
        for i, link in enumerate(self.links or []):
            key = tuple(sorted((link.from_, link.to)))
            if key in pairs and link.from_ != link.to:
                raise FieldError(
                    f"duplicates links[{pairs[key]}] between the same nodes", ("links", i), show=False
                )
            pairs[key] = i

    def _check_routing(self) -> None:
        """``routing`` and ``static_routes`` belong to explicit topologies (the static routes'
        nodes are the simulator's rules, see ``_check_simulator``)."""
        if self.topology is not None:
            for key in ("routing", "static_routes"):
                if getattr(self, key) is not None:
                    raise FieldError(
                        "is only for explicit topologies ([[nodes]] and [[links]])", (key,), show=False
                    )

    def _check_wlan(self) -> None:
        """[[wlan]] segments belong to explicit topologies and name their stations' nodes; the
        segments' names, stations and parameters are the simulator's rules."""
        if self.topology is not None:
            raise FieldError("needs an explicit topology ([[nodes]] and [[links]])", ("wlan",), show=False)
        for i, w in enumerate(self.wlan or []):
            w.check_explicit(("wlan", i))

    def _check_flows(self) -> None:
        """Explicit topologies have no default hosts: src and dst must be given. Whether they
        are hosts, distinct, and the flows' names unique are the simulator's rules."""
        if self.topology is not None:
            return
        for table, items in (("flows", self.flows), ("udp", self.udp)):
            for i, f in enumerate(items):
                for key in ("src", "dst"):
                    if getattr(f, key) is None:
                        raise FieldError(
                            "is required but missing (explicit topologies have no default hosts)",
                            (table, i, key),
                            show=False,
                        )

    def _word_endpoint(self, path: tuple[str | int, ...], value: Any, limit: list[str]) -> FieldError:
        """A flow endpoint that is no host (rule ``not_a_host``): a default that the preset
        does not have says so; a given name lists the hosts."""
        table, i, key = path[0], path[1], path[2]
        flow = (self.flows if table == "flows" else self.udp)[int(i)]
        if self.topology is not None and getattr(flow, str(key)) is None:
            more = "more stations" if isinstance(self.topology, WlanAccess) else "more pairs"
            return FieldError(
                f"defaults to {value!r}, which does not exist with {self._pairs_text()} (give src/dst, or {more})",
                path,
                show=False,
            )
        more = "; set topology.pairs for more" if self.topology is not None and not isinstance(self.topology, WlanAccess) else ""
        return FieldError(f"is not a host ({did_you_mean(value, limit)}hosts: {', '.join(limit)}{more})", path, value)

    def _check_simulator(self, pieces: list[tuple[Piece, Piece, Piece]] | None = None) -> None:
        """The simulator's checks of the canonical scenario (``tcplab_sim::validate``, the one
        home of these rules): the first problem whose rule :mod:`tcplab.scenario.rules` words
        is raised under the field's TOML path, its values in user units. Problems of other
        rules are left to the simulator, which reports them when the scenario runs, except a
        topology it cannot expand (its line is raised as the simulator words it)."""
        # The canonical text, made from the texts of the pieces alike flows share: the same
        # text as json.dumps of the canonical form, at a third of the cost of building that
        # form and dumping it.
        fast = self._canonical_text(pieces)  # type: ignore[attr-defined]
        if fast is not None:
            text: str | None = fast[0]
            candidate = fast[1]
        else:
            try:
                text = json.dumps(self.canonical(), allow_nan=False)  # type: ignore[attr-defined]
            except ValueError:  # NaN or an infinity: the walk below names it
                text = None
            candidate = text is None or LONG_INTEGER.search(text) is not None
        # The walk costs a quarter of a validation: it runs only where the JSON text shows a
        # candidate (a non-finite number, or an integer of 19 digits or more).
        if candidate:
            bad = _bad_number(self.canonical(), "")  # type: ignore[attr-defined]
            if bad is not None:
                where, value, detail = bad
                raise FieldError(detail, self._toml_path(where), RawText(value))
        assert text is not None
        try:
            problems = json.loads(_native.scenario_problems_json(text))
        except ValueError as e:  # a value the simulator's types cannot hold
            raise FieldError(str(e), show=False) from None
        for problem in problems:
            worded = word(problem["rule"], problem["value"], problem["limit"], problem["path"])
            if worded is None:
                if problem["message"].startswith("topology."):
                    # A topology the simulator cannot expand (e.g. a per-pair array of the
                    # wrong length): its own line, alone (the flows' missing routes follow).
                    raise FieldError(problem["message"], show=False)
                continue
            path = self._toml_path(problem["path"])
            if problem["rule"] == "not_a_host":
                raise self._word_endpoint(path, problem["value"], problem["limit"])
            detail, value = worded
            if value is HIDDEN:
                raise FieldError(detail, path, show=False)
            raise FieldError(detail, path, value)

    def _toml_path(self, path: str) -> tuple[str | int, ...]:
        """A canonical field path (``topology.links[2].forward.schedule[0].at``) as the TOML
        file's path: an explicit topology's tables are at the top level, a field of a link
        direction (schedule, report_delay, loss, ...) given for both directions is the link's,
        a link given as one table for all pairs has no index, and a WLAN segment's buffer or
        rate given as its shorthand is the segment's."""
        parts: tuple[str | int, ...] = tuple(
            int(index) if index else name for name, index in re.findall(r"([A-Za-z_0-9]+)|\[(\d+)\]", path)
        )
        if self.topology is None and parts[:1] == ("topology",):
            parts = parts[1:]
        elif isinstance(self.topology, WlanAccess) and parts[:2] == ("topology", "wlan"):
            parts = ("topology",) + parts[2:]  # the preset's segment fields are the topology's
        if parts[-2:] in (("mac", "buffer"), ("mac", "rate")):
            segment = _walk(self, parts[:-2])
            if getattr(segment, str(parts[-1]), None) is not None:  # the segment's shorthand
                parts = parts[:-2] + parts[-1:]
        for k in range(1, len(parts) - 1):
            if parts[k] in ("forward", "reverse") and isinstance(parts[k + 1], str):
                duplex = _walk(self, parts[:k])
                if not isinstance(duplex, Duplex):
                    continue
                own = getattr(duplex, str(parts[k]))
                if own is None or parts[k + 1] not in own.model_fields_set:
                    parts = parts[:k] + parts[k + 1 :]
                break
        # A link given as one table for every pair (sender_access = {...}) has no index.
        return tuple(part for i, part in enumerate(parts) if not (isinstance(part, int) and _for_all(_walk(self, parts[:i]))))

    def _flow_profile(self, i: int | None) -> str:
        """The profile of flow ``i`` (None: the scenario level): the flow's ``tcp.profile``,
        else the scenario's, else ``"rfc"``."""
        flow = self.flows[i].tcp if i is not None else None
        for over in (flow, self.tcp):
            if over is not None and over.profile is not None:
                return over.profile
        return "linux"

    def _memo(self, key: tuple[Any, ...], make: Any, cache: dict[Any, Any] | None = None) -> Piece:
        """``make()`` once per ``key`` for this scenario (only what succeeded is kept), as a
        :class:`Piece` (callers copy its value: :meth:`Piece.copy`). ``cache``: the
        scenario's ``_merged``, when the caller has it (a private attribute costs a
        microsecond to read)."""
        if cache is None:
            cache = self._merged  # type: ignore[attr-defined]
        hit = cache.get(key)
        if hit is None:
            hit = cache[key] = Piece(make())
        return hit

    def _flow_pieces(self, i: int, scenario_tcp: Any, cache: dict[Any, Any] | None = None) -> tuple[Piece, Piece, Piece]:
        """(merged TCP settings, controller, recovery) of flow ``i``, checked in that order,
        each once per alike flow; ``scenario_tcp`` is :func:`given_key` of the scenario's
        ``[tcp]`` (the same for every flow), ``cache`` as :meth:`_memo`'s."""
        if cache is None:
            cache = self._merged  # type: ignore[attr-defined]
        flow = self.flows[i]
        profile = self._flow_profile(i)
        tcp = self._memo(("tcp", False, profile, scenario_tcp, given_key(flow.tcp)), lambda: self._merge_tcp(i), cache)
        return (
            tcp,
            self._component_piece(i, "controller", profile, cache),
            self._component_piece(i, "recovery", profile, cache),
        )

    def _all_flow_pieces(self, scenario_tcp: Any, cache: dict[Any, Any]) -> list[tuple[Piece, Piece, Piece]]:
        """:meth:`_flow_pieces` of every flow, in order: looked up once per kind of flow by
        what all three depend on (the flow's profile, ``tcp`` table, controller and
        recovery), which is what their own keys are made of."""
        scenario_profile = self._flow_profile(None)
        kinds: dict[Any, tuple[Piece, Piece, Piece]] = {}
        out: list[tuple[Piece, Piece, Piece]] = []
        append = out.append
        for i, flow in enumerate(self.flows):
            tcp = flow.tcp
            if tcp is None:
                key: Any = (scenario_profile, None, component_key(flow.controller), component_key(flow.recovery))
            else:
                profile = tcp.profile if tcp.profile is not None else scenario_profile
                key = (profile, given_key(tcp), component_key(flow.controller), component_key(flow.recovery))
            trio = kinds.get(key)
            if trio is None:
                trio = kinds[key] = self._flow_pieces(i, scenario_tcp, cache)
            append(trio)
        return out

    def _component_piece(self, i: int, kind: str, profile: str, cache: dict[Any, Any] | None = None) -> Piece:
        """:meth:`_component`, once per alike flow."""
        given = getattr(self.flows[i], kind)
        return self._memo(("component", profile, kind, component_key(given)), lambda: self._component(i, kind), cache)

    def _scenario_tcp(self) -> Piece:
        """The scenario-level TCP settings (:meth:`_merge_tcp` of None), once."""
        return self._memo(("tcp", True, self._flow_profile(None), given_key(self.tcp), None), lambda: self._merge_tcp(None))

    def _flow_component(self, i: int, kind: str) -> dict[str, Any]:
        """The controller or recovery of flow ``i`` (:meth:`_component`, once per alike flow),
        a copy."""
        return self._component_piece(i, kind, self._flow_profile(i)).copy()

    def _component(self, i: int, kind: str) -> dict[str, Any]:
        """The controller or recovery of flow ``i``: the one it names (with the parameters its
        profile adds, e.g. CUBIC's ``hystart`` under ``linux``), else its profile's default."""
        profile = self._flow_profile(i)
        defaults = profile_defaults(profile)
        given = getattr(self.flows[i], kind)
        if given is None:
            if defaults[kind] is None:
                raise FieldError(
                    f'is required but missing (profile {profile!r} has no default; tcp.profile = "linux" has one)',
                    ("flows", i, kind),
                    show=False,
                )
            return defaults[kind]
        if kind == "controller":
            completed: dict[str, Any] = json.loads(_native.complete_controller_json(profile, json.dumps(given)))
            return completed
        return given

    def _flow_tcp(self, i: int | None) -> dict[str, Any]:
        """The full TCP config of flow ``i`` (:meth:`_merge_tcp`, once per alike flow), a copy."""
        if i is None:
            return self._scenario_tcp().copy()
        return self._flow_pieces(i, given_key(self.tcp))[0].copy()

    def _merge_tcp(self, i: int | None) -> dict[str, Any]:
        """The full TCP config of flow ``i`` (None: the scenario level), cross-checked. The
        profile gives the base; explicit fields of the scenario's ``[tcp]``, then of the
        flow's ``tcp``, override it."""
        config = profile_defaults(self._flow_profile(i))["tcp"]
        origin: dict[str, tuple[str | int, ...]] = {}
        layers: list[tuple[tuple[str | int, ...], TcpOverrides | None]] = [(("tcp",), self.tcp)]
        if i is not None:
            layers.append((("flows", i, "tcp"), self.flows[i].tcp))
        for where, over in layers:
            if over is None:
                continue
            for k, v in over.given().items():
                if k == "profile":
                    continue
                config[k] = None if v == "unbounded" else v
                origin[k] = where + (k,)

        # A profile's value yields to an explicit one it would contradict: DSACK to SACK
        # turned off (as Linux's tcp_dsack without SACK), the initial receive buffer to a
        # smaller receive buffer (as tcp_rmem's default to SO_RCVBUF).
        if "dsack" not in origin and config.get("sack_blocks") == 0:
            config["dsack"] = False
        if ("rcv_buf_initial" not in origin and config.get("rcv_buf") is not None
                and config.get("rcv_buf_initial") is not None and config["rcv_buf_initial"] > config["rcv_buf"]):
            config["rcv_buf_initial"] = config["rcv_buf"]
        try:
            problem = _native.tcp_config_problem_json(json.dumps(config))
        except ValueError as e:  # a value the simulator's types cannot hold
            raise FieldError(str(e), ("flows", i) if i is not None else (), show=False) from None
        if problem is not None:
            raise self._tcp_error(json.loads(problem), config, origin, i)
        return config

    @staticmethod
    def _tcp_error(
        problem: dict[str, Any],
        config: dict[str, Any],
        origin: dict[str, tuple[str | int, ...]],
        i: int | None,
    ) -> FieldError:
        """The rule a merged TCP config breaks (``tcplab_core::ConfigError``, checked in Rust
        only) as a FieldError at the TOML path where the field was set, in user units. A
        relation of two fields (rto_min <= rto_max) blames the one this level gave."""
        field = problem["field"].removeprefix("tcp.")
        top = field.split(".")[0]
        if problem["rule"] == "rto_min_above_max" and "rto_max" in origin and "rto_min" not in origin:
            detail = f"must be >= rto_min ({format_duration(config['rto_min'])})"
            return FieldError(detail, origin["rto_max"], tcp_value("rto_max", config["rto_max"]))
        worded = word_tcp(top, problem["rule"], problem["value"], problem["limit"])
        if worded is None:  # a rule this package does not word: the simulator's line
            return FieldError(problem["message"], ("flows", i) if i is not None else (), show=False)
        where = origin.get(top, ("tcp", top)) + tuple(field.split(".")[1:])
        return FieldError(worded, where, tcp_value(top, problem["value"]))


def _for_all(links: Any) -> bool:
    """Whether ``links`` is the one duplex table a scenario gives for every pair."""
    return isinstance(links, list) and len(links) == 1 and getattr(links[0], "for_all", False)


def _walk(obj: Any, parts: tuple[str | int, ...]) -> Any:
    """The model object at ``parts`` below ``obj`` (None where there is none)."""
    for part in parts:
        if obj is None:
            return None
        if isinstance(part, int):
            obj = obj[part] if isinstance(obj, list) and part < len(obj) else None
        else:
            obj = getattr(obj, part, None)
    return obj


#: The largest integer the simulator's fields hold (u64).
_U64_MAX = 2**64 - 1
#: Any integer outside [-2**63, 2**64 - 1] has at least 19 digits in JSON text.
LONG_INTEGER = re.compile(r"\d{19,}")


def _bad_number(value: Any, path: str) -> tuple[str, str, str] | None:
    """(canonical path, value, what is wrong) of the first number in the canonical form
    that the simulator cannot hold: NaN or an infinity, or an integer outside u64. Parsers
    of the fields refuse these with their own words; this is the net under all of them
    (derived values included)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return path, repr(value), "is not a finite number"
    if isinstance(value, int) and not -(2**63) <= value <= _U64_MAX:
        return path, str(value), f"is out of range (at most {_U64_MAX})"
    if isinstance(value, dict):
        items = ((f"{path}.{k}" if path else str(k), v) for k, v in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for sub, v in items:
        bad = _bad_number(v, sub)
        if bad is not None:
            return bad
    return None


class Piece:
    """A part of the canonical form that alike flows share (merged TCP settings, a completed
    controller or recovery), made once per scenario and kind of flow: its value (kept apart
    from what it was made of), its JSON text (None: not JSON without NaN or an infinity, the
    canonical text is then made the slow way) and whether that text holds a number the
    simulator cannot hold (:data:`LONG_INTEGER`)."""

    __slots__ = ("value", "text", "long_integer", "_nested", "_indented")

    def __init__(self, value: dict[str, Any]) -> None:
        self.value = copy.deepcopy(value)
        try:
            self.text: str | None = json.dumps(self.value, allow_nan=False)
        except (ValueError, TypeError):
            self.text = None
        self.long_integer = self.text is None or LONG_INTEGER.search(self.text) is not None
        self._nested = tuple(k for k, v in self.value.items() if isinstance(v, dict))
        self._indented: dict[tuple[int, int], str] = {}

    def indented(self, indent: int, level: int) -> str:
        """The value's JSON text indented by ``indent`` as it is written at ``level`` inside
        an indented document (``json.dumps(..., indent=indent)``); only when :attr:`text`
        is not None."""
        text = self._indented.get((indent, level))
        if text is None:
            text = json.dumps(self.value, allow_nan=False, indent=indent).replace("\n", "\n" + " " * (indent * level))
            self._indented[(indent, level)] = text
        return text

    def copy(self) -> dict[str, Any]:
        """The value, its dicts copied (callers may change what they get)."""
        out = dict(self.value)
        for k in self._nested:
            out[k] = dict(out[k])
        return out


#: Types whose values are equal exactly when their JSON texts are.
_EXACT = frozenset({str, int, bool, type(None)})


class NoKey(Exception):
    """A value :func:`value_key` does not key."""


def value_key(value: Any, ordered: bool = False) -> Any:
    """A hashable key of a plain JSON or TOML value: two keys are equal exactly when the
    values are, of the same types (``1``, ``1.0`` and ``true`` differ; a float by its repr,
    so 0.0 and -0.0 differ, as in JSON) and, with ``ordered``, with a table's keys in the
    same order (without: when their JSON texts with sorted keys are); raises :class:`NoKey`
    for anything else."""
    t = type(value)
    if t in _EXACT:
        return (t, value)
    if t is float:
        return (t, repr(value))
    if t is dict:
        items = []
        for k, v in value.items():
            if type(k) is not str:
                raise NoKey
            items.append((k, value_key(v, ordered)))
        if not ordered:
            items.sort(key=lambda kv: kv[0])
        return (dict, tuple(items))
    if t is list:
        return (list, tuple(value_key(v, ordered) for v in value))
    raise NoKey


def _json_key(value: Any) -> tuple[str, str]:
    return ("json", json.dumps(value, sort_keys=True, default=str))


def component_key(given: Any) -> Any:
    """A flow's ``controller`` or ``recovery`` as a memo key: alike when their JSON texts with
    sorted keys are (a name without parameters, the usual case, is its own key)."""
    if given is None:
        return None
    if type(given) is dict and len(given) == 2:
        name, params = given.get("name"), given.get("params")
        if type(name) is str and type(params) is dict and not params:
            return ("name", name)
    try:
        return ("key", value_key(given))
    except NoKey:
        return _json_key(given)


def given_key(over: TcpOverrides | None) -> Any:
    """What a ``tcp`` table gives (``over.given()``), as a memo key."""
    if over is None:
        return None
    values = over.__dict__
    try:
        return ("key", tuple(sorted((k, value_key(values[k])) for k in over.model_fields_set)))
    except (NoKey, KeyError):
        return _json_key(over.given())
