"""The live campaign on Dask distributed (docs/campaign.md "Live mode"): how a probe runs on
the hosts' workers, from both sides of the scheduler.

**Hosts.** Each host runs one worker (``tcplab daemon``, :mod:`tcplab.campaign.daemon`)
named after the host and holding the resource :func:`host_resource` (``tcplab-host-NAME``):
a task that asks for it runs on that host and nowhere else, also after the worker was
restarted. The worker carries a :class:`ProbeHost` plugin: the host's
:class:`~tcplab.campaign.live_probe.ProbeRunner` (the endpoints, the results directory) and
the network namespace its probes run in. A phase runs at most ``probe_timeout_s``; then it
is stopped and answered ``timeout``.

**A probe** is three tasks submitted together, chained by their data
(:func:`run_probe`): ``listen`` on the sink (a receiver on a free port), ``send`` on the
source (the transfer to that port) and ``collect`` on the sink (the receiver's figures).
Each answers ``{"ok": true, "result": ProbeResult, "worker": ID}`` or ``{"ok": false,
"error": "one line", "reason": "timeout" | null}`` and never raises, so the receiver is
collected whatever the send did. The tasks' keys are a digest of the probe's whole content
(the campaign's uid, probe and attempt among it): an answer is never reused for another
probe, and a controller that was killed and asks again for a probe still running gets that
run's answer. A worker lost mid-probe fails the attempt with its reason (the controller
watches the probe's two workers; the scheduler is asked not to run a task again on another
worker instance, ``allowed_failures = 0``).

**Security**: TLS with mutual authentication (distributed's ``Security``: every party
presents a certificate signed by the campaign's authority); plaintext only with a loopback
scheduler (a testbed on one machine).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import TYPE_CHECKING, Any

from distributed.diagnostics.plugin import WorkerPlugin

from tcplab.campaign.live_probe import ProbeFailed, ProbeOutcome, ProbeResult, ProbeRunner, ProbeSpec

if TYPE_CHECKING:
    from distributed import Client
    from distributed.security import Security

__all__ = ["PLUGIN", "STOP_GRACE_S", "ProbeHost", "connect", "host_resource", "hosts_present", "run_probe",
           "security", "start_scheduler", "write_temporary_credentials"]

#: The worker plugin's name.
PLUGIN = "tcplab-probes"
#: Every phase a host ran (info: with ``tcplab daemon -v``), every failure (warning).
log = logging.getLogger("tcplab.daemon")
#: How long a phase past ``probe_timeout_s`` may take to end what it started.
STOP_GRACE_S = 10.0
#: How long the controller waits for the receiver of a failed probe to be ended.
CLEANUP_S = 20.0


#: The resources that pin tasks to a host's worker: this prefix and the host's name.
RESOURCE_PREFIX = "tcplab-host-"


def host_resource(host: str) -> str:
    """The resource that pins a task to ``host``'s worker."""
    return RESOURCE_PREFIX + host


def security(tls: tuple[Path | None, Path | None, Path | None]) -> Security | None:
    """distributed's security settings for the files (CA, certificate, key), the same
    certificate for every role this process plays; None without them (plaintext)."""
    from distributed.security import Security

    ca, cert, key = tls
    if ca is None or cert is None or key is None:
        return None
    files = {"tls_ca_file": str(ca)}
    for role in ("client", "worker", "scheduler"):
        files[f"tls_{role}_cert"] = str(cert)
        files[f"tls_{role}_key"] = str(key)
    return Security(require_encryption=True, **files)


def write_temporary_credentials(directory: Path) -> tuple[Path, Path, Path]:
    """A new self-signed authority and certificate for one testbed (distributed's
    ``Security.temporary``) written to ``directory`` (owner-only files): (CA, cert, key)."""
    from distributed.security import Security

    t = Security.temporary()
    directory.mkdir(parents=True, exist_ok=True)
    paths = (directory / "ca.pem", directory / "cert.pem", directory / "key.pem")
    for path, text in zip(paths, (t.tls_ca_file, t.tls_client_cert, t.tls_client_key)):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(str(text))
    return paths


