"""The live campaign's probe runner (docs/campaign.md "Live mode: probes"): what
a host's worker (``tcplab daemon``, :mod:`tcplab.campaign.cluster`) does with one phase of a
probe. A probe is a transfer of ``bytes`` bytes from a source host to a sink host with one
protocol:

- ``{"stack": "tcplab", "controller": ..., "recovery": ...}``: tcplab's own transport
  (tcplab-core's sender and receiver over UDP: ``tcplab-flow send|recv``, as ``tcplab live``
  runs them), any controller × recovery of the registries, with optional parameters;
- ``{"stack": "linux", "congestion": "reno" | "cubic" | "bbr" | ...}``: the kernel's TCP
  with that congestion control (``tcplab/live/linux_endpoint.py``, as ``tcplab live`` runs
  ``stack = "linux"`` flows).

- ``{"stack": "tcplab-tcp", ...}``: tcplab's sender speaking real TCP to a Linux sink.

No second transport and no second TCP: each is a stack of ``tcplab run --live``
(:data:`tcplab.live.stacks.STACKS`), whose ends run apart here: the stack gives each end's
command line and what its files say, the runner starts them as child processes of the
worker, in the host's network namespace (a machine, or a namespace of ``tcplab testbed``).

**Three phases** (:class:`ProbeJob`), chained by the controller
(:func:`tcplab.campaign.cluster.run_probe`):

1. ``listen`` on the sink: it starts the receiving end on a free port and answers at once
   with the port (:class:`ProbeResult` ``port``); the receiver waits for the source.
2. ``send`` on the source, with that ``port``: it runs the sending end until the transfer
   is acknowledged (or ``time_limit_s`` passed) and answers with the sender's figures
   (bytes acknowledged, duration, throughput, retransmissions, timeouts).
3. ``collect`` on the sink: it ends the receiver (after what is in flight arrived) and
   answers with the receiver's figures (bytes delivered in order, checked against the
   stream's pattern: ``intact``).

``peer`` of each job is the other end's host name (the sink's for ``send``, the source's
otherwise). A receiver that is never collected is killed ``time_limit_s + SINK_GRACE_S``
after ``listen``; a phase stopped at its worker's ``probe_timeout_s`` sees its stop event
set (the sender is killed before the worker answers ``timeout``).

**Traces**: every phase that ran an endpoint writes under the worker's results directory,
``<results_dir>/<probe>/<role>/`` (role ``source`` or ``sink``): the endpoint's own files
and ``trace.parquet`` (tcplab sender: its series, the simulator's column names; tcplab
receiver: one row per data segment that arrived; Linux sender: its ``TCP_INFO`` samples).
``ProbeResult.traces`` is that Parquet file's path on the host.

Message formats (JSON, pydantic)::

    ProbeJob    {"phase": "listen" | "send" | "collect", "probe": "p17",
                 "peer": HOST, "source": HOST, "sink": HOST,
                 "source_address": IPv4, "sink_address": IPv4,   # data-plane addresses
                 "protocol": {"stack": "tcplab", "controller": "reno", "recovery": "fack"}
                           | {"stack": "linux", "congestion": "cubic"},
                 "bytes": N, "time_limit_s": 60, "mss": 1024 | null,
                 "tcp": {"initial_cwnd": 1, "rto_min": "1s", ...},      # tcplab: scenario TCP settings
                 "port": P | null}                               # send, collect: listen's port
    ProbeResult {"probe", "phase", "role": "source" | "sink", "host", "status": "ok" | "failed",
                 "reason", "port", "bytes", "intact", "completed", "duration_s",
                 "throughput_bps", "retransmits", "timeouts", "traces", "summary"}
"""

from __future__ import annotations

import random
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tcplab.campaign.probe_pcap import ProbeCapture
from tcplab.live.errors import LiveError
from tcplab.live.processes import kill, last_line, owned_env, wait_ready
from tcplab.live.stacks import SINK_GRACE_S, STACKS, TCPLAB_MSS

__all__ = ["LinuxProtocol", "ProbeJob", "ProbeOutcome", "ProbeResult",
           "ProbeFailed", "ProbeRunner", "ProbeSpec", "TcplabProtocol", "TcplabTcpProtocol", "transfer_tcp"]

#: Ports the sink picks from (the tcplab transport uses the same port at both ends).
PORTS = (20000, 60000)

_NAME = r"^[A-Za-z0-9_.-]{1,64}$"


