"""The live campaign's commands of the ``tcplab`` CLI (registered by :func:`register`):

- ``tcplab daemon --config DAEMON.toml [--netns NS]``: a host of the live campaign in the
  foreground (:mod:`tcplab.campaign.daemon`: a Dask worker with the host's probe runner)
  until SIGTERM or SIGINT; prints ``tcplab daemon NAME: worker ADDRESS joined SCHEDULER``
  each time it joins. A bad config file is one line on stderr naming the field and its
  value, exit 2.
- ``tcplab testbed CAMPAIGN.toml --hosts N``: a local testbed
  (:mod:`tcplab.campaign.testbed`) until SIGTERM or SIGINT; writes ``testbed.json``.
- ``tcplab cleanup``: removes what killed live runs and testbeds left behind (their network
  namespaces, with every process still in them); the next live run does the same.
"""

from __future__ import annotations

import json
import logging
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any

import typer

from tcplab.cli.common import fail

__all__ = ["register", "load_daemon_config"]


class DaemonConfigError(ValueError):
    """A daemon config file refused (one line)."""


def load_daemon_config(path: Path) -> Any:
    """The DaemonConfig of TOML file `path`; relative paths in it are relative to the file's
    directory. DaemonConfigError: one line naming the file, the field and its value."""
    from pydantic import ValidationError

    from tcplab.campaign.daemon import DaemonConfig
    from tcplab.scenario.errors import describe_error, field_path
    from tcplab.toml_file import TomlError, read_toml

    try:
        data, _ = read_toml(path)
    except TomlError as e:
        raise DaemonConfigError(str(e)) from None
    try:
        cfg = DaemonConfig.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        loc, detail = describe_error(dict(err))
        where = field_path(loc)
        if err["type"] == "value_error" and not where:
            detail = str(err["msg"]).removeprefix("Value error, ")
        raise DaemonConfigError(f"{path}: {where + ': ' if where else ''}{detail}") from None
    base = path.resolve().parent
    fixed = {k: base / v for k in ("tls_ca", "tls_cert", "tls_key", "results_dir")
             if isinstance(v := getattr(cfg, k), Path) and not v.is_absolute()}
    return cfg.model_copy(update=fixed)


