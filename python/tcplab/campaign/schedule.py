"""The probe schedule (report §5.1, §6.3): every path is probed at the times of a Poisson
process (exponential gaps, mean ``schedule.mean_interval_h``) over ``schedule.span_h``
hours, i.e. additive random sampling; each probe picks its protocol uniformly from
``schedule.protocols``, independently of everything else.

What a probe meets on its path depends on when it runs: the path's load factor is
``1 + a·sin(2π (t + phase) / 24 h)`` (a = ``schedule.diurnal_amplitude``, the phase is the
path's), the number of competing TCP flows is Poisson with mean ``load × path.tcp_flows``
(capped at ``cross.max_tcp_flows``), and the UDP rate is ``load × path.udp_load`` times
the bottleneck rate (capped at 90 % of it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.population import Path

__all__ = ["Probe", "schedule", "load_factor"]

# Stream numbers (see population.py): times per path, protocols, cross traffic per probe.
_TIMES = 2
_PROTOCOLS = 3
_CROSS = 4


@dataclass(frozen=True)
class Probe:
    id: int  # position in time order over the whole campaign
    path: int
    time_h: float  # hours since the campaign began
    protocol: str
    load: float  # the path's load factor at time_h
    tcp_flows: int  # competing TCP flows
    udp_bps: float  # competing UDP rate
    cross_start_s: tuple[float, ...]  # start time of each competing TCP flow
    cross_extra_delay_s: tuple[float, ...]  # extra one-way access delay of each
    sim_seed: int  # the simulation's seed (random loss streams)

    def row(self) -> dict[str, Any]:
        return {
            "probe": self.id,
            "path": self.path,
            "time_h": self.time_h,
            "protocol": self.protocol,
            "load": self.load,
            "cross_tcp_flows": self.tcp_flows,
            "cross_udp_bps": self.udp_bps,
            "sim_seed": self.sim_seed,
        }


def load_factor(amplitude: float, time_h: float | np.ndarray, phase_h: float) -> float | np.ndarray:
    return 1.0 + amplitude * np.sin(2 * np.pi * (np.asarray(time_h) + phase_h) / 24.0)


def _times(cfg: CampaignConfig, path: Path) -> np.ndarray:
    s = cfg.schedule
    rng = np.random.default_rng([cfg.seed, _TIMES, path.id])
    # enough gaps to cover the span with overwhelming probability, then extend if not
    n = int(s.span_h / s.mean_interval_h * 1.5) + 16
    t = np.cumsum(rng.exponential(s.mean_interval_h, n))
    while t[-1] < s.span_h:
        t = np.concatenate([t, t[-1] + np.cumsum(rng.exponential(s.mean_interval_h, n))])
    return t[t < s.span_h]


def schedule(cfg: CampaignConfig, paths: list[Path]) -> list[Probe]:
    """All probes of the campaign in time order (the first ``schedule.max_probes`` when > 0)."""
    s = cfg.schedule
    timed = sorted((float(t), p.id) for p in paths for t in _times(cfg, p))
    if s.max_probes:
        timed = timed[: s.max_probes]
    proto_rng = np.random.default_rng([cfg.seed, _PROTOCOLS])
    choices = proto_rng.integers(0, len(s.protocols), len(timed))
    by_id = {p.id: p for p in paths}
    warm = cfg.transfer.warmup_s
    out = []
    for i, ((t, pid), c) in enumerate(zip(timed, choices)):
        path = by_id[pid]
        rng = np.random.default_rng([cfg.seed, _CROSS, i])
        load = float(load_factor(s.diurnal_amplitude, t, path.phase_h))
        n_tcp = min(cfg.cross.max_tcp_flows, int(rng.poisson(max(0.0, load * path.tcp_flows))))
        udp = min(0.9, max(0.0, load * path.udp_load)) * path.rate_mbps * 1e6
        starts = tuple(float(x) for x in rng.uniform(0.0, warm / 2, n_tcp))
        delays = tuple(float(x) for x in rng.uniform(0.0, path.rtt_ms / 4e3, n_tcp))
        out.append(
            Probe(
                id=i,
                path=pid,
                time_h=t,
                protocol=s.protocols[int(c)],
                load=load,
                tcp_flows=n_tcp,
                udp_bps=udp,
                cross_start_s=starts,
                cross_extra_delay_s=delays,
                sim_seed=int(rng.integers(0, 2**63)),
            )
        )
    return out
