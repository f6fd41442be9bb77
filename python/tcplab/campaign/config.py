"""The campaign configuration: a TOML file validated with pydantic.

docs/campaign.md describes the format. Like scenario files, every error is ONE line naming the
field path, the bad value and what is allowed::

    paths.rtt_ms.sigma: -1 must be >= 0
    schedule.protocols[2]: 'fak' is not a known protocol (known: reno, vegas-ca, fack, rh, lrd, ...)

Use :func:`load_campaign` (file), :meth:`CampaignConfig.from_toml` (text) or
:meth:`CampaignConfig.from_dict`; they raise :class:`CampaignError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

# The scenario module's one-line error rendering (not changed, only reused).
from tcplab.campaign.errors import CampaignError, FieldValueError
from tcplab.campaign.live_config import LiveSettings
from tcplab.scenario.errors import describe_error, field_path, show_value
from tcplab.scenario.vocabulary import name_field
from tcplab.toml_file import TomlError, parse_toml, read_toml

__all__ = [
    "CampaignError",
    "CampaignConfig",
    "Protocol",
    "BUILTIN_PROTOCOLS",
    "load_campaign",
]


_STRICT = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------------------------------
# Distributions. Every one may put an extra point mass at zero (`p_zero`): "40 % of the paths
# have no random loss" is {dist = "loguniform", low = 1e-4, high = 1e-2, p_zero = 0.4}.


class _Dist(BaseModel):
    model_config = _STRICT
    p_zero: Annotated[float, Field(ge=0, le=1)] = 0.0


class Constant(_Dist):
    dist: Literal["constant"] = "constant"
    value: float


class Uniform(_Dist):
    dist: Literal["uniform"]
    low: float
    high: float

    @model_validator(mode="after")
    def _order(self) -> Uniform:
        if self.high < self.low:
            raise ValueError(f"high ({self.high:g}) must be >= low ({self.low:g})")
        return self


class LogUniform(_Dist):
    dist: Literal["loguniform"]
    low: Annotated[float, Field(gt=0)]
    high: Annotated[float, Field(gt=0)]

    @model_validator(mode="after")
    def _order(self) -> LogUniform:
        if self.high < self.low:
            raise ValueError(f"high ({self.high:g}) must be >= low ({self.low:g})")
        return self


class LogNormal(_Dist):
    """exp(N(ln median, sigma²)), truncated to [low, high] by redrawing."""

    dist: Literal["lognormal"]
    median: Annotated[float, Field(gt=0)]
    sigma: Annotated[float, Field(ge=0)]
    low: Annotated[float, Field(ge=0)] = 0.0
    high: float | None = None  # None: unbounded

    @property
    def upper(self) -> float:
        return float("inf") if self.high is None else self.high

    @model_validator(mode="after")
    def _order(self) -> LogNormal:
        if not self.low <= self.median <= self.upper:
            raise ValueError(
                f"median ({self.median:g}) must lie within [low, high] = [{self.low:g}, {self.upper:g}]"
            )
        return self


class Exponential(_Dist):
    dist: Literal["exponential"]
    mean: Annotated[float, Field(gt=0)]


class Choice(_Dist):
    dist: Literal["choice"]
    values: Annotated[list[float], Field(min_length=1)]
    weights: list[Annotated[float, Field(ge=0)]] | None = None

    @model_validator(mode="after")
    def _weights(self) -> Choice:
        if self.weights is not None:
            if len(self.weights) != len(self.values):
                raise ValueError(f"weights has {len(self.weights)} entries but values has {len(self.values)}")
            if sum(self.weights) <= 0:
                raise ValueError("weights must not all be 0")
        return self


Distribution = Annotated[
    Constant | Uniform | LogUniform | LogNormal | Exponential | Choice, Field(discriminator="dist")
]


_NO_DIST = "(expected a number or one of: constant, uniform, loguniform, lognormal, exponential, choice)"


def _dist_input(field: str, v: Any) -> Any:
    """A bare number is a constant; anything but a number or a table with `dist` is an
    error naming the field."""
    if isinstance(v, bool) or isinstance(v, str) or isinstance(v, list):
        raise FieldValueError(field, v, f"is not a distribution {_NO_DIST}; units are in the field's name")
    if isinstance(v, (int, float)):
        return {"dist": "constant", "value": v}
    if isinstance(v, dict) and "dist" not in v:
        raise FieldValueError(f"{field}.dist", None, f"is required but missing {_NO_DIST}")
    return v


def _dists(*fields: str):
    def before(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for f in fields:
                if f in data:
                    data[f] = _dist_input(f, data[f])
        return data

    return model_validator(mode="before")(before)


# --------------------------------------------------------------------------------------------
# Protocols: a protocol is a (controller, recovery) pair; parameters go to the simulator as is.


class Protocol(BaseModel):
    model_config = _STRICT
    controller: str
    recovery: str
    controller_params: dict[str, float | int | bool | str] = {}
    recovery_params: dict[str, float | int | bool | str] = {}
    #: who runs it live (``tcplab campaign --live``): tcplab's transport over UDP, tcplab's
    #: sender speaking real TCP to a Linux sink (``tcplab-tcp``), or the kernel's TCP with
    #: ``controller`` as its congestion control (reno, cubic, bbr); a virtual campaign
    #: simulates tcplab's controller of that name either way (as a scenario's ``stack``)
    stack: Literal["tcplab", "tcplab-tcp", "linux"] = "tcplab"

    def scenario_fields(self) -> dict[str, Any]:
        c: Any = (
            {"name": self.controller, **self.controller_params} if self.controller_params else self.controller
        )
        r: Any = {"name": self.recovery, **self.recovery_params} if self.recovery_params else self.recovery
        return {"controller": c, "recovery": r}


#: The ETH report's five protocols (§6.1): Vegas-CA is Vegas' congestion avoidance only
#: (docs/controllers/vegas.md, `mode = "ca"`) with Reno's slow start and recovery.
BUILTIN_PROTOCOLS: dict[str, Protocol] = {
    "reno": Protocol(controller="reno", recovery="reno"),
    "vegas-ca": Protocol(controller="vegas", recovery="reno", controller_params={"mode": "ca"}),
    "fack": Protocol(controller="reno", recovery="fack"),
    "rh": Protocol(controller="reno", recovery="rh"),
    "lrd": Protocol(controller="reno", recovery="lrd"),
    "newreno": Protocol(controller="reno", recovery="newreno"),
    "sack": Protocol(controller="reno", recovery="sack"),
    "prr": Protocol(controller="reno", recovery="prr"),
    "rack": Protocol(controller="reno", recovery="rack"),
}

ETH_PROTOCOLS = ("reno", "vegas-ca", "fack", "rh", "lrd")


# --------------------------------------------------------------------------------------------
# Sections


class Schedule(BaseModel):
    """Which paths are probed when, and with what (report §5.1, §6.3)."""

    model_config = _STRICT
    paths: Annotated[int, Field(ge=1, le=100_000)] = 60
    span_h: Annotated[float, Field(gt=0)] = 240.0
    mean_interval_h: Annotated[float, Field(gt=0)] = 10.0
    max_probes: Annotated[int, Field(ge=0)] = 0
    protocols: Annotated[list[str], Field(min_length=1)] = list(ETH_PROTOCOLS)
    diurnal_amplitude: Annotated[float, Field(ge=0, le=1)] = 0.5


class Transfer(BaseModel):
    """The probe transfer and its TCP settings (report §6.3, Appendix A)."""

    model_config = _STRICT
    bytes: Annotated[int, Field(ge=1)] = 1_048_576
    packet_bytes: Annotated[int, Field(ge=64, le=65000)] = 1024
    initial_ssthresh_bytes: Annotated[int, Field(ge=128)] = 65_536
    rcv_buf_bytes: Annotated[int, Field(ge=64)] = 262_144
    initial_cwnd: Annotated[int, Field(ge=1, le=10_000)] = 1
    sack_blocks: Annotated[int, Field(ge=0, le=6)] = 6
    #: Appendix A.2: the framework SACKed individual packets, not RFC 2018 byte ranges
    #: (`tcp.sack_style`, docs/tcp.md).
    sack_style: Annotated[str, name_field("SACK style", "sack_style")] = "eth_packets"
    rto_min_ms: Annotated[float, Field(gt=0)] = 1000.0
    warmup_s: Annotated[float, Field(ge=0)] = 2.0
    time_limit_s: Annotated[float, Field(gt=0)] = 120.0

    @model_validator(mode="after")
    def _sizes(self) -> Transfer:
        if self.initial_ssthresh_bytes < 2 * self.packet_bytes:
            raise FieldValueError(
                "initial_ssthresh_bytes",
                self.initial_ssthresh_bytes,
                f"must be >= 2 packets ({2 * self.packet_bytes} bytes)",
            )
        if self.rcv_buf_bytes < self.packet_bytes:
            raise FieldValueError(
                "rcv_buf_bytes", self.rcv_buf_bytes, f"must be >= packet_bytes ({self.packet_bytes})"
            )
        return self


class Paths(BaseModel):
    """Distributions the population of paths is drawn from (one draw per path)."""

    model_config = _STRICT
    rtt_ms: Distribution = LogNormal(dist="lognormal", median=120, sigma=0.5, low=20, high=500)
    rate_mbps: Distribution = Choice(dist="choice", values=[1.544, 2, 4, 8, 10])
    buffer_bdp: Distribution = LogUniform(dist="loguniform", low=0.5, high=2.0)
    buffer_min_packets: Annotated[int, Field(ge=1)] = 8
    loss: Distribution = LogUniform(dist="loguniform", low=1e-4, high=1e-2, p_zero=0.5)
    ack_loss: Distribution = LogUniform(dist="loguniform", low=1e-4, high=1e-2, p_zero=0.5)
    tcp_flows: Distribution = Uniform(dist="uniform", low=0, high=6)
    udp_load: Distribution = Uniform(dist="uniform", low=0, high=0.3, p_zero=0.5)

    _check = _dists("rtt_ms", "rate_mbps", "buffer_bdp", "loss", "ack_loss", "tcp_flows", "udp_load")

    @model_validator(mode="after")
    def _ranges(self) -> Paths:
        checks = {
            "rtt_ms": (0.0, None, "> 0 ms"),
            "rate_mbps": (0.0, None, "> 0 Mbit/s"),
            "buffer_bdp": (0.0, None, "> 0"),
            "loss": (0.0, 1.0, "a probability within [0, 1)"),
            "ack_loss": (0.0, 1.0, "a probability within [0, 1)"),
            "tcp_flows": (0.0, None, ">= 0"),
            "udp_load": (0.0, 1.0, "a share of the bottleneck rate within [0, 1)"),
        }
        for name, (lo, hi, words) in checks.items():
            d = getattr(self, name)
            span = _support(d)
            ok = span[0] >= lo and (hi is None or span[1] < hi)
            if name in ("rtt_ms", "rate_mbps", "buffer_bdp"):
                ok = ok and span[0] > 0 and d.p_zero == 0
            if not ok:
                raise FieldValueError(
                    name,
                    None,
                    f"must only give values {words} (this {d.dist} distribution spans {span[0]:g} … {span[1]:g}"
                    f"{', with zeros' if d.p_zero else ''})",
                )
        return self


class Cross(BaseModel):
    """The competing traffic's own settings."""

    model_config = _STRICT
    controller: str = "reno"
    recovery: str = "newreno"
    packet_bytes: Annotated[int, Field(ge=64, le=65000)] = 1460
    rcv_buf_bytes: Annotated[int, Field(ge=64)] = 65_536
    udp_packet_bytes: Annotated[int, Field(ge=28, le=65535)] = 512
    max_tcp_flows: Annotated[int, Field(ge=0, le=1000)] = 16


