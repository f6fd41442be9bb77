"""Flow tables of a scenario: TCP flows with their controller, recovery and TCP overrides,
constant-bit-rate UDP sources, and what the run traces."""

from __future__ import annotations

import json
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator

from tcplab import _native
from tcplab.scenario.errors import FieldError
from tcplab.scenario.fields import Duration, PosDuration, Rate, Size, _count, _Model, _unit
from tcplab.units import UnitError, parse_size


def _growth(v: Any) -> dict[str, Any]:
    """``"per_ack"``, ``"byte_counting"`` (limit 2), ``{mode = "byte_counting", limit = L}`` or
    ``"linux"`` (per acknowledged segment)."""
    modes = ("per_ack", "byte_counting", "linux")
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
    if mode in ("per_ack", "linux"):
        return {"mode": mode}
    limit = v.get("limit", 2)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise FieldError("must be a whole number of segments >= 1", ("limit",), limit)
    return {"mode": "byte_counting", "limit": limit}


def _ssthresh(v: Any) -> int | str:
    if isinstance(v, str) and v.strip().lower() in ("unbounded", "inf", "infinite", "none"):
        return "unbounded"
    try:
        return parse_size(v)
    except UnitError as e:
        raise FieldError(f"{e}, or 'unbounded'") from None


def _choice(what: str, known: tuple[str, ...] | None = None):
    """One of ``known`` (default: the simulator's profile names)."""

    def validate(v: Any) -> str:
        names = known if known is not None else tuple(_native.profiles())
        if not isinstance(v, str) or v not in names:
            raise FieldError(f"is not a known {what} (known: {', '.join(names)})")
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
        if name not in known:
            raise FieldError(f"is not a known {kind} (known: {', '.join(known)})", sub, name)
        for k, x in params.items():
            if not isinstance(x, (bool, int, float, str)):
                raise FieldError(
                    "is not a parameter value (expected a number, true/false or a string)", (k,), x
                )
        return {
            "name": name,
            "params": {
                k: (float(x) if isinstance(x, int) and not isinstance(x, bool) else x)
                for k, x in params.items()
            },
        }

    return BeforeValidator(validate)


class TcpOverrides(_Model):
    """TCP settings; every field optional (unset fields come from the level above)."""

    mss: Annotated[int, _unit(parse_size)] | None = None
    initial_cwnd: Annotated[int, _count("segments", 1, 10_000)] | None = None
    initial_ssthresh: Annotated[int | str, BeforeValidator(_ssthresh)] | None = None
    growth: Annotated[dict, BeforeValidator(_growth)] | None = None
    rto_min: PosDuration | None = None
    rto_initial: PosDuration | None = None
    rto_max: PosDuration | None = None
    clock_granularity: Duration | None = None
    timestamps: bool | None = None
    dupthresh: Annotated[int, _count("duplicate ACKs", 1)] | None = None
    delayed_ack: bool | None = None
    ack_every: Annotated[int, _count("segments", 1)] | None = None
    delayed_ack_timeout: Duration | None = None
    sack_blocks: Annotated[int, _count("SACK blocks", 0, 6)] | None = None
    rcv_buf: Size | None = None
    ecn: bool | None = None
    dsack: bool | None = None
    repeated_rto: Literal["rfc5681", "bsd"] | None = None
    frto: bool | None = None
    undo: bool | None = None
    sack_style: Literal["ranges", "eth_packets"] | None = None
    profile: Annotated[str, _choice("profile")] | None = None
    rto_mode: Annotated[str, _choice("RTO mode", ("rfc6298", "linux"))] | None = None
    quickack: bool | None = None
    delayed_ack_min: PosDuration | None = None

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class Flow(_Model):
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


class Udp(_Model):
    """A constant-bit-rate UDP source."""

    name: str | None = None
    src: str | None = None
    dst: str | None = None
    rate: Rate
    packet_size: Annotated[int, _unit(parse_size)]
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


#: Bytes of each captured packet kept by default (every header with options).
DEFAULT_PCAP_SNAPLEN = 128


class Trace(_Model):
    """What the run records besides summaries."""

    series: Literal["off", "change", "interval"] = "change"
    interval: PosDuration = 10_000_000
    events: bool = True
    segments: bool = True
    drops: bool = True
    pcap: Annotated[list[str], BeforeValidator(_pcap_selectors)] = []
    pcap_snaplen: Annotated[int, _count("bytes", 1, 65535)] = DEFAULT_PCAP_SNAPLEN


@cache
def _default_tcp_json() -> str:
    return _native.default_tcp_config_json()


def default_tcp_config() -> dict[str, Any]:
    """The simulator's default TCP settings (canonical units), as a fresh dict."""
    return json.loads(_default_tcp_json())
