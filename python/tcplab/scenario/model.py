"""The Scenario model: the top-level fields, the after-validator that runs the cross-field
checks (:mod:`tcplab.scenario.checks`), the topology's names and hosts, and loading from
TOML text, files and dicts. The canonical form the simulator reads is
:mod:`tcplab.scenario.canonical`'s."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, PrivateAttr, ValidationError, model_validator

from tcplab import topology as topology_graph
from tcplab.scenario.canonical import ScenarioCanonical, gc_paused
from tcplab.scenario.checks import ScenarioChecks, given_key
from tcplab.scenario.entries import validate_entries
from tcplab.scenario.errors import FieldError, ScenarioError, show_value, to_scenario_error
from tcplab.scenario.fields import PosDuration, StrictModel, count_field
from tcplab.scenario.flows import Flow, TcpOverrides, Trace, Udp, expand_flow_groups, group_member, seed_dependent
from tcplab.scenario.topologies import (
    Dumbbell,
    Link,
    Node,
    ParkingLot,
    StaticRoute,
    WiredCumWireless,
    topology_by_kind,
)
from tcplab.scenario.vocabulary import name_field
from tcplab.scenario.wlan import PIPES, Wlan, WlanAccess
from tcplab.toml_file import TomlError, parse_toml, read_text
from tcplab.units import format_duration, format_rate


class Scenario(ScenarioCanonical, ScenarioChecks, StrictModel):
    """A validated scenario. ``canonical()`` is what the simulator runs."""

    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    seed: Annotated[int, count_field("", 0, 2**64 - 1)] = 1
    duration: PosDuration
    topology: Annotated[Dumbbell | ParkingLot | WiredCumWireless | WlanAccess, BeforeValidator(topology_by_kind)] | None = None
    nodes: list[Node] | None = None
    links: list[Link] | None = None
    routing: Annotated[str, name_field("routing", "routing")] | None = None
    static_routes: list[StaticRoute] | None = None
    wlan: list[Wlan] | None = None
    tcp: TcpOverrides = TcpOverrides()
    flows: list[Flow] = []
    udp: list[Udp] = []
    trace: Trace = Trace()

    _source: dict[str, Any] = PrivateAttr(default_factory=dict)
    #: merged TCP settings and completed components (checks.Piece) by everything they depend
    #: on (the profile, the scenario's and the flow's overrides, the named component): ten
    #: thousand alike flows are merged, checked and written as JSON once
    #: (ScenarioChecks._flow_pieces). Keyed by content, never by identity: a scenario changed
    #: after validation (or a model_copy, which shares this dict) finds what its fields are now.
    _merged: dict[Any, Any] = PrivateAttr(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _flow_groups(cls, data: Any) -> Any:
        """``[[flows]]`` groups (``count = N``) become N flows here, before anything else;
        entries alike but for their names, endpoints and times are validated once
        (:mod:`tcplab.scenario.entries`)."""
        if isinstance(data, dict) and "flows" in data:
            flows = validate_entries(expand_flow_groups(data["flows"], data.get("seed", 1)))
            if flows is not data["flows"]:
                data = {**data, "flows": flows}
        return data

    # ---- cross-field checks (each one is in tcplab.scenario.checks) --------------------------

    @model_validator(mode="after")
    def _check(self) -> Scenario:
        if self.topology is not None and (self.nodes is not None or self.links is not None):
            raise FieldError(
                "cannot be combined with nodes/links (give either [topology] for a dumbbell, or [[nodes]] and [[links]])",
                ("topology",),
                show=False,
            )
        if self.topology is None:
            if self.links is None and self.nodes is None:
                raise FieldError(
                    "is required but missing (give [topology] for a dumbbell, or [[nodes]] and [[links]])",
                    ("topology",),
                    show=False,
                )
            if self.nodes is None:
                raise FieldError(
                    "is required with [[links]] (list every node with its kind)", ("nodes",), show=False
                )
            if self.links is None:
                raise FieldError("is required with [[nodes]]", ("links",), show=False)
            self._check_explicit()
        if self.wlan is not None:
            self._check_wlan()
        self._check_routing()
        self._check_flows()
        self._scenario_tcp()
        scenario_tcp = given_key(self.tcp)
        cache = self._merged
        pieces = self._all_flow_pieces(scenario_tcp, cache)
        if not self.flows and not self.udp:
            raise FieldError(
                "is empty: a scenario needs at least one [[flows]] or [[udp]] entry", ("flows",), show=False
            )
        self._check_simulator(pieces)
        return self

    # ---- the topology's names, hosts and default endpoints ---------------------------------

    def link_names(self) -> list[str]:
        """Names of the duplex links (``"{from}-{to}"``) in topology order."""
        if self.topology is None:
            return [f"{link.from_}-{link.to}" for link in self.links or []]
        if isinstance(self.topology, Dumbbell):
            n = self.pairs()
            return [f"s{i}-left" for i in range(n)] + ["left-right"] + [f"right-r{i}" for i in range(n)]
        return topology_graph.link_names(self.topology_canonical())

    def topology_canonical(self) -> dict[str, Any]:
        """The canonical ``topology`` (the simulator's form)."""
        topo = self.topology
        if isinstance(topo, ParkingLot):
            return topo.canonical()
        if isinstance(topo, WiredCumWireless):
            return topo.canonical(self.pairs())
        if isinstance(topo, WlanAccess):
            return topo.canonical_topology()
        return self._topology_any()

    def _graph(self) -> tuple[dict[str, str], list[tuple[str, str]]]:
        """({node: kind}, [(from, to)]) of the topology."""
        if self.topology is None:
            links = [(x.from_, x.to) for x in self.links or []]
            links += [(w.ap, st) for w in self.wlan or [] for st in w.station_names()]  # 802.11b hops
            return {n.name: n.kind for n in self.nodes or []}, links
        nodes, links = topology_graph.graph(self.topology_canonical())
        return nodes, [(a, b) for a, b, _, _ in links]

    def _default_endpoints(self) -> list[tuple[str, str]]:
        """(src, dst) of every TCP then UDP flow, defaults filled (dumbbell: s{i}, r{i};
        wlan_access: server, the i-th station; other presets: their host pairs in order, see
        tcplab.topology.default_pairs)."""
        if isinstance(self.topology, WlanAccess):
            stations = self.topology.station_names()
            n = len(self.flows) + len(self.udp)
            return [("server", stations[i] if i < len(stations) else f"sta{i}") for i in range(n)]
        if not isinstance(self.topology, (Dumbbell, type(None))):
            pairs = topology_graph.default_pairs(self.topology_canonical())
            out = []
            for i, f in enumerate(list(self.flows) + list(self.udp)):
                ds, dd = pairs[i] if i < len(pairs) else (f"<none: {len(pairs)} host pairs>",) * 2
                out.append((f.src if f.src is not None else ds, f.dst if f.dst is not None else dd))
            return out
        out = []
        for i, f in enumerate(list(self.flows) + list(self.udp)):
            out.append((f.src if f.src is not None else f"s{i}", f.dst if f.dst is not None else f"r{i}"))
        return out

    def pairs(self) -> int:
        """Host pairs of the dumbbell: given, or one per flow (TCP and UDP)."""
        assert isinstance(self.topology, (Dumbbell, WiredCumWireless))
        if self.topology.pairs is not None:
            return self.topology.pairs
        return max(1, len(self.flows) + len(self.udp))

    def hosts(self) -> list[str]:
        if isinstance(self.topology, WlanAccess):
            return ["server", *self.topology.station_names()]
        if self.topology is not None and not isinstance(self.topology, Dumbbell):
            nodes, _ = self._graph()
            return [n for n, kind in nodes.items() if kind == "host"]
        if self.topology is not None:
            n = self.pairs()
            return [f"s{i}" for i in range(n)] + [f"r{i}" for i in range(n)]
        return [node.name for node in self.nodes or [] if node.kind == "host"]

    def _pairs_text(self) -> str:
        topo = self.topology
        if isinstance(topo, ParkingLot):
            return f"long_pairs = {topo.long_pairs}, cross_pairs = {topo.cross_pairs}, reverse_pairs = {topo.reverse_pairs}"
        if isinstance(topo, WlanAccess):
            return f"{len(topo.stations)} station(s)"
        return f"pairs = {getattr(topo, 'pairs', None)}"

    def _endpoints(self, table: str, i: int) -> tuple[str, str]:
        f = (self.flows if table == "flows" else self.udp)[i]
        return self._ends(f, i if table == "flows" else len(self.flows) + i, self._endpoint_defaults())

    def _flow_name(self, table: str, i: int) -> str:
        f = (self.flows if table == "flows" else self.udp)[i]
        return f.name if f.name is not None else (f"flow{i}" if table == "flows" else f"udp{i}")

    # ---- construction --------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls,
        data: dict[str, Any],
        *,
        name: str | None = None,
        source: dict[str, Any] | None = None,
        base_dir: str | Path | None = None,
    ) -> Scenario:
        """Validates a TOML-shaped dict; ``name`` is used when the dict has none. Relative
        file names in it (time-trace loss files) are read from ``base_dir`` (None: the
        current directory); it is kept as ``source["base_dir"]``."""
        if not isinstance(data, dict):
            raise ScenarioError(f"a scenario must be a table of fields, not {type(data).__name__}")
        if name is not None and "name" not in data:
            data = {"name": name, **data}
        try:
            with gc_paused():
                model = cls.model_validate(resolve_files(data, base_dir))
        except ValidationError as e:
            raise _in_group(to_scenario_error(e), data) from None
        except RecursionError:
            raise ScenarioError("the scenario's tables or arrays are nested too deeply") from None
        model._source = {"given": data, **(source or {})}
        if base_dir is not None:
            model._source["base_dir"] = str(base_dir)
        return model

    @classmethod
    def from_toml(cls, text: str, *, name: str | None = None, path: str | None = None) -> Scenario:
        try:
            data = parse_toml(text, path)
        except TomlError as e:
            raise ScenarioError(str(e)) from None
        base_dir = Path(path).parent if path else None
        return cls.from_dict(data, name=name, source={"toml": text, "path": path}, base_dir=base_dir)

    def with_seed(self, seed: int) -> Scenario:
        """A copy with another seed (validated like the file's)."""
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ScenarioError(f"seed: {show_value(seed)} must be a whole number within [0, 2^64 - 1]", "seed")
        given = self._source.get("given")
        if isinstance(given, dict) and seed_dependent(given.get("flows")):
            # a flow group's start jitter is drawn from the seed: validate again
            source = {k: v for k, v in self._source.items() if k not in ("given", "base_dir")}
            return type(self).from_dict(
                {**given, "seed": seed}, source=source, base_dir=self._source.get("base_dir")
            )
        copy = self.model_copy(update={"seed": seed})
        copy._source = dict(self._source)
        return copy

    @property
    def source(self) -> dict[str, Any]:
        """What the scenario was built from: ``given`` (dict), ``toml`` (text), ``path``."""
        return self._source

    def _repr_html_(self) -> str:
        """Jupyter: the scenario's description (:mod:`tcplab.notebook`)."""
        from tcplab.notebook import scenario_html

        return scenario_html(self.describe(), self.canonical())

    def describe(self) -> str:
        """One line of the main parameters, for captions."""
        parts = [f"{self.name}", f"seed {self.seed}", f"duration {format_duration(self.duration)}"]
        if isinstance(self.topology, WlanAccess):
            t = self.topology
            rate, delay, packets = PIPES[t.pipe]
            queue = (t.queue or {"discipline": "drop_tail"})["discipline"]
            placed = ", ".join(
                st.preset or (f"{st.distance:g} m" if st.distance is not None else t.preset or "?") for st in t.stations
            )
            parts.append(
                f"{t.pipe} pipe {format_rate(rate)}, {format_duration(delay)} one-way, buffer {packets} pkts, {queue}"
            )
            parts.append(f"802.11b {format_rate(t.rate or t.mac.rate)}, stations {placed}")
        elif self.topology is not None and not isinstance(self.topology, Dumbbell):
            nodes, links = self._graph()
            parts.append(f"{self.topology.kind}: {len(nodes)} nodes, {len(links)} links")
        elif self.topology is not None:
            b = self.topology.bottleneck
            fwd = b.direction("forward")
            rev = b.direction("reverse")
            buf = fwd["buffer"]
            buf_s = f"{buf['packets']} pkts" if "packets" in buf else f"{buf['bytes']} B"
            parts.append(
                f"bottleneck {format_rate(fwd['rate'])}, {format_duration(fwd['delay'])} one-way, buffer {buf_s}"
            )
            for side, d in (("forward", fwd), ("reverse", rev)):
                if d["loss"]["model"] == "bernoulli":
                    parts.append(f"{side} loss p={d['loss']['p']:g}")
                elif d["loss"]["model"] == "trace":
                    parts.append(f"{side} loss trace of {len(d['loss']['packets'])} packets")
        else:
            parts.append(f"{len(self.nodes or [])} nodes, {len(self.links or [])} links")
        return "; ".join(parts)