def start_scheduler(directory: Path, tls: tuple[Path, Path, Path] | None, *, host: str = "127.0.0.1",
                    timeout_s: float = 60.0) -> tuple[subprocess.Popen[str], str]:
    """Starts distributed's scheduler on ``host`` (a free port; TLS with the files ``tls``,
    else plaintext) as a child process that dies with this one, writing its files and log
    to ``directory``; (the process, its address). A task lost with its worker is not run
    again (``allowed_failures = 0``). No dashboard; its HTTP server (health, metrics) on a
    free port too, not Dask's usual 8787 (another cluster's, or a second testbed's). LiveError
    (its last log line) if it does not start."""
    from tcplab.live.errors import LiveError
    from tcplab.sweep.backends import kill_at_parent_death

    directory.mkdir(parents=True, exist_ok=True)
    info, log_path = directory / "scheduler.json", directory / "scheduler.log"
    argv = [sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", host, "--port", "0",
            "--scheduler-file", str(info), "--no-dashboard", "--dashboard-address", ":0"]
    if tls is not None:
        argv += ["--protocol", "tls", "--tls-ca-file", str(tls[0]), "--tls-cert", str(tls[1]), "--tls-key", str(tls[2])]
    env = {**os.environ, "DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"}
    with open(log_path, "w") as log:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=log, text=True, env=env,
                                preexec_fn=kill_at_parent_death)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return proc, str(json.loads(info.read_text())["address"])
        except (OSError, ValueError, KeyError):  # not written yet, or not whole
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            lines = log_path.read_text().strip().splitlines()
            raise LiveError("the scheduler: " + (lines[-1] if lines else "did not start"))
        time.sleep(0.05)


# --------------------------------------------------------------------------------------------
# The worker's side.


class ProbeHost(WorkerPlugin):
    """The worker plugin of a host (``distributed.WorkerPlugin``): its probe runner, the
    network namespace its probes run in (None: the worker's own) and the phases' time limit.
    ``runner``: a callable (job, stop event) -> result dict (tests play transfers with one)."""

    name = PLUGIN

    def __init__(self, host: str, runner: Any, *, netns: str | None = None, probe_timeout_s: float = 600.0,
                 slots: int = 4) -> None:
        self.host = host
        self.runner = runner
        self.probe_timeout_s = probe_timeout_s
        self.worker_id = ""
        # The phases run on these threads, each in the host's namespace (setns moves one
        # thread): its sockets, captures and endpoints are the host's; the worker's own
        # connections stay where it was started.
        if netns is not None:
            from tcplab.live.netns_enter import enter_netns

            self.pool = ThreadPoolExecutor(slots, thread_name_prefix="probe", initializer=enter_netns, initargs=(netns,))
        else:
            self.pool = ThreadPoolExecutor(slots, thread_name_prefix="probe")

    def setup(self, worker: Any) -> None:
        self.worker_id = str(worker.id)

    def teardown(self, worker: Any) -> None:
        close = getattr(self.runner, "close", None)
        if close is not None:
            close()
        self.pool.shutdown(wait=False, cancel_futures=True)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        """One phase of a probe, as an answer (never raises)."""
        stop = threading.Event()
        try:
            fut = self.pool.submit(self.runner, job, stop)
        except RuntimeError:
            return self._failed("the worker is stopping")
        what = f"{job.get('phase')} {job.get('probe')}"
        try:
            out = {"ok": True, "result": fut.result(timeout=self.probe_timeout_s), "worker": self.worker_id}
            log.info("%s: %s", what, "ok")
            return out
        except FutureTimeout:
            stop.set()
            try:
                fut.result(timeout=STOP_GRACE_S)  # the runner ends what it started
            except BaseException:
                pass
            return self._failed(f"probe timed out after {self.probe_timeout_s:g} s", "timeout")
        except BaseException as e:  # the runner's failure is the phase's, one line
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            if not isinstance(e, ProbeFailed):
                first = f"probe failed: {first}"
            return self._failed(first)

    def _failed(self, error: str, reason: str | None = None) -> dict[str, Any]:
        log.warning("%s", error)
        return {"ok": False, "error": f"{self.host}: {error}", "reason": reason, "worker": self.worker_id}