class TcplabProtocol(BaseModel):
    """tcplab's transport with a controller × recovery of its registries."""

    model_config = ConfigDict(extra="forbid")
    stack: Literal["tcplab"] = "tcplab"
    controller: str
    recovery: str
    controller_params: dict[str, float | int | bool | str] = {}
    recovery_params: dict[str, float | int | bool | str] = {}


class TcplabTcpProtocol(TcplabProtocol):
    """tcplab's sender speaking real TCP (``tcplab-flow tcp-send`` on the source's
    device, :mod:`tcplab.live.raw_device`) to a Linux socket sink."""

    stack: Literal["tcplab-tcp"] = "tcplab-tcp"  # type: ignore[assignment]


class LinuxProtocol(BaseModel):
    """The kernel's TCP with a congestion control by name (reno, cubic, bbr, ...)."""

    model_config = ConfigDict(extra="forbid")
    stack: Literal["linux"]
    congestion: str = Field(pattern=r"^[a-z0-9_]{1,15}$")


Protocol = Annotated[TcplabProtocol | TcplabTcpProtocol | LinuxProtocol, Field(discriminator="stack")]


class ProbeSpec(BaseModel):
    """One probe as the controller asks for it (:func:`tcplab.campaign.cluster.run_probe`)."""

    model_config = ConfigDict(extra="forbid")
    probe: str = Field(pattern=_NAME)
    source: str = Field(pattern=_NAME)
    sink: str = Field(pattern=_NAME)
    source_address: str
    sink_address: str
    protocol: Protocol
    bytes: int = Field(ge=1)
    time_limit_s: float = Field(default=60.0, gt=0)
    #: segment payload size (both stacks); None: the kernel's default (Linux), TCPLAB_MSS
    mss: int | None = Field(default=None, ge=64, le=TCPLAB_MSS)
    #: the sink's host captures the probe's packets (headers) into ``probe.pcap``
    #: (:mod:`tcplab.campaign.probe_pcap`)
    pcap: bool = False
    #: more of the scenario's TCP settings (docs/tcp.md) for the tcplab stack, e.g.
    #: ``transfer_tcp(campaign.transfer)``; Linux takes ``rcv_buf`` (the receiver's
    #: TCP_WINDOW_CLAMP) and keeps the kernel's settings otherwise
    tcp: dict[str, int | float | str | bool] = {}

    @model_validator(mode="after")
    def _tcp(self) -> ProbeSpec:
        if "mss" in self.tcp:
            raise ValueError(f"tcp.mss = {self.tcp['mss']!r}: give it as mss")
        return self


class ProbeJob(ProbeSpec):
    """One phase of a probe, run on one host (module docstring)."""

    phase: Literal["listen", "send", "collect"]
    peer: str
    port: int | None = Field(default=None, ge=1, le=65535)

    @model_validator(mode="after")
    def _ends(self) -> ProbeJob:
        want = self.sink if self.phase == "send" else self.source
        if self.peer != want:
            raise ValueError(f"peer = {self.peer!r}: a {self.phase} job's peer is {want!r}")
        if self.phase != "listen" and self.port is None:
            raise ValueError(f"port: required for phase {self.phase!r}")
        return self

    @property
    def role(self) -> str:
        return "source" if self.phase == "send" else "sink"


class ProbeResult(BaseModel):
    """What a host answers for one phase (module docstring)."""

    model_config = ConfigDict(extra="forbid")
    probe: str
    phase: Literal["listen", "send", "collect"]
    role: Literal["source", "sink"]
    host: str
    status: Literal["ok", "failed"] = "ok"
    reason: str | None = None
    port: int | None = None
    #: source: bytes acknowledged; sink: bytes delivered in order
    bytes: int | None = None
    #: sink: every delivered byte matched the stream's pattern
    intact: bool | None = None
    #: source: the whole transfer was acknowledged within the time limit
    completed: bool | None = None
    duration_s: float | None = None
    throughput_bps: float | None = None
    retransmits: int | None = None
    timeouts: int | None = None
    #: the Parquet trace on the host
    traces: str | None = None
    #: the sink's capture of the probe's packets on its host (``ProbeSpec.pcap``)
    pcap: str | None = None
    #: the endpoint's own summary
    summary: dict[str, Any] = {}


class ProbeOutcome(BaseModel):
    """A whole probe (:func:`tcplab.campaign.cluster.run_probe`): ``ok`` when the sink
    received all ``bytes`` intact."""

    model_config = ConfigDict(extra="forbid")
    spec: ProbeSpec
    status: Literal["ok", "failed"]
    reason: str | None = None
    source: ProbeResult | None = None
    sink: ProbeResult | None = None
    wall_s: float


