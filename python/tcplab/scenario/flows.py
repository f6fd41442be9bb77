"""Flow tables of a scenario: TCP flows with their controller, recovery and TCP overrides,
constant-bit-rate UDP sources, and what the run traces."""

from __future__ import annotations

import copy
import math
import json
from functools import cache
from typing import Annotated, Any

from pydantic import BeforeValidator

from tcplab import _native
from tcplab.scenario.errors import FieldError, RawText, did_you_mean
from tcplab.scenario.fields import Duration, Rate, Size, StrictModel, count_field, unit_field
from tcplab.scenario.vocabulary import DEFAULTS, name_field, names
from tcplab.units import UnitError, parse_duration, parse_size


#: The largest value of the simulator's u32 fields.
_U32 = 2**32 - 1


#: The growth modes without parameters; byte_counting has a limit. Together they are the
#: simulator's modes (a test holds them to ``names("growth")``).
_PLAIN_GROWTH = ("per_ack", "linux")
GROWTH_MODES = (*_PLAIN_GROWTH, "byte_counting")


def _growth(v: Any) -> dict[str, Any]:
    """``"per_ack"``, ``"byte_counting"`` (the simulator's default limit, 2), ``{mode = "byte_counting", limit = L}`` or
    ``"linux"`` (per acknowledged segment)."""
    modes = names("growth")
    if isinstance(v, dict):
        if "mode" not in v and "limit" not in v:
            raise FieldError("is required but missing", ("mode",), show=False)
        mode, sub = v.get("mode", "byte_counting"), ("mode",)
        allowed = {"mode", "limit"} if mode == "byte_counting" else {"mode"}
        extra = sorted(set(v) - allowed)
        if extra:
            raise FieldError(
                f"is not a known field of growth mode {mode!r} (allowed: {', '.join(sorted(allowed))})",
                (extra[0],),
                show=False,
            )
    else:
        mode, sub, v = v, (), {}
    if mode not in modes:
        raise FieldError(f"is not a known growth mode (known: {', '.join(modes)})", sub, mode)
    if mode in _PLAIN_GROWTH:
        return {"mode": mode}
    limit = v.get("limit", DEFAULTS["byte_counting_limit"])  # RFC 3465's L, the simulator's
    if isinstance(limit, bool) or not isinstance(limit, int) or not 0 <= limit <= _U32:
        raise FieldError(f"is not a whole number of segments within [0, {_U32}]", ("limit",), limit)
    return {"mode": "byte_counting", "limit": limit}  # >= 1: the simulator's rule (at_least)


def _mss(v: Any) -> int:
    """A size in bytes that the simulator's u32 holds (its range is a TcpConfig rule)."""
    try:
        size = parse_size(v)
    except UnitError as e:
        raise FieldError(str(e)) from None
    if size > _U32:
        raise FieldError(f"is too large (at most {_U32} bytes)")
    return size


def _ssthresh(v: Any) -> int | str:
    if isinstance(v, str) and v.strip().lower() in ("unbounded", "inf", "infinite", "none"):
        return "unbounded"
    try:
        return parse_size(v)
    except UnitError as e:
        raise FieldError(f"{e}, or 'unbounded'") from None


def _choice(what: str):
    """One of the simulator's profile names."""

    def validate(v: Any) -> str:
        profiles = tuple(_native.profiles())
        if not isinstance(v, str) or v not in profiles:
            raise FieldError(f"is not a known {what} ({did_you_mean(v, profiles)}known: {', '.join(profiles)})")
        return v

    return BeforeValidator(validate)


@cache
def _profile_json(name: str) -> str:
    return _native.profile_json(name)


def profile_defaults(name: str) -> dict[str, Any]:
    """A profile's defaults, as a fresh dict: ``tcp`` (the full TCP config in canonical units),
    ``controller`` and ``recovery`` (what a flow that names none gets; None: it must name one)
    and ``controller_params`` (parameters the profile adds to a named controller)."""
    return json.loads(_profile_json(name))


def _known(kind: str) -> tuple[str, ...]:
    return tuple(_native.controllers() if kind == "controller" else _native.recoveries())


