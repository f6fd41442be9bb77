"""Parsing of user-facing quantities into tcplab's canonical integer units.

Durations become nanoseconds, rates bits per second, sizes bytes. Numbers without a unit are
seconds, bit/s and bytes. Strings carry their unit: ``"120ms"``, ``"1.6Mbps"``, ``"64KiB"``.
Decimal strings are converted exactly (``"0.1s"`` is 100000000 ns) and rounded to the
nearest integer of the canonical unit.

Every parser raises :class:`UnitError` (a ``ValueError``) whose message completes the
sentence "<value> ...", e.g. ``"is not a duration (...)"`` or ``"must be > 0"``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

__all__ = [
    "UnitError",
    "parse_duration",
    "parse_rate",
    "parse_size",
    "format_duration",
    "format_rate",
    "format_size",
]

NS_PER_S = 1_000_000_000


class UnitError(ValueError):
    """A quantity that cannot be parsed; the message follows the offending value."""


_NUMBER = r"[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"
_QUANTITY = re.compile(rf"^\s*({_NUMBER})\s*([^\s\d.+-][^\s]*)?\s*$")

DURATION_UNITS: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,
    "ms": 1_000_000,
    "s": NS_PER_S,
    "sec": NS_PER_S,
    "min": 60 * NS_PER_S,
    "h": 3600 * NS_PER_S,
}

_SI = {
    "": 1,
    "k": 10**3,
    "K": 10**3,
    "M": 10**6,
    "m": 10**6,
    "G": 10**9,
    "g": 10**9,
    "T": 10**12,
    "t": 10**12,
}

SIZE_UNITS: dict[str, int] = {
    "B": 1,
    "byte": 1,
    "bytes": 1,
    "kB": 10**3,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}

_DURATION_HELP = "seconds as a number, or a string like '120ms' (units: ns, us, ms, s, min, h)"
_RATE_HELP = ("bit/s as a number, or a string like '1.6Mbps' (units: bps, kbps, Mbps, Gbps, Tbps, also written "
              "Mbit/s or tc's mbit, and kibit, mibit, gibit for x1024; Bps, kBps, MBps, GBps for bytes/s)")
_SIZE_HELP = (
    "bytes as a number, or a string like '64KiB' (units: B, KB, MB, GB = x1000; KiB, MiB, GiB = x1024)"
)


def _split(value: str, what: str, help_: str) -> tuple[Fraction | int, str]:
    m = _QUANTITY.match(value)
    if not m:
        raise UnitError(f"is not {what} (expected {help_})")
    number = m.group(1).replace("_", "")
    # A whole number (most of them: "250ms", "10s") needs no Fraction, its value is the same.
    return (int(number) if number.isdecimal() and number.isascii() else Fraction(number)), (m.group(2) or "")


def _number(value: object, what: str, help_: str) -> Fraction:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UnitError(f"is not {what} (expected {help_})")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnitError(f"is not {what} (expected a finite number)")
        # repr is the shortest decimal that round-trips: 0.12 means 0.12, not its binary value.
        return Fraction(repr(value))
    return Fraction(value)


def _round(x: Fraction | int) -> int:
    if isinstance(x, int):
        return x
    return math.floor(x + Fraction(1, 2))


def _check(value: int, minimum: int, what: str) -> int:
    if value < minimum:
        raise UnitError(f"must be {'> 0' if minimum == 1 else '>= 0'}")
    if value >= 2**64:
        raise UnitError(f"is too large for {what}")
    return value


#: The units of the whole-number durations :func:`parse_duration` reads at once, by the string's
#: last two characters ("250ms"; "10s" is a whole number of seconds).
_WHOLE_UNIT = {"ns": DURATION_UNITS["ns"], "us": DURATION_UNITS["us"], "ms": DURATION_UNITS["ms"]}


def _whole_duration(value: str) -> int | None:
    """The ns of a whole number of ns, us, ms or s without blanks ("250ms", "10s"): most
    durations a scenario gives; None for any other text (read the general way)."""
    unit = _WHOLE_UNIT.get(value[-2:])
    digits = value[:-2] if unit is not None else value[:-1] if value[-1:] == "s" else ""
    if digits.isdigit() and digits.isascii() and len(digits) <= 15:
        ns = int(digits) * (unit or NS_PER_S)
        if ns < 2**64:
            return ns
    return None


def parse_duration(value: object, *, positive: bool = False) -> int:
    """A duration in ns from seconds (number) or a string with a unit ("120ms", "300s")."""
    if type(value) is str:
        ns = _whole_duration(value)
        if ns is not None and (ns > 0 or not positive):
            return ns
    if isinstance(value, str):
        x, unit = _split(value, "a duration", _DURATION_HELP)
        if not unit:
            raise UnitError(f"needs a unit (expected {_DURATION_HELP})")
        if unit not in DURATION_UNITS:
            raise UnitError(f"has an unknown duration unit {unit!r} (expected {_DURATION_HELP})")
        ns = x * DURATION_UNITS[unit]
    else:
        ns = _number(value, "a duration", _DURATION_HELP) * NS_PER_S
    if ns < 0 or (positive and ns <= 0):
        raise UnitError("must be > 0" if positive else "must be >= 0")
    return _check(_round(ns), 1 if positive else 0, "a duration")


def parse_rate(value: object) -> int:
    """A rate in bit/s from a number (bit/s) or a string with a unit ("1.6Mbps", "10Gbps")."""
    if isinstance(value, str):
        x, unit = _split(value, "a rate", _RATE_HELP)
        if not unit:
            raise UnitError(f"needs a unit (expected {_RATE_HELP})")
        # tc(8)'s forms too: "10mbit" (x1000), "100kibit" (x1024).
        m = re.fullmatch(r"([kKmMgGtT]?)(i?)(bps|bit/s|b/s|bit|Bps|B/s)", unit)
        if not m or (m.group(2) and (not m.group(1) or m.group(3) != "bit")):
            raise UnitError(f"has an unknown rate unit {unit!r} (expected {_RATE_HELP})")
        per_byte = 8 if m.group(3) in ("Bps", "B/s") else 1
        scale = 1024 ** " kmgt".index(m.group(1).lower()) if m.group(2) else _SI[m.group(1)]
        bps = x * scale * per_byte
    else:
        bps = _number(value, "a rate", _RATE_HELP)
    if bps <= 0:
        raise UnitError("must be > 0")
    return _check(_round(bps), 1, "a rate")


def parse_size(value: object) -> int:
    """A size in bytes from a number (bytes) or a string with a unit ("32MB", "64KiB"), >= 0.
    Whether a field may be 0 bytes is the field's rule, the simulator's (``tcplab_sim::validate``:
    an empty buffer, a flow of 0 bytes, a 0-byte packet are its problems)."""
    if isinstance(value, str):
        x, unit = _split(value, "a size", _SIZE_HELP)
        if not unit:
            raise UnitError(f"needs a unit (expected {_SIZE_HELP})")
        if unit not in SIZE_UNITS:
            hint = "sizes are in bytes, B not b; " if unit.endswith("b") else ""
            raise UnitError(f"has an unknown size unit {unit!r} ({hint}expected {_SIZE_HELP})")
        n = x * SIZE_UNITS[unit]
    else:
        n = _number(value, "a size", _SIZE_HELP)
        if n.denominator != 1:
            raise UnitError("is not a whole number of bytes")
    if n < 0:
        raise UnitError("must be >= 0")
    return _check(_round(n), 0, "a size")


def format_duration(ns: int) -> str:
    """A short human form of a duration in ns: "60 ms", "1.5 s"."""
    for unit, scale in (("s", NS_PER_S), ("ms", 10**6), ("us", 10**3)):
        if abs(ns) >= scale:
            return f"{ns / scale:g} {unit}"
    return f"{ns} ns"


def format_rate(bps: int) -> str:
    """A short human form of a rate: "10 Mb/s"."""
    for unit, scale in (("Tb/s", 10**12), ("Gb/s", 10**9), ("Mb/s", 10**6), ("kb/s", 10**3)):
        if bps >= scale:
            return f"{bps / scale:g} {unit}"
    return f"{bps} b/s"


def format_size(n: int) -> str:
    """A short human form of a size: "64 KB", "1.5 MB"."""
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if n >= scale:
            return f"{n / scale:g} {unit}"
    return f"{n} B"
