"""The live campaign's probe daemon (docs/campaign.md "Live mode: the
daemon"): one per host, serving signed jobs from the controller over TCP (TLS between
machines).

The protocol is one JSON line each way per connection: the controller sends an envelope
(:mod:`tcplab.campaign.auth`), the daemon answers ``{"ok": true, "result": {...}}`` or
``{"ok": false, "error": "one line"}``. A request is refused, with a log line, when it is
longer than :data:`MAX_REQUEST` bytes or not one line, or not whole within
:data:`REQUEST_DEADLINE_S` (a client that trickles bytes is dropped too), when its envelope fails the checks
(wrong key, altered, replayed, expired, malformed), when the job names a peer outside the
configured ``peers``, or when its kind is unknown; the daemon keeps serving. A job that
runs longer than ``probe_timeout_s`` is answered ``probe timed out after ...`` with
``"reason": "timeout"``: the runner is asked to stop (its stop event) and given
:data:`STOP_GRACE_S` to end what it started before the answer goes out.

The jobs: ``{"kind": "ping"}`` (answers the host's name), and ``{"kind": "probe", "peer":
HOST, ...}``, handed to the daemon's probe runner (a callable taking the job and a stop
event, returning the result; the live transfers: :mod:`tcplab.campaign.live_probe`). A
probe job with a ``job_id`` is run once per phase: the same id and ``phase`` (or ``role``)
asked again with the same content, while it runs or after it ended, gets the first run's
answer (the last :data:`KEPT_JOBS` are kept), so a controller killed and restarted does not
run a transfer twice (docs/campaign.md "Live mode: the controller"). The same id with other
content (another campaign that names its probes alike) is another job.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import logging
import socket
import socketserver
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tcplab.campaign.auth import AuthError, Verifier, load_key, sign

__all__ = ["MAX_REQUEST", "STOP_GRACE_S", "Daemon", "DaemonConfig", "ProbeRunner", "request"]

#: Longest request line accepted (bytes).
MAX_REQUEST = 1 << 20
#: Probe jobs whose answers a daemon keeps for a controller that asks again.
KEPT_JOBS = 4096
#: How long a runner past ``probe_timeout_s`` may take to end what it started.
STOP_GRACE_S = 10.0
#: How long a client has to send its whole request line, however it trickles in.
REQUEST_DEADLINE_S = 30.0
#: Connections served at once; one more is answered ``busy`` and closed at once, so idle
#: connections cannot starve the daemon of threads and file descriptors.
MAX_CONNECTIONS = 64

log = logging.getLogger("tcplab.daemon")

#: A probe runner: (job, stop event) -> result (a JSON object).
ProbeRunner = Callable[[dict[str, Any], threading.Event], dict[str, Any]]


def _read_line(conn: socket.socket, deadline: float) -> bytes:
    """The request line from ``conn``: up to and with the first newline, at most
    :data:`MAX_REQUEST` + 1 bytes (more is the caller's refusal), all of it by ``deadline``
    (``socket.timeout`` after it, however the bytes trickle in)."""
    buf = bytearray()
    while b"\n" not in buf and len(buf) <= MAX_REQUEST:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"no whole request within {REQUEST_DEADLINE_S:g} s")
        conn.settimeout(left)
        chunk = conn.recv(65536)
        if not chunk:
            break
        buf += chunk
    end = buf.find(b"\n")
    return bytes(buf[: end + 1] if end >= 0 else buf)


class DaemonConfig(BaseModel):
    """``tcplab daemon --config DAEMON.toml``."""

    model_config = ConfigDict(extra="forbid")

    #: this host's name in the campaign
    name: str
    listen: str = "127.0.0.1"
    port: int = Field(ge=1, le=65535)
    key_file: Path
    #: hosts (names) this daemon may run probes with
    peers: list[str]
    #: TLS: the daemon's certificate chain and key (PEM); required unless `plaintext`
    tls_cert: Path | None = None
    tls_key: Path | None = None
    #: no TLS: only on a loopback address (a local testbed), never between machines
    plaintext: bool = False
    probe_timeout_s: float = Field(default=600.0, gt=0)
    #: where probes write their traces (``tcplab daemon``: relative to the config file)
    results_dir: Path = Path("daemon-results")

    @model_validator(mode="after")
    def _transport(self) -> DaemonConfig:
        if self.plaintext:
            if not ipaddress.ip_address(self.listen).is_loopback:
                raise ValueError(f"plaintext = true: only on a loopback address, not listen = {self.listen!r}")
        elif self.tls_cert is None or self.tls_key is None:
            raise ValueError("tls_cert and tls_key: required unless plaintext = true (loopback only)")
        return self


class Daemon:
    """A daemon serving ``config`` with ``runner``; :meth:`start` serves in a thread,
    :meth:`stop` ends it. ``now``: the clock for the envelopes' expiry (UNIX seconds)."""

    def __init__(self, config: DaemonConfig, runner: ProbeRunner | None = None,
                 now: Callable[[], float] = time.time):
        self.config = config
        self.verifier = Verifier(load_key(config.key_file))
        self.runner = runner
        self.now = now
        self.lock = threading.Lock()
        #: probe jobs by ``job_id`` and role, oldest first: a job asked again (a controller
        #: that resumes) is answered from its first run, never run twice
        self.jobs: OrderedDict[str, _Run] = OrderedDict()
        self.tls: ssl.SSLContext | None = None
        if not config.plaintext:
            self.tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            self.tls.load_cert_chain(str(config.tls_cert), str(config.tls_key))
        daemon = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                try:
                    deadline = time.monotonic() + REQUEST_DEADLINE_S
                    self.connection.settimeout(REQUEST_DEADLINE_S)
                    if isinstance(self.connection, ssl.SSLSocket):
                        self.connection.do_handshake()
                    daemon._serve(_read_line(self.connection, deadline), self.wfile, self.client_address)
                except (OSError, ssl.SSLError) as e:
                    log.warning("connection from %s dropped: %s", self.client_address[0], e)

        slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

        class Server(socketserver.ThreadingTCPServer):
            allow_reuse_address = True
            daemon_threads = True

            def get_request(self) -> tuple[socket.socket, Any]:
                conn, addr = super().get_request()
                if daemon.tls is not None:
                    conn = daemon.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
                return conn, addr

            def process_request(self, request: Any, client_address: Any) -> None:
                if not slots.acquire(blocking=False):
                    log.warning("refused %s: %d connections open", client_address[0], MAX_CONNECTIONS)
                    try:
                        if not isinstance(request, ssl.SSLSocket):  # no handshake for a refusal
                            request.settimeout(1.0)
                            request.sendall(json.dumps({"ok": False, "error": f"busy: {MAX_CONNECTIONS} connections "
                                                        "open, try again"}).encode() + b"\n")
                    except OSError:
                        pass
                    self.shutdown_request(request)
                    return
                super().process_request(request, client_address)

            def process_request_thread(self, request: Any, client_address: Any) -> None:
                try:
                    super().process_request_thread(request, client_address)
                finally:
                    slots.release()

        self.server = Server((config.listen, config.port), Handler)
        self.thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self.server.server_address[:2]
        return str(host), int(port)

    def start(self) -> Daemon:
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def _serve(self, line: bytes, wfile: Any, client: Any) -> None:
        try:
            if len(line) > MAX_REQUEST or not line.endswith(b"\n"):
                raise AuthError(f"malformed request: longer than {MAX_REQUEST} bytes or not one line")
            with self.lock:
                job = self.verifier.verify(line, self.now())
            reply: dict[str, Any] = {"ok": True, "result": self._run(job)}
            log.info("served %s: %s", client[0], " ".join(
                f"{k}={job[k]}" for k in ("kind", "phase", "probe", "peer") if k in job))
        except (AuthError, _Refused) as e:
            log.warning("refused %s: %s", client[0], e)
            reply = {"ok": False, "error": str(e)}
            if isinstance(e, _Refused) and e.reason:
                reply["reason"] = e.reason
        wfile.write(json.dumps(reply).encode() + b"\n")

    def _run(self, job: dict[str, Any]) -> dict[str, Any]:
        kind = job.get("kind")
        if kind == "ping":
            return {"name": self.config.name}
        if kind != "probe":
            raise _Refused(f"unknown job kind {kind!r}: expected ping or probe")
        peer = job.get("peer")
        if peer not in self.config.peers:
            raise _Refused(f"peer {peer!r} is not one of this daemon's peers ({', '.join(self.config.peers)})")
        if self.runner is None:
            raise _Refused("this daemon runs no probes")
        key = job.get("job_id")
        if key is not None and not isinstance(key, str):
            raise _Refused(f"job_id {key!r}: expected a string")
        if key is not None:
            # the job's whole content, so that an id asked again with other content (another
            # campaign's probe of the same name) is never answered from this one's run
            digest = hashlib.sha256(json.dumps(job, sort_keys=True, default=str).encode()).hexdigest()[:16]
            key = f"{key}/{job.get('phase') or job.get('role', '')}/{digest}"
        with self.lock:
            run = self.jobs.get(key) if key is not None else None
            fresh = run is None
            if run is None:
                run = _Run(time.monotonic())
                if key is not None:
                    self.jobs[key] = run
                    self._forget_old_jobs()
        if fresh:
            runner = self.runner

            def work() -> None:
                try:
                    run.out["result"] = runner(job, run.stop)
                except BaseException as e:  # the runner's failure is the probe's, one line
                    first = str(e).splitlines()[0] if str(e) else type(e).__name__
                    run.out["error"] = f"probe failed: {first}"
                finally:
                    run.done.set()

            threading.Thread(target=work, daemon=True).start()
        else:
            log.info("job %s asked again: answered from its first run", key)
        left = self.config.probe_timeout_s - (time.monotonic() - run.started)
        if not run.done.wait(max(0.0, left)):
            run.stop.set()
            run.done.wait(STOP_GRACE_S)  # the runner ends what it started
            with self.lock:
                run.out.setdefault("error", f"probe timed out after {self.config.probe_timeout_s:g} s")
                run.out.setdefault("reason", "timeout")
            run.done.set()
        if "error" in run.out:
            raise _Refused(run.out["error"], reason=run.out.get("reason"))
        return run.out["result"]

    def _forget_old_jobs(self) -> None:
        """Keeps the answers of the last :data:`KEPT_JOBS` jobs (finished ones go first)."""
        while len(self.jobs) > KEPT_JOBS:
            old = next((k for k, r in self.jobs.items() if r.done.is_set()), None)
            if old is None:
                break
            del self.jobs[old]


class _Run:
    """One probe job's run: its stop request, its end and its answer."""

    def __init__(self, started: float):
        self.started = started
        self.stop = threading.Event()
        self.done = threading.Event()
        self.out: dict[str, Any] = {}


class _Refused(Exception):
    """A job the daemon does not run (one line); `reason`: a word for the controller
    (``timeout``), or None."""

    def __init__(self, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason


def request(address: tuple[str, int], key: bytes, job: dict[str, Any], *, now: float | None = None,
            ttl_s: float = 60.0, timeout: float = 700.0, tls: ssl.SSLContext | None = None,
            server_name: str | None = None, raw: bytes | None = None) -> dict[str, Any]:
    """Sends ``job`` signed with ``key`` (or the bytes ``raw`` as they are) to the daemon
    at ``address`` and returns its reply."""
    data = raw if raw is not None else sign(key, job, time.time() if now is None else now, ttl_s).model_dump_json().encode() + b"\n"
    with socket.create_connection(address, timeout=timeout) as s:
        conn: socket.socket = tls.wrap_socket(s, server_hostname=server_name or address[0]) if tls else s
        conn.sendall(data)
        reply = conn.makefile("rb").readline()
    return dict(json.loads(reply))