def _component(kind: str):
    """``"reno"`` or ``{name = "reno", param = value, ...}`` -> ``{"name", "params"}``."""

    def validate(v: Any) -> dict[str, Any]:
        known = _known(kind)
        if isinstance(v, dict):
            if "name" not in v:
                raise FieldError("is required but missing", ("name",), show=False)
            name, sub = v["name"], ("name",)
            params = {k: x for k, x in v.items() if k != "name"}
        else:
            name, sub, params = v, (), {}
        if not isinstance(name, str):
            raise FieldError(f"is not a {kind} name (known: {', '.join(known)})", sub, name)
        if name not in known and kind == "controller":
            from tcplab.plugins import PluginError, load_entry_points

            try:
                if load_entry_points():  # installed controllers (entry points), once per process
                    known = _known(kind)
            except PluginError as e:
                raise FieldError(f"is not a known controller ({e})", sub, name) from None
        if name not in known:
            raise FieldError(f"is not a known {kind} ({did_you_mean(name, known)}known: {', '.join(known)})", sub, name)
        for k, x in params.items():
            if not isinstance(x, (bool, int, float, str)):
                raise FieldError(
                    "is not a parameter value (expected a number, true/false or a string)", (k,), x
                )
            if isinstance(x, float) and not math.isfinite(x):
                raise FieldError("is not a finite number", (k,), RawText(repr(x)))
            if isinstance(x, int) and not isinstance(x, bool) and abs(x) > 2**53:
                raise FieldError("is out of range for a parameter (at most 2^53 in magnitude)", (k,), x)
        return {
            "name": name,
            "params": {
                k: (float(x) if isinstance(x, int) and not isinstance(x, bool) else x)
                for k, x in params.items()
            },
        }

    return BeforeValidator(validate)


class TcpOverrides(StrictModel):
    """TCP settings; every field optional (unset fields come from the level above). The fields
    hold what the simulator's types hold (u8, u32, u64); the allowed ranges and relations are
    the rules of ``TcpConfig::validate`` (tcplab_core), checked on the merged settings by
    :meth:`~tcplab.scenario.checks.ScenarioChecks._flow_tcp`."""

    mss: Annotated[int, BeforeValidator(_mss)] | None = None
    initial_cwnd: Annotated[int, count_field("segments", 0, _U32)] | None = None
    initial_ssthresh: Annotated[int | str, BeforeValidator(_ssthresh)] | None = None
    growth: Annotated[dict, BeforeValidator(_growth)] | None = None
    rto_min: Duration | None = None
    rto_initial: Duration | None = None
    rto_max: Duration | None = None
    clock_granularity: Duration | None = None
    timestamps: bool | None = None
    dupthresh: Annotated[int, count_field("duplicate ACKs", 0, _U32)] | None = None
    delayed_ack: bool | None = None
    ack_every: Annotated[int, count_field("segments", 0, _U32)] | None = None
    delayed_ack_timeout: Duration | None = None
    sack_blocks: Annotated[int, count_field("SACK blocks", 0, 255)] | None = None
    rcv_buf: Size | None = None
    rcv_autotune: bool | None = None
    rcv_buf_initial: Size | None = None
    rcv_truesize: Annotated[int, count_field("bytes", 0, _U32)] | None = None
    ecn: bool | None = None
    dsack: bool | None = None
    repeated_rto: Annotated[str, name_field("repeated-RTO style", "repeated_rto")] | None = None
    frto: bool | None = None
    undo: bool | None = None
    sack_style: Annotated[str, name_field("SACK style", "sack_style")] | None = None
    profile: Annotated[str, _choice("profile")] | None = None
    rto_mode: Annotated[str, name_field("RTO mode", "rto_mode")] | None = None
    quickack: bool | None = None
    delayed_ack_min: Duration | None = None

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class Flow(StrictModel):
    """A TCP flow."""

    name: str | None = None
    src: str | None = None
    dst: str | None = None
    # None: the profile's default (tcp.profile = "linux"); required under "rfc".
    controller: Annotated[dict, _component("controller")] | None = None
    recovery: Annotated[dict, _component("recovery")] | None = None
    start: Duration = 0
    bytes: Size | None = None
    stop: Duration | None = None
    tcp: TcpOverrides | None = None
    route: list[str] | None = None
    # How the flow runs live (`tcplab run --live`); a simulated run ignores these.
    stack: Annotated[str, name_field("stack", "stack")] | None = None
    framing: Annotated[str, name_field("framing", "framing")] | None = None
    receiver: Annotated[str, name_field("receiver", "receiver")] | None = None


