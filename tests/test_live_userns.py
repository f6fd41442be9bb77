"""Live runs without root: the namespaces inside a user namespace (docs/live.md "Privileges",
`tcplab.live.userns`). Run as root, the tests drop to user ``nobody`` for a subprocess
(``setpriv``); run as another user, they run as it. They skip saying why when user
namespaces cannot be made, or no Python that ``nobody`` may run can import tcplab.

Tolerances, fixed before running: those of tests/test_live.py (delivered rate within +-2 % of
the link rate; one-way delays never below propagation + transmission).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy
import pytest

import tcplab
from conftest import LIVE_BUILD
from tcplab.live import emulator_binary, live_support
from tcplab.live import userns as userns_mod

ROOT = Path(__file__).resolve().parents[1]
RATE = 10_000_000
SIZE = 1000
PROP_NS = 5_000_000
TX_NS = SIZE * 8 * 1_000_000_000 // RATE

PROBE = """
import json, sys
from pathlib import Path
from tcplab.live import Testbed, live_support
from tcplab.live.udp_probe import run_probe
if why := live_support():
    print(json.dumps({"skip": why})); sys.exit(0)
d = {"rate": 10000000, "delay": 5000000, "buffer": {"packets": 50}}
with Testbed({"seed": 1, "forward": d, "reverse": d}, Path(sys.argv[1])) as tb:
    r = run_probe(tb, 1.2e7, 1000, 2500, idle=0.5)
    holders = tb.holders()
print(json.dumps({"uid": __import__("os").getuid(), "userns": tb.userns, "holders": holders,
                  "recv_ns": r.recv_ns.tolist(), "delay_ns": r.delay_ns.tolist(),
                  "stats": tb.stats}))
"""

HOLD = """
import sys, time
from pathlib import Path
from tcplab.live import Testbed
d = {"rate": 10000000, "delay": 1000000, "buffer": {"packets": 10}}
with Testbed({"forward": d, "reverse": d}, Path(sys.argv[1])) as tb:
    print(tb.emu.pid, *tb.holders(), flush=True)
    time.sleep(60)
"""


@pytest.fixture(scope="module")
def emu() -> Path:
    if shutil.which("cargo") is None and not emulator_binary().exists():
        pytest.skip("cargo is needed to build tcplab-emu")
    if shutil.which("cargo") is not None:
        subprocess.run(LIVE_BUILD, cwd=ROOT, check=True)
    return emulator_binary()


def _as_user() -> list[str]:
    """The argv prefix that runs a command unprivileged: `setpriv` to nobody when root."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is needed to drop root for the test")
    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no user 'nobody' to drop root to")
    return ["setpriv", f"--reuid={pw.pw_uid}", f"--regid={pw.pw_gid}", "--clear-groups", "--"]


@pytest.fixture(scope="module")
def unprivileged(emu: Path) -> list[str]:
    """argv prefix: an unprivileged Python that imports tcplab (this checkout's) and numpy."""
    env_path = os.pathsep.join([str(Path(tcplab.__file__).parents[1]),
                                str(Path(numpy.__file__).parents[1])])
    prefix = _as_user()
    env = ["env", "HOME=/tmp", f"PYTHONPATH={env_path}", f"TCPLAB_EMU={emu}"]
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    for py in dict.fromkeys([sys.executable, f"/usr/bin/{version}", f"/usr/local/bin/{version}"]):
        if not Path(py).exists():
            continue
        argv = [*prefix, *env, py]
        r = subprocess.run([*argv, "-c", "import tcplab.live.udp_probe"], capture_output=True, cwd="/")
        if r.returncode == 0:
            return argv
    pytest.skip(f"no {version} that an unprivileged user may run imports tcplab "
                f"({sys.executable} is in a directory closed to others)")


def _gone(pid: int, within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        if not Path(f"/proc/{pid}").exists():
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def out_dir() -> Path:
    d = Path(tempfile.mkdtemp(prefix="tcplab-userns-"))
    d.chmod(0o777)  # the unprivileged run writes there
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_an_unprivileged_run_delivers_the_link_rate(unprivileged: list[str], out_dir: Path) -> None:
    r = subprocess.run([*unprivileged, "-c", PROBE, str(out_dir)], capture_output=True, text=True,
                       cwd="/", timeout=60)
    assert r.returncode == 0, r.stderr.strip().splitlines()[-1:]
    got = json.loads(r.stdout.splitlines()[-1])
    if "skip" in got:
        pytest.skip(got["skip"])
    assert got["uid"] != 0 and got["userns"]
    recv = got["recv_ns"]
    rate = (len(recv) - 1) * SIZE * 8 / ((recv[-1] - recv[0]) * 1e-9)
    assert abs(rate / RATE - 1) <= 0.02, f"{rate:.0f} bit/s delivered on a {RATE} bit/s link"
    assert min(got["delay_ns"]) >= PROP_NS + TX_NS
    assert got["stats"]["forward"]["delivered"] == len(recv)
    # Nothing of the run is left: the namespaces' holders are gone (and so the namespaces).
    for pid in got["holders"]:
        assert _gone(pid, within=2.0), pid


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_unprivileged_run_leaves_nothing(unprivileged: list[str], out_dir: Path, sig: int) -> None:
    p = subprocess.Popen([*unprivileged, "-c", HOLD, str(out_dir)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, cwd="/")
    assert p.stdout is not None
    line = p.stdout.readline().split()
    if not line:
        p.wait()
        why = (p.stderr.read() if p.stderr else "").strip().splitlines()[-1:]
        if why and "user namespaces" in why[0]:
            pytest.skip(why[0])
        raise AssertionError(f"the unprivileged run did not start: {why}")
    pids = [int(x) for x in line]
    # setpriv and env exec, so p is the owning Python process.
    p.send_signal(sig)
    p.wait(timeout=10)
    for pid in pids:  # the emulator, the host namespaces' holders, the user namespace's
        assert _gone(pid, within=5.0), pid
    if sig == signal.SIGTERM:  # stopped cleanly: the emulator wrote its record
        assert json.loads((out_dir / "stats.json").read_text())["forward"]["offered"] >= 0


def test_disabled_user_namespaces_give_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    knob = tmp_path / "unprivileged_userns_clone"
    knob.write_text("0\n")
    monkeypatch.setattr(userns_mod, "_SYSCTLS", ((str(knob), "0", "kernel.unprivileged_userns_clone = 0"),))
    userns_mod.support.cache_clear()
    try:
        why = live_support(userns=True)
    finally:
        userns_mod.support.cache_clear()
    assert why == ("live runs need root (ip netns) or unprivileged user namespaces: "
                   "user namespaces are disabled (kernel.unprivileged_userns_clone = 0)")