def _host() -> ProbeHost:
    from distributed import get_worker

    plugin = get_worker().plugins.get(PLUGIN)
    if plugin is None:
        raise RuntimeError("this worker runs no probes (not started by tcplab daemon)")
    return plugin  # type: ignore[return-value]


def _phase(spec: dict[str, Any], phase: str, port: int | None = None) -> dict[str, Any]:
    peer = spec["sink"] if phase == "send" else spec["source"]
    return _host().run({**spec, "phase": phase, "peer": peer, "port": port})


def listen_task(spec: dict[str, Any]) -> dict[str, Any]:
    """The sink's first phase: ``{"listen": answer}``."""
    return {"listen": _phase(spec, "listen")}


def send_task(spec: dict[str, Any], done: dict[str, Any]) -> dict[str, Any]:
    """The source's phase, once the sink listens: ``done`` with ``"send"``."""
    listened = done["listen"]
    if not listened["ok"]:
        return {**done, "send": {"ok": False, "error": "not sent: the sink did not listen", "reason": None}}
    return {**done, "send": _phase(spec, "send", listened["result"]["port"])}


def collect_task(spec: dict[str, Any], done: dict[str, Any]) -> dict[str, Any]:
    """The sink's last phase, once the source is done: ``done`` with ``"collect"`` (on the
    worker that listened: its receiver lives there)."""
    listened = done["listen"]
    if not listened["ok"]:
        return {**done, "collect": {"ok": False, "error": "not collected: the sink did not listen", "reason": None}}
    host = _host()
    if listened["worker"] != host.worker_id:
        return {**done, "collect": host._failed("its worker was restarted during the probe (the receiver is gone)")}
    return {**done, "collect": _phase(spec, "collect", listened["result"]["port"])}


# --------------------------------------------------------------------------------------------
# The controller's side.


def _no_second_try(dask_scheduler: Any) -> None:
    dask_scheduler.allowed_failures = 0


def connect(scheduler: str, tls: tuple[Path | None, Path | None, Path | None], *, timeout_s: float = 30.0) -> Client:
    """A client of the campaign's scheduler; OSError (one line) when it cannot connect."""
    from distributed import Client

    try:
        client = Client(scheduler, security=security(tls), timeout=f"{timeout_s}s", set_as_default=False)
    except (OSError, TimeoutError) as e:
        raise OSError(f"scheduler = {scheduler!r}: cannot connect: {' '.join(str(e).split())[:200]}") from None
    try:
        client.run_on_scheduler(_no_second_try)
    except Exception:  # a scheduler that runs no functions: the controller's watch remains
        pass
    return client


def hosts_present(client: Client) -> dict[str, str]:
    """Host name -> the address of its worker, for the workers connected now."""
    info = client.scheduler_info(n_workers=-1)["workers"]
    out = {}
    for addr, w in info.items():
        for res in w.get("resources", {}):
            if str(res).startswith(RESOURCE_PREFIX):
                out[str(res).removeprefix(RESOURCE_PREFIX)] = addr
    return out