class Udp(StrictModel):
    """A constant-bit-rate UDP source."""

    name: str | None = None
    src: str | None = None
    dst: str | None = None
    rate: Rate
    packet_size: Annotated[int, unit_field(parse_size)]
    start: Duration = 0
    stop: Duration | None = None
    route: list[str] | None = None


def _pcap_selectors(v: Any) -> list[str]:
    """``"all"``, one selector or a list: ``"left-right"`` (both directions, one file),
    ``"left-right/forward"`` or ``"left-right/reverse"`` (one direction)."""
    items = [v] if isinstance(v, str) else v
    if not isinstance(items, list):
        raise FieldError('is not a list of links (expected "all" or e.g. ["left-right", "s0-left/forward"])')
    for k, x in enumerate(items):
        if not isinstance(x, str) or not x:
            raise FieldError('is not a link name (e.g. "left-right" or "left-right/forward")', (k,), x)
    return list(items)


#: What a run records when ``[trace]`` says nothing: the simulator's ``TraceSpec::default``.
_TRACE: dict[str, Any] = DEFAULTS["trace"]

#: Bytes of each captured packet kept by default (every header with options).
DEFAULT_PCAP_SNAPLEN: int = _TRACE["pcap_snaplen"]


_ROWS = count_field("rows", 2, 2**62).func


def _max_rows(v: Any) -> int | str | None:
    """``trace.max_rows_per_flow``: None, "all" or a number of rows in [2, 2^62]."""
    if v is None or v == "all":
        return v
    if isinstance(v, str):
        raise FieldError('is not a number of rows or "all"')
    return _ROWS(v)


class Trace(StrictModel):
    """What the run records besides summaries (defaults: the simulator's)."""

    series: Annotated[str, name_field("series mode", "series")] = _TRACE["series"]
    #: > 0 when series are recorded: the simulator's rule (positive_interval).
    interval: Duration = _TRACE["interval"]
    events: bool = _TRACE["events"]
    segments: bool = _TRACE["segments"]
    drops: bool = _TRACE["drops"]
    pcap: Annotated[list[str], BeforeValidator(_pcap_selectors)] = _TRACE["pcap"]
    #: Within [1, 65535]: the simulator's rule (range).
    pcap_snaplen: Annotated[int, count_field("bytes", 0, _U32)] = DEFAULT_PCAP_SNAPLEN
    #: Keeps long runs bounded (docs/scenario.md, "Bounded recording"): a number of rows per
    #: flow, "all" (every row); None: the series and queues on change within 16 MB each.
    max_rows_per_flow: Annotated[int | str | None, BeforeValidator(_max_rows)] = _TRACE.get("max_rows_per_flow")


@cache
def _default_tcp_json() -> str:
    return _native.default_tcp_config_json()


def default_tcp_config() -> dict[str, Any]:
    """The simulator's default TCP settings (canonical units), as a fresh dict."""
    return json.loads(_default_tcp_json())


# ---- flow groups ---------------------------------------------------------------------------

#: Fields that make a ``[[flows]]`` entry a group of ``count`` flows.
GROUP_FIELDS = ("count", "start_step", "start_jitter")
_GROUP_KEYS = frozenset(GROUP_FIELDS)

#: The numpy stream of the flow groups' start jitter: ``[seed, FLOW_GROUP_STREAM, entry]``.
FLOW_GROUP_STREAM = 0x666C6F77  # "flow"


def _group_duration(value: Any, sub: tuple[str | int, ...]) -> int:
    try:
        return parse_duration(value)
    except UnitError as e:
        raise FieldError(str(e), sub, value) from None


