"""The live campaign's controller (issue 15 §1, docs/campaign.md "Live mode: the
controller"): ``tcplab campaign --live CAMPAIGN.toml --out DIR``.

It runs the ETH method on real hosts: the same population of paths and the same schedule
as the virtual campaign (:func:`tcplab.campaign.probes.schedule`: Poisson probe times per
path, the protocol drawn uniformly), with the paths laid on the ``[live]`` hosts
(:func:`tcplab.campaign.live_config.path_hosts`). Each probe, at its time divided by
``time_compression``, asks its path's two daemons to carry out one transfer:

1. the sink: ``{"kind": "probe", "role": "sink", ...}``: start receiving; answers the
   ``port`` to send to;
2. the source: ``{"role": "source", "sink_port": PORT, ...}``: send ``transfer.bytes``
   bytes with the probe's protocol; answers the flow's figures (``flow``) and its traces;
3. the sink: ``{"role": "collect"}``: what it received (``flow``) and its traces.

Every job carries the probe (:class:`ProbeJob`) and a ``job_id`` (campaign, probe,
attempt); a daemon answers a job it has seen from its first run, so a controller that was
killed and restarted (it skips the probes already in the database and asks again for the
others) never runs a transfer twice. A host takes part in at most ``per_host_limit``
probes at once. A failed attempt (a daemon that refuses, times out, dies or cannot be
reached) is retried ``retries`` times; then the probe is recorded ``failed`` with the
last reason. Each probe is written once, with its attempts (``runs``) and its flow, in one
transaction of the results database (:mod:`tcplab.campaign.results_db`).
"""

from __future__ import annotations

import ssl
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.daemon import request
from tcplab.campaign.live_config import LiveSettings, path_hosts
from tcplab.campaign.population import Path as NetPath
from tcplab.campaign.population import draw_paths
from tcplab.campaign.probes import Probe, schedule
from tcplab.campaign.results_db import (
    FlowRow,
    ProbeRecord,
    RunRow,
    add_hosts_and_paths,
    ended_probes,
    open_db,
    record_probe,
)

__all__ = ["Attempt", "DaemonExecutor", "LiveRun", "ProbeJob", "run_live", "DB_FILE"]

#: The results database's file name in the campaign's output directory.
DB_FILE = "live.sqlite"


