"""``tcplab daemon``: one host of the live campaign (docs/campaign.md "Live mode: the hosts").

A daemon is a Dask worker named after its host that joins the campaign's scheduler, holding
the host's resource (:func:`tcplab.campaign.cluster.host_resource`, ``slots`` of it: the
probe phases it runs at once) and the probe plugin (:class:`~tcplab.campaign.cluster.ProbeHost`:
the endpoints, the results directory, the namespace). It talks to the scheduler, the
controller and the other hosts over TLS with mutual authentication (or plaintext with a
loopback scheduler: a testbed on one machine). When the scheduler goes away the worker
closes, killing what its probes started, and the daemon joins again until it is stopped.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tcplab.campaign.cluster import host_resource, security
from tcplab.campaign.live_config import transport_problem

__all__ = ["DaemonConfig", "RETRY_S", "serve"]

#: How long a daemon waits before it joins again a scheduler it lost or could not reach.
RETRY_S = 2.0

log = logging.getLogger("tcplab.daemon")


class DaemonConfig(BaseModel):
    """``tcplab daemon --config DAEMON.toml``."""

    model_config = ConfigDict(extra="forbid")

    #: this host's name in the campaign
    name: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    #: the campaign's scheduler: tls://HOST:PORT (tcp://127.0.0.1:PORT on one machine)
    scheduler: str
    #: the interface the worker listens on for the scheduler and the other hosts (default:
    #: the one distributed picks)
    listen: str | None = None
    #: mutual TLS: the campaign's authority and this host's certificate and key (PEM)
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: probe phases this host runs at once (at least the campaign's per_host_limit)
    slots: Annotated[int, Field(ge=1, le=64)] = 4
    probe_timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 600.0
    #: where probes write their traces (``tcplab daemon``: relative to the config file)
    results_dir: Path = Path("daemon-results")

    @model_validator(mode="after")
    def _transport(self) -> DaemonConfig:
        if problem := transport_problem(self.scheduler, self.tls):
            field, what = problem
            value = getattr(self, field)
            raise ValueError(f"{field}: {what}" if value is None else f"{field} = {str(value)!r}: {what}")
        return self

    @property
    def tls(self) -> tuple[Path | None, Path | None, Path | None]:
        return self.tls_ca, self.tls_cert, self.tls_key


def serve(cfg: DaemonConfig, plugin: Callable[[], Any], stop: threading.Event,
          on_ready: Callable[[str], None] | None = None) -> None:
    """Runs ``cfg``'s worker until ``stop`` is set, joining the scheduler again after
    :data:`RETRY_S` whenever it cannot reach it or loses it. ``plugin``: makes the worker's
    probe plugin (a new one per worker: a closed worker ends its plugin). ``on_ready``:
    called with the worker's address each time it joins."""
    asyncio.run(_serve(cfg, plugin, stop, on_ready))


async def _serve(cfg: DaemonConfig, plugin: Callable[[], Any], stop: threading.Event,
                 on_ready: Callable[[str], None] | None) -> None:
    from distributed import Worker

    sec = security(cfg.tls)
    while not stop.is_set():
        try:
            worker = Worker(cfg.scheduler, name=cfg.name, nthreads=cfg.slots, host=cfg.listen,
                            resources={host_resource(cfg.name): cfg.slots}, plugins=(plugin(),),
                            security=sec, death_timeout=30, dashboard=False, memory_limit=0)
            joining = asyncio.ensure_future(worker)  # stoppable while it tries to join
            while not joining.done() and not stop.is_set():
                await asyncio.wait([joining], timeout=0.2)
            if not joining.done():
                joining.cancel()
                await worker.close(reason="tcplab daemon stopped")
                return
            joining.result()
        except Exception as e:  # the scheduler cannot be reached, or refuses this worker
            log.warning("cannot join %s: %s", cfg.scheduler, " ".join(str(e).split())[:200] or type(e).__name__)
            await _wait(stop, RETRY_S)
            continue
        if on_ready is not None:
            on_ready(str(worker.address))
        finished = asyncio.ensure_future(worker.finished())
        while not finished.done() and not stop.is_set():
            await asyncio.wait([finished], timeout=0.2)
        if not finished.done():
            await worker.close(reason="tcplab daemon stopped")
        else:
            log.warning("left %s (the scheduler closed or was lost); joining again", cfg.scheduler)
            await _wait(stop, RETRY_S)


async def _wait(stop: threading.Event, seconds: float) -> None:
    end = asyncio.get_running_loop().time() + seconds
    while not stop.is_set() and asyncio.get_running_loop().time() < end:
        await asyncio.sleep(0.1)