class ProbeFailed(RuntimeError):
    """A phase that could not run (one line)."""


# --------------------------------------------------------------------------------------------
# A host's side.


def _free_port() -> int:
    """A port no TCP or UDP socket of this host holds (checked by binding both)."""
    for _ in range(200):
        port = random.randint(*PORTS)
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as t, \
                    socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
                t.bind(("0.0.0.0", port))
                u.bind(("0.0.0.0", port))
            return port
        except OSError:
            continue
    raise ProbeFailed("no free port")


def transfer_tcp(transfer: Any) -> dict[str, int | float | str | bool]:
    """The TCP settings of a campaign's ``[transfer]`` (a ``config.Transfer``) as
    :attr:`ProbeSpec.tcp`, the same the virtual campaign's probe flow gets (but ``mss``:
    give ``transfer.packet_bytes`` as :attr:`ProbeSpec.mss`)."""
    return {"initial_cwnd": transfer.initial_cwnd, "initial_ssthresh": transfer.initial_ssthresh_bytes,
            "rcv_buf": transfer.rcv_buf_bytes, "sack_blocks": transfer.sack_blocks,
            "sack_style": transfer.sack_style, "rto_min": f"{round(transfer.rto_min_ms * 1e6)}ns"}


class _Receiver:
    """A receiving end waiting for its source (between ``listen`` and ``collect``)."""

    def __init__(self, proc: subprocess.Popen[str], out: Path, port: int, job: ProbeJob,
                 capture: ProbeCapture | None = None) -> None:
        self.proc, self.out, self.port, self.job = proc, out, port, job
        self.capture = capture
        self.lock = threading.Lock()
        self.timer = threading.Timer(job.time_limit_s + SINK_GRACE_S, self.kill)
        self.timer.daemon = True
        self.timer.start()

    def kill(self) -> None:
        self.timer.cancel()
        with self.lock:
            kill(self.proc)
            self.stop_capture()

    def stop_capture(self) -> str | None:
        """Ends the capture (if any, once); its file."""
        c, self.capture = self.capture, None
        if c is None:
            return None
        c.stop()
        return str(c.path)


