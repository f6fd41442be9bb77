"""802.11b WLAN fields (docs/wlan.md): stations, DCF/PHY and channel parameters, a [[wlan]]
segment of an explicit topology and the wlan_access topology preset."""

from __future__ import annotations

import copy
import json
import math
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from tcplab import _native
from tcplab.scenario.errors import FieldError
from tcplab.scenario.fields import Duration, PosDuration, StrictModel, count_field
from tcplab.scenario.links import Duplex, queue_discipline
from tcplab.scenario.vocabulary import DEFAULTS
from tcplab.units import UnitError, format_rate, parse_rate

#: The simulator's WLAN vocabulary (``tcplab_sim::topology::wlan::vocabulary``): rates,
#: presets and defaults are read from it, never copied here.
_VOCABULARY: dict[str, Any] = json.loads(_native.wlan_vocabulary_json())
WLAN_RATES: tuple[int, ...] = tuple(_VOCABULARY["rates"])
WLAN_BASIC_RATES: tuple[int, ...] = tuple(_VOCABULARY["basic_rates"])
_MAC: dict[str, Any] = _VOCABULARY["mac"]
_CHANNEL: dict[str, Any] = _VOCABULARY["channel"]


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
    if not math.isfinite(v):  # > 0 is the simulator's rule (above)
        raise FieldError("is not a finite distance")
    return float(v)


def _number(what: str):
    """A finite number (its bounds are the simulator's rules)."""

    def validate(v: Any) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise FieldError(f"is not a number ({what})")
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


def _one_of(names: list[str]):
    """One of the simulator's ``names`` (a preset's)."""

    def validate(v: Any) -> str:
        if not isinstance(v, str) or v not in names:
            raise FieldError(f"is not allowed (expected {' or '.join(repr(n) for n in names)})")
        return v

    return BeforeValidator(validate)


Distance = Annotated[float, BeforeValidator(_distance)]
PresetName = Annotated[str, _one_of(_VOCABULARY["channel_presets"])]


class Station(StrictModel):
    """A wireless station: a host at ``distance`` from the AP, or placed by ``preset``."""

    node: str | None = None
    distance: Distance | None = None
    preset: PresetName | None = None


#: The largest value of the simulator's u32 fields (what a count can hold; the MAC's ranges
#: are the simulator's rules, ``tcplab_sim::topology::wlan``).
_U32 = 2**32 - 1


class WlanMac(StrictModel):
    """DCF/PHY parameters; every field has the 802.11b default (docs/wlan.md)."""

    rate: Annotated[int, _wlan_rate(WLAN_RATES)] = _MAC["rate"]
    basic_rate: Annotated[int, _wlan_rate(WLAN_BASIC_RATES)] = _MAC["basic_rate"]
    buffer: Annotated[int, count_field("packets", 0, _U32)] = _MAC["buffer"]
    retry_limit: Annotated[int, count_field("attempts", 0, _U32)] = _MAC["retry_limit"]
    cw_min: Annotated[int, count_field("slots", 0, _U32)] = _MAC["cw_min"]
    cw_max: Annotated[int, count_field("slots", 0, _U32)] = _MAC["cw_max"]
    slot: PosDuration = _MAC["slot"]
    sifs: PosDuration = _MAC["sifs"]
    difs: PosDuration = _MAC["difs"]
    plcp: Duration = _MAC["plcp"]
    mac_overhead: Annotated[int, count_field("bytes", 0, _U32)] = _MAC["mac_overhead"]
    ack_bytes: Annotated[int, count_field("bytes", 0, _U32)] = _MAC["ack_bytes"]


class WlanChannel(StrictModel):
    """Log-distance path loss + log-normal shadowing (docs/wlan.md)."""

    tx_power_dbm: Annotated[float, _number("dBm")] = _CHANNEL["tx_power_dbm"]
    ref_loss_db: Annotated[float, _number("dB at 1 m")] = _CHANNEL["ref_loss_db"]
    exponent: Annotated[float, _number("path-loss exponent")] = _CHANNEL["exponent"]
    shadowing_db: Annotated[float, _number("dB")] = _CHANNEL["shadowing_db"]
    rx_threshold_dbm: Annotated[float, _number("dBm")] | None = _CHANNEL["rx_threshold_dbm"]
    coherence: Duration = _CHANNEL["coherence"]


class _WlanParams(StrictModel):
    """Fields shared by a [[wlan]] segment and the wlan_access topology."""

    stations: list[Station]
    preset: PresetName | None = None
    rate: Annotated[int, _wlan_rate(WLAN_RATES)] | None = None
    buffer: Annotated[int, count_field("packets", 0, _U32)] | None = None
    mac: WlanMac = WlanMac()
    channel: WlanChannel = WlanChannel()
    report_losses: bool = False
    report_delay: Duration = 0

    def station_names(self) -> list[str]:
        return [st.node if st.node is not None else f"sta{j}" for j, st in enumerate(self.stations)]

    def check_explicit(self, where: tuple[str | int, ...]) -> None:
        """A segment of an explicit topology names each station's node (no default names).
        Every other rule of a segment (stations, names, placement, MAC and channel relations)
        is the simulator's (``tcplab_sim::topology::wlan``), worded by
        :mod:`tcplab.scenario.rules`."""
        for j, st in enumerate(self.stations):
            if st.node is None:
                raise FieldError("is required but missing", (*where, "stations", j, "node"), show=False)

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
        if self.report_delay:  # without report_losses: the simulator's rule refuses it
            out["report_delay"] = self.report_delay
        return out


class Wlan(_WlanParams):
    """A [[wlan]] segment of an explicit topology: router ``ap`` and host stations."""

    name: Annotated[str, Field(min_length=1)] | None = None
    ap: str


#: The WLAN paper's Dummynet pipes: rate, one-way delay, buffer (packets)
#: (``tcplab_sim::scenario::PipePreset``).
PIPES: dict[str, tuple[int, int, int]] = {name: tuple(p) for name, p in _VOCABULARY["pipes"].items()}


class WlanAccess(_WlanParams):
    """The WLAN paper's Fig. 3: server - 100 Mb/s - router - Dummynet pipe - AP - stations."""

    kind: Literal["wlan_access"]
    pipe: Annotated[str, _one_of(list(PIPES))] = "thin"
    queue: Annotated[dict, BeforeValidator(queue_discipline)] | None = None
    access: Duplex | None = None

    def canonical_topology(self) -> dict[str, Any]:
        rate, delay, packets = PIPES[self.pipe]
        pipe_dir = {
            "rate": rate,
            "delay": delay,
            "buffer": {"packets": packets},
            "queue": self.queue or dict(DEFAULTS["queue"]),
            "loss": dict(DEFAULTS["loss"]),
        }
        return {
            "kind": "wlan_access",
            # The default access link is the simulator's (WlanAccess::default_access).
            "access": self.access.canonical() if self.access is not None else copy.deepcopy(_VOCABULARY["access"]),
            "pipe": {"forward": pipe_dir, "reverse": dict(pipe_dir)},
            "wlan": self.canonical_segment("wlan0", "ap"),
        }
