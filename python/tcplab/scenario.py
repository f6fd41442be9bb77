"""Scenario files: TOML in user-facing units, validated with pydantic, emitted as the
canonical JSON the simulator reads (durations in ns, rates in bit/s, sizes in bytes).

docs/scenario.md describes the format. Every validation error is reported as ONE line that
names the field path, the bad value and what is allowed::

    flows[0].controller: 'renoo' is not a known controller (known: reno)
    topology.bottleneck.rate: -5 must be > 0
    links[2].forward.loss.p: 1.5 must be within [0, 1]

Use :func:`load_scenario` (file), :meth:`Scenario.from_toml` (text) or
:meth:`Scenario.from_dict`; they raise :class:`ScenarioError`.
"""

from __future__ import annotations

import json
import tomllib
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    model_validator,
)

from tcplab import _native
from tcplab import topology as _topo
from tcplab.units import UnitError, format_duration, format_rate, parse_duration, parse_rate, parse_size

__all__ = [
    "ScenarioError",
    "Scenario",
    "load_scenario",
    "default_tcp_config",
]


# --------------------------------------------------------------------------------------------
# Errors


class ScenarioError(ValueError):
    """An invalid scenario. ``str(e)`` is one line: ``path: value what-is-wrong``."""

    def __init__(self, message: str, path: str | None = None):
        super().__init__(message)
        self.message = message
        self.path = path


_NO_VALUE: Any = object()


class FieldError(ValueError):
    """Raised inside validators: ``detail`` about ``value`` at ``sub`` below the current path.

    The message reads ``path.sub: value detail``. Without ``value`` the value pydantic was
    validating is shown; with ``show=False`` no value is (``path.sub: detail``).
    """

    def __init__(
        self,
        detail: str,
        sub: tuple[str | int, ...] = (),
        value: Any = _NO_VALUE,
        *,
        show: bool = True,
    ):
        super().__init__(detail)
        self.detail = detail
        self.sub = sub
        self.value = value
        self.show = show


