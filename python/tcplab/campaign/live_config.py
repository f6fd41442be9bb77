"""The ``[live]`` table of a campaign file (docs/campaign.md "Live mode: the
controller"): where the daemons are and how the controller drives them.

.. code-block:: toml

    [live]
    key_file = "campaign.key"       # the secret shared with every daemon (owner-only file)
    time_compression = 3600         # campaign hours per wall-clock hour (3600: 1 h -> 1 s)
    per_host_limit = 1              # probes a host takes part in at once
    retries = 1                     # further attempts of a probe that failed
    request_timeout_s = 900         # the controller's wait for one daemon's answer
    tls_ca = "ca.pem"               # verify the daemons' certificates (absent: plaintext,
                                    # loopback addresses only)
    pcap = false                    # each probe's packets captured by its sink's daemon

    [[live.hosts]]
    name = "zurich"
    address = "192.0.2.10"
    port = 7711

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

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tcplab.campaign.errors import FieldValueError

__all__ = ["LiveHost", "LiveSettings", "path_hosts", "testbed_settings"]

_STRICT = ConfigDict(extra="forbid", frozen=True)


class LiveHost(BaseModel):
    """One host of a live campaign: its daemon's address and port, and the address its
    transfers use (``data_address``, default ``address``: a testbed's daemons listen on
    loopback while its hosts' transfers use their emulated addresses)."""

    model_config = _STRICT
    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_.-]{1,64}$")]
    address: Annotated[str, Field(min_length=1)]
    port: Annotated[int, Field(ge=1, le=65535)]
    data_address: str | None = None

    @property
    def transfer_address(self) -> str:
        return self.data_address or self.address

    def is_loopback(self) -> bool:
        try:
            return ipaddress.ip_address(self.address).is_loopback
        except ValueError:
            return self.address == "localhost"


class LiveSettings(BaseModel):
    """The ``[live]`` table."""

    model_config = _STRICT
    hosts: Annotated[list[LiveHost], Field(min_length=2)]
    key_file: Path
    time_compression: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 1.0
    per_host_limit: Annotated[int, Field(ge=1, le=64)] = 1
    retries: Annotated[int, Field(ge=0, le=10)] = 1
    request_timeout_s: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 900.0
    tls_ca: Path | None = None
    #: the sink's daemon captures each probe's packets (headers) into a pcap file
    pcap: bool = False

    @model_validator(mode="after")
    def _hosts(self) -> LiveSettings:
        names = [h.name for h in self.hosts]
        for i, n in enumerate(names):
            if names.index(n) != i:
                raise FieldValueError(f"hosts[{i}].name", n, "names a second host")
        if self.tls_ca is None:
            for i, h in enumerate(self.hosts):
                if not h.is_loopback():
                    raise FieldValueError(
                        f"hosts[{i}].address", h.address,
                        "is not a loopback address: give tls_ca (the daemons talk TLS between machines)",
                    )
        return self

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
    """The ``[live]`` table of a local testbed (``tcplab testbed``'s ``testbed.json``:
    hosts with their emulated and daemon addresses, the key file), with ``base``'s time
    compression, per-host limit, retries and timeout when given."""
    hosts = []
    for h in description["hosts"]:
        host, port = str(h["daemon"]).rsplit(":", 1)
        hosts.append(LiveHost(name=h["name"], address=host, port=int(port), data_address=h["address"]))
    keep = base.model_dump(exclude={"hosts", "key_file", "tls_ca"}) if base is not None else {}
    return LiveSettings(hosts=hosts, key_file=Path(description["key_file"]), **keep)