def run_probe(client: Client, spec: ProbeSpec, *, timeout_s: float | None = None) -> ProbeOutcome:
    """Runs probe ``spec`` on its hosts' workers (module docstring). Never raises for a
    probe that failed: the outcome says ``failed`` with the first reason (``timeout`` when
    a worker stopped a phase at its ``probe_timeout_s``). ``timeout_s``: how long the
    controller waits for the whole probe (default: its time limit plus 60 s)."""
    t0 = time.perf_counter()
    limit = timeout_s or spec.time_limit_s + 60.0

    def done(reason: str | None, out: dict[str, Any] | None = None) -> ProbeOutcome:
        out = out or {}
        src = _result(out.get("send"))
        snk = _result(out.get("collect"))
        if reason is None:
            for phase in ("listen", "send", "collect"):
                a = out.get(phase) or {}
                if not a.get("ok", False):
                    reason = "timeout" if a.get("reason") == "timeout" else a.get("error", f"{phase}: no answer")
                    break
            else:
                reason = (src.reason if src and src.status == "failed" else None) \
                    or (snk.reason if snk and snk.status == "failed" else None)
        return ProbeOutcome(spec=spec, status="failed" if reason else "ok", reason=reason, source=src, sink=snk,
                            wall_s=time.perf_counter() - t0)

    try:
        workers = hosts_present(client)
    except Exception as e:  # the scheduler is gone
        return done(f"the scheduler: {type(e).__name__}: {e}")
    for h in (spec.sink, spec.source):
        if h not in workers:
            return done(f"the worker of {h} is not connected to the scheduler")
    base = spec.model_dump(mode="json")
    key = f"{spec.probe}-{hashlib.sha256(json.dumps(base, sort_keys=True).encode()).hexdigest()[:16]}"
    pin = {"pure": False, "retries": 0}
    sink, source = {host_resource(spec.sink): 1}, {host_resource(spec.source): 1}
    listened = client.submit(listen_task, base, key=f"listen-{key}", resources=sink, **pin)
    sent = client.submit(send_task, base, listened, key=f"send-{key}", resources=source, **pin)
    collected = client.submit(collect_task, base, sent, key=f"collect-{key}", resources=sink, **pin)
    del listened, sent  # the scheduler keeps what the last task needs, no more
    deadline = time.monotonic() + limit
    reason: str | None = None
    while reason is None:
        try:
            return done(None, collected.result(timeout=1.0))
        except TimeoutError:
            pass
        except Exception as e:  # a task lost with its worker
            reason = f"{type(e).__name__}: {' '.join(str(e).split())[:160]}"
        now = _safe_hosts(client)
        for h in (spec.source, spec.sink):
            if now.get(h) != workers[h]:
                reason = f"the worker of {h} {'left' if h not in now else 'was restarted'} during the probe"
                break
        else:
            if reason is None and time.monotonic() > deadline:
                reason = f"no answer within {limit:g} s"
    client.cancel([collected], force=True)
    _end_receiver(client, base, key, spec.sink)
    return done(reason)


def _safe_hosts(client: Client) -> dict[str, str]:
    try:
        return hosts_present(client)
    except Exception:
        return {}


def _end_receiver(client: Client, base: dict[str, Any], key: str, sink: str) -> None:
    """Ends the receiver of a failed probe on its sink, if it listened (its answer is
    not needed: "no receiver is waiting" is fine)."""
    if sink not in _safe_hosts(client):
        return
    # the receiver is found by the probe's name; a collect job names some port
    f = client.submit(_phase, base, "collect", 1, key=f"end-{key}-{time.monotonic_ns()}",
                      resources={host_resource(sink): 1}, pure=False)
    try:
        f.result(timeout=CLEANUP_S)
    except Exception:
        client.cancel([f], force=True)


def _result(answer: dict[str, Any] | None) -> ProbeResult | None:
    if not answer or not answer.get("ok"):
        return None
    return ProbeResult.model_validate(answer["result"])


def start_worker_plugin(host: str, results_dir: Path, *, netns: str | None, probe_timeout_s: float,
                        slots: int) -> ProbeHost:
    """The plugin of a real host: a :class:`ProbeRunner` whose endpoints start in ``netns``."""
    return ProbeHost(host, ProbeRunner(host, results_dir, netns=netns), netns=netns,
                     probe_timeout_s=probe_timeout_s, slots=slots)