def _path(loc: tuple[str | int, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


class _Raw(str):
    """Text shown as is in an error message (a value already in user units)."""


def _show(value: Any) -> str:
    """A value as the user wrote it (TOML-ish), shortened."""
    if isinstance(value, _Raw):
        text = str(value)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, str):
        text = repr(value)
    elif isinstance(value, dict):
        inner = ", ".join(f"{k} = {_show(v)}" for k, v in value.items())
        text = "{" + inner + "}"
    elif isinstance(value, list):
        text = "[" + ", ".join(_show(v) for v in value) + "]"
    else:
        text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


_TYPE_WORDS = {
    "int_type": "is not an integer",
    "int_parsing": "is not an integer",
    "int_from_float": "is not a whole number",
    "float_type": "is not a number",
    "float_parsing": "is not a number",
    "bool_type": "is not a boolean (expected true or false)",
    "bool_parsing": "is not a boolean (expected true or false)",
    "string_type": "is not a string",
    "list_type": "is not a list (expected an array [...] or [[...]] tables)",
    "model_type": "is not a table (expected {key = value, ...} or a [section])",
    "model_attributes_type": "is not a table (expected {key = value, ...} or a [section])",
    "dict_type": "is not a table (expected {key = value, ...} or a [section])",
    "string_too_short": "must not be empty",
}


def _describe(err: dict[str, Any]) -> tuple[tuple[str | int, ...], str]:
    """(location, "value what-is-wrong") of one pydantic error."""
    loc = tuple(err["loc"])
    kind = err["type"]
    value = err.get("input")
    ctx = err.get("ctx") or {}
    if kind == "value_error" and isinstance(ctx.get("error"), FieldError):
        fe: FieldError = ctx["error"]
        loc = loc + fe.sub
        if not fe.show:
            return loc, fe.detail
        shown = value if fe.value is _NO_VALUE else fe.value
        return loc, f"{_show(shown)} {fe.detail}"
    if kind in ("value_error", "assertion_error"):
        detail = str(ctx.get("error", err["msg"]))
        return loc, f"{_show(value)} {detail}"
    if kind == "missing":
        return loc, "is required but missing"
    if kind == "extra_forbidden":
        return loc, "is not a known field"
    if kind in _TYPE_WORDS:
        return loc, f"{_show(value)} {_TYPE_WORDS[kind]}"
    if kind == "literal_error":
        return loc, f"{_show(value)} is not allowed (expected {ctx.get('expected')})"
    bounds = {
        "greater_than": ("must be >", "gt"),
        "greater_than_equal": ("must be >=", "ge"),
        "less_than": ("must be <", "lt"),
        "less_than_equal": ("must be <=", "le"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return loc, f"{_show(value)} {words} {ctx.get(key)}"
    return loc, f"{_show(value)}: {err['msg']}"


def _one_error(e: ValidationError, prefix: tuple[str | int, ...] = ()) -> ScenarioError:
    loc, detail = _describe(e.errors()[0])
    path = _path(prefix + loc)
    return ScenarioError(f"{path}: {detail}" if path else detail, path or None)


def _nested(model: type[BaseModel], value: Any, sub: tuple[str | int, ...]) -> BaseModel:
    """Validates ``value`` as ``model``; errors keep their full path below ``sub``."""
    if isinstance(value, model):
        return value
    try:
        return model.model_validate(value)
    except ValidationError as e:
        loc, detail = _describe(e.errors()[0])
        raise FieldError(detail, sub + loc, show=False) from None


# --------------------------------------------------------------------------------------------
# Quantities (pydantic before-validators that turn user units into canonical integers)


def _unit(parse, **kw):
    def validate(v: Any) -> int:
        try:
            return parse(v, **kw)
        except UnitError as e:
            raise FieldError(str(e)) from None

    return BeforeValidator(validate)


Duration = Annotated[int, _unit(parse_duration)]
PosDuration = Annotated[int, _unit(parse_duration, positive=True)]
Rate = Annotated[int, _unit(parse_rate)]
Size = Annotated[int, _unit(parse_size)]


def _count(name: str, lo: int, hi: int | None = None):
    def validate(v: Any) -> int:
        if isinstance(v, bool) or not isinstance(v, int):
            if isinstance(v, float) and v.is_integer():
                v = int(v)
            else:
                raise FieldError(f"is not a whole number{' of ' + name if name else ''}")
        if v < lo or (hi is not None and v > hi):
            raise FieldError(f"must be within [{lo}, {hi}]" if hi is not None else f"must be >= {lo}")
        return v

    return BeforeValidator(validate)


def _buffer(v: Any) -> dict[str, int]:
    """``12`` (packets), ``"64KB"`` (bytes), ``{packets = 12}`` or ``{bytes = "64KB"}``."""
    if isinstance(v, dict):
        if len(v) != 1 or next(iter(v)) not in ("packets", "bytes"):
            raise FieldError("is not a buffer (expected {packets = N} or {bytes = SIZE})")
        key, x = next(iter(v.items()))
        if key == "packets":
            return {"packets": _packets(x, (key,))}
        try:
            return {"bytes": parse_size(x)}
        except UnitError as e:
            raise FieldError(str(e), (key,), x) from None
    if isinstance(v, str):
        try:
            return {"bytes": parse_size(v)}
        except UnitError as e:
            hint = (
                " (a string buffer is a size in bytes; a plain number counts packets)"
                if "needs a unit" in str(e)
                else ""
            )
            raise FieldError(f"{e}{hint}") from None
    return {"packets": _packets(v, ())}


def _packets(x: Any, sub: tuple[str, ...]) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise FieldError(
            "is not a buffer (expected a whole number of packets, e.g. 12, or a size in bytes, e.g. '64KB')",
            sub,
            x,
        )
    if not 1 <= x < 2**32:
        raise FieldError("must be >= 1 packet", sub, x)
    return x


def _loss(v: Any) -> dict[str, Any]:
    """``0.01`` (Bernoulli p), ``{model = "bernoulli", p = 0.01}``, ``{model = "none"}``,
    ``{model = "trace", packets = [3, 17]}`` (lose the link direction's packets with these
    0-based indices, in serialization order), or one of the models of ``_LOSS_MODELS``
    (docs/network-models.md)."""
    if isinstance(v, dict):
        model = v.get("model", "bernoulli" if "p" in v else None)
        if model == "none":
            extra = sorted(set(v) - {"model"})
            if extra:
                raise FieldError("is not a known field of loss model 'none'", (extra[0],), show=False)
            return {"model": "none"}
        if model == "bernoulli":
            extra = sorted(set(v) - {"model", "p"})
            if extra:
                raise FieldError(
                    "is not a known field of loss model 'bernoulli' (allowed: model, p)",
                    (extra[0],),
                    show=False,
                )
            if "p" not in v:
                raise FieldError("is required but missing", ("p",), show=False)
            return {"model": "bernoulli", "p": _probability(v["p"], ("p",))}
        if model == "trace":
            extra = sorted(set(v) - {"model", "packets"})
            if extra:
                raise FieldError(
                    "is not a known field of loss model 'trace' (allowed: model, packets)",
                    (extra[0],),
                    show=False,
                )
            if "packets" not in v:
                raise FieldError("is required but missing", ("packets",), show=False)
            return {"model": "trace", "packets": _packet_indices(v["packets"], ("packets",))}
        if _loss_model(model) is not None:
            return _loss_model(model)(v)
        raise FieldError(
            "is not a known loss model (known: none, bernoulli, trace, ber, gilbert_elliott, time_trace)",
            ("model",),
            model,
        )
    return {"model": "bernoulli", "p": _probability(v, ())} if v != 0 else {"model": "none"}


def _packet_indices(x: Any, sub: tuple[str, ...]) -> list[int]:
    if not isinstance(x, (list, tuple)):
        raise FieldError("is not a list of packet indices (e.g. [3, 17])", sub, x)
    out = []
    for k, i in enumerate(x):
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < 2**64:
            raise FieldError("is not a packet index (a whole number >= 0)", (*sub, str(k)), i)
        out.append(i)
    return out


def _probability(p: Any, sub: tuple[str, ...]) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise FieldError("is not a probability (expected a number within [0, 1])", sub, p)
    if not 0 <= p <= 1:
        raise FieldError("must be within [0, 1]", sub, p)
    return float(p)


def _queue(v: Any) -> dict[str, Any]:
    """``"drop_tail"``, ``{discipline = "drop_tail"}`` or ``{discipline = "red", min_th = 5,
    max_th = 10, ...}`` (see :func:`_red`)."""
    disciplines = ("drop_tail", "red")
    if isinstance(v, dict):
        if "discipline" not in v:
            raise FieldError("is required but missing", ("discipline",), show=False)
        d, sub = v["discipline"], ("discipline",)
        if d == "red":
            return _red(v)
        extra = sorted(set(v) - {"discipline"})
        if extra and d in disciplines:
            raise FieldError("is not a known field of a queue (allowed: discipline)", (extra[0],), show=False)
    else:
        d, sub = v, ()
        if d == "red":
            raise FieldError("needs its parameters: {discipline = 'red', min_th = ..., max_th = ...}")
    if d not in disciplines:
        raise FieldError(f"is not a known queue discipline (known: {', '.join(disciplines)})", sub, d)
    return {"discipline": d}


def _red(v: dict[str, Any]) -> dict[str, Any]:
    return _netmodels.red(v)


def _loss_model(model: str) -> Any:
    """The parser of a loss model beyond none/bernoulli/trace, or None."""
    return _netmodels.LOSS_MODELS.get(model)


def _schedule(v: Any) -> list[dict[str, Any]]:
    return _netmodels.schedule(v)


def _growth(v: Any) -> dict[str, Any]:
    """``"per_ack"``, ``"byte_counting"`` (limit 2) or ``{mode = "byte_counting", limit = L}``."""
    modes = ("per_ack", "byte_counting")
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
    if mode == "per_ack":
        return {"mode": "per_ack"}
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


@cache
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


# --------------------------------------------------------------------------------------------
# Models


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _known_fields(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = [f.alias or name for name, f in cls.model_fields.items()]
            for key in data:
                if key not in allowed:
                    raise FieldError(
                        f"is not a known field (allowed: {', '.join(allowed)})", (key,), show=False
                    )
        return data


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

    def given(self) -> dict[str, Any]:
        return self.model_dump(exclude_unset=True)


class LinkDirection(_Model):
    """One direction of a link (every field optional here; required after merging)."""

    rate: Rate | None = None
    delay: Duration | None = None
    buffer: Annotated[dict, BeforeValidator(_buffer)] | None = None
    queue: Annotated[dict, BeforeValidator(_queue)] | None = None
    loss: Annotated[dict, BeforeValidator(_loss)] | None = None
    report_losses: bool | None = None
    report_delay: Duration | None = None
    schedule: Annotated[list, BeforeValidator(_schedule)] | None = None


class Duplex(LinkDirection):
    """A duplex link: fields at this level apply to both directions; ``forward``/``reverse``
    tables override them per direction."""

    forward: LinkDirection | None = None
    reverse: LinkDirection | None = None

    @model_validator(mode="after")
    def _complete(self) -> Duplex:
        for d in ("forward", "reverse"):
            self.direction(d)
        return self

    def direction(self, d: str) -> dict[str, Any]:
        """The canonical LinkDir of direction ``d`` ("forward" or "reverse")."""
        base = self.model_dump(exclude_unset=True, exclude={"forward", "reverse"})
        over = getattr(self, d)
        if over is not None:
            base.update(over.model_dump(exclude_unset=True))
        for key in ("rate", "delay", "buffer"):
            if base.get(key) is None:
                raise FieldError(
                    f"is required but missing (give {key} for both directions, or in the {d} table)",
                    (d, key),
                    show=False,
                )
        out = {
            "rate": base["rate"],
            "delay": base["delay"],
            "buffer": base["buffer"],
            "queue": base.get("queue") or {"discipline": "drop_tail"},
            "loss": base.get("loss") or {"model": "none"},
        }
        if base.get("schedule"):
            out["schedule"] = base["schedule"]
        # The cross-layer channel: emitted only when set (the simulator omits the defaults).
        report_delay = base.get("report_delay") or 0
        if base.get("report_losses"):
            out["report_losses"] = True
            if report_delay:
                out["report_delay"] = report_delay
        elif report_delay:
            given_here = over is not None and "report_delay" in over.model_fields_set
            raise FieldError(
                "is only allowed with report_losses = true",
                (d, "report_delay") if given_here else ("report_delay",),
                _Raw(format_duration(report_delay)),
            )
        return out

    def canonical(self) -> dict[str, Any]:
        return {"forward": self.direction("forward"), "reverse": self.direction("reverse")}


def _one_or_list(v: Any) -> Any:
    """A single duplex table for all pairs, or a list with one per pair."""
    if isinstance(v, dict):
        return [_nested(Duplex, v, ())]
    if isinstance(v, list):
        return [_nested(Duplex, x, (i,)) for i, x in enumerate(v)]
    return v


class Dumbbell(_Model):
    """N sender hosts s0.. on access links to router ``left``, the bottleneck ``left``-``right``,
    N receiver hosts r0.. on access links from ``right``."""

    kind: Literal["dumbbell"] = "dumbbell"
    pairs: Annotated[int, _count("host pairs", 1, 100_000)] | None = None
    bottleneck: Duplex
    sender_access: Annotated[list[Duplex], BeforeValidator(_one_or_list)] | None = None
    receiver_access: Annotated[list[Duplex], BeforeValidator(_one_or_list)] | None = None


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
            return _one_or_list([merge(x) for x in v] if isinstance(v, list) else merge(v))
        return _nested(Duplex, merge(v), ()) if isinstance(v, dict) else v

    return BeforeValidator(validate)


#: Venoplus Fig. 2: 10 Mb/s everywhere, an 80 ms bottleneck, 50-packet buffers; the wired
#: and wireless hops 1 ms one way (the figure; the text says 0.1 ms round trip; as in
#: scenarios/venoplus.toml).
VENOPLUS_WIRED = {"rate": "10Mbps", "delay": "1ms", "buffer": 50}
VENOPLUS_BOTTLENECK = {"rate": "10Mbps", "delay": "80ms", "buffer": 50}
VENOPLUS_WIRELESS = {"rate": "10Mbps", "delay": "1ms", "buffer": 50}


class ParkingLot(_Model):
    """Routers r0..r{hops} in a chain; long pairs ls{i} -> lr{i} across every hop, cross
    pairs cs{h}_{i} -> cr{h}_{i} on hop h, reverse pairs vs{i} -> vr{i} backwards across
    every hop (Adaptive Reno Fig. 5)."""

    kind: Literal["parking_lot"]
    hops: Annotated[int, _count("router-to-router links", 1, 1000)] = 3
    bottleneck: Annotated[list[Duplex], BeforeValidator(_one_or_list)]
    access: Duplex | None = None
    long_pairs: Annotated[int, _count("host pairs", 0, 10_000)] = 1
    cross_pairs: Annotated[list[int], BeforeValidator(_pair_counts)] = [1]
    reverse_pairs: Annotated[int, _count("host pairs", 0, 10_000)] = 1
    queue: Annotated[dict, BeforeValidator(_queue)] | None = None
    packet_size: Annotated[int, _unit(parse_size)] = 1500

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
        if self.packet_size < 1:
            raise FieldError("must be >= 1 byte", ("packet_size",))
        return self

    def canonical(self) -> dict[str, Any]:
        rates = [d.direction(x)["rate"] for d in self.bottleneck for x in ("forward", "reverse")]
        access = self.access.canonical() if self.access is not None else _default_access(max(rates))
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


class WiredCumWireless(_Model):
    """Servers server{i} on wired links to ``router``, the bottleneck ``router``-``bs`` (base
    station), and lossy wireless hops ``bs``-mobile{i} (Venoplus Fig. 2, Veno Fig. 3b).
    Missing rates, delays and buffers are Venoplus's."""

    kind: Literal["wired_cum_wireless"]
    pairs: Annotated[int, _count("host pairs", 1, 100_000)] | None = None
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


def _default_access(rate: int) -> dict[str, Any]:
    """Access links when a preset's are not given: never the bottleneck."""
    d = {
        "rate": max(DEFAULT_ACCESS_MIN_RATE, 10 * rate),
        "delay": 0,
        "buffer": {"packets": DEFAULT_ACCESS_BUFFER_PACKETS},
        "queue": {"discipline": "drop_tail"},
        "loss": {"model": "none"},
    }
    return {"forward": d, "reverse": dict(d)}


_PRESETS: dict[str, type[_Model]] = {}


def _topology(v: Any) -> Any:
    """``[topology]``: ``kind`` picks the model (default ``dumbbell``)."""
    if not isinstance(v, dict):
        return v
    kind = v.get("kind", "dumbbell")
    models = {
        "dumbbell": Dumbbell,
        "parking_lot": ParkingLot,
        "wired_cum_wireless": WiredCumWireless,
        "wlan_access": WlanAccess,
    }
    if kind not in models:
        known = ", ".join(models)
        raise FieldError(
            f"is not a known topology kind (known: {known}; for any graph use [[nodes]] and [[links]])",
            ("kind",),
            kind,
        )
    return _nested(models[kind], v, ())


class StaticRoute(_Model):
    """At node ``at``, packets for host ``dst`` go to the neighbour ``next``."""

    at: str
    dst: str
    next: str


class Node(_Model):
    name: str
    kind: Literal["host", "router"]


class Link(Duplex):
    """A duplex link between two named nodes; ``forward`` carries packets from ``from`` to ``to``."""

    from_: str = Field(alias="from")
    to: str


class Flow(_Model):
    """A TCP flow."""

    name: str | None = None
    src: str | None = None
    dst: str | None = None
    controller: Annotated[dict, _component("controller")]
    recovery: Annotated[dict, _component("recovery")]
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


# ---- 802.11b WLAN (docs/wlan.md) ------------------------------------------------------------

WLAN_RATES = (1_000_000, 2_000_000, 5_500_000, 11_000_000)
WLAN_BASIC_RATES = (1_000_000, 2_000_000)


def _distance(v: Any) -> float:
    """A distance in metres: a number (metres) or a string with a unit ("20m", "0.05km")."""
    if isinstance(v, str):
        text = v.strip()
        for unit, scale in (("km", 1000.0), ("m", 1.0)):
            if text.endswith(unit):
                try:
                    x = float(text[: -len(unit)])
                except ValueError:
                    break
                v = x * scale
                break
        else:
            raise FieldError("is not a distance (expected metres, e.g. 20, '20m' or '0.05km')")
        if isinstance(v, str):
            raise FieldError("is not a distance (expected metres, e.g. 20, '20m' or '0.05km')")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise FieldError("is not a distance (expected metres, e.g. 20, '20m' or '0.05km')")
    if not (v > 0 and v < float("inf")):
        raise FieldError("must be > 0 metres")
    return float(v)


def _number(what: str, lo: float | None = None):
    def validate(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), -float("inf")):
            raise FieldError(f"is not a number ({what})")
        if lo is not None and v < lo:
            raise FieldError(f"must be >= {lo:g} ({what})")
        return float(v)

    return BeforeValidator(validate)


def _wlan_rate(allowed: tuple[int, ...]):
    def validate(v: Any) -> int:
        try:
            bps = parse_rate(v)
        except UnitError as e:
            raise FieldError(str(e)) from None
        if bps not in allowed:
            raise FieldError(f"is not an 802.11b rate (allowed: {', '.join(format_rate(r) for r in allowed)})")
        return bps

    return BeforeValidator(validate)


Distance = Annotated[float, BeforeValidator(_distance)]
PresetName = Literal["LL", "HL"]


class Station(_Model):
    """A wireless station: a host at ``distance`` from the AP, or placed by ``preset``."""

    node: str | None = None
    distance: Distance | None = None
    preset: PresetName | None = None


class WlanMac(_Model):
    """DCF/PHY parameters; every field has the 802.11b default (docs/wlan.md)."""

    rate: Annotated[int, _wlan_rate(WLAN_RATES)] = 11_000_000
    basic_rate: Annotated[int, _wlan_rate(WLAN_BASIC_RATES)] = 1_000_000
    buffer: Annotated[int, _count("packets", 1, 1_000_000)] = 50
    retry_limit: Annotated[int, _count("attempts", 1, 255)] = 7
    cw_min: Annotated[int, _count("slots", 1, 65_535)] = 31
    cw_max: Annotated[int, _count("slots", 1, 65_535)] = 1023
    slot: PosDuration = 20_000
    sifs: PosDuration = 10_000
    difs: PosDuration = 50_000
    plcp: Duration = 192_000
    mac_overhead: Annotated[int, _count("bytes", 0, 10_000)] = 36
    ack_bytes: Annotated[int, _count("bytes", 1, 10_000)] = 14


class WlanChannel(_Model):
    """Log-distance path loss + log-normal shadowing (docs/wlan.md)."""

    tx_power_dbm: Annotated[float, _number("dBm")] = 15.0
    ref_loss_db: Annotated[float, _number("dB at 1 m")] = 40.05
    exponent: Annotated[float, _number("path-loss exponent", 0.01)] = 3.5
    shadowing_db: Annotated[float, _number("dB", 0.0)] = 4.0
    rx_threshold_dbm: Annotated[float, _number("dBm")] | None = None
    coherence: Duration = 0


class _WlanParams(_Model):
    """Fields shared by a [[wlan]] segment and the wlan_access topology."""

    stations: list[Station]
    preset: PresetName | None = None
    rate: Annotated[int, _wlan_rate(WLAN_RATES)] | None = None
    buffer: Annotated[int, _count("packets", 1, 1_000_000)] | None = None
    mac: WlanMac = WlanMac()
    channel: WlanChannel = WlanChannel()
    report_losses: bool = False
    report_delay: Duration = 0

    def station_names(self) -> list[str]:
        return [st.node if st.node is not None else f"sta{j}" for j, st in enumerate(self.stations)]

    def check(self, where: tuple[str | int, ...], hosts: set[str] | None) -> None:
        if not self.stations:
            raise FieldError("must list at least one station", (*where, "stations"), [])
        if self.mac.cw_max < self.mac.cw_min:
            raise FieldError(f"must be >= cw_min ({self.mac.cw_min})", (*where, "mac", "cw_max"), self.mac.cw_max)
        if self.report_delay and not self.report_losses:
            raise FieldError(
                "is only allowed with report_losses = true",
                (*where, "report_delay"),
                _Raw(format_duration(self.report_delay)),
            )
        seen: dict[str, int] = {}
        for j, (st, name) in enumerate(zip(self.stations, self.station_names())):
            at = (*where, "stations", j)
            if hosts is not None and st.node is None:
                raise FieldError("is required but missing", (*at, "node"), show=False)
            if hosts is not None and name not in hosts:
                raise FieldError(f"is not a host (hosts: {', '.join(sorted(hosts))})", (*at, "node"), name)
            if hosts is None and name in ("server", "router", "ap"):
                raise FieldError("is a name the wlan_access topology uses for another node", (*at, "node"), name)
            if name in seen:
                raise FieldError(f"is already stations[{seen[name]}]", (*at, "node"), name)
            seen[name] = j
            if st.distance is not None and st.preset is not None:
                raise FieldError("give distance or preset, not both", (*at, "preset"), st.preset)
            if st.distance is None and st.preset is None and self.preset is None:
                raise FieldError(
                    "has no distance and no preset (give one, or a segment preset = 'LL'/'HL')", at, show=False
                )
            if st.distance is None and self.channel.shadowing_db <= 0:
                raise FieldError(
                    "presets need shadowing (channel.shadowing_db > 0)", (*at, "preset"), st.preset or self.preset
                )

    def canonical_segment(self, name: str, ap: str) -> dict[str, Any]:
        mac = self.mac.model_dump()
        if self.rate is not None:
            mac["rate"] = self.rate
        if self.buffer is not None:
            mac["buffer"] = self.buffer
        stations = []
        for st, node in zip(self.stations, self.station_names()):
            e: dict[str, Any] = {"node": node, "distance": st.distance, "preset": st.preset}
            stations.append(e)
        out: dict[str, Any] = {
            "name": name,
            "ap": ap,
            "stations": stations,
            "preset": self.preset,
            "mac": mac,
            "channel": self.channel.model_dump(),
        }
        if self.report_losses:
            out["report_losses"] = True
            if self.report_delay:
                out["report_delay"] = self.report_delay
        return out


class Wlan(_WlanParams):
    """A [[wlan]] segment of an explicit topology: router ``ap`` and host stations."""

    name: Annotated[str, Field(min_length=1)] | None = None
    ap: str


#: The WLAN paper's Dummynet pipes: rate, one-way delay, buffer (packets).
PIPES = {"thin": (1_600_000, 60_000_000, 12), "fat": (16_000_000, 30_000_000, 60)}


class WlanAccess(_WlanParams):
    """The WLAN paper's Fig. 3: server - 100 Mb/s - router - Dummynet pipe - AP - stations."""

    kind: Literal["wlan_access"]
    pipe: Literal["thin", "fat"] = "thin"
    queue: Annotated[dict, BeforeValidator(_queue)] | None = None
    access: Duplex | None = None

    def canonical_topology(self) -> dict[str, Any]:
        rate, delay, packets = PIPES[self.pipe]
        pipe_dir = {
            "rate": rate,
            "delay": delay,
            "buffer": {"packets": packets},
            "queue": self.queue or {"discipline": "drop_tail"},
            "loss": {"model": "none"},
        }
        access_dir = {
            "rate": 100_000_000,
            "delay": 100_000,
            "buffer": {"packets": 1000},
            "queue": {"discipline": "drop_tail"},
            "loss": {"model": "none"},
        }
        return {
            "kind": "wlan_access",
            "access": self.access.canonical()
            if self.access is not None
            else {"forward": access_dir, "reverse": dict(access_dir)},
            "pipe": {"forward": pipe_dir, "reverse": dict(pipe_dir)},
            "wlan": self.canonical_segment("wlan0", "ap"),
        }


@cache
def _default_tcp_json() -> str:
    return _native.default_tcp_config_json()


def default_tcp_config() -> dict[str, Any]:
    """The simulator's default TCP settings (canonical units), as a fresh dict."""
    return json.loads(_default_tcp_json())


#: Access links of a dumbbell when the scenario gives none: never the bottleneck.
DEFAULT_ACCESS_MIN_RATE = 1_000_000_000
DEFAULT_ACCESS_BUFFER_PACKETS = 1000


class Scenario(_Model):
    """A validated scenario. ``canonical()`` is what the simulator runs."""

    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    seed: Annotated[int, _count("", 0, 2**64 - 1)] = 1
    duration: PosDuration
    topology: Annotated[Dumbbell | ParkingLot | WiredCumWireless | WlanAccess, BeforeValidator(_topology)] | None = None
    nodes: list[Node] | None = None
    links: list[Link] | None = None
    routing: Literal["hops", "delay"] | None = None
    static_routes: list[StaticRoute] | None = None
    wlan: list[Wlan] | None = None
    tcp: TcpOverrides = TcpOverrides()
    flows: list[Flow] = []
    udp: list[Udp] = []
    trace: Trace = Trace()

    _source: dict[str, Any] = PrivateAttr(default_factory=dict)

    # ---- cross-field checks --------------------------------------------------------------

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
        elif isinstance(self.topology, WlanAccess):
            self.topology.check(("topology",), None)
        elif isinstance(self.topology, Dumbbell):
            self._check_dumbbell()
        if self.wlan is not None:
            self._check_wlan()
        self._check_schedules()
        self._check_routing()
        self._check_flows()
        self._check_routes()
        self._check_pcap()
        self._flow_tcp(None)
        for i in range(len(self.flows)):
            self._flow_tcp(i)
        if not self.flows and not self.udp:
            raise FieldError(
                "is empty: a scenario needs at least one [[flows]] or [[udp]] entry", ("flows",), show=False
            )
        return self

    def _check_explicit(self) -> None:
        seen: dict[str, int] = {}
        for i, n in enumerate(self.nodes or []):
            if n.name in seen:
                raise FieldError(
                    f"is already the name of nodes[{seen[n.name]}]", (("nodes", i, "name")), n.name
                )
            seen[n.name] = i
        pairs: dict[tuple[str, str], int] = {}
        for i, link in enumerate(self.links or []):
            for key, end in (("from", link.from_), ("to", link.to)):
                if end not in seen:
                    raise FieldError(f"is not a node (nodes: {', '.join(seen)})", ("links", i, key), end)
            if link.from_ == link.to:
                raise FieldError("links a node to itself", ("links", i, "to"), link.to)
            key = tuple(sorted((link.from_, link.to)))
            if key in pairs:
                raise FieldError(
                    f"duplicates links[{pairs[key]}] between the same nodes", ("links", i), show=False
                )
            pairs[key] = i

    def _duplexes(self) -> list[tuple[tuple[str | int, ...], Duplex]]:
        """Every duplex link table with its path."""
        if self.topology is not None:
            # Every Duplex-valued field of the preset, single or listed (bottleneck, access, ...).
            out: list[tuple[tuple[str | int, ...], Duplex]] = []
            for key in type(self.topology).model_fields:
                value = getattr(self.topology, key)
                if isinstance(value, Duplex):
                    out.append((("topology", key), value))
                elif isinstance(value, list):
                    out.extend((("topology", key, i), d) for i, d in enumerate(value) if isinstance(d, Duplex))
            return out
        return [(("links", i), link) for i, link in enumerate(self.links or [])]

    def _check_schedules(self) -> None:
        """Scheduled changes must fall within the run."""
        for path, duplex in self._duplexes():
            for where, table in (((), duplex), (("forward",), duplex.forward), (("reverse",), duplex.reverse)):
                for k, c in enumerate((table.schedule if table is not None else None) or []):
                    if c["at"] > self.duration:
                        raise FieldError(
                            f"must be at most the duration ({format_duration(self.duration)})",
                            (*path, *where, "schedule", k, "at"),
                            _Raw(format_duration(c["at"])),
                        )
    def link_names(self) -> list[str]:
        """Names of the duplex links (``"{from}-{to}"``) in topology order."""
        if self.topology is None:
            return [f"{link.from_}-{link.to}" for link in self.links or []]
        if isinstance(self.topology, Dumbbell):
            n = self.pairs()
            return [f"s{i}-left" for i in range(n)] + ["left-right"] + [f"right-r{i}" for i in range(n)]
        return _topo.link_names(self.topology_canonical())

    def topology_canonical(self) -> dict[str, Any]:
        """The canonical ``topology`` (the simulator's form)."""
        topo = self.topology
        if isinstance(topo, ParkingLot):
            return topo.canonical()
        if isinstance(topo, WiredCumWireless):
            return topo.canonical(self.pairs())
        if isinstance(topo, WlanAccess):
            return topo.canonical_topology()
        return self.canonical()["topology"]

    def _routing_canonical(self) -> dict[str, Any]:
        """``routing`` and ``static_routes`` of an explicit topology, when given."""
        out: dict[str, Any] = {}
        if self.routing is not None:
            out["routing"] = self.routing
        if self.static_routes:
            out["static_routes"] = [r.model_dump() for r in self.static_routes]
        return out

    def _graph(self) -> tuple[dict[str, str], list[tuple[str, str]]]:
        """({node: kind}, [(from, to)]) of the topology."""
        if self.topology is None:
            links = [(x.from_, x.to) for x in self.links or []]
            links += [(w.ap, st) for w in self.wlan or [] for st in w.station_names()]  # 802.11b hops
            return {n.name: n.kind for n in self.nodes or []}, links
        nodes, links = _topo.graph(self.topology_canonical())
        return nodes, [(a, b) for a, b, _, _ in links]

    def _check_routing(self) -> None:
        if self.topology is not None:
            for key in ("routing", "static_routes"):
                if getattr(self, key) is not None:
                    raise FieldError(
                        "is only for explicit topologies ([[nodes]] and [[links]])", (key,), show=False
                    )
            return
        nodes, links = self._graph()
        joined = {(a, b) for a, b in links} | {(b, a) for a, b in links}
        for i, r in enumerate(self.static_routes or []):
            for key in ("at", "dst", "next"):
                name = getattr(r, key)
                if name not in nodes:
                    raise FieldError(
                        f"is not a node (nodes: {', '.join(nodes)})", ("static_routes", i, key), name
                    )
            if nodes[r.dst] != "host":
                raise FieldError("is a router; routes lead to hosts", ("static_routes", i, "dst"), r.dst)
            if (r.at, r.next) not in joined:
                raise FieldError(
                    f"is not a neighbour of {r.at!r} (no link joins them)", ("static_routes", i, "next"), r.next
                )

    def _check_routes(self) -> None:
        """Each flow's ``route``: from its src to its dst along links, routers in between."""
        if all(f.route is None for f in list(self.flows) + list(self.udp)):
            return
        nodes, links = self._graph()
        joined = {(a, b) for a, b in links} | {(b, a) for a, b in links}
        for table, items in (("flows", self.flows), ("udp", self.udp)):
            for i, f in enumerate(items):
                if f.route is None:
                    continue
                src, dst = self._endpoints(table, i)
                where = (table, i, "route")
                if len(f.route) < 2:
                    raise FieldError("needs at least the flow's src and dst", where)
                for k, n in enumerate(f.route):
                    if n not in nodes:
                        raise FieldError("is not a node", (*where, k), n)
                if f.route[0] != src:
                    raise FieldError(f"must be the flow's src {src!r}", (*where, 0), f.route[0])
                if f.route[-1] != dst:
                    raise FieldError(f"must be the flow's dst {dst!r}", (*where, len(f.route) - 1), f.route[-1])
                for k in range(1, len(f.route)):
                    a, b = f.route[k - 1], f.route[k]
                    if (a, b) not in joined:
                        raise FieldError(f"is not linked to {a!r} (a route follows links)", (*where, k), b)
                    if b in f.route[:k]:
                        raise FieldError("is visited twice (a route has no loops)", (*where, k), b)
                    if k < len(f.route) - 1 and nodes[b] != "router":
                        raise FieldError("is a host in the middle of the route (hosts do not forward)", (*where, k), b)

    def _check_pcap(self) -> None:
        links = self.link_names()
        shown = ", ".join(links[:8]) + (", ..." if len(links) > 8 else "")
        for k, sel in enumerate(self.trace.pcap):
            if sel == "all":
                continue
            link, _, direction = sel.partition("/")
            if link not in links:
                raise FieldError(
                    f'is not a link (expected "all", a link or "<link>/forward" / "<link>/reverse"; links: {shown})',
                    ("trace", "pcap", k),
                    sel,
                )
            if "/" in sel and direction not in ("forward", "reverse"):
                raise FieldError(
                    "has an unknown direction (expected <link>/forward or <link>/reverse)",
                    ("trace", "pcap", k),
                    sel,
                )

    def _check_wlan(self) -> None:
        if self.topology is not None:
            raise FieldError("needs an explicit topology ([[nodes]] and [[links]])", ("wlan",), show=False)
        kinds = {n.name: n.kind for n in self.nodes or []}
        hosts = {n for n, k in kinds.items() if k == "host"}
        names: dict[str, int] = {}
        for i, w in enumerate(self.wlan or []):
            if w.ap not in kinds:
                raise FieldError(f"is not a node (nodes: {', '.join(kinds)})", ("wlan", i, "ap"), w.ap)
            if kinds[w.ap] != "router":
                raise FieldError("is a host; the access point must be a router (it relays)", ("wlan", i, "ap"), w.ap)
            name = w.name or f"wlan{i}"
            if name in names:
                raise FieldError(f"is already the name of wlan[{names[name]}]", ("wlan", i, "name"), name)
            names[name] = i
            w.check(("wlan", i), hosts)

    def _dumbbell_endpoints(self) -> list[tuple[str, str]]:
        """(src, dst) of every TCP then UDP flow, defaults filled (dumbbell: s{i}, r{i};
        wlan_access: server, the i-th station; other presets: their host pairs in order, see
        tcplab.topology.default_pairs)."""
        if isinstance(self.topology, WlanAccess):
            stations = self.topology.station_names()
            n = len(self.flows) + len(self.udp)
            return [("server", stations[i] if i < len(stations) else f"sta{i}") for i in range(n)]
        if not isinstance(self.topology, (Dumbbell, type(None))):
            pairs = _topo.default_pairs(self.topology_canonical())
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

    def _check_dumbbell(self) -> None:
        topo = self.topology
        assert topo is not None
        n = self.pairs()
        for key in ("sender_access", "receiver_access"):
            given = getattr(topo, key)
            if given is not None and len(given) not in (1, n):
                raise FieldError(
                    f"has {len(given)} entries for {n} host pairs (give one table for all pairs, or one per pair)",
                    ("topology", key),
                    show=False,
                )

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

    def _check_flows(self) -> None:
        hosts = self.hosts()
        shown = ", ".join(hosts[:8]) + (", ..." if len(hosts) > 8 else "")
        names: dict[str, str] = {}
        for table, items, offset in (("flows", self.flows, 0), ("udp", self.udp, len(self.flows))):
            for i, f in enumerate(items):
                for key in ("src", "dst"):
                    end = getattr(f, key)
                    if end is None:
                        if self.topology is None:
                            raise FieldError(
                                "is required but missing (explicit topologies have no default hosts)",
                                (table, i, key),
                                show=False,
                            )
                        end = self._dumbbell_endpoints()[offset + i][0 if key == "src" else 1]
                        if end not in hosts:
                            more = "more stations" if isinstance(self.topology, WlanAccess) else "more pairs"
                            raise FieldError(
                                f"defaults to {end!r}, which does not exist with {self._pairs_text()} (give src/dst, or {more})",
                                (table, i, key),
                                show=False,
                            )
                    elif end not in hosts:
                        more = (
                            "; set topology.pairs for more"
                            if self.topology is not None and not isinstance(self.topology, WlanAccess)
                            else ""
                        )
                        raise FieldError(f"is not a host (hosts: {shown}{more})", (table, i, key), end)
                src, dst = self._endpoints(table, i)
                if src == dst:
                    raise FieldError("is the flow's own source", (table, i, "dst"), dst)
                name = self._flow_name(table, i)
                if name in names:
                    raise FieldError(f"is already the name of {names[name]}", (table, i, "name"), name)
                names[name] = f"{table}[{i}]"
                if f.start > self.duration:
                    raise FieldError(
                        f"must be at most the duration ({format_duration(self.duration)})",
                        (table, i, "start"),
                        _Raw(format_duration(f.start)),
                    )
                stop = f.stop
                if stop is not None and stop <= f.start:
                    raise FieldError(
                        f"must be after start ({format_duration(f.start)})",
                        (table, i, "stop"),
                        _Raw(format_duration(stop)),
                    )

    def _pairs_text(self) -> str:
        topo = self.topology
        if isinstance(topo, ParkingLot):
            return f"long_pairs = {topo.long_pairs}, cross_pairs = {topo.cross_pairs}, reverse_pairs = {topo.reverse_pairs}"
        if isinstance(topo, WlanAccess):
            return f"{len(topo.stations)} station(s)"
        return f"pairs = {getattr(topo, 'pairs', None)}"

    def _endpoints(self, table: str, i: int) -> tuple[str, str]:
        f = (self.flows if table == "flows" else self.udp)[i]
        if self.topology is None:
            assert f.src is not None and f.dst is not None
            return f.src, f.dst
        d_src, d_dst = self._dumbbell_endpoints()[i if table == "flows" else len(self.flows) + i]
        return f.src or d_src, f.dst or d_dst

    def _flow_name(self, table: str, i: int) -> str:
        f = (self.flows if table == "flows" else self.udp)[i]
        return f.name if f.name is not None else (f"flow{i}" if table == "flows" else f"udp{i}")

    def _flow_tcp(self, i: int | None) -> dict[str, Any]:
        """The full TCP config of flow ``i`` (None: the scenario level), cross-checked."""
        config = default_tcp_config()
        origin: dict[str, tuple[str | int, ...]] = {}
        layers: list[tuple[tuple[str | int, ...], TcpOverrides | None]] = [(("tcp",), self.tcp)]
        if i is not None:
            layers.append((("flows", i, "tcp"), self.flows[i].tcp))
        for where, over in layers:
            if over is None:
                continue
            for k, v in over.given().items():
                config[k] = None if v == "unbounded" else v
                origin[k] = where + (k,)

        def bad(field: str, detail: str) -> FieldError:
            return FieldError(detail, origin.get(field, ("tcp", field)), _user(field, config[field]))

        mss = config["mss"]
        if not 64 <= mss <= 65_000:
            raise bad("mss", "must be within [64, 65000] bytes")
        if config["initial_ssthresh"] is not None and config["initial_ssthresh"] < 2 * mss:
            raise bad("initial_ssthresh", f"must be at least 2 MSS ({2 * mss} bytes)")
        if config["rto_min"] > config["rto_max"]:
            which = "rto_min" if "rto_min" in origin or "rto_max" not in origin else "rto_max"
            other = "rto_max" if which == "rto_min" else "rto_min"
            words = "<=" if which == "rto_min" else ">="
            raise bad(which, f"must be {words} {other} ({format_duration(config[other])})")
        if config["rcv_buf"] < mss:
            raise bad("rcv_buf", f"must be at least one MSS ({mss} bytes)")
        try:
            _native.check_tcp_config_json(json.dumps(config))
        except ValueError as e:  # a rule of the simulator's that the checks above do not know
            raise FieldError(str(e), ("flows", i) if i is not None else (), show=False) from None
        return config

    # ---- canonical form ------------------------------------------------------------------

    def canonical(self) -> dict[str, Any]:
        """The scenario in canonical units, as the simulator's ``Scenario`` deserializes it."""
        if isinstance(self.topology, (ParkingLot, WiredCumWireless, WlanAccess)):
            topology = self.topology_canonical()
        elif self.topology is not None:
            topo = self.topology
            n = self.pairs()
            rate = max(
                DEFAULT_ACCESS_MIN_RATE,
                10
                * max(
                    topo.bottleneck.direction("forward")["rate"], topo.bottleneck.direction("reverse")["rate"]
                ),
            )
            default_access = {
                "rate": rate,
                "delay": 0,
                "buffer": {"packets": DEFAULT_ACCESS_BUFFER_PACKETS},
                "queue": {"discipline": "drop_tail"},
                "loss": {"model": "none"},
            }
            default_duplex = {"forward": default_access, "reverse": dict(default_access)}
            topology: dict[str, Any] = {
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
        else:
            topology = {
                "kind": "explicit",
                "nodes": [{"name": n.name, "kind": n.kind} for n in self.nodes or []],
                "links": [
                    {"from": link.from_, "to": link.to, **link.canonical()} for link in self.links or []
                ],
                **self._routing_canonical(),
            }
            if self.wlan:
                topology["wlan"] = [w.canonical_segment(w.name or f"wlan{i}", w.ap) for i, w in enumerate(self.wlan)]
        flows = []
        for i, f in enumerate(self.flows):
            src, dst = self._endpoints("flows", i)
            flows.append(
                {
                    "name": self._flow_name("flows", i),
                    "src": src,
                    "dst": dst,
                    "controller": f.controller,
                    "recovery": f.recovery,
                    "start": f.start,
                    "bytes": f.bytes,
                    "stop": f.stop,
                    "tcp": self._flow_tcp(i),
                    **_route_of(f),
                }
            )
        udp = []
        for i, u in enumerate(self.udp):
            src, dst = self._endpoints("udp", i)
            udp.append(
                {
                    "name": self._flow_name("udp", i),
                    "src": src,
                    "dst": dst,
                    "rate": u.rate,
                    "packet_size": u.packet_size,
                    "start": u.start,
                    "stop": u.stop,
                    **_route_of(u),
                }
            )
        return {
            "name": self.name,
            "description": self.description,
            "seed": self.seed,
            "duration": self.duration,
            "topology": topology,
            "tcp": self._flow_tcp(None),
            "flows": flows,
            "udp": udp,
            "trace": self.trace.model_dump(),
        }

    def canonical_json(self, indent: int | None = None) -> str:
        return json.dumps(self.canonical(), indent=indent)

    # ---- construction --------------------------------------------------------------------

    @classmethod
    def from_dict(
        cls, data: dict[str, Any], *, name: str | None = None, source: dict[str, Any] | None = None
    ) -> Scenario:
        """Validates a TOML-shaped dict; ``name`` is used when the dict has none."""
        if not isinstance(data, dict):
            raise ScenarioError(f"a scenario must be a table of fields, not {type(data).__name__}")
        if name is not None and "name" not in data:
            data = {"name": name, **data}
        try:
            model = cls.model_validate(data)
        except ValidationError as e:
            raise _one_error(e) from None
        model._source = {"given": data, **(source or {})}
        return model

    @classmethod
    def from_toml(cls, text: str, *, name: str | None = None, path: str | None = None) -> Scenario:
        where = f"{path}: " if path else ""
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ScenarioError(f"{where}invalid TOML: {e}") from None
        token = _netmodels.BASE_DIR.set(Path(path).parent if path else None)
        try:
            return cls.from_dict(data, name=name, source={"toml": text, "path": path})
        finally:
            _netmodels.BASE_DIR.reset(token)

    def with_seed(self, seed: int) -> Scenario:
        """A copy with another seed (validated like the file's)."""
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
            raise ScenarioError(f"seed: {_show(seed)} must be a whole number within [0, 2^64 - 1]", "seed")
        copy = self.model_copy(update={"seed": seed})
        copy._source = dict(self._source)
        return copy

    @property
    def source(self) -> dict[str, Any]:
        """What the scenario was built from: ``given`` (dict), ``toml`` (text), ``path``."""
        return self._source

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


def _route_of(flow: Flow | Udp) -> dict[str, Any]:
    """A flow's pinned route for the canonical form (absent when not given)."""
    return {"route": list(flow.route)} if flow.route is not None else {}


def _user(field: str, value: Any) -> Any:
    """A canonical TCP value shown back in user units (seconds for durations)."""
    if field in ("rto_min", "rto_initial", "rto_max", "clock_granularity", "delayed_ack_timeout"):
        return _Raw(format_duration(value))
    return value


def load_scenario(path: str | Path) -> Scenario:
    """Reads and validates a TOML scenario file; its name defaults to the file's stem."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError(f"{p}: no such file") from None
    except OSError as e:
        raise ScenarioError(f"{p}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise ScenarioError(f"{p}: not a UTF-8 text file") from None
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


# RED, the loss models beyond Bernoulli/trace and link schedules (docs/network-models.md) live
# in their own module, which uses this module's error and quantity helpers.
from tcplab import netmodels as _netmodels  # noqa: E402
