"""The live emulator alone, with a UDP probe (docs/live.md). Needs root, `ip netns`,
/dev/net/tun and cargo (to build tcplab-emu); skips saying which is missing.

Tolerances, fixed before running: the delivered rate within +-2 % of the link rate;
Bernoulli drops inside the exact binomial 99 % interval; drop-tail drops within 2 packets plus
the packets 2 ms of timing jitter (first and last packet, sender stamp to emulator read) can
serve; one-way delays never below propagation + transmission (the model's floor: the
emulator never writes early) and their median at most 2 ms above the model's bound (the end
hosts are Python processes on a shared machine; the emulator's own lateness is in its stats).
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import LIVE_BUILD
from tcplab.live import Testbed, emulator_binary, live_support
from tcplab.live.netns import _namespaces
from tcplab.live.udp_probe import run_probe

ROOT = Path(__file__).resolve().parents[1]
PROP_NS = 5_000_000
SIZE = 1000
RATE = 10_000_000
TX_NS = SIZE * 8 * 1_000_000_000 // RATE  # 0.8 ms
HOST_ALLOWANCE_NS = 2_000_000


@pytest.fixture(scope="module")
def emu() -> Path:
    if reason := live_support():
        pytest.skip(reason)
    if shutil.which("cargo") is None and not emulator_binary().exists():
        pytest.skip("cargo is needed to build tcplab-emu")
    if shutil.which("cargo") is not None:
        subprocess.run(LIVE_BUILD, cwd=ROOT, check=True)
    return emulator_binary()


def direction(buffer: int, loss: dict | None = None) -> dict:
    d = {"rate": RATE, "delay": PROP_NS, "buffer": {"packets": buffer}}
    if loss:
        d["loss"] = loss
    return d


def config(buffer: int = 50, loss: dict | None = None) -> dict:
    return {"seed": 1, "forward": direction(buffer, loss), "reverse": direction(buffer)}


def probe_drops(tb: Testbed) -> dict[int, str]:
    return {d["packet"]["probe_seq"]: d["cause"] for d in tb.drops if d["direction"] == "forward"}


def test_saturated_link_delivers_its_rate(emu: Path, tmp_path: Path) -> None:
    with Testbed(config(), tmp_path, emu) as tb:
        r = run_probe(tb, 1.2 * RATE, SIZE, 2500, idle=0.5)
    span = (r.recv_ns[-1] - r.recv_ns[0]) * 1e-9
    rate = (len(r.seq) - 1) * SIZE * 8 / span
    assert abs(rate / RATE - 1) <= 0.02, f"{rate:.0f} bit/s delivered on a {RATE} bit/s link"
    assert r.delay_ns.min() >= PROP_NS + TX_NS
    # The queue stays full: the median packet waits for the 49 ahead of it.
    assert np.median(r.delay_ns) <= PROP_NS + 50 * TX_NS + HOST_ALLOWANCE_NS


def test_added_delay_is_within_the_models_bound(emu: Path, tmp_path: Path) -> None:
    with Testbed(config(), tmp_path, emu) as tb:
        r = run_probe(tb, 0.2 * RATE, SIZE, 400, idle=0.5)
    assert len(r.seq) == 400 and not tb.drops
    assert r.delay_ns.min() >= PROP_NS + TX_NS
    assert np.median(r.delay_ns) <= PROP_NS + TX_NS + HOST_ALLOWANCE_NS
    lat = tb.stats["forward"]["lateness_ns"]
    assert lat["count"] == 400 and lat["p50"] <= lat["p99"] <= lat["max"]


def binomial_interval(n: int, p: float, level: float = 0.99) -> tuple[int, int]:
    pmf = [math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                    + k * math.log(p) + (n - k) * math.log1p(-p)) for k in range(n + 1)]
    cdf = np.cumsum(pmf)
    tail = (1 - level) / 2
    return int(np.searchsorted(cdf, tail)), int(np.searchsorted(cdf, 1 - tail))


def test_bernoulli_loss_within_the_binomial_interval(emu: Path, tmp_path: Path) -> None:
    n, p = 2000, 0.05
    with Testbed(config(loss={"model": "bernoulli", "p": p}), tmp_path, emu) as tb:
        r = run_probe(tb, 0.8 * RATE, SIZE, n, idle=0.5)
    drops = probe_drops(tb)
    lo, hi = binomial_interval(n, p)
    assert set(drops.values()) == {"link_error"}
    assert lo <= len(drops) <= hi, f"{len(drops)} of {n} lost, 99 % interval [{lo}, {hi}]"
    # The drop log names exactly the packets that did not arrive.
    assert set(drops) == set(r.lost().tolist()) and r.rcvbuf_errors == 0


def test_drop_tail_drops_what_the_model_predicts(emu: Path, tmp_path: Path) -> None:
    n, buffer = 2000, 50
    with Testbed(config(buffer), tmp_path, emu) as tb:
        r = run_probe(tb, 2 * RATE, SIZE, n, idle=0.5)
    drops = probe_drops(tb)
    assert set(drops.values()) == {"buffer_overflow"}
    assert set(drops) == set(r.lost().tolist()) and r.rcvbuf_errors == 0
    # The link is busy from the first arrival: it completes span / tx packets while packets
    # arrive and still holds `buffer` (one in service) after the last one.
    span = int(r.sent_ns[-1] - r.sent_ns[0])
    predicted = n - (span // TX_NS + buffer)
    tolerance = 2 + math.ceil(2_000_000 / TX_NS)
    assert abs(len(drops) - predicted) <= tolerance, f"{len(drops)} dropped, {predicted} predicted"


def test_a_loss_trace_drops_the_listed_packets(emu: Path, tmp_path: Path) -> None:
    # Below the link rate nothing queues, so the link's serialization index is the probe's
    # sequence number: the trace names the probe packets lost, as in the simulator.
    listed = [3, 10, 11, 50, 99]
    with Testbed(config(loss={"model": "trace", "packets": listed}), tmp_path, emu) as tb:
        r = run_probe(tb, 0.5 * RATE, SIZE, 100, idle=0.5)
    assert probe_drops(tb) == dict.fromkeys(listed, "link_error")
    assert r.lost().tolist() == listed


def test_red_with_ecn_marks_ce_in_the_ip_header(emu: Path, tmp_path: Path) -> None:
    red = {"discipline": "red", "min_th": 5, "max_th": 15, "max_p": 0.1, "w_q": 0.02, "ecn": True}
    cfg = config()
    cfg["forward"]["queue"] = red
    with Testbed(cfg, tmp_path, emu) as tb:
        r = run_probe(tb, 1.1 * RATE, SIZE, 1500, idle=0.5, tos=2)  # ECT(0)
    marks = tb.stats["forward"]["ecn_marks"]
    drops = probe_drops(tb)
    assert marks > 0 and "aqm_early" not in drops.values()
    # Every marked packet arrived with CE (so with a valid header checksum: the kernel drops
    # the others); the rest kept ECT(0); nothing was lost but what the drop log names.
    assert int(((r.tos & 3) == 3).sum()) == marks
    assert int(((r.tos & 3) == 2).sum()) == len(r.seq) - marks
    assert set(drops) == set(r.lost().tolist())


HOLDER = """
import sys, time
from pathlib import Path
from tcplab.live import Testbed
d = {"rate": 10000000, "delay": 1000000, "buffer": {"packets": 10}}
with Testbed({"forward": d, "reverse": d}, Path(sys.argv[1]), Path(sys.argv[2])) as tb:
    print(tb.ns["a"], tb.ns["b"], tb.emu.pid, flush=True)
    time.sleep(60)