def _support(d: Any) -> tuple[float, float]:
    match d:
        case Constant():
            lo = hi = d.value
        case Uniform() | LogUniform():
            lo, hi = d.low, d.high
        case LogNormal():
            lo, hi = max(d.low, 1e-300), d.upper  # positive even when low = 0
        case Exponential():
            lo, hi = 0.0, float("inf")
        case Choice():
            lo, hi = min(d.values), max(d.values)
        case _:
            raise TypeError(d)
    if d.p_zero > 0:
        lo = min(lo, 0.0)
    return lo, hi


class CampaignConfig(BaseModel):
    model_config = _STRICT
    name: Annotated[str, Field(min_length=1)] = "campaign"
    description: str = ""
    seed: Annotated[int, Field(ge=0, lt=2**63)] = 1
    schedule: Schedule = Schedule()
    transfer: Transfer = Transfer()
    paths: Paths = Paths()
    cross: Cross = Cross()
    protocols: dict[str, Protocol] = {}
    #: the hosts and daemons of a live campaign (``tcplab campaign --live``)
    live: LiveSettings | None = None
    #: where the file came from (not part of the format)
    _source_path: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _known_protocols(self) -> CampaignConfig:
        known = self.protocol_table()
        for i, p in enumerate(self.schedule.protocols):
            if p not in known:
                raise FieldValueError(
                    f"schedule.protocols[{i}]", p, f"is not a known protocol (known: {', '.join(known)})"
                )
        if len(set(self.schedule.protocols)) != len(self.schedule.protocols):
            raise FieldValueError("schedule.protocols", self.schedule.protocols, "lists a protocol twice")
        return self

    def protocol_table(self) -> dict[str, Protocol]:
        """Built-in protocols, overridden or extended by the `[protocols]` table."""
        return {**BUILTIN_PROTOCOLS, **self.protocols}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CampaignConfig:
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise _one_error(e) from None

    @classmethod
    def from_toml(cls, text: str) -> CampaignConfig:
        try:
            data = parse_toml(text)
        except TomlError as e:
            raise CampaignError(str(e)) from None
        return cls.from_dict(data)

    @property
    def source_path(self) -> str | None:
        return self._source_path

    def to_dict(self) -> dict[str, Any]:
        """The full configuration (defaults filled in) as a JSON-ready dict."""
        return self.model_dump(mode="json")

    def with_overrides(self, seed: int | None = None, max_probes: int | None = None) -> CampaignConfig:
        """The same configuration with another seed and/or probe cap (validated again)."""
        data = self.model_dump()
        if seed is not None:
            data["seed"] = seed
        if max_probes is not None:
            data["schedule"]["max_probes"] = max_probes
        cfg = CampaignConfig.from_dict(data)
        cfg._source_path = self._source_path
        return cfg