class ProbeJob(BaseModel):
    """What the daemons are told of one attempt of one probe."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    campaign: str
    probe: int
    attempt: int
    path: int
    source: str
    sink: str
    protocol: str
    controller: str
    recovery: str
    controller_params: dict[str, float | int | bool | str] = {}
    recovery_params: dict[str, float | int | bool | str] = {}
    bytes: int
    packet_bytes: int
    time_limit_s: float
    # the path as drawn (a testbed emulates it; real machines report what they met)
    rate_bps: float
    rtt_ms: float
    buffer_bytes: int
    loss: float

    @property
    def job_id(self) -> str:
        return f"{self.campaign}/{self.probe}/{self.attempt}"


@dataclass
class Attempt:
    """The outcome of one attempt: ``reason`` None when it succeeded."""

    runs: list[RunRow]
    reason: str | None = None
    flow: dict[str, Any] = field(default_factory=dict)


#: One attempt of a probe: (job, stop) -> Attempt.
Executor = Callable[[ProbeJob, threading.Event], Attempt]


class DaemonExecutor:
    """Carries out an attempt through the daemons of ``settings`` (the three jobs of the
    module's description), signed with ``key``."""

    def __init__(self, settings: LiveSettings, key: bytes, tls: ssl.SSLContext | None = None):
        self.settings = settings
        self.key = key
        self.tls = tls

    def _ask(self, host: str, job: dict[str, Any]) -> dict[str, Any]:
        h = self.settings.host(host)
        try:
            reply = request((h.address, h.port), self.key, job, timeout=self.settings.request_timeout_s,
                            tls=self.tls, server_name=h.address)
        except (OSError, ValueError) as e:  # unreachable, reset, timed out, not JSON
            raise _Failed(f"daemon {host}: {e}") from None
        if not reply.get("ok"):
            raise _Failed(f"daemon {host}: {reply.get('error', 'refused')}")
        result = reply.get("result")
        if not isinstance(result, dict):
            raise _Failed(f"daemon {host}: answered no result")
        return result

    def __call__(self, job: ProbeJob, stop: threading.Event) -> Attempt:
        base = {"kind": "probe", "job_id": job.job_id, "probe": job.model_dump(mode="json")}
        runs: list[RunRow] = []
        try:
            sink = self._ask(job.sink, {**base, "role": "sink", "peer": job.source})
            port = sink.get("port")
            if not isinstance(port, int):
                raise _Failed(f"daemon {job.sink}: answered no port")
            sent = self._ask(job.source, {**base, "role": "source", "peer": job.sink, "sink_port": port})
            runs.append(RunRow(job.attempt, job.source, "source", "ok", sent.get("traces")))
            got = self._ask(job.sink, {**base, "role": "collect", "peer": job.source})
            runs.append(RunRow(job.attempt, job.sink, "sink", "ok", got.get("traces")))
        except _Failed as e:
            roles = {r.role for r in runs}
            for host, role in ((job.source, "source"), (job.sink, "sink")):
                if role not in roles:
                    runs.append(RunRow(job.attempt, host, role, str(e)))
            return Attempt(runs, str(e))
        flow = dict(sent.get("flow") or {})
        for k, v in (got.get("flow") or {}).items():
            flow.setdefault(f"sink_{k}", v)
        return Attempt(runs, None, flow)


class _Failed(Exception):
    """An attempt that failed (one line)."""


@dataclass
class LiveRun:
    """What :func:`run_live` did."""

    paths: list[NetPath]
    probes: list[Probe]
    skipped: int  # recorded by an earlier run
    ok: int = 0
    failed: int = 0
    stopped: bool = False  # interrupted before the schedule's end


class _Slots:
    """At most ``limit`` probes per host at once; a probe takes both its hosts together
    (never one while waiting for the other: no deadlock)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.busy: dict[str, int] = {}
        self.cond = threading.Condition()

    def take(self, hosts: Iterable[str], stop: threading.Event) -> bool:
        hosts = list(hosts)
        with self.cond:
            while any(self.busy.get(h, 0) >= self.limit for h in hosts):
                if stop.is_set():
                    return False
                self.cond.wait(0.2)
            for h in hosts:
                self.busy[h] = self.busy.get(h, 0) + 1
        return True

    def give(self, hosts: Iterable[str]) -> None:
        with self.cond:
            for h in hosts:
                self.busy[h] -= 1
            self.cond.notify_all()


def probe_job(cfg: CampaignConfig, probe: Probe, path: NetPath, hosts: tuple[str, str], attempt: int) -> ProbeJob:
    proto = cfg.protocol_table()[probe.protocol]
    return ProbeJob(
        campaign=cfg.name,
        probe=probe.id,
        attempt=attempt,
        path=path.id,
        source=hosts[0],
        sink=hosts[1],
        protocol=probe.protocol,
        controller=proto.controller,
        recovery=proto.recovery,
        controller_params=dict(proto.controller_params),
        recovery_params=dict(proto.recovery_params),
        bytes=cfg.transfer.bytes,
        packet_bytes=cfg.transfer.packet_bytes,
        time_limit_s=cfg.transfer.time_limit_s,
        rate_bps=path.rate_mbps * 1e6,
        rtt_ms=path.rtt_ms,
        buffer_bytes=path.buffer_bytes,
        loss=path.loss,
    )


def run_live(
    cfg: CampaignConfig,
    db_path: str | Path,
    executor: Executor,
    *,
    stop: threading.Event | None = None,
    on_probe: Callable[[ProbeRecord], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
    wall: Callable[[], float] = time.time,
) -> LiveRun:
    """Runs the probes of ``cfg``'s schedule not yet in the database at ``db_path``, each
    through ``executor``, at the times of the schedule compressed by
    ``cfg.live.time_compression`` (the first probe left runs at once). ``stop`` (set, e.g.,
    on SIGINT): no further probe starts; those running finish and are recorded."""
    live = cfg.live
    if live is None:
        raise ValueError("live: the campaign file has no [live] table")
    stop = stop or threading.Event()
    paths = draw_paths(cfg)
    probes = schedule(cfg, paths)
    names = [h.name for h in live.hosts]
    ends = path_hosts(names, len(paths))
    db = open_db(db_path)
    try:
        add_hosts_and_paths(
            db,
            [(h.name, f"{h.address}:{h.port}") for h in live.hosts],
            [(p.id, *ends[p.id], round(p.rate_mbps * 1e6), round(p.rtt_ms * 1e6),
              max(1, p.buffer_bytes // cfg.transfer.packet_bytes), p.loss) for p in paths],
        )
        done = ended_probes(db)
    finally:
        db.close()
    todo = [p for p in probes if p.id not in done]
    out = LiveRun(paths, probes, skipped=len(probes) - len(todo))
    if not todo:
        return out
    by_id = {p.id: p for p in paths}
    slots = _Slots(live.per_host_limit)
    lock = threading.Lock()
    start, first_h = clock(), todo[0].time_h

    def one(probe: Probe) -> None:
        hosts = ends[probe.path]
        try:
            started = wall()
            runs: list[RunRow] = []
            attempt, tried = Attempt([], "not run"), 0
            for n in range(1, live.retries + 2):
                if n > 1 and stop.wait(min(5.0, 0.5 * 2 ** (n - 2))):
                    return  # interrupted between attempts: left for the next start
                try:
                    attempt = executor(probe_job(cfg, probe, by_id[probe.path], hosts, n), stop)
                except Exception as e:  # an executor's bug fails the attempt, not the campaign
                    attempt = Attempt([], f"controller: {type(e).__name__}: {e}")
                tried = n
                runs += attempt.runs
                if attempt.reason is None:
                    break
            rec = ProbeRecord(
                id=probe.id, path=probe.path, protocol=probe.protocol, scheduled_s=probe.time_h * 3600.0,
                status="ok" if attempt.reason is None else "failed", attempts=tried,
                started_at=started, finished_at=wall(), reason=attempt.reason,
                runs=tuple(runs), flows=(_flow_row(attempt.flow),) if attempt.reason is None else (),
            )
            db = open_db(db_path)
            try:
                record_probe(db, rec)
            finally:
                db.close()
            with lock:
                if rec.status == "ok":
                    out.ok += 1
                else:
                    out.failed += 1
            if on_probe is not None:
                on_probe(rec)
        finally:
            slots.give(hosts)

    futures: list[Future[None]] = []
    with ThreadPoolExecutor(max_workers=len(names) * live.per_host_limit) as pool:
        for probe in todo:
            due = start + (probe.time_h - first_h) * 3600.0 / live.time_compression
            if stop.wait(max(0.0, due - clock())) or not slots.take(ends[probe.path], stop):
                out.stopped = True
                break
            futures.append(pool.submit(one, probe))
        for f in futures:
            f.result()
    return out


def _flow_row(flow: dict[str, Any]) -> FlowRow:
    def num(k: str, kind: type) -> Any:
        v = flow.get(k)
        return kind(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None

    return FlowRow(
        flow=0, name="probe", bytes_delivered=num("bytes_delivered", int),
        throughput_bps=num("throughput_bps", float), retransmits=num("retransmits", int),
        timeouts=num("timeouts", int), metrics=flow,
    )