class ProbeRunner:
    """A host's probe runner (the worker plugin's, :class:`tcplab.campaign.cluster.ProbeHost`): a
    callable (job, stop event) -> :class:`ProbeResult` as a dict. :meth:`close` kills every
    endpoint still running."""

    def __init__(self, host: str, results_dir: str | Path, netns: str | None = None) -> None:
        self.host = host
        self.results_dir = Path(results_dir).resolve()
        self.receivers: dict[str, _Receiver] = {}
        self.senders: set[subprocess.Popen[str]] = set()
        self.lock = threading.Lock()
        self.closed = False
        # Every endpoint is started by this one long-lived thread: they die with the thread
        # that started them (PR_SET_PDEATHSIG), and a connection's thread ends with its job.
        if netns is not None:
            from tcplab.live.netns_enter import enter_netns

            self._spawner = ThreadPoolExecutor(1, thread_name_prefix="probe-spawn", initializer=enter_netns,
                                               initargs=(netns,))
        else:
            self._spawner = ThreadPoolExecutor(1, thread_name_prefix="probe-spawn")

    def _spawn(self, argv: list[str], fds: tuple[int, ...] = ()) -> subprocess.Popen[str]:
        return self._spawner.submit(subprocess.Popen, argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, start_new_session=True, pass_fds=fds, env=owned_env()).result()

    def __call__(self, raw: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
        try:
            job = ProbeJob.model_validate(raw)
        except ValidationError as e:
            from tcplab.scenario.errors import describe_error, field_path

            err = e.errors()[0]
            loc, detail = describe_error(dict(err))
            if err["type"] == "value_error":
                detail = str(err["msg"]).removeprefix("Value error, ")
            raise ProbeFailed(f"{field_path(loc) or 'job'}: {detail}") from None
        mine = job.sink if job.role == "sink" else job.source
        if mine != self.host:
            raise ProbeFailed(f"{job.role} = {mine!r}: this worker serves {self.host!r}")
        out = self.results_dir / job.probe / job.role
        try:
            if job.phase == "listen":
                result = self._listen(job, out)
            elif job.phase == "send":
                result = self._send(job, out, stop)
            else:
                result = self._collect(job)
        except LiveError as e:  # an end's own error (its settings, its binary, its device)
            raise ProbeFailed(str(e)) from None
        return result.model_dump(mode="json")

    def close(self) -> None:
        """Kills every receiver still waiting and every sender still running (the worker
        stops)."""
        with self.lock:
            self.closed = True
            pending, self.receivers = list(self.receivers.values()), {}
            senders = list(self.senders)
        for r in pending:
            r.kill()
        for p in senders:
            if p.poll() is None:
                p.kill()
        self._spawner.shutdown(wait=False)

    # -- sink ----------------------------------------------------------------------------------

    def _listen(self, job: ProbeJob, out: Path) -> ProbeResult:
        with self.lock:
            if job.probe in self.receivers:
                raise ProbeFailed(f"probe {job.probe!r}: already listening")
        if out.exists() and any(out.iterdir()):
            raise ProbeFailed(f"probe {job.probe!r}: its results directory {out} is not empty")
        out.mkdir(parents=True, exist_ok=True)
        port = _free_port()
        argv = STACKS[job.protocol.stack].sink_argv(job, port, out)
        capture = ProbeCapture(out / "probe.pcap", job.source_address, job.sink_address, port) if job.pcap else None
        try:
            proc = self._spawn(argv)
            wait_ready(proc, "receiver", ProbeFailed)
        except BaseException:
            if capture is not None:
                capture.stop()
            raise
        with self.lock:
            if self.closed:
                kill(proc)
                if capture is not None:
                    capture.stop()
                raise ProbeFailed("the worker is stopping")
            self.receivers[job.probe] = _Receiver(proc, out, port, job, capture)
        return ProbeResult(probe=job.probe, phase="listen", role="sink", host=self.host, port=port)

    def _collect(self, job: ProbeJob) -> ProbeResult:
        with self.lock:
            r = self.receivers.pop(job.probe, None)
        if r is None:
            raise ProbeFailed(f"probe {job.probe!r}: no receiver is waiting (never listened, or collected)")
        r.timer.cancel()
        ends = STACKS[job.protocol.stack]
        err = ""
        with r.lock:
            p = r.proc
            ends.end_sink(p)
            try:
                _, err = p.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                pass
            kill(p)
            pcap = r.stop_capture()
        res = ProbeResult(probe=job.probe, phase="collect", role="sink", host=self.host, port=r.port, pcap=pcap)
        figures = ends.sink_figures(r.out)
        if figures is None:
            return res.model_copy(update={"status": "failed",
                                          "reason": last_line(err, f"receiver: exit status {p.returncode}")})
        res = res.model_copy(update=figures)
        if res.status == "failed":
            return res
        if res.bytes != job.bytes or not res.intact:
            res = res.model_copy(update={"status": "failed",
                                         "reason": f"the sink received {res.bytes} of {job.bytes} bytes"
                                                   + ("" if res.intact else ", not intact")})
        return res

    # -- source --------------------------------------------------------------------------------

    def _send(self, job: ProbeJob, out: Path, stop: threading.Event) -> ProbeResult:
        assert job.port is not None
        if out.exists() and any(out.iterdir()):
            raise ProbeFailed(f"probe {job.probe!r}: its results directory {out} is not empty")
        out.mkdir(parents=True, exist_ok=True)
        ends = STACKS[job.protocol.stack]
        argv, device, fds = ends.source_argv(job, out)
        try:
            proc = self._spawn(argv, fds)
        except BaseException:
            if device is not None:
                device.__exit__()
            raise
        with self.lock:
            self.senders.add(proc)
        try:
            deadline = time.monotonic() + job.time_limit_s + 15.0
            while proc.poll() is None:
                if stop.wait(0.05):
                    raise ProbeFailed("timeout")
                if time.monotonic() > deadline:
                    raise ProbeFailed(f"the sender did not end {job.time_limit_s + 15:g} s after it started")
            err = proc.communicate()[1]
        finally:
            kill(proc)
            if device is not None:
                device.__exit__()
            with self.lock:
                self.senders.discard(proc)
        if proc.returncode != 0:
            raise ProbeFailed(last_line(err, f"sender: exit status {proc.returncode}"))
        res = ProbeResult(probe=job.probe, phase="send", role="source", host=self.host, port=job.port)
        res = res.model_copy(update=ends.source_figures(job, out))
        if not res.completed:
            res = res.model_copy(update={"status": "failed",
                                         "reason": f"not acknowledged within time_limit_s = {job.time_limit_s:g}"})
        return res