def _one_error(e: ValidationError) -> CampaignError:
    err = e.errors()[0]
    ctx = err.get("ctx") or {}
    inner = ctx.get("error")
    loc = tuple(x for x in err["loc"] if not _is_union_tag(x))
    if isinstance(inner, FieldValueError):
        prefix = field_path(loc)
        path = f"{prefix}.{inner.field}" if prefix else inner.field
        if inner.value is None:
            return CampaignError(f"{path}: {inner.detail}", path)
        return CampaignError(f"{path}: {show_value(inner.value)} {inner.detail}", path)
    if err["type"] == "union_tag_invalid":
        path = field_path(loc)
        return CampaignError(
            f"{path}.dist: {show_value(ctx.get('tag'))} is not a known distribution (known: {ctx.get('expected_tags')})",
            f"{path}.dist",
        )
    err = {**err, "loc": loc}
    loc2, detail = describe_error(err)
    path = field_path(loc2)
    return CampaignError(f"{path}: {detail}" if path else detail, path or None)


def _is_union_tag(x: Any) -> bool:
    # pydantic puts the discriminator's value into the location of a tagged union member
    return isinstance(x, str) and x in (
        "constant",
        "uniform",
        "loguniform",
        "lognormal",
        "exponential",
        "choice",
    )


def load_campaign(path: str | Path) -> CampaignConfig:
    """Reads and validates a campaign TOML file; the name defaults to the file stem."""
    p = Path(path)
    try:
        data, _ = read_toml(p)
    except TomlError as e:
        raise CampaignError(str(e)) from None
    data.setdefault("name", p.stem)
    cfg = CampaignConfig.from_dict(data)
    cfg._source_path = str(p)
    return cfg
