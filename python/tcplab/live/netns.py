"""Network namespaces of a live run and the emulator between them.

A one-link run owns two namespaces, ``tcplab-<pid>-<hex>-a`` and ``-b`` (``pid``: the Python
process that made them), each with a TUN device ``tcplab0`` that the emulator process creates
and holds: A has 10.213.0.1, B 10.213.0.2, point to point. A scenario run
(`Testbed.for_scenario`) owns one namespace per host of the scenario's topology,
``tcplab-<pid>-<hex>-<host>``, each with its ``tcplab0`` and the address the emulator's plan
gives it (`scenario_plan`: the emulator's own code, from the topology expansion), and a route to
the plan's prefix through the device; the emulator routes every packet through the
topology's links. Leaving the `Testbed` (normally, on an
exception, Ctrl-C or SIGTERM) stops the emulator (which writes its stats and drop log), kills
the processes started in the namespaces and deletes them; the TUN devices vanish with the
emulator. If the owning process is killed outright, the emulator dies with it
(``PR_SET_PDEATHSIG``) and the next `Testbed` (or `cleanup_stale`) removes namespaces whose
owner is dead, killing what still runs in them. Nothing outside those namespaces is touched.

Without root (or with ``userns=True``) the namespaces are made inside a user namespace
instead (`tcplab.live.userns`): they have no names, are held by processes (``/proc/PID/ns/net``
is what the emulator enters) and die with the owner, so there is nothing stale to remove.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sysconfig
import threading
from pathlib import Path
from typing import Any

from tcplab.live import userns as _userns
from tcplab.live.errors import LiveError
from tcplab.live.processes import owned_env

ADDR_A = "10.213.0.1"
ADDR_B = "10.213.0.2"
TUN = "tcplab0"
_NAME = re.compile(r"^tcplab-(\d+)-([0-9a-f]+)-[A-Za-z0-9_.-]+$")
_HOST = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


_MISSING = ("emulator = {exe!r}: not found (bash scripts/setup.sh installs it, or cargo build --release "
            "-p tcplab-live, or set TCPLAB_EMU)")


def live_support(userns: bool | None = None) -> str | None:
    """None when live runs can be made here, else why not (one line). `userns`: runs in a
    user namespace (None: when this process is not root)."""
    if userns or (userns is None and os.geteuid() != 0):
        if why := _userns.support():
            return f"live runs need root (ip netns) or unprivileged user namespaces: {why}"
        return None
    if shutil.which("ip") is None:
        return "live runs need the 'ip' command (iproute2)"
    if not os.path.exists("/dev/net/tun"):
        return "live runs need /dev/net/tun"
    return None


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise LiveError(f"ip {' '.join(args)}: {r.stderr.strip()}")
    return r


def _namespaces() -> list[str]:
    out = _ip("netns", "list", check=False).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def pid_alive(pid: int) -> bool:
    """Process `pid` exists (a process of another user counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove_namespace(ns: str) -> None:
    """Kills what runs in `ns` and deletes it."""
    for pid in _ip("netns", "pids", ns, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    _ip("netns", "del", ns, check=False)


def cleanup_stale() -> list[str]:
    """Removes the namespaces of live runs whose owning process is dead; returns their names."""
    stale = [ns for ns in _namespaces() if (m := _NAME.match(ns)) and not pid_alive(int(m.group(1)))]
    for ns in stale:
        _remove_namespace(ns)
    return stale


def _scripts_dir() -> Path:
    """Where the environment's executables are installed (a venv's ``bin``)."""
    return Path(sysconfig.get_path("scripts"))


def emulator_binary() -> Path:
    """`tcplab-emu`: $TCPLAB_EMU; else the one installed with the package (in the
    environment's ``bin``, where scripts/setup.sh puts it); else the release build of this
    checkout ($CARGO_TARGET_DIR or ``target/``), which is also what is named when none
    exists. `tcplab-flow` is looked for next to it (`tcplab.live.endpoints.flow_binary`)."""
    if env := os.environ.get("TCPLAB_EMU"):
        return Path(env)
    installed = _scripts_dir() / "tcplab-emu"
    if installed.exists():
        return installed
    root = Path(__file__).resolve().parents[3]
    target = Path(os.environ.get("CARGO_TARGET_DIR", root / "target"))
    return target / "release" / "tcplab-emu"


def scenario_plan(canonical: dict[str, Any]) -> dict[str, Any]:
    """The emulator's plan of a canonical scenario (the emulator's own code, through the
    extension): ``prefix``, ``hosts`` (``name``, ``addr``), ``routers``, ``links``
    (``name``, ``from``, ``to``), ``wlan_hops``, ``flows``. Raises `LiveError` with one line
    when the emulator refuses the scenario."""
    from tcplab import _native

    try:
        return json.loads(_native.emulator_plan_json(json.dumps(canonical)))
    except ValueError as e:
        raise LiveError(str(e)) from None


class Testbed:
    """Two namespaces joined by the emulated link of `config` (the emulator's JSON config:
    ``seed``, ``link``, ``forward`` and ``reverse`` link directions in canonical form;
    forward carries A -> B), or with `for_scenario` one namespace per host of a scenario.
    Outputs go to `out_dir`."""

    __test__ = False  # not a pytest test class

    def __init__(self, config: dict[str, Any], out_dir: Path, emulator: Path | None = None,
                 realtime: bool = False, userns: bool | None = None) -> None:
        self.config = config
        self.out_dir = Path(out_dir)
        self.emulator = emulator or emulator_binary()
        self.realtime = realtime
        #: Namespaces inside a user namespace (`tcplab.live.userns`) rather than `ip netns`.
        self.userns = os.geteuid() != 0 if userns is None else userns
        self._user: _userns.UserNamespace | None = None
        self._holder: dict[str, int] = {}
        self.tag = f"tcplab-{os.getpid()}-{secrets.token_hex(3)}"
        self.ns = {"a": f"{self.tag}-a", "b": f"{self.tag}-b"}
        self.addr = {"a": ADDR_A, "b": ADDR_B}
        self.scenario: dict[str, Any] | None = None
        self.plan: dict[str, Any] | None = None
        self.emu: subprocess.Popen[str] | None = None
        self.emu_origin_ns: int | None = None
        self.procs: list[subprocess.Popen[Any]] = []
        self.stats: dict[str, Any] | None = None
        self.drops: list[dict[str, Any]] = []
        #: what each link direction held (``queues.jsonl``: t_ns, dir, packets, bytes), when
        #: the scenario records series
        self.queues: list[dict[str, Any]] = []
        #: What a stack keeps for the testbed's life, by stack (``linux``: the namespaces'
        #: sysctls and routes, `tcplab.live.linux_settings.HostSettings`).
        self.stack_state: dict[str, Any] = {}
        self._made: list[str] = []
        self._old_sigterm: Any = None
        #: hosts that are user-space endpoints rather than namespaces: the emulator reads and
        #: writes their packets on a SOCK_SEQPACKET socket pair, whose other end is here
        #: (`attachment[host]`, to hand to the endpoint's process with `pass_fds`)
        self.attached: tuple[str, ...] = ()
        self.attachment: dict[str, socket.socket] = {}
        self._emu_ends: list[socket.socket] = []

    @classmethod
    def for_scenario(cls, scenario: Any, out_dir: Path, emulator: Path | None = None,
                     realtime: bool = False, userns: bool | None = None,
                     attached: tuple[str, ...] = ()) -> Testbed:
        """One namespace per host of `scenario` (a `Scenario`, a TOML file or a TOML-shaped
        dict), named ``tcplab-<pid>-<hex>-<host>``; every link of its topology is
        emulated. `ns` and `addr` are keyed by host name (`popen(host, argv)`). The hosts in
        `attached` get no namespace: each is a user-space endpoint whose IP packets travel on
        `attachment[host]` (tcplab's own TCP, unseen by any kernel)."""
        from tcplab.scenario import as_scenario

        canonical = as_scenario(scenario).canonical()
        tb = cls({}, out_dir, emulator, realtime, userns)
        tb.scenario = canonical
        tb.plan = scenario_plan(canonical)
        bad = [h["name"] for h in tb.plan["hosts"] if not _HOST.match(h["name"])]
        if bad:
            raise LiveError(f"host {bad[0]!r}: a live host name is 1-64 of A-Z a-z 0-9 _ . -")
        names = [h["name"] for h in tb.plan["hosts"]]
        unknown = [h for h in attached if h not in names]
        if unknown:
            raise LiveError(f"attached host {unknown[0]!r}: no host of the scenario (hosts: {', '.join(names)})")
        tb.attached = tuple(attached)
        tb.ns = {n: f"{tb.tag}-{n}" for n in names if n not in tb.attached}
        tb.addr = {h["name"]: h["addr"] for h in tb.plan["hosts"]}
        return tb

    def __enter__(self) -> Testbed:
        if reason := live_support(self.userns):
            raise LiveError(reason)
        if not self.emulator.exists():
            raise LiveError(_MISSING.format(exe=str(self.emulator)))
        if threading.current_thread() is threading.main_thread():
            self._old_sigterm = signal.signal(signal.SIGTERM, _sigterm)
        if not self.userns:
            cleanup_stale()
        try:
            self._setup()
        except BaseException:
            self._teardown()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._teardown()

    def _setup(self) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if self.userns:
            self._user = _userns.UserNamespace()
        for side, ns in self.ns.items():
            if self._user is not None:
                self._holder[side] = self._user.add_netns()
                self.ns[side] = self._user.path(self._holder[side])
            else:
                _ip("netns", "add", ns)
                self._made.append(ns)
            self._ip(side, "link", "set", "lo", "up")
            subprocess.run(self.command(side, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]),
                           capture_output=True)
        if self.scenario is None:
            cfg = self.out_dir / "emulator.json"
            cfg.write_text(json.dumps(self.config))
            argv = [str(self.emulator), "--config", str(cfg), "--ns-a", self.ns["a"], "--ns-b",
                    self.ns["b"]]
        else:
            scen, hosts = self.out_dir / "scenario.json", self.out_dir / "hosts.json"
            scen.write_text(json.dumps(self.scenario))
            devices: dict[str, str] = dict(self.ns)
            for host in self.attached:
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                self.attachment[host] = ours
                self._emu_ends.append(theirs)
                devices[host] = f"fd:{theirs.fileno()}"
            hosts.write_text(json.dumps(devices))
            argv = [str(self.emulator), "--scenario", str(scen), "--hosts", str(hosts)]
        argv += ["--out", str(self.out_dir), "--tun", TUN]
        if self._user is not None:
            argv = self._user.prefix() + argv
        if self.realtime:
            argv.append("--realtime")
        self.emu = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    pass_fds=[e.fileno() for e in self._emu_ends], env=owned_env())
        for end in self._emu_ends:  # the emulator holds them now
            end.close()
        self._emu_ends = []
        assert self.emu.stdout is not None
        ready, _, _ = select.select([self.emu.stdout], [], [], 10.0)
        line = self.emu.stdout.readline() if ready else ""
        if not line.startswith("ready "):
            self.emu.kill()
            err = self.emu.communicate()[1].strip() if self.emu.stderr else ""
            raise LiveError(err.splitlines()[-1] if err else "tcplab-emu did not start")
        self.emu_origin_ns = int(line.split()[1])
        for side in self.ns:
            if self.plan is None:
                peer = self.addr["b" if side == "a" else "a"]
                self._ip(side, "addr", "add", f"{self.addr[side]}/32", "peer", f"{peer}/32", "dev", TUN)
                self._ip(side, "link", "set", TUN, "up", "mtu", "1500")
            else:
                self._ip(side, "addr", "add", f"{self.addr[side]}/32", "dev", TUN)
                self._ip(side, "link", "set", TUN, "up", "mtu", str(self.plan["mtu"]))  # what the plan checked
                self._ip(side, "route", "add", self.plan["prefix"], "dev", TUN, "src", self.addr[side])

    def command(self, side: str, argv: list[str]) -> list[str]:
        """The argv that runs `argv` in namespace `side` (``ip netns exec``, or ``nsenter``
        into the user namespace and the host's network namespace); an attached host's
        endpoint runs where the caller does (it uses no network but its socket)."""
        if side in self.attached:
            return list(argv)
        if self._user is not None:
            return self._user.prefix(self._holder[side]) + argv
        return ["ip", "netns", "exec", self.ns[side], *argv]

    def holders(self) -> list[int]:
        """The pids of the processes holding the run's namespaces in a user namespace (each
        host's, then the user namespace's); empty with ``ip netns``."""
        if self._user is None:
            return []
        return [*self._holder.values(), self._user.holder.pid]

    def _ip(self, side: str, *args: str) -> None:
        if self._user is None:
            _ip("-n", self.ns[side], *args)
            return
        r = subprocess.run(self.command(side, ["ip", *args]), capture_output=True, text=True)
        if r.returncode != 0:
            raise LiveError(f"ip {' '.join(args)} in {side}: {r.stderr.strip()}")

    def popen(self, side: str, argv: list[str], **kw: Any) -> subprocess.Popen[Any]:
        """Starts `argv` in namespace `side` ("a" or "b"; a host's name with `for_scenario`);
        it is killed when the run ends."""
        p = subprocess.Popen(self.command(side, argv), **{**kw, "env": owned_env(kw.get("env"))})
        self.procs.append(p)
        return p

    def _teardown(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
        if self.emu is not None and self.emu.poll() is None:
            self.emu.send_signal(signal.SIGTERM)
            try:
                self.emu.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.emu.kill()
                self.emu.wait()
        if self.emu is not None:
            self.emu.communicate()
            stats = self.out_dir / "stats.json"
            if stats.exists():
                self.stats = json.loads(stats.read_text())
                drops = (self.out_dir / "drops.jsonl").read_text().splitlines()
                self.drops = [json.loads(line) for line in drops]
                queues = self.out_dir / "queues.jsonl"
                if queues.exists():
                    self.queues = [json.loads(line) for line in queues.read_text().splitlines()]
        for sock in [*self.attachment.values(), *self._emu_ends]:
            sock.close()
        self.attachment, self._emu_ends = {}, []
        for ns in self._made:
            _remove_namespace(ns)
        self._made = []
        if self._user is not None:
            self._user.close()
            self._user = None
        if self._old_sigterm is not None:
            signal.signal(signal.SIGTERM, self._old_sigterm)
            self._old_sigterm = None


def _sigterm(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)