"""


def _pid_gone(pid: int, within: float) -> bool:
    end = time.monotonic() + within
    while time.monotonic() < end:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_nothing_outlives_a_killed_run(emu: Path, tmp_path: Path) -> None:
    links_before = subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "killed"), str(emu)],
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout is not None
    ns_a, ns_b, emu_pid = p.stdout.readline().split()
    assert {ns_a, ns_b} <= set(_namespaces())
    p.send_signal(signal.SIGKILL)
    p.wait()
    # The emulator dies with its owner (PR_SET_PDEATHSIG) and its TUN devices with it.
    assert _pid_gone(int(emu_pid), within=5.0)
    # The next run removes the dead run's namespaces, and its own when it ends.
    with Testbed(config(), tmp_path / "next", emu) as tb:
        assert not {ns_a, ns_b} & set(_namespaces())
        ours = set(tb.ns.values())
        assert ours <= set(_namespaces())
    assert not ours & set(_namespaces())
    assert subprocess.run(["ip", "-o", "link"], capture_output=True, text=True).stdout == links_before


def test_bad_config_is_one_line_and_status_2(emu: Path, tmp_path: Path) -> None:
    bad = config()
    bad["forward"]["rate"] = 0
    cfg = tmp_path / "emulator.json"
    cfg.write_text(json.dumps(bad))
    r = subprocess.run([str(emu), "--config", str(cfg), "--ns-a", "x", "--ns-b", "y", "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr == "tcplab-emu: config: forward.rate = 0: must be positive\n"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_run_removes_everything_itself(emu: Path, tmp_path: Path, sig: int) -> None:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path), str(emu)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert p.stdout is not None
    ns_a, ns_b, emu_pid = p.stdout.readline().split()
    p.send_signal(sig)
    p.wait(timeout=10)
    assert _pid_gone(int(emu_pid), within=1.0)
    assert not {ns_a, ns_b} & set(_namespaces())
    # The emulator stopped cleanly and wrote its record.
    assert json.loads((tmp_path / "stats.json").read_text())["forward"]["offered"] >= 0
