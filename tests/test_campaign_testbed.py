"""The live campaign's daemon command and probe runner (issue 15, part "daemon"): ``tcplab
daemon`` refuses bad config files in one line (exit 2) and ends cleanly on SIGTERM; probes
of tcplab's transport and of Linux TCP run between two ends on loopback."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.daemon import request
from tcplab.campaign.probe_runner import ProbeRunner, ProbeSpec
from tcplab.live.transport import flow_binary

KEY = b"0123456789abcdef" * 4
N_BYTES = 200_000
#: paths fast and short enough for quick probes, with some random loss and UDP cross traffic
POPULATION = CampaignConfig.from_dict({"paths": {
    "rtt_ms": {"dist": "uniform", "low": 10, "high": 30},
    "rate_mbps": {"dist": "uniform", "low": 10, "high": 20},
    "loss": {"dist": "loguniform", "low": 1e-4, "high": 1e-3, "p_zero": 0.5},
    "ack_loss": 0, "udp_load": {"dist": "uniform", "low": 0.05, "high": 0.1, "p_zero": 0.3}}})
TCPLAB = [{"stack": "tcplab", "controller": "reno", "recovery": "newreno"},
          {"stack": "tcplab", "controller": "reno", "recovery": "fack"},
          {"stack": "tcplab", "controller": "vegas", "recovery": "reno", "controller_params": {"mode": "ca"}}]
LINUX = [{"stack": "linux", "congestion": c} for c in ("reno", "cubic", "bbr")]

needs_flow = pytest.mark.skipif(not flow_binary().exists(), reason="tcplab-flow is not built (scripts/setup.sh)")


def _why_no_testbed() -> str | None:
    if os.geteuid() != 0:
        return "the testbed needs root (ip netns)"
    if shutil.which("ip") is None or not os.path.exists("/dev/net/tun"):
        return "the testbed needs iproute2 and /dev/net/tun"
    if not flow_binary().exists():
        return "tcplab-emu/tcplab-flow are not built (scripts/setup.sh)"
    r = subprocess.run(["ip", "netns", "add", f"tcplab-probe-{os.getpid()}"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"network namespaces are not available here: {r.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", f"tcplab-probe-{os.getpid()}"], capture_output=True)
    return None


needs_testbed = pytest.mark.skipif(bool(_why_no_testbed()), reason=_why_no_testbed() or "")


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("tcplab-")}


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


# -- tcplab daemon --------------------------------------------------------------------------------


def _daemon_files(tmp: Path, body: str) -> Path:
    key = tmp / "key"
    if not key.exists():
        key.write_bytes(KEY)
        key.chmod(0o600)
    cfg = tmp / "daemon.toml"
    cfg.write_text(body)
    return cfg


def _tcplab(*args: str, **kw) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tcplab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


@pytest.mark.parametrize("body, message", [
    ('name = "h0"\nport = 70000\nkey_file = "key"\npeers = ["h1"]\nplaintext = true\n', "port: 70000 must be <= 65535"),
    ('name = "h0"\nport = 7000\nlisten = "10.1.2.3"\nkey_file = "key"\npeers = ["h1"]\nplaintext = true\n',
     "plaintext = true: only on a loopback address, not listen = '10.1.2.3'"),
    ('name = "h0"\nport = 7000\nkey_file = "key"\npeers = ["h1"]\nplaintext = true\nprobe_timeout = 5\n',
     "probe_timeout: is not a known field"),
    ('name = "h0"\nport = 7000\nkey_file = "nokey"\npeers = ["h1"]\nplaintext = true\n', "key_file: key file"),
    ('name = "h0"\nport = 7000\nkey_file = "key"\npeers = "h1"\nplaintext = true\n', "peers"),
])
def test_a_bad_daemon_config_is_one_line_naming_the_field_exit_2(tmp_path: Path, body: str, message: str) -> None:
    cfg = _daemon_files(tmp_path, body)
    p = _tcplab("daemon", "--config", str(cfg))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert str(cfg) in err and out == ""


def test_the_daemon_serves_until_sigterm_and_exits_cleanly(tmp_path: Path) -> None:
    cfg = _daemon_files(tmp_path, 'name = "h0"\nport = 1\nkey_file = "key"\npeers = ["h1"]\nplaintext = true\n')
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg.write_text(cfg.read_text().replace("port = 1", f"port = {port}"))
    p = _tcplab("daemon", "--config", str(cfg))
    try:
        assert p.stdout is not None
        ready, _, _ = select.select([p.stdout], [], [], 60)
        assert ready and p.stdout.readline().strip() == f"tcplab daemon h0: serving on 127.0.0.1:{port}"
        assert request(("127.0.0.1", port), KEY, {"kind": "ping"}) == {"ok": True, "result": {"name": "h0"}}
        refused = request(("127.0.0.1", port), KEY, {"kind": "probe", "peer": "h7"})
        assert refused["ok"] is False and "not one of this daemon's peers" in refused["error"]
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=20)
        assert p.returncode == 0
        assert "refused" in err  # the refusal was logged
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()


# -- the probe runner on loopback -----------------------------------------------------------------


@needs_flow
@pytest.mark.parametrize("protocol", [TCPLAB[0], LINUX[1]], ids=["tcplab", "linux"])
def test_a_probe_runs_in_three_phases_on_loopback(tmp_path: Path, protocol: dict) -> None:
    sink, source = ProbeRunner("b", tmp_path / "b"), ProbeRunner("a", tmp_path / "a")
    spec = ProbeSpec(probe="p1", source="a", sink="b", source_address="127.0.0.2", sink_address="127.0.0.1",
                     protocol=protocol, bytes=N_BYTES, time_limit_s=20)
    job = spec.model_dump(mode="json")
    try:
        listen = sink({**job, "phase": "listen", "peer": "a"}, threading.Event())
        sent = source({**job, "phase": "send", "peer": "b", "port": listen["port"]}, threading.Event())
        got = sink({**job, "phase": "collect", "peer": "a", "port": listen["port"]}, threading.Event())
    finally:
        sink.close()
        source.close()
    assert sent["status"] == "ok" and sent["completed"] and sent["bytes"] == N_BYTES, sent
    assert got["status"] == "ok" and got["bytes"] == N_BYTES and got["intact"], got
    assert sent["throughput_bps"] > 0 and sent["retransmits"] is not None
    import polars as pl

    trace = pl.read_parquet(sent["traces"])
    assert trace.height > 0 and "time_ns" in trace.columns
    assert Path(sent["traces"]).is_relative_to(tmp_path / "a" / "p1" / "source")


def test_bad_probe_jobs_are_one_line(tmp_path: Path) -> None:
    r = ProbeRunner("b", tmp_path)
    base = {"kind": "probe", "probe": "p", "source": "a", "sink": "b", "source_address": "127.0.0.2",
            "sink_address": "127.0.0.1", "protocol": {"stack": "linux", "congestion": "cubic"}, "bytes": 10}
    cases = {
        "peer": ({**base, "phase": "listen", "peer": "b"}, "a listen job's peer is 'a'"),
        "port": ({**base, "phase": "collect", "peer": "a"}, "port: required"),
        "stack": ({**base, "phase": "listen", "peer": "a", "protocol": {"stack": "quic"}}, "protocol"),
        "bytes": ({**base, "phase": "listen", "peer": "a", "bytes": 0}, "bytes"),
        "host": ({**base, "phase": "send", "peer": "b", "port": 5}, "source = 'a': this daemon serves 'b'"),
        "collect": ({**base, "phase": "collect", "peer": "a", "port": 5}, "no receiver is waiting"),
    }
    for case, (job, message) in cases.items():
        with pytest.raises(RuntimeError) as e:
            r(job, threading.Event())
        assert message in str(e.value) and "\n" not in str(e.value), (case, str(e.value))
