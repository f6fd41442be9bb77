"""Scenario files: TOML in user-facing units, validated with pydantic, emitted as the
canonical JSON the simulator reads (durations in ns, rates in bit/s, sizes in bytes).

docs/scenario.md describes the format. Every validation error is reported as ONE line that
names the field path, the bad value and what is allowed::

    flows[0].controller: 'renoo' is not a known controller (did you mean 'reno'? known: reno, ...)
    topology.bottleneck.rate: -5 must be > 0
    links[2].forward.loss.p: 1.5 must be within [0, 1]

Use :func:`load_scenario` (file), :meth:`Scenario.from_toml` (text) or
:meth:`Scenario.from_dict`; they raise :class:`ScenarioError`.

The package holds one concept per module: :mod:`~tcplab.scenario.errors` (ScenarioError,
FieldError, error formatting), :mod:`~tcplab.scenario.fields` (unit and count validators, the
strict base model), :mod:`~tcplab.scenario.links` (link directions, duplex links, queues, loss
models, schedules), :mod:`~tcplab.scenario.topologies` (dumbbell, presets, explicit nodes,
links and routes), :mod:`~tcplab.scenario.wlan` (802.11b), :mod:`~tcplab.scenario.flows`
(TCP flows, UDP sources, TCP overrides, tracing), :mod:`~tcplab.scenario.entries`
(individual ``[[flows]]`` entries validated once per shape), :mod:`~tcplab.scenario.checks`
(the Scenario's cross-field checks), :mod:`~tcplab.scenario.canonical` (the canonical form
and its JSON text) and :mod:`~tcplab.scenario.model` (the Scenario model and loading).
"""

from __future__ import annotations

from tcplab.scenario.errors import FieldError, ScenarioError  # noqa: F401 (re-exported)
from tcplab.scenario.fields import Duration, PosDuration, Rate, Size  # noqa: F401
from tcplab.scenario.flows import DEFAULT_PCAP_SNAPLEN, Flow, TcpOverrides, Trace, Udp, default_tcp_config  # noqa: F401
from tcplab.scenario.flows import profile_defaults  # noqa: F401
from tcplab.scenario.links import Duplex, LinkDirection  # noqa: F401
from tcplab.scenario.model import Scenario, as_scenario, load_scenario  # noqa: F401
from tcplab.scenario.topologies import (  # noqa: F401 (re-exported)
    DEFAULT_ACCESS_BUFFER_PACKETS,
    DEFAULT_ACCESS_MIN_RATE,
    VENOPLUS_BOTTLENECK,
    VENOPLUS_WIRED,
    VENOPLUS_WIRELESS,
    Dumbbell,
    Link,
    Node,
    ParkingLot,
    StaticRoute,
    WiredCumWireless,
)
from tcplab.scenario.wlan import PIPES, WLAN_BASIC_RATES, WLAN_RATES, Station, Wlan, WlanAccess, WlanChannel, WlanMac  # noqa: F401

__all__ = [
    "ScenarioError",
    "Scenario",
    "load_scenario",
    "default_tcp_config",
    "profile_defaults",
]
