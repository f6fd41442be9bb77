"""The population of paths: draws from the configured distributions, and the concrete
scenario (a dumbbell, docs/scenario.md) one probe of a path runs.

Every random draw comes from a numpy ``Generator`` seeded from the campaign seed and a fixed
stream number (one stream per path parameter), so a population is a pure function of
(config, seed) and adding a parameter later does not change the others' draws.

Path model (docs/campaign.md): the probe shares one bottleneck (rate, propagation RTT,
drop-tail buffer sized in multiples of the bandwidth-delay product, random loss on the data
direction and on the ACK direction) with competing long-lived TCP flows and a UDP
constant-bit-rate source. How many TCP flows compete and how much UDP is sent is drawn per
probe around the path's means, scaled by a time-of-day load factor (see schedule.py).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from tcplab.campaign.config import (
    CampaignConfig,
    Choice,
    Constant,
    Exponential,
    LogNormal,
    LogUniform,
    Uniform,
)

__all__ = ["Path", "sample", "draw_paths", "probe_scenario", "PROBE_FLOW"]

#: the probe is the first TCP flow of its scenario (flows.id 0)
PROBE_FLOW = 0

# Stream numbers: SeedSequence([seed, _PATHS, k]) for parameter k.
_PATHS = 1
_PARAMS = ("rtt_ms", "rate_mbps", "buffer_bdp", "loss", "ack_loss", "tcp_flows", "udp_load", "phase_h")

#: wire overhead of a data packet in the simulator (IP + TCP headers), for the BDP in bytes
_HEADER_BYTES = 40


def sample(d: Any, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` independent draws of distribution ``d`` (a config.Distribution)."""
    match d:
        case Constant():
            x = np.full(n, float(d.value))
        case Uniform():
            x = rng.uniform(d.low, d.high, n)
        case LogUniform():
            x = np.exp(rng.uniform(np.log(d.low), np.log(d.high), n))
        case LogNormal():
            x = np.exp(rng.normal(np.log(d.median), d.sigma, n))
            # truncation by redrawing the values outside [low, high]
            for _ in range(1000):
                bad = (x < d.low) | (x > d.upper)
                if not bad.any():
                    break
                x[bad] = np.exp(rng.normal(np.log(d.median), d.sigma, int(bad.sum())))
            x = np.clip(x, d.low, d.upper)
        case Exponential():
            x = rng.exponential(d.mean, n)
        case Choice():
            w = None if d.weights is None else np.asarray(d.weights, float) / sum(d.weights)
            x = rng.choice(np.asarray(d.values, float), size=n, p=w)
        case _:
            raise TypeError(f"not a distribution: {d!r}")
    if d.p_zero > 0:
        x = np.where(rng.random(n) < d.p_zero, 0.0, x)
    return x


@dataclass(frozen=True)
class Path:
    """One simulated Internet path (its means; a probe draws its own cross traffic)."""

    id: int
    rtt_ms: float  # propagation round-trip time
    rate_mbps: float  # bottleneck rate
    buffer_bdp: float  # buffer / bandwidth-delay product (before the minimum)
    buffer_bytes: int  # bottleneck buffer (both directions)
    loss: float  # random loss probability, data direction
    ack_loss: float  # random loss probability, ACK direction
    tcp_flows: float  # mean number of competing TCP flows (at load factor 1)
    udp_load: float  # mean UDP CBR rate / bottleneck rate (at load factor 1)
    phase_h: float  # local time offset of the path's load cycle

    def row(self) -> dict[str, Any]:
        return asdict(self)


def draw_paths(cfg: CampaignConfig) -> list[Path]:
    """The campaign's population: ``cfg.schedule.paths`` paths, deterministic per seed."""
    n = cfg.schedule.paths
    p = cfg.paths
    dists = {
        "rtt_ms": p.rtt_ms,
        "rate_mbps": p.rate_mbps,
        "buffer_bdp": p.buffer_bdp,
        "loss": p.loss,
        "ack_loss": p.ack_loss,
        "tcp_flows": p.tcp_flows,
        "udp_load": p.udp_load,
        "phase_h": Uniform(dist="uniform", low=0.0, high=24.0),
    }
    draws = {
        name: sample(dists[name], np.random.default_rng([cfg.seed, _PATHS, k]), n)
        for k, name in enumerate(_PARAMS)
    }
    mss_wire = cfg.transfer.packet_bytes + _HEADER_BYTES
    out = []
    for i in range(n):
        rtt_ms = float(draws["rtt_ms"][i])
        rate = float(draws["rate_mbps"][i])
        bdp_bytes = rate * 1e6 / 8 * rtt_ms / 1e3
        buf = max(p.buffer_min_packets * mss_wire, round(float(draws["buffer_bdp"][i]) * bdp_bytes))
        out.append(
            Path(
                id=i,
                rtt_ms=rtt_ms,
                rate_mbps=rate,
                buffer_bdp=float(draws["buffer_bdp"][i]),
                buffer_bytes=int(buf),
                loss=float(draws["loss"][i]),
                ack_loss=float(draws["ack_loss"][i]),
                tcp_flows=float(draws["tcp_flows"][i]),
                udp_load=float(draws["udp_load"][i]),
                phase_h=float(draws["phase_h"][i]),
            )
        )
    return out


