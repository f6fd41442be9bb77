"""The simulator's scenario rules (``tcplab_sim::validate``, ``tcplab_sim::error::Problem``)
worded for users: each rule the Python schema knows becomes the one-line message of a
:class:`~tcplab.scenario.errors.FieldError`, its values in user units. The rules themselves
live in the simulator only; :meth:`tcplab.scenario.checks.ScenarioChecks._check_simulator`
runs them and places the message at the TOML path."""

from __future__ import annotations

from typing import Any

from tcplab.scenario.errors import RawText, did_you_mean
from tcplab.units import format_duration

__all__ = ["HIDDEN", "tcp_value", "word", "word_tcp"]

#: A value not shown in the message.
HIDDEN = object()


def word(rule: str, value: Any, limit: Any, path: str = "") -> tuple[str, Any] | None:
    """(detail, value shown) of a problem of ``rule`` about ``value`` held to ``limit``
    (canonical units) at canonical ``path``; the value is HIDDEN when the detail shows it or
    there is none. None for rules left to the simulator's own message."""
    words = _WORDS.get(rule)
    if words is None:
        return None
    detail, shown = words(value, limit)
    unit = _UNITS.get(path.rsplit(".", 1)[-1])
    if unit == "bytes" and limit == 1:
        unit = "byte"
    return (f"{detail} {unit}" if unit and rule in ("above", "at_least") else detail), shown


#: The unit a bound of these fields is worded in (the field's last path component).
_UNITS = {
    "distance": "metres",
    "shadowing_db": "dB",
    "bytes": "bytes",
    "packet_size": "bytes",
    "mean_packet_size": "bytes",
}


def _duration(what: str) -> Any:
    """A time (ns) and its bound (ns), both shown as durations."""

    def words(value: int, limit: int) -> tuple[str, Any]:
        return f"{format_duration(value)} must be {what} ({format_duration(limit)})", HIDDEN

    return words


def _words(detail: str) -> Any:
    """The value as given, then ``detail`` (``{limit!r}`` filled in)."""
    return lambda value, limit: (detail.format(limit=limit), value)