def _in_group(error: ScenarioError, data: dict[str, Any]) -> ScenarioError:
    """``error`` saying, when it is about a flow of a ``[[flows]]`` group (its position in the
    expanded list), which group and which of its flows."""
    m = re.match(r"flows\[(\d+)\]", error.path or "")
    member = group_member(data.get("flows"), int(m.group(1))) if m else None
    if member is None:
        return error
    try:
        expand_flow_groups(data.get("flows"), data.get("seed", 1))
    except FieldError:
        return error  # the group itself is invalid: the error already names its entry
    entry, k = member
    return ScenarioError(f"{error.message} (flow {k} of the group flows[{entry}])", error.path)


class ScenarioFile(str):
    """A file name of a scenario resolved against the scenario's directory; ``given`` is the
    name as written (what errors show)."""

    given: str


def resolve_files(data: Any, base_dir: str | Path | None) -> Any:
    """``data`` with every relative time-trace ``file`` (a table with ``model =
    "time_trace"``) and link ``trace`` (a string) resolved against ``base_dir``, as a
    :class:`ScenarioFile`; ``data``
    itself when there is nothing to resolve. The one place a scenario's directory is used."""
    if base_dir is None:
        return data
    if isinstance(data, list):
        items: list[Any] | None = None  # a copy, once something in it is resolved
        for i, x in enumerate(data):
            if type(x) is dict and "file" not in x and "trace" not in x:
                for v in x.values():
                    if isinstance(v, (list, dict)):
                        break
                else:
                    continue  # a table of plain values names no file (a flow: a million of them)
            r = resolve_files(x, base_dir)
            if r is not x:
                if items is None:
                    items = list(data)
                items[i] = r
        return data if items is None else items
    if not isinstance(data, dict):
        return data
    out: dict[Any, Any] | None = None  # a copy, once something in it is resolved
    for k, v in data.items():
        if isinstance(v, (list, dict)):  # anything else is itself (a flow's values: a million)
            r = resolve_files(v, base_dir)
            if r is not v:
                if out is None:
                    out = dict(data)
                out[k] = r
    name = data.get("file")
    if data.get("model") == "time_trace" and isinstance(name, str) and name and not Path(name).is_absolute():
        resolved = ScenarioFile(Path(base_dir) / name)
        resolved.given = name
        out = dict(data) if out is None else out
        out["file"] = resolved
    # A link direction's delivery trace (``trace = "file.up"``; the [trace] table is a dict).
    name = data.get("trace")
    if isinstance(name, str) and name and not Path(name).is_absolute():
        resolved = ScenarioFile(Path(base_dir) / name)
        resolved.given = name
        out = dict(data) if out is None else out
        out["trace"] = resolved
    return data if out is None else out


def load_scenario(path: str | Path) -> Scenario:
    """Reads and validates a TOML scenario file; its name defaults to the file's stem."""
    p = Path(path)
    try:
        text = read_text(p)
    except TomlError as e:
        raise ScenarioError(str(e)) from None
    return Scenario.from_toml(text, name=p.stem, path=str(p))


def as_scenario(scenario: str | Path | dict | Scenario) -> Scenario:
    """A Scenario from a path, a TOML-shaped dict or a Scenario."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    if isinstance(scenario, (str, Path)):
        return load_scenario(scenario)
    raise TypeError(f"a scenario is a path, a dict or a tcplab.Scenario, not {type(scenario).__name__}")