def _ns(seconds: float) -> str:
    return f"{round(seconds * 1e9)}ns"


def probe_scenario(cfg: CampaignConfig, path: Path, probe: Any, duration_s: float) -> dict[str, Any]:
    """The scenario dict (docs/scenario.md) of one probe: the probe flow (flow 0, pair 0)
    starts at ``transfer.warmup_s`` and sends ``transfer.bytes``; ``probe.tcp_flows``
    unlimited TCP flows and (if ``probe.udp_bps`` > 0) one UDP source run from about time 0
    to the end. ``probe`` is a probes.Probe."""
    t = cfg.transfer
    x = cfg.cross
    proto = cfg.protocol_table()[probe.protocol]
    rate_bps = max(1, round(path.rate_mbps * 1e6))
    n_tcp = probe.tcp_flows
    has_udp = probe.udp_bps > 0
    pairs = 1 + n_tcp + (1 if has_udp else 0)
    forward: dict[str, Any] = {}
    reverse: dict[str, Any] = {}
    if path.loss > 0:
        forward["loss"] = path.loss
    if path.ack_loss > 0:
        reverse["loss"] = path.ack_loss
    bottleneck: dict[str, Any] = {
        "rate": rate_bps,
        "delay": _ns(path.rtt_ms / 2e3),
        "buffer": {"bytes": path.buffer_bytes},
    }
    if forward:
        bottleneck["forward"] = forward
    if reverse:
        bottleneck["reverse"] = reverse
    access_rate = max(10**9, 10 * rate_bps)
    # Competing flows get a little extra one-way delay on their access link (drawn per probe)
    # so that they do not share one RTT with the probe and with each other.
    sender_access = [
        {"rate": access_rate, "delay": _ns(d), "buffer": 1000} for d in [0.0, *probe.cross_extra_delay_s]
    ]
    sender_access += [{"rate": access_rate, "delay": 0, "buffer": 1000}] * (pairs - len(sender_access))
    flows: list[dict[str, Any]] = [
        {
            "name": "probe",
            **proto.scenario_fields(),
            "start": _ns(t.warmup_s),
            "bytes": t.bytes,
            "tcp": {
                "profile": "rfc",
                "mss": t.packet_bytes,
                "initial_cwnd": t.initial_cwnd,
                "initial_ssthresh": t.initial_ssthresh_bytes,
                "rcv_buf": t.rcv_buf_bytes,
                "sack_blocks": t.sack_blocks,
                "sack_style": t.sack_style,
                "rto_min": _ns(t.rto_min_ms / 1e3),
            },
        }
    ]
    if n_tcp:  # one flow group: cross0, cross1, ... (docs/scenario.md, "Flow groups")
        flows.append(
            {
                "name": "cross",
                "count": n_tcp,
                "controller": x.controller,
                "recovery": x.recovery,
                "start": [_ns(s) for s in probe.cross_start_s[:n_tcp]],
            }
        )
    udp = []
    if has_udp:
        udp.append(
            {
                "name": "cbr",
                "rate": max(1, round(probe.udp_bps)),
                "packet_size": x.udp_packet_bytes,
                "start": 0,
            }
        )
    return {
        "name": f"{cfg.name}-probe{probe.id}",
        "description": f"campaign {cfg.name}: probe {probe.id} on path {path.id} ({probe.protocol})",
        "seed": probe.sim_seed,
        "duration": _ns(duration_s),
        "topology": {
            "kind": "dumbbell",
            "pairs": pairs,
            "bottleneck": bottleneck,
            "sender_access": sender_access,
        },
        "tcp": {"profile": "rfc", "mss": x.packet_bytes, "rcv_buf": x.rcv_buf_bytes, "rto_min": _ns(t.rto_min_ms / 1e3)},
        "flows": flows,
        "udp": udp,
        "trace": {"series": "off", "events": False, "segments": False, "drops": True},
    }