#: How this package words the simulator's problems, by rule (``tcplab_sim::error::Problem``):
#: (value, limit) in canonical units -> (detail, value shown, or HIDDEN).
_WORDS = {
    "at_most_duration": _duration("at most the duration"),
    "after_start": _duration("after start"),
    "time_limit": _duration("at most the longest time a scenario may give, about 146 years"),
    "positive_interval": lambda value, limit: (
        'must be > 0 when series are recorded (trace.series = "change" or "interval")',
        RawText(format_duration(value)),
    ),
    "buffer_below_packet": _words(
        "bytes cannot hold one full-sized packet of the flows ({limit} bytes): every such packet would be dropped"
    ),
    "duplicate_flow_name": _words("is already the name of {limit}"),
    "not_a_host": _words("is not a host"),  # worded with the model: ScenarioChecks._word_endpoint
    "same_host": _words("is the flow's own source"),
    "pcap_link": lambda value, limit: (
        f'is not a link (expected "all", a link or "<link>/forward" / "<link>/reverse"; links: {", ".join(limit)})',
        value,
    ),
    "pcap_direction": _words("has an unknown direction (expected <link>/forward or <link>/reverse)"),
    "unknown_node": lambda value, limit: (f"is not a node ({did_you_mean(value, limit)}nodes: {', '.join(limit)})", value),
    "duplicate_node": _words("is already the name of nodes[{limit}]"),
    "self_link": _words("links a node to itself"),
    "ap_not_router": _words("is a host; the access point must be a router (it relays)"),
    "route_to_router": _words("is a router; routes lead to hosts"),
    "not_neighbour": _words("is not a neighbour of {limit!r} (no link joins them)"),
    "route_too_short": lambda value, limit: ("needs at least the flow's src and dst", HIDDEN),
    "route_unknown_node": _words("is not a node"),
    "route_src": _words("must be the flow's src {limit!r}"),
    "route_dst": _words("must be the flow's dst {limit!r}"),
    "route_loop": _words("is visited twice (a route has no loops)"),
    "route_host_inside": _words("is a host in the middle of the route (hosts do not forward)"),
    "route_not_linked": _words("is not linked to {limit!r} (a route follows links)"),
    "range": lambda value, limit: (f"must be within [{limit[0]}, {limit[1]}]", _plain(value)),
    "at_least": lambda value, limit: (f"must be >= {limit}", _plain(value)),
    "above": lambda value, limit: (f"must be > {limit}", _plain(value)),
    "empty_buffer": lambda value, limit: (f"must be >= 1 {limit}", value),
    "max_th_above_min_th": lambda value, limit: (f"must be greater than min_th ({_plain(limit)})", _plain(value)),
    "weight": lambda value, limit: ("must be within (0, 1] (the weight of the newest sample in the average)", _plain(value)),
    "start_before_end": lambda value, limit: (
        "must have start < end",
        RawText(f"[{format_duration(value[0])}, {format_duration(value[1])}]"),
    ),
    "after_previous_change": lambda value, limit: (
        f"must be later than schedule[{limit[0]}].at ({format_duration(limit[1])}); changes are sorted by time",
        RawText(format_duration(value)),
    ),
    "changes_nothing": lambda value, limit: ("changes nothing (give rate, delay, buffer or loss)", HIDDEN),
    "report_delay_needs_losses": lambda value, limit: (
        "is only allowed with report_losses = true",
        RawText(format_duration(value)),
    ),
    "duplicate_wlan_name": _words("is already the name of wlan[{limit}]"),
    "no_stations": _words("must list at least one station"),
    "station_not_a_host": lambda value, limit: (f"is not a host ({did_you_mean(value, limit)}hosts: {', '.join(limit)})", value),
    "duplicate_station": _words("is already stations[{limit}]"),
    "station_of_other_segment": _words("is already a station of segment {limit!r}"),
    "reserved_name": lambda value, limit: (
        f"is a name the wlan_access topology uses for another node ({', '.join(limit)})",
        value,
    ),
    "cw_max_below_min": _words("must be >= cw_min ({limit})"),
    "distance_and_preset": _words("give distance or preset, not both"),
    "no_placement": lambda value, limit: (
        "has no distance and no preset (give one, or a segment preset = 'LL'/'HL')",
        HIDDEN,
    ),
    "preset_needs_shadowing": _words("presets need shadowing (channel.shadowing_db > 0)"),
}


def _plain(value: Any) -> Any:
    """A number as a user writes it: a whole float (JSON's 2.0 for a TOML 2) as an integer."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


#: TCP settings that are times (ns in the canonical form, shown as durations).
_TCP_DURATIONS = ("rto_min", "rto_initial", "rto_max", "clock_granularity", "delayed_ack_timeout", "delayed_ack_min")
#: TCP settings in bytes (the unit a range of theirs is worded in).
_TCP_BYTES = ("mss", "initial_ssthresh", "rcv_buf", "rcv_buf_initial", "rcv_truesize")


def tcp_value(field: str, value: Any) -> Any:
    """A canonical TCP setting shown back in user units (durations for times)."""
    return RawText(format_duration(value)) if field in _TCP_DURATIONS else value


def word_tcp(field: str, rule: str, value: Any, limit: Any) -> str | None:
    """The detail of a rule of ``TcpConfig::validate`` (``tcplab_core::ConfigError``) that
    TCP setting ``field`` breaks, its bound in user units; None for rules not worded here."""
    show = format_duration if field in _TCP_DURATIONS else str
    unit = " bytes" if field in _TCP_BYTES else ""
    words = {
        "range": lambda: f"must be within [{limit[0]}, {limit[1]}]{unit}" if isinstance(limit, list) else None,
        "at_least": lambda: "must be > 0" if field in _TCP_DURATIONS else f"must be >= {limit}",
        "ssthresh_below_2mss": lambda: f"must be at least 2 MSS ({limit} bytes)",
        "rto_min_above_max": lambda: f"must be <= rto_max ({show(limit)})",
        "rcv_buf_below_mss": lambda: f"must be at least one MSS ({limit} bytes)",
        "ato_min_above_timeout": lambda: f"must be <= delayed_ack_timeout ({show(limit)}) with quickack",
        "dsack_needs_sack": lambda: "needs SACK (sack_blocks >= 1): DSACK blocks travel in the SACK option",
    }
    worded = words.get(rule)
    return None if worded is None else worded()
