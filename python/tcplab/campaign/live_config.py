"""The ``[live]`` table of a campaign file (docs/campaign.md "Live mode: the
controller"): the campaign's scheduler, the hosts whose workers joined it, and how the
controller drives them.

.. code-block:: toml

    [live]
    scheduler = "tls://192.0.2.1:8786"   # the Dask scheduler the hosts' daemons joined
    tls_ca = "ca.pem"                    # mutual TLS: the campaign's authority and the
    tls_cert = "controller.pem"          # controller's certificate and key (absent: plaintext,
    tls_key = "controller.key"           # a loopback scheduler only)
    time_compression = 3600              # campaign hours per wall-clock hour (3600: 1 h -> 1 s)
    per_host_limit = 1                   # probes a host takes part in at once
    retries = 1                          # further attempts of a probe that failed
    request_timeout_s = 900              # the controller's wait for one probe
    connect_timeout_s = 30               # ... and for the scheduler
    pcap = false                         # each probe's packets captured by its sink

    [[live.hosts]]
    name = "zurich"                      # its daemon's name
    address = "192.0.2.10"               # the address its transfers use

Paths are laid on the hosts by :func:`path_hosts`: path ``i`` is the ``i``-th pair of
hosts in file order (``(h0, h1), (h0, h2), ..., (h1, h2), ...``), probed from the first to
the second (data on the path's forward direction, ACKs on its reverse); a campaign has at
most as many paths as pairs. The local testbed builds its emulated paths with the same
function, so path ``i`` of the population is the path between the same two hosts in both.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tcplab.campaign.errors import FieldValueError

__all__ = ["LiveHost", "LiveSettings", "path_hosts", "testbed_settings", "transport_problem"]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class LiveHost(BaseModel):
    """One host of a live campaign: its daemon's name and the address its transfers use."""

    model_config = _STRICT
    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    address: Annotated[str, Field(min_length=1)]


class LiveSettings(BaseModel):
    """The ``[live]`` table."""

    model_config = _STRICT
    scheduler: str
    hosts: Annotated[list[LiveHost], Field(min_length=2)]
    tls_ca: Path | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    time_compression: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    per_host_limit: Annotated[int, Field(ge=1, le=64)] = 1
    retries: Annotated[int, Field(ge=0, le=10)] = 1
    request_timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 900.0
    #: how long the controller tries to reach the scheduler
    connect_timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 30.0
    #: the sink's host captures each probe's packets (headers) into a pcap file
    pcap: bool = False

    @model_validator(mode="after")
    def _hosts(self) -> LiveSettings:
        names = [h.name for h in self.hosts]
        for i, n in enumerate(names):
            if names.index(n) != i:
                raise FieldValueError(f"hosts[{i}].name", n, "names a second host")
        if problem := transport_problem(self.scheduler, self.tls):
            field, what = problem
            value = getattr(self, field)
            raise FieldValueError(field, str(value) if value is not None else None, what)
        return self

    @property
    def tls(self) -> tuple[Path | None, Path | None, Path | None]:
        return self.tls_ca, self.tls_cert, self.tls_key

    def host(self, name: str) -> LiveHost:
        return next(h for h in self.hosts if h.name == name)


def path_hosts(hosts: list[str], n_paths: int) -> list[tuple[str, str]]:
    """The (source, sink) hosts of paths ``0 .. n_paths-1``: the pairs of distinct hosts in
    host order, ``(h0, h1), (h0, h2), ..., (h1, h2), ...``; ValueError (one line) when there
    are more paths than pairs."""
    pairs = [(a, b) for i, a in enumerate(hosts) for b in hosts[i + 1 :]]
    if n_paths > len(pairs):
        raise ValueError(
            f"schedule.paths = {n_paths}: {len(hosts)} hosts have {len(pairs)} pairs, one path each"
        )
    return pairs[:n_paths]


def testbed_settings(description: dict, base: LiveSettings | None = None) -> LiveSettings:
    """The ``[live]`` table of a local testbed (``tcplab testbed``'s ``testbed.json``: its
    scheduler, TLS files and hosts), with ``base``'s time compression, per-host limit,
    retries, timeout and capture when given."""
    hosts = [LiveHost(name=h["name"], address=h["address"]) for h in description["hosts"]]
    tls = description.get("tls") or {}
    keep = base.model_dump(exclude={"hosts", "scheduler", "tls_ca", "tls_cert", "tls_key"}) if base is not None else {}
    return LiveSettings(scheduler=description["scheduler"], hosts=hosts, tls_ca=tls.get("ca"),
                        tls_cert=tls.get("cert"), tls_key=tls.get("key"), **keep)


def transport_problem(scheduler: str, tls: tuple[Path | None, Path | None, Path | None]) -> tuple[str, str] | None:
    """(field, what is wrong: no value in it) with a scheduler address and the TLS files (CA,
    certificate, key), or None: ``tls://`` needs all three; ``tcp://`` (plaintext) only on a
    loopback address and without them."""
    parts = urlsplit(scheduler)
    try:
        port = parts.port
    except ValueError:
        port = None
    if parts.scheme not in ("tls", "tcp") or not parts.hostname or port is None:
        return "scheduler", "is not tls://HOST:PORT (or tcp://127.0.0.1:PORT on one machine)"
    if parts.scheme == "tls":
        for name, f in zip(("tls_ca", "tls_cert", "tls_key"), tls):
            if f is None:
                return name, "required with a tls:// scheduler (mutual TLS: docs/campaign.md)"
        return None
    try:
        loopback = ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        loopback = parts.hostname == "localhost"
    if not loopback:
        return "scheduler", "plaintext (tcp://) only on a loopback address: use tls:// and the TLS files"
    if any(f is not None for f in tls):
        return "scheduler", "the TLS files need a tls:// address"
    return None
