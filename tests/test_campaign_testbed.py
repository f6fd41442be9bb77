"""The live campaign's daemon command, probe runner and local testbed (docs/campaign.md,
"Live mode"): ``tcplab daemon`` refuses bad config files in one line (exit 2), joins its
scheduler and ends cleanly on SIGTERM; probes of tcplab's transport and of Linux TCP run
between two ends on loopback; a 3-host testbed comes up with every host's worker joined
over TLS, one probe of each stack runs in each direction of each pair with all its bytes
delivered, a client without the testbed's credentials is refused, a probe past the
worker's limit ends as ``timeout`` with no endpoint left running; leaving the testbed
(normally, on an exception, on SIGINT to ``tcplab testbed``) leaves no namespace, no daemon
and no scheduler."""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tcplab.campaign.config import CampaignConfig
from tcplab.campaign.live_probe import ProbeOutcome, ProbeRunner, ProbeSpec, transfer_tcp
from tcplab.live.endpoints import flow_binary

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


_NO_TESTBED = _why_no_testbed()
needs_testbed = pytest.mark.skipif(_NO_TESTBED is not None, reason=_NO_TESTBED or "")


def _namespaces() -> set[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return {line.split()[0] for line in out.splitlines() if line.startswith("tcplab-")}


def _tag(namespaces: set[str]) -> str:
    """The common prefix of one testbed's namespaces, ``tcplab-<pid>-<hex>-`` (other
    sessions may make namespaces of their own meanwhile: only ours are checked)."""
    (tag,) = {ns.rsplit("-", 1)[0] + "-" for ns in namespaces}
    return tag


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


# -- tcplab daemon --------------------------------------------------------------------------------


def _daemon_files(tmp: Path, body: str) -> Path:
    cfg = tmp / "daemon.toml"
    cfg.write_text(body)
    return cfg


def _tcplab(*args: str, **kw) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "tcplab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


LOCAL = 'name = "h0"\nscheduler = "tcp://127.0.0.1:9"\n'


@pytest.mark.parametrize("body, message", [
    (LOCAL + "slots = 0\n", "slots: 0 must be >= 1"),
    ('name = "h0"\nscheduler = "tcp://10.1.2.3:8786"\n',
     "scheduler = 'tcp://10.1.2.3:8786': plaintext (tcp://) only on a loopback address"),
    ('name = "h0"\nscheduler = "10.1.2.3"\n', "scheduler = '10.1.2.3': is not tls://HOST:PORT"),
    ('name = "h0"\nscheduler = "tls://10.1.2.3:8786"\n', "tls_ca: required with a tls:// scheduler"),
    ('name = "h0"\nscheduler = "tls://10.1.2.3:8786"\ntls_ca = "ca.pem"\ntls_cert = "c.pem"\ntls_key = "k.pem"\n',
     "tls_ca = '"),
    (LOCAL + "probe_timeout = 5\n", "probe_timeout: is not a known field"),
    ('name = "h/0"\nscheduler = "tcp://127.0.0.1:9"\n', "name"),
])
def test_a_bad_daemon_config_is_one_line_naming_the_field_exit_2(tmp_path: Path, body: str, message: str) -> None:
    cfg = _daemon_files(tmp_path, body)
    p = _tcplab("daemon", "--config", str(cfg))
    out, err = p.communicate(timeout=60)
    assert p.returncode == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and message in err, err
    assert str(cfg) in err and out == ""


def test_a_daemon_that_cannot_enter_its_namespace_says_so_exit_2(tmp_path: Path) -> None:
    cfg = _daemon_files(tmp_path, LOCAL)
    p = _tcplab("daemon", "--config", str(cfg), "--netns", "tcplab-no-such-namespace")
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and err == "error: netns = 'tcplab-no-such-namespace': No such file or directory\n"


def test_bad_testbed_arguments_are_one_line_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("seed = -1\n")
    for args, message in ((["campaigns/eth-default.toml", "--hosts", "1"], "hosts = 1: a testbed has 2 to 16 hosts"),
                          ([str(bad)], "bad.toml: seed: -1 must be >= 0")):
        p = _tcplab("testbed", *args, cwd=Path(__file__).resolve().parents[1])
        out, err = p.communicate(timeout=60)
        assert p.returncode == 2 and err.count("\n") == 1 and message in err, err
    p = _tcplab("testbed", "campaigns/eth-default.toml", "--out", str(tmp_path),
                cwd=Path(__file__).resolve().parents[1])
    _, err = p.communicate(timeout=60)
    assert p.returncode == 2 and err == f"error: --out {tmp_path}: not empty (a testbed writes new credentials and results)\n"


def test_the_daemon_joins_its_scheduler_until_sigterm_and_exits_cleanly(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    from tcplab.campaign.cluster import connect, hosts_present, run_probe, start_scheduler

    sched, address = start_scheduler(tmp_path / "scheduler", None)
    cfg = _daemon_files(tmp_path, f'name = "h0"\nscheduler = "{address}"\nlisten = "127.0.0.1"\n')
    p = _tcplab("daemon", "--config", str(cfg), "--verbose")
    client = connect(address, (None, None, None))
    try:
        assert p.stdout is not None
        ready, _, _ = select.select([p.stdout], [], [], 60)
        line = p.stdout.readline().strip()
        assert ready and line.startswith("tcplab daemon h0: worker tcp://127.0.0.1:") and line.endswith(
            f"joined {address}"), line
        assert set(hosts_present(client)) == {"h0"}
        # a probe whose other end has no worker fails at once, saying which
        spec = ProbeSpec(probe="p", source="h1", sink="h0", source_address="127.0.0.2", sink_address="127.0.0.1",
                         protocol={"stack": "linux", "congestion": "cubic"}, bytes=10)
        out = run_probe(client, spec)
        assert out.status == "failed" and out.reason == "the worker of h1 is not connected to the scheduler"
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
        deadline = time.monotonic() + 10
        while hosts_present(client) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert hosts_present(client) == {}  # it left the scheduler
    finally:
        client.close()
        if p.poll() is None:
            p.kill()
            p.communicate()
        sched.terminate()
        sched.wait(10)


# -- the probe runner on loopback -----------------------------------------------------------------


@needs_flow
@pytest.mark.parametrize("protocol", [TCPLAB[0], LINUX[1]], ids=["tcplab", "linux"])
def test_a_probe_runs_in_three_phases_on_loopback(tmp_path: Path, protocol: dict) -> None:
    sink, source = ProbeRunner("b", tmp_path / "b"), ProbeRunner("a", tmp_path / "a")
    transfer = CampaignConfig().transfer  # the virtual campaign's probe settings
    spec = ProbeSpec(probe="p1", source="a", sink="b", source_address="127.0.0.2", sink_address="127.0.0.1",
                     protocol=protocol, bytes=N_BYTES, time_limit_s=20, mss=transfer.packet_bytes,
                     tcp=transfer_tcp(transfer))
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
    if protocol["stack"] == "tcplab":  # the sender was built with the campaign's settings
        cfg = json.loads((tmp_path / "a" / "p1" / "source" / "config.json").read_text())
        tcp = cfg["scenario"]["flows"][0].get("tcp") or cfg["scenario"]["tcp"]
        assert (tcp["mss"], tcp["initial_cwnd"], tcp["sack_style"], tcp["rto_min"]) == (
            1024, 1, "eth_packets", 1_000_000_000)
    else:  # TCP_MAXSEG 1024, less the timestamp option's 12 bytes
        assert 1000 <= sent["summary"]["final_tcp_info"]["snd_mss"] <= 1024


def test_bad_probe_jobs_are_one_line(tmp_path: Path) -> None:
    r = ProbeRunner("b", tmp_path)
    base = {"probe": "p", "source": "a", "sink": "b", "source_address": "127.0.0.2",
            "sink_address": "127.0.0.1", "protocol": {"stack": "linux", "congestion": "cubic"}, "bytes": 10}
    cases = {
        "peer": ({**base, "phase": "listen", "peer": "b"}, "a listen job's peer is 'a'"),
        "port": ({**base, "phase": "collect", "peer": "a"}, "port: required"),
        "stack": ({**base, "phase": "listen", "peer": "a", "protocol": {"stack": "quic"}}, "protocol"),
        "bytes": ({**base, "phase": "listen", "peer": "a", "bytes": 0}, "bytes"),
        "host": ({**base, "phase": "send", "peer": "b", "port": 5}, "source = 'a': this worker serves 'b'"),
        "collect": ({**base, "phase": "collect", "peer": "a", "port": 5}, "no receiver is waiting"),
        "tcp.mss": ({**base, "phase": "listen", "peer": "a", "tcp": {"mss": 9000}}, "tcp.mss = 9000: give it as mss"),
        "tcp": ({**base, "phase": "listen", "peer": "a", "protocol": {"stack": "tcplab", "controller": "reno",
                 "recovery": "sack"}, "tcp": {"initial_cwnd": 0}}, "probe settings: tcp.initial_cwnd: 0"),
    }
    for case, (job, message) in cases.items():
        with pytest.raises(RuntimeError) as e:
            r(job, threading.Event())
        assert message in str(e.value) and "\n" not in str(e.value), (case, str(e.value))


# -- the testbed ----------------------------------------------------------------------------------


def _spec(tb, probe: str, src: str, dst: str, protocol: dict, n: int = N_BYTES, limit: float = 30) -> ProbeSpec:
    return ProbeSpec(probe=probe, source=src, sink=dst, source_address=tb.hosts[src].address,
                     sink_address=tb.hosts[dst].address, protocol=protocol, bytes=n, time_limit_s=limit)


def _endpoints(tb) -> dict[str, list[str]]:
    """What runs in each host's namespace besides its daemon and the cross traffic."""
    out = {}
    for h in tb.hosts.values():
        pids = subprocess.run(["ip", "netns", "pids", h.namespace], capture_output=True, text=True).stdout.split()
        daemon = tb.daemons[h.name].pid
        cmds = [Path(f"/proc/{p}/cmdline").read_text().replace("\0", " ")
                for p in pids if int(p) != daemon and Path(f"/proc/{p}").exists()]
        out[h.name] = [c for c in cmds if str(tb.out_dir / "cross") not in c]
    return out


@needs_testbed
def test_a_three_host_testbed_runs_probes_of_each_stack_in_every_direction(tmp_path: Path) -> None:
    from tcplab.campaign.testbed import Testbed

    t0 = time.perf_counter()
    with Testbed(3, POPULATION, seed=5, out_dir=tmp_path / "tb", probe_timeout_s=6) as tb:
        up_s = time.perf_counter() - t0
        ours = {h.namespace for h in tb.hosts.values()}
        assert ours <= _namespaces() and len(ours) == 3
        pids = [p.pid for p in tb.daemons.values()]
        assert tb.scheduler_proc is not None
        pids.append(tb.scheduler_proc.pid)
        client = tb.client()
        from tcplab.campaign.cluster import connect, hosts_present, run_probe

        assert set(hosts_present(client)) == set(tb.hosts)
        assert tb.scheduler.startswith("tls://127.0.0.1:") and tb.tls is not None
        assert all(f.stat().st_mode & 0o777 == 0o600 for f in tb.tls)
        # Paths drawn from the population: each pair's own.
        assert len(tb.paths) == 3 and all(10 <= p.path.rate_mbps <= 20 and 10 <= p.path.rtt_ms <= 30
                                          for p in tb.paths)
        assert any(p.udp_bps > 0 for p in tb.paths) and len(tb.cross_flows) == sum(p.udp_bps > 0 for p in tb.paths)

        outcomes: list[ProbeOutcome] = []
        k = 0
        for src in tb.hosts:
            for dst in tb.hosts:
                if src == dst:
                    continue
                for protocol in (TCPLAB[k % 3], LINUX[k % 3]):
                    name = f"p{len(outcomes)}"
                    outcomes.append(run_probe(client, _spec(tb, name, src, dst, protocol)))
                k += 1
        for o in outcomes:
            assert o.status == "ok", (o.spec.source, o.spec.sink, o.spec.protocol, o.reason)
            assert o.sink is not None and o.sink.bytes == N_BYTES and o.sink.intact
            assert o.source is not None and o.source.bytes == N_BYTES and o.source.completed
            assert o.source.traces and Path(o.source.traces).exists()
        # Three probes at once, one per pair, each host a source and a sink.
        ring = [("h0", "h1"), ("h1", "h2"), ("h2", "h0")]
        together: list[ProbeOutcome] = []
        threads = [threading.Thread(target=lambda a=a, b=b, i=i: together.append(
            run_probe(client, _spec(tb, f"ring{i}", a, b, TCPLAB[i])))) for i, (a, b) in enumerate(ring)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert len(together) == 3 and all(o.status == "ok" and o.sink and o.sink.bytes == N_BYTES
                                          for o in together), [o.reason for o in together]
        # Without the testbed's credentials nobody connects.
        with pytest.raises(OSError, match="cannot connect"):
            connect(tb.scheduler.replace("tls://", "tcp://"), (None, None, None), timeout_s=3)
        # A probe past the worker's probe_timeout_s (6 s) ends as "timeout", nothing left running.
        t = time.perf_counter()
        slow = run_probe(client, _spec(tb, "slow", "h0", "h2", TCPLAB[0], n=200_000_000, limit=60))
        assert slow.status == "failed" and slow.reason == "timeout", slow.reason
        assert time.perf_counter() - t < 6 + 12
        assert _endpoints(tb) == {h: [] for h in tb.hosts}
        assert set(hosts_present(client)) == set(tb.hosts)
        client.close()
        probes_s = time.perf_counter() - t0 - up_s
    assert all(not _alive(p) for p in pids)
    assert not any(ns.startswith(_tag(ours)) for ns in _namespaces())
    tput = sorted(o.source.throughput_bps / 1e6 for o in outcomes if o.source)
    print(f"\ntestbed up in {up_s:.1f} s; {len(outcomes)} probes + timeout in {probes_s:.1f} s; "
          f"throughput {tput[0]:.1f}-{tput[-1]:.1f} Mbit/s")


@needs_testbed
def test_tcp_cross_traffic_runs_beside_the_probes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tcplab.campaign.testbed import Testbed

    pop = CampaignConfig.from_dict({**POPULATION.model_dump(), "paths": {
        **POPULATION.model_dump()["paths"], "tcp_flows": 2, "udp_load": 0}})
    monkeypatch.chdir(tmp_path)  # a relative out_dir, as `tcplab testbed ... --out tb` gives it
    with Testbed(2, pop, seed=4, out_dir="tb", cross_tcp=1) as tb:
        assert tb.paths[0].tcp_cross == 1 and tb.paths[0].udp_bps == 0 and len(tb.cross_flows) == 1
        sender = tmp_path / "tb" / "cross" / "tcp0" / "sender"
        assert (sender / "facts.jsonl").resolve() == Path(os.devnull)
        time.sleep(1.0)
        from tcplab.campaign.cluster import run_probe

        client = tb.client()
        o = run_probe(client, _spec(tb, "beside", "h0", "h1", LINUX[1]))
        client.close()
        assert o.status == "ok" and o.sink is not None and o.sink.bytes == N_BYTES, o.reason
        running = subprocess.run(["ip", "netns", "pids", tb.hosts["h0"].namespace], capture_output=True,
                                 text=True).stdout.split()
        cmds = [Path(f"/proc/{p}/cmdline").read_text() for p in running if Path(f"/proc/{p}").exists()]
        assert any("tcplab-flow\0send" in c and str(sender) in c for c in cmds)


@needs_testbed
def test_a_daemon_killed_mid_probe_fails_that_probe_and_leaves_no_endpoint(tmp_path: Path) -> None:
    from tcplab.campaign.testbed import Testbed

    with Testbed(2, POPULATION, seed=2, out_dir=tmp_path / "tb", cross_udp=False) as tb:
        from tcplab.campaign.cluster import hosts_present, run_probe

        client = tb.client()
        spec = _spec(tb, "killed", "h0", "h1", TCPLAB[0], n=200_000_000, limit=60)
        out: list[ProbeOutcome] = []
        t = threading.Thread(target=lambda: out.append(run_probe(client, spec)))
        t.start()
        deadline = time.monotonic() + 20
        while not any("tcplab-flow send" in c for c in _endpoints(tb)["h0"]) and time.monotonic() < deadline:
            time.sleep(0.1)
        tb.daemons["h0"].kill()  # the source's daemon dies mid-send
        t.join(30)
        assert out and out[0].status == "failed", out
        assert out[0].reason is not None and "h0" in out[0].reason, out[0].reason
        time.sleep(2)  # the sender's parent died: it got SIGTERM (PR_SET_PDEATHSIG)
        assert [c for c in _endpoints(tb)["h0"] if "tcplab-flow" in c] == []
        assert _endpoints(tb)["h1"] == []  # the receiver was collected
        assert "h1" in hosts_present(client)
        client.close()


@needs_testbed
def test_an_exception_inside_the_testbed_tears_it_down(tmp_path: Path) -> None:
    from tcplab.campaign.testbed import Testbed

    with pytest.raises(ZeroDivisionError):
        with Testbed(2, POPULATION, seed=1, cross_udp=False) as tb:
            ours = {h.namespace for h in tb.hosts.values()}
            pids = [p.pid for p in tb.daemons.values()]
            out = tb.out_dir
            raise ZeroDivisionError
    assert not any(ns.startswith(_tag(ours)) for ns in _namespaces())
    assert all(not _alive(p) for p in pids)
    assert out is not None and not out.exists()  # its own temporary directory


@needs_testbed
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_tcplab_testbed_runs_until_a_signal_and_leaves_nothing(tmp_path: Path, signum: int) -> None:
    p = _tcplab("testbed", "campaigns/eth-default.toml", "--hosts", "2", "--out", str(tmp_path / "tb"),
                cwd=Path(__file__).resolve().parents[1])
    try:
        assert p.stdout is not None
        ready, _, _ = select.select([p.stdout], [], [], 60)  # the first line: the testbed is up
        assert ready and p.stdout.readline().startswith("h0: address 10.214.0.1, namespace tcplab-")
        desc = json.loads((tmp_path / "tb" / "testbed.json").read_text())
        assert [h["name"] for h in desc["hosts"]] == ["h0", "h1"] and len(desc["paths"]) == 1
        from tcplab.campaign.cluster import connect, hosts_present

        client = connect(desc["scheduler"], tuple(Path(desc["tls"][k]) for k in ("ca", "cert", "key")))
        assert set(hosts_present(client)) == {"h0", "h1"}
        client.close()
        ours = {h["namespace"] for h in desc["hosts"]}
        assert ours <= _namespaces()
        p.send_signal(signum)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 0, err
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert not any(ns.startswith(_tag(ours)) for ns in _namespaces())
    daemons = subprocess.run(["pgrep", "-f", str(tmp_path / "tb")], capture_output=True, text=True).stdout
    assert daemons.strip() == ""


@pytest.mark.parametrize("error", ["ProbeFailed", "LiveError"])
def test_an_endpoint_that_fails_to_start_is_reported_with_its_own_error(error: str) -> None:
    # It was "I/O operation on closed file": the pipes were closed before stderr was read.
    # The campaign's probes and tcplab run --live start their endpoints with the same
    # tcplab.live.processes.wait_ready, each raising its own error.
    from tcplab.campaign.live_probe import ProbeFailed
    from tcplab.live.errors import LiveError
    from tcplab.live.processes import wait_ready

    cls = {"ProbeFailed": ProbeFailed, "LiveError": LiveError}[error]
    msg = 'reno: unknown parameter(s) ["beta"]'
    p = subprocess.Popen([sys.executable, "-c", f"import sys; sys.exit({msg!r})"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    with pytest.raises(cls, match=r'^reno: unknown parameter\(s\) \["beta"\]$'):
        wait_ready(p, "receiver", cls)
    assert p.returncode is not None


@needs_testbed
def test_a_testbed_killed_outright_leaves_no_process_and_cleanup_removes_its_namespaces(tmp_path: Path) -> None:
    p = _tcplab("testbed", "campaigns/eth-default.toml", "--hosts", "2", "--out", str(tmp_path / "tb"),
                cwd=Path(__file__).resolve().parents[1])
    try:
        assert p.stdout is not None
        ready, _, _ = select.select([p.stdout], [], [], 60)
        assert ready and p.stdout.readline().startswith("h0: address")
        desc = json.loads((tmp_path / "tb" / "testbed.json").read_text())
        ours = {h["namespace"] for h in desc["hosts"]}
        p.kill()  # SIGKILL: no teardown
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    # its scheduler and daemons die with it (and what they started with them)
    deadline = time.monotonic() + 15
    left = "?"
    while time.monotonic() < deadline:
        left = subprocess.run(["pgrep", "-f", str(tmp_path / "tb")], capture_output=True, text=True).stdout.strip()
        if not left:
            break
        time.sleep(0.2)
    assert left == "", left
    r = subprocess.run([sys.executable, "-m", "tcplab", "cleanup"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert not ours & _namespaces()