def daemon(
    config: Annotated[Path, typer.Option("--config", "-c", help="Daemon config (TOML; docs/campaign.md).",
                                         metavar="DAEMON.toml")],
    netns: Annotated[str | None, typer.Option(
        "--netns", help="Run the probes in this network namespace (ip netns name or /proc/PID/ns/net); "
                        "the worker's own connections stay here: how tcplab testbed starts its daemons.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log every probe phase, not only problems.")] = False,
) -> None:
    """Run a host of the live campaign (a Dask worker) until SIGTERM or SIGINT."""
    import os

    from tcplab.campaign.cluster import start_worker_plugin
    from tcplab.campaign.daemon import serve
    from tcplab.live.errors import LiveError
    from tcplab.live.processes import OWNER_ENV

    if owner := os.environ.pop(OWNER_ENV, None):  # started by a testbed: die with it
        from tcplab.sweep.backends import die_with_parent

        die_with_parent(int(owner))
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    for noisy in ("distributed", "tornado", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING if verbose else logging.ERROR)
    try:
        cfg = load_daemon_config(config)
    except DaemonConfigError as e:
        fail(str(e))
    for field in ("tls_ca", "tls_cert", "tls_key"):
        f = getattr(cfg, field)
        if f is not None and not f.is_file():
            fail(f"{config}: {field} = {str(f)!r}: no such file")
    if netns is not None:
        from tcplab.live.netns_enter import check_netns

        try:
            check_netns(netns)
        except LiveError as e:
            fail(str(e))
    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        serve(cfg, lambda: start_worker_plugin(cfg.name, cfg.results_dir, netns=netns,
                                               probe_timeout_s=cfg.probe_timeout_s, slots=cfg.slots), stop,
              lambda address: print(f"tcplab daemon {cfg.name}: worker {address} joined {cfg.scheduler}", flush=True))
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def testbed(
    campaign: Annotated[Path, typer.Argument(help="Campaign file whose path population the paths are drawn from.",
                                             metavar="CAMPAIGN.toml", show_default=False)],
    hosts: Annotated[int, typer.Option("--hosts", "-n", help="Number of hosts (namespaces h0 ... hN-1).")] = 4,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the paths' draw.")] = 1,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Directory for the testbed's files "
                                             "(default: a temporary one, removed at the end).")] = None,
    no_cross_udp: Annotated[bool, typer.Option("--no-cross-udp", help="No UDP cross traffic.")] = False,
    cross_tcp: Annotated[int, typer.Option("--cross-tcp", min=0, help="At most this many long-lived TCP "
                                           "cross flows per path (round(tcp_flows) of its draw); 0: none.")] = 0,
    probe_timeout_s: Annotated[float, typer.Option("--probe-timeout", help="The daemons' probe_timeout_s.")] = 300.0,
) -> None:
    """Build a local testbed and keep it up until SIGTERM or SIGINT.

    Namespaces, emulated paths, a Dask scheduler and a daemon per host; its description
    goes to OUT/testbed.json and stdout. Killed outright (SIGKILL), its scheduler and
    daemons die with it and its namespaces stay until `tcplab cleanup` or the next live run."""
    from tcplab.campaign.config import CampaignError
    from tcplab.campaign.testbed import Testbed
    from tcplab.live.errors import LiveError

    stop = threading.Event()

    def on_signal(signum: int, frame: object) -> None:
        stop.set()

    if out is not None and out.is_dir() and any(out.iterdir()):
        fail(f"--out {out}: not empty (a testbed writes new credentials and results)")
    try:
        tb = Testbed(hosts, campaign, seed, out_dir=out, cross_udp=not no_cross_udp, cross_tcp=cross_tcp,
                     probe_timeout_s=probe_timeout_s)
    except (CampaignError, LiveError) as e:
        fail(f"{campaign}: {e}" if isinstance(e, CampaignError) else str(e))
    old = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        with tb:
            signal.signal(signal.SIGTERM, on_signal)  # the testbed's own handler raises instead
            desc = tb.describe()
            assert tb.out_dir is not None
            (tb.out_dir / "testbed.json").write_text(json.dumps(desc, indent=2) + "\n")
            for h in desc["hosts"]:
                print(f"{h['name']}: address {h['address']}, namespace {h['namespace']}")
            print(f"scheduler: {desc['scheduler']}; description: {tb.out_dir / 'testbed.json'}", flush=True)
            while not stop.wait(0.5):
                pass
    except LiveError as e:
        fail(str(e), 1)
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def cleanup() -> None:
    """Remove what killed live runs and testbeds left behind.

    A live run or testbed killed outright (SIGKILL) leaves its network namespaces, and any
    process still in them, until the next live run removes them; this
    removes them now: every namespace named by a tcplab process that is no longer alive,
    with what runs in it. Nothing else is touched. Needs root (user-namespace runs leave
    nothing behind)."""
    import os

    from tcplab.live.netns import cleanup_stale

    if os.geteuid() != 0:
        print("tcplab cleanup: nothing to remove without root (only root makes named namespaces; "
              "a user-namespace run leaves nothing behind)")
        return
    removed = cleanup_stale()
    for ns in removed:
        print(f"removed namespace {ns} and the processes in it")
    if not removed:
        print("tcplab cleanup: nothing left behind")


def register(app: typer.Typer) -> None:
    """Adds ``daemon``, ``testbed`` and ``cleanup`` to the CLI."""
    app.command("daemon")(daemon)
    app.command("testbed")(testbed)
    app.command("cleanup")(cleanup)