def _group_starts(entry: dict[str, Any], i: int, count: int, seed: Any) -> list[Any]:
    """The start of each of a group's ``count`` flows (as given when nothing varies it)."""
    start = entry.get("start", 0)
    step = _group_duration(entry.get("start_step", 0), ("flows", i, "start_step"))
    jitter = _group_duration(entry.get("start_jitter", 0), ("flows", i, "start_jitter"))
    if isinstance(start, list):
        if len(start) != count:
            raise FieldError(
                f"has {len(start)} start times for count = {count} flows (give one per flow, or one for all)",
                ("flows", i, "start"),
                show=False,
            )
        base = [_group_duration(s, ("flows", i, "start", k)) for k, s in enumerate(start)]
    elif step == 0 and jitter == 0:
        return [start] * count
    else:
        base = [_group_duration(start, ("flows", i, "start"))] * count
    draws = [0] * count
    if jitter > 0:
        import numpy as np

        ok = isinstance(seed, int) and not isinstance(seed, bool) and 0 <= seed < 2**64
        rng = np.random.default_rng([seed if ok else 1, FLOW_GROUP_STREAM, i])
        draws = [int(x) for x in rng.integers(0, jitter, size=count, endpoint=True)]
    return [f"{b + k * step + d}ns" for k, (b, d) in enumerate(zip(base, draws))]


def seed_dependent(flows: Any) -> bool:
    """Whether the ``[[flows]]`` entries expand differently with another seed: a group with
    a ``start_jitter`` draws its starts from it (:func:`expand_flow_groups`). Elsewhere the
    seed only names the random streams."""
    return isinstance(flows, list) and any(isinstance(f, dict) and "start_jitter" in f for f in flows)


def expand_flow_groups(flows: Any, seed: Any = 1) -> Any:
    """The ``[[flows]]`` entries with every group (an entry with ``count``) replaced by its
    ``count`` flows: the same fields, names with the index appended (``name = "cross"`` ->
    ``cross0``, ``cross1``...; no name: the default ``flow{i}``), and start times ``start +
    k * start_step`` plus a jitter in ``[0, start_jitter]`` drawn from the scenario ``seed``
    (numpy stream ``[seed, FLOW_GROUP_STREAM, entry]``), or ``start = [t0, t1, ...]``, one
    per flow. The one place flow groups are expanded (the Scenario calls it first)."""
    if not isinstance(flows, list):
        return flows
    for f in flows:
        if isinstance(f, dict) and not _GROUP_KEYS.isdisjoint(f):
            break
    else:
        return flows
    out: list[Any] = []
    for i, entry in enumerate(flows):
        if not isinstance(entry, dict) or not any(k in entry for k in GROUP_FIELDS):
            out.append(entry)
            continue
        if "count" not in entry:
            extra = next(k for k in GROUP_FIELDS if k in entry)
            raise FieldError("is only allowed in a flow group (with count = N)", ("flows", i, extra), show=False)
        count = entry["count"]
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise FieldError("is not a whole number of flows >= 1", ("flows", i, "count"), count)
        if "name" in entry and not isinstance(entry["name"], str):
            raise FieldError("is not a string", ("flows", i, "name"), entry["name"])
        starts = _group_starts(entry, i, count, seed)
        fields = {k: v for k, v in entry.items() if k not in (*GROUP_FIELDS, "start", "name")}
        for k in range(count):
            flow = {**({"name": f"{entry['name']}{k}"} if "name" in entry else {}), **_copy_plain(fields)}
            if "start" in entry or starts[k] != 0:
                flow["start"] = starts[k]
            out.append(flow)
    return out


#: Values :func:`_copy_plain` shares rather than copies (immutable).
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


def _copy_plain(value: Any) -> Any:
    """``copy.deepcopy(value)`` for what a TOML document holds (tables, arrays, strings,
    numbers, booleans), a fifth of its cost; anything else is deep-copied."""
    t = type(value)
    if t in _IMMUTABLE:
        return value
    if t is dict:
        return {k: _copy_plain(v) for k, v in value.items()}
    if t is list:
        return [_copy_plain(v) for v in value]
    return copy.deepcopy(value)


def group_member(flows: Any, index: int) -> tuple[int, int] | None:
    """(entry, k) when flow ``index`` of the expanded list is the k-th flow of the group at
    ``flows[entry]`` of the document; None when it is a plain entry (or there are no groups)."""
    if not isinstance(flows, list):
        return None
    pos = 0
    for i, entry in enumerate(flows):
        count = entry.get("count") if isinstance(entry, dict) and "count" in entry else None
        n = count if isinstance(count, int) and not isinstance(count, bool) and count >= 1 else 1
        if index < pos + n:
            return (i, index - pos) if count is not None else None
        pos += n
    return None
