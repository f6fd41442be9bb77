"""Scenario fields of the network models (docs/network-models.md): RED queue parameters, the
loss models beyond Bernoulli and packet traces (bit errors, Gilbert-Elliott, time traces with
their file variant) and link-direction schedules. Each parser takes the TOML value and returns
the canonical dict, or raises :class:`tcplab.scenario.FieldError` naming the sub-field and the
bad value; :mod:`tcplab.scenario` calls them from its queue, loss and link-direction fields.
"""

from __future__ import annotations

from contextvars import ContextVar
from pathlib import Path
from typing import Any

from tcplab.scenario import _NO_VALUE, FieldError, _buffer, _loss, _probability, _show
from tcplab.units import UnitError, format_duration, parse_duration, parse_rate, parse_size

#: RED's fields with their defaults (None: required). ``max_p`` and ``w_q`` default to
#: Floyd's recommendations (0.1, 0.002).
_RED_FIELDS: dict[str, Any] = {
    "min_th": None,
    "max_th": None,
    "max_p": 0.1,
    "w_q": 0.002,
    "gentle": False,
    "wait": True,
    "mode": "packets",
    "ecn": False,
    "mean_packet_size": 1500,
}


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
            if x not in ("packets", "bytes"):
                raise FieldError("is not a RED mode (expected 'packets' or 'bytes')", (key,), x)
            out[key] = x
        elif key == "mean_packet_size":
            try:
                out[key] = parse_size(x)
            except UnitError as e:
                raise FieldError(str(e), (key,), x) from None
            if out[key] <= 0:
                raise FieldError("must be > 0 bytes", (key,), x)
        else:
            out[key] = _red_number(key, x, out.get("mode", v.get("mode", "packets")))
    if out["min_th"] < 0:
        raise FieldError("must be >= 0", ("min_th",), v["min_th"])
    if out["max_th"] <= out["min_th"]:
        raise FieldError(f"must be greater than min_th ({_show(v['min_th'])})", ("max_th",), v["max_th"])
    if not 0 <= out["max_p"] <= 1:
        raise FieldError("must be within [0, 1]", ("max_p",), v["max_p"])
    if not 0 < out["w_q"] <= 1:
        raise FieldError("must be within (0, 1] (the weight of the newest sample in the average)", ("w_q",), v["w_q"])
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
    for key, default in zip(keys, (None, None, 0.0, 1.0)):
        out[key] = _probability(v[key], (key,)) if key in v else default
    return out


#: Directory that relative ``file`` paths in a scenario are read from (the scenario file's).
BASE_DIR: ContextVar[Path | None] = ContextVar("tcplab_scenario_base_dir", default=None)


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
            a, b = _durations(pair, sub)
            if b <= a:
                raise FieldError("must have start < end", sub, pair)
            intervals.append([a, b])
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
    path = Path(name)
    base = BASE_DIR.get()
    if not path.is_absolute() and base is not None:
        path = base / path
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise FieldError(f"cannot be read ({e.strerror or e}: {path})", ("file",), name) from None
    times: list[int] = []
    intervals: list[list[int]] = []
    for n, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        try:
            values = [parse_duration(_number_or_text(w)) for w in words]
        except UnitError as e:
            raise FieldError(f"line {n}: {line.strip()!r} {e}", ("file",), name) from None
        if len(values) == 1:
            times.append(values[0])
        elif len(values) == 2 and values[0] < values[1]:
            intervals.append(values)
        else:
            raise FieldError(
                f"line {n}: {line.strip()!r} is not a time or a 'start end' pair with start < end",
                ("file",),
                name,
            )
    return times, intervals


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
        if len(c) == 1:
            raise FieldError("changes nothing (give rate, delay, buffer or loss)", (k,), show=False)
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
                    shown = c[key] if e.value is _NO_VALUE else e.value
                    raise FieldError(e.detail, (k, key, *e.sub), shown, show=e.show) from None
        if out and change["at"] <= out[-1]["at"]:
            raise FieldError(
                f"must be later than schedule[{k - 1}].at ({format_duration(out[-1]['at'])}); changes are sorted by time",
                (k, "at"),
                c["at"],
            )
        out.append(change)
    return out
