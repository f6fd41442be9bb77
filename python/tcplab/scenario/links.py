"""Link fields of a scenario: one direction of a link (rate or delivery trace, delay,
buffer, queue, loss, schedule) and the duplex link; with the network models (docs/network-models.md): RED queue
parameters, the loss models beyond Bernoulli and packet traces (bit errors, Gilbert-Elliott,
time traces with their file variant) and link-direction schedules. Each parser takes the TOML
value and returns the canonical dict, or raises :class:`FieldError` naming the sub-field and
the bad value.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, PrivateAttr, model_validator

from tcplab import _native
from tcplab.scenario.errors import NO_VALUE, FieldError, RawText, validate_nested
from tcplab.scenario.fields import Duration, Rate, StrictModel
from tcplab.scenario.vocabulary import DEFAULTS, names
from tcplab.units import UnitError, format_duration, parse_duration, parse_rate, parse_size
from tcplab.toml_file import read_limited


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
    if not 0 <= x < 2**32:  # what the simulator's count holds; >= 1 is its rule (empty_buffer)
        raise FieldError("is out of range (a packet count from 1 to 4294967295)", sub, x)
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
        if isinstance(model, str) and _loss_model(model) is not None:
            return _loss_model(model)(v)
        raise FieldError(f"is not a known loss model (known: {', '.join(names('loss_model'))})", ("model",), model)
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
    return float(p)  # within [0, 1]: the simulator's rule (range)


def queue_discipline(v: Any) -> dict[str, Any]:
    """``"drop_tail"``, ``{discipline = "drop_tail"}`` or ``{discipline = "red", min_th = 5,
    max_th = 10, ...}`` (see :func:`_red`)."""
    disciplines = names("queue")
    if isinstance(v, dict):
        if "discipline" not in v:
            raise FieldError("is required but missing", ("discipline",), show=False)
        d, sub = v["discipline"], ("discipline",)
        if d == "red":
            return _red(v)
        extra = sorted(set(v) - {"discipline"})
        if extra and d in PLAIN_QUEUES:
            raise FieldError("is not a known field of a queue (allowed: discipline)", (extra[0],), show=False)
    else:
        d, sub = v, ()
        if d == "red":
            raise FieldError("needs its parameters: {discipline = 'red', min_th = ..., max_th = ...}")
    if d not in disciplines or d not in PLAIN_QUEUES:
        raise FieldError(f"is not a known queue discipline (known: {', '.join(disciplines)})", sub, d)
    return {"discipline": d}


#: The queue disciplines without parameters; with "red" (:func:`red`) they are the ones this
#: schema parses (a test holds them to the simulator's ``names("queue")``).
PLAIN_QUEUES = ("drop_tail",)


def _red(v: dict[str, Any]) -> dict[str, Any]:
    return red(v)


def _loss_model(model: str) -> Any:
    """The parser of a loss model beyond none/bernoulli/trace, or None."""
    return LOSS_MODELS.get(model)


def _schedule(v: Any) -> list[dict[str, Any]]:
    return schedule(v)


def _delivery_trace(v: Any) -> dict[str, Any]:
    """``trace = "cell.up"``: a delivery trace in Mahimahi's format (one opportunity of 1500
    bytes per line, in ms), read and checked by the simulator's bounded reader
    (``tcplab_sim::delivery_trace``); relative paths from the scenario file's directory.
    Returns ``{"file": name as given, "ms": [...], "rate": mean rate}``."""
    if not isinstance(v, str) or not v:
        raise FieldError("is not a file path (a delivery trace in Mahimahi's format)", (), v)
    shown = getattr(v, "given", v)
    try:
        ms, rate = _native.read_delivery_trace(str(v))
    except ValueError as e:
        raise FieldError(str(e), (), shown) from None
    return {"file": shown, "ms": ms, "rate": rate}


class LinkDirection(StrictModel):
    """One direction of a link (every field optional here; required after merging)."""

    rate: Rate | None = None
    trace: Annotated[dict, BeforeValidator(_delivery_trace)] | None = None
    delay: Duration | None = None
    buffer: Annotated[dict, BeforeValidator(_buffer)] | None = None
    queue: Annotated[dict, BeforeValidator(queue_discipline)] | None = None
    loss: Annotated[dict, BeforeValidator(_loss)] | None = None
    report_losses: bool | None = None
    report_delay: Duration | None = None
    schedule: Annotated[list, BeforeValidator(_schedule)] | None = None


class Duplex(LinkDirection):
    """A duplex link: fields at this level apply to both directions; ``forward``/``reverse``
    tables override them per direction."""

    forward: LinkDirection | None = None
    reverse: LinkDirection | None = None
    #: Given as one table for every pair (see :func:`duplex_or_list`).
    _for_all: bool = PrivateAttr(default=False)

    @property
    def for_all(self) -> bool:
        return self._for_all

    @for_all.setter
    def for_all(self, value: bool) -> None:
        self._for_all = value

    @model_validator(mode="after")
    def _complete(self) -> Duplex:
        for d in ("forward", "reverse"):
            self.direction(d)
        return self

    def direction(self, d: str) -> dict[str, Any]:
        """The canonical LinkDir of direction ``d`` ("forward" or "reverse")."""
        base = self.model_dump(exclude_unset=True, exclude={"forward", "reverse"})
        _rate_or_trace(base, ())
        over = getattr(self, d)
        if over is not None:
            given = over.model_dump(exclude_unset=True)
            _rate_or_trace(given, (d,))
            if given.get("trace") is not None or given.get("rate") is not None:
                # A direction's rate or trace replaces the link's capacity, whichever it was.
                base.pop("rate", None)
                base.pop("trace", None)
            base.update(given)
        if base.get("trace") is None and base.get("rate") is None:
            raise FieldError(
                f"is required but missing (give rate, or a trace, for both directions or in the {d} table)",
                (d, "rate"),
                show=False,
            )
        for key in ("delay", "buffer"):
            if base.get(key) is None:
                raise FieldError(
                    f"is required but missing (give {key} for both directions, or in the {d} table)",
                    (d, key),
                    show=False,
                )
        trace = base.get("trace")
        out = {
            "rate": trace["rate"] if trace is not None else base["rate"],
            "delay": base["delay"],
            "buffer": base["buffer"],
            "queue": base.get("queue") or dict(DEFAULTS["queue"]),
            "loss": base.get("loss") or dict(DEFAULTS["loss"]),
        }
        if base.get("schedule"):
            out["schedule"] = base["schedule"]
        if trace is not None:
            for k, change in enumerate(out.get("schedule", [])):
                if "rate" in change:
                    raise FieldError(
                        "cannot change the rate of a trace-driven direction (its trace sets the capacity)",
                        (d, "schedule", k, "rate"),
                        show=False,
                    )
            out["trace"] = {"file": trace["file"], "ms": trace["ms"]}
        # The cross-layer channel: emitted only when set (the simulator omits the defaults); a
        # report_delay without report_losses is the simulator's rule (report_delay_needs_losses).
        if base.get("report_losses"):
            out["report_losses"] = True
        if base.get("report_delay"):
            out["report_delay"] = base["report_delay"]
        return out

    def canonical(self) -> dict[str, Any]:
        return {"forward": self.direction("forward"), "reverse": self.direction("reverse")}


def _rate_or_trace(fields: dict[str, Any], at: tuple[str, ...]) -> None:
    """Refuses a rate and a trace given together at one level (a link or one direction)."""
    if fields.get("trace") is not None and fields.get("rate") is not None:
        raise FieldError("cannot be combined with rate (a trace sets the capacity: give one)", (*at, "trace"), show=False)


def duplex_or_list(v: Any) -> Any:
    """A single duplex table for all pairs (marked ``for_all``: errors about it name no
    index), or a list with one per pair."""
    if isinstance(v, dict):
        link = validate_nested(Duplex, v, ())
        link.for_all = True
        return [link]
    if isinstance(v, list):
        return [validate_nested(Duplex, x, (i,)) for i, x in enumerate(v)]
    return v


# ---- network models (docs/network-models.md) ----------------------------------------------

#: RED's fields with their defaults (None: required); the defaults are the simulator's
#: (``RedSpec``'s serde defaults: ``max_p`` and ``w_q`` Floyd's recommendations 0.1, 0.002).
_RED_FIELDS: dict[str, Any] = {"min_th": None, "max_th": None, **DEFAULTS["red"]}


def red(v: dict[str, Any]) -> dict[str, Any]:
    """RED parameters: thresholds in packets (``mode = "packets"``) or bytes (``"bytes"``;
    sizes such as ``"15KB"`` allowed), ``max_p`` in [0, 1], ``w_q`` in (0, 1]."""
    allowed = ["discipline", *_RED_FIELDS]
    extra = [k for k in v if k not in allowed]
    if extra:
        raise FieldError(
            f"is not a known field of queue 'red' (allowed: {', '.join(allowed)})", (extra[0],), show=False
        )
    out: dict[str, Any] = {"discipline": "red"}
    for key, default in _RED_FIELDS.items():
        if key not in v:
            if default is None:
                raise FieldError("is required but missing", (key,), show=False)
            out[key] = default
            continue
        x = v[key]
        if key in ("gentle", "wait", "ecn"):
            if not isinstance(x, bool):
                raise FieldError("is not a boolean (expected true or false)", (key,), x)
            out[key] = x
        elif key == "mode":
            if x not in names("red_mode"):
                raise FieldError(f"is not a RED mode (known: {', '.join(names('red_mode'))})", (key,), x)
            out[key] = x
        elif key == "mean_packet_size":
            try:
                out[key] = parse_size(x)
            except UnitError as e:
                raise FieldError(str(e), (key,), x) from None
        else:
            out[key] = _red_number(key, x, out.get("mode", v.get("mode", "packets")))
    # min_th >= 0, max_th > min_th, max_p within [0, 1], w_q within (0, 1] and
    # mean_packet_size >= 1 are the simulator's rules (tcplab_sim::validate).
    return out


def _red_number(key: str, x: Any, mode: Any) -> float:
    if key in ("min_th", "max_th") and mode == "bytes" and isinstance(x, str):
        try:
            return float(parse_size(x))
        except UnitError as e:
            raise FieldError(str(e), (key,), x) from None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        unit = "bytes" if mode == "bytes" else "packets"
        what = f"a threshold in {unit}" if key in ("min_th", "max_th") else "a number"
        raise FieldError(f"is not {what}", (key,), x)
    if not math.isfinite(x):
        raise FieldError("is not a finite number", (key,), RawText(repr(float(x))))
    return float(x)


def _fields(v: dict[str, Any], model: str, allowed: tuple[str, ...], required: tuple[str, ...]) -> None:
    extra = sorted(set(v) - {"model", *allowed})
    if extra:
        raise FieldError(
            f"is not a known field of loss model {model!r} (allowed: model, {', '.join(allowed)})",
            (extra[0],),
            show=False,
        )
    for key in required:
        if key not in v:
            raise FieldError("is required but missing", (key,), show=False)


def _loss_ber(v: dict[str, Any]) -> dict[str, Any]:
    """``{model = "ber", ber = 1e-6}``: bit-error rate; p = 1 - (1 - ber)^(8 size)."""
    _fields(v, "ber", ("ber",), ("ber",))
    return {"model": "ber", "ber": _probability(v["ber"], ("ber",))}


def _loss_gilbert_elliott(v: dict[str, Any]) -> dict[str, Any]:
    """``{model = "gilbert_elliott", p_gb = ..., p_bg = ..., loss_good = 0, loss_bad = 1}``."""
    keys = ("p_gb", "p_bg", "loss_good", "loss_bad")
    _fields(v, "gilbert_elliott", keys, ("p_gb", "p_bg"))
    out: dict[str, Any] = {"model": "gilbert_elliott"}
    defaults = DEFAULTS["gilbert_elliott"]  # loss_good, loss_bad: the simulator's serde defaults
    for key in keys:
        out[key] = _probability(v[key], (key,)) if key in v else defaults[key]
    return out


def _loss_time_trace(v: dict[str, Any]) -> dict[str, Any]:
    """``{model = "time_trace", times = ["1.5s"], intervals = [["3s", "3.2s"]]}`` or
    ``{model = "time_trace", file = "losses.txt"}``: one time or ``start end`` pair per line
    (durations with units, or plain numbers in seconds; ``#`` starts a comment), relative
    paths from the scenario file's directory."""
    _fields(v, "time_trace", ("times", "intervals", "file"), ())
    if "file" in v:
        if "times" in v or "intervals" in v:
            raise FieldError("cannot be combined with times/intervals (give either)", ("file",), show=False)
        times, intervals = _read_time_trace(v["file"])
    else:
        if "times" not in v and "intervals" not in v:
            raise FieldError("is required but missing (give times, intervals or file)", ("times",), show=False)
        times = _durations(v.get("times", []), ("times",))
        raw = v.get("intervals", [])
        if not isinstance(raw, list):
            raise FieldError("is not a list of [start, end] pairs", ("intervals",), raw)
        intervals = []
        for k, pair in enumerate(raw):
            sub = ("intervals", k)
            if not isinstance(pair, list) or len(pair) != 2:
                raise FieldError("is not a [start, end] pair", sub, pair)
            intervals.append(_durations(pair, sub))  # start < end: the simulator's rule
    return {"model": "time_trace", "times": times, "intervals": intervals}


def _durations(x: Any, sub: tuple[str, ...]) -> list[int]:
    if not isinstance(x, list):
        raise FieldError("is not a list of times (e.g. ['1.5s', '2s'])", sub, x)
    out = []
    for k, t in enumerate(x):
        try:
            out.append(parse_duration(t))
        except UnitError as e:
            raise FieldError(str(e), (*sub, k), t) from None
    return out


def _read_time_trace(name: Any) -> tuple[list[int], list[list[int]]]:
    if not isinstance(name, str) or not name:
        raise FieldError("is not a file path", ("file",), name)
    # A relative name was resolved against the scenario file's directory before validation
    # (tcplab.scenario.model.resolve_files); errors show it as the file gave it.
    path, shown = Path(name), getattr(name, "given", name)
    try:
        text = read_limited(path)
    except OSError as e:
        raise FieldError(f"cannot be read ({e.strerror or e}: {path})", ("file",), shown) from None
    lines: list[tuple[int, list[int]]] = []
    texts: dict[int, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            lines.append((n, [parse_duration(_number_or_text(w)) for w in words]))
        except UnitError as e:
            raise FieldError(f"line {n}: {line.strip()!r} {e}", ("file",), shown) from None
        texts[n] = line.strip()
    # What a line may hold (one time, or a start < end pair) is the simulator's rule
    # (tcplab_sim::loss::time_trace::from_lines); this reader parses the units and words it.
    out = json.loads(_native.time_trace_lines_json(json.dumps(lines)))
    problem = out["problem"]
    if problem is not None:
        n = int(problem["path"].removeprefix("line "))
        if problem["rule"] == "start_before_end":
            start, end = (format_duration(t) for t in problem["value"])
            detail = f"must have start < end ([{start}, {end}])"
        else:
            detail = f"has {problem['value']} values: expected a time or a 'start end' pair"
        raise FieldError(f"line {n}: {texts[n]!r} {detail}", ("file",), shown)
    return out["times"], out["intervals"]


def _number_or_text(word: str) -> Any:
    try:
        return float(word)
    except ValueError:
        return word


LOSS_MODELS = {
    "ber": _loss_ber,
    "gilbert_elliott": _loss_gilbert_elliott,
    "time_trace": _loss_time_trace,
}
#: Every loss model this schema parses: :func:`_loss` reads none, bernoulli and trace itself
#: (a test holds them to the simulator's ``names("loss_model")``).
PARSED_LOSS_MODELS = ("none", "bernoulli", "trace", *LOSS_MODELS)


def schedule(v: Any) -> list[dict[str, Any]]:
    """``[{at = "10s", rate = "2Mbps"}, {at = "20s", loss = 0.01}, ...]``: changes of a link
    direction, strictly increasing in time (docs/network-models.md)."""
    if not isinstance(v, list):
        raise FieldError("is not a list of changes (expected [{at = '10s', rate = '2Mbps'}, ...])")
    out: list[dict[str, Any]] = []
    for k, c in enumerate(v):
        if not isinstance(c, dict):
            raise FieldError("is not a table {at = ..., rate/delay/buffer/loss = ...}", (k,), c)
        extra = sorted(set(c) - {"at", "rate", "delay", "buffer", "loss"})
        if extra:
            raise FieldError(
                "is not a known field of a change (allowed: at, rate, delay, buffer, loss)", (k, extra[0]), show=False
            )
        if "at" not in c:
            raise FieldError("is required but missing", (k, "at"), show=False)
        change: dict[str, Any] = {}
        for key, parse in (("at", parse_duration), ("rate", parse_rate), ("delay", parse_duration)):
            if key in c:
                try:
                    change[key] = parse(c[key])
                except UnitError as e:
                    raise FieldError(str(e), (k, key), c[key]) from None
        for key, parse in (("buffer", _buffer), ("loss", _loss)):
            if key in c:
                try:
                    change[key] = parse(c[key])
                except FieldError as e:
                    shown = c[key] if e.value is NO_VALUE else e.value
                    raise FieldError(e.detail, (k, key, *e.sub), shown, show=e.show) from None
        out.append(change)  # later than the one before: the simulator's rule (after_previous_change)
    return out
