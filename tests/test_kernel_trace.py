"""The kernel's trace of Linux flows (docs/live.md "The kernel's trace", ``tcplab.live.kernel_trace``).

Without root: trace lines as tracefs prints them become records, and one flow's records
become ``series`` and ``events`` rows (units, sequence numbers from the first data byte,
Linux's "infinite" ssthresh, the congestion states).

With root (skips otherwise, saying why): a live run of one Linux CUBIC flow on the path of
tests/test_live_real_tcp_fidelity.py (bottleneck 10 Mb/s, loss 1e-2) records the trace
through an instance of its own, removes it afterwards (and a stale one of a killed owner at
the next start), and its rows agree with what the kernel counted itself: the wire's segments
(tests/test_tcp_sends.py) have one retransmission row per segment the kernel retransmitted
(``tcpi_total_retrans``) and new data that covers the stream once, the payload per segment
the scenario's ``mss`` (1448), and ``tcplab diff`` against the simulation pairs every loss
response.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import polars as pl
import pytest
import test_live

from tcplab.live import kernel_trace as kt

emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow

LINES = """\
# tracer: nop
          <idle>-0       [001] ..s2.   100.000100000: tcp_probe: family=AF_INET src=10.1.0.1:40000 dest=10.1.0.2:5400 mark=0x0 data_len=0 snd_nxt=0x3e9 snd_una=0x3e9 snd_cwnd=10 ssthresh=2147483647 snd_wnd=65160 srtt=40000 rcv_wnd=65536 sock_cookie=2a skbaddr=00000000a skaddr=00000000b
          <idle>-0       [001] ..s2.   100.050000000: tcp_probe: family=AF_INET src=10.1.0.1:40000 dest=10.1.0.2:5400 mark=0x0 data_len=0 snd_nxt=0x3a21 snd_una=0x3e9 snd_cwnd=10 ssthresh=2147483647 snd_wnd=65160 srtt=41000 rcv_wnd=65536 sock_cookie=2a skbaddr=00000000c skaddr=00000000b
          <idle>-0       [000] ..s2.   100.060000000: tcp_cong_state_set: family=AF_INET sport=40000 dport=5400 saddr=10.1.0.1 daddr=10.1.0.2 saddrv6=::ffff:10.1.0.1 daddrv6=::ffff:10.1.0.2 cong_state=3
          <idle>-0       [000] ..s2.   100.060000500: tcp_retransmit_skb: skbaddr=00000000d skaddr=00000000b family=AF_INET sport=40000 dport=5400 saddr=10.1.0.1 daddr=10.1.0.2 saddrv6=::ffff:10.1.0.1 daddrv6=::ffff:10.1.0.2 state=TCP_ESTABLISHED err=0
          <idle>-0       [000] ..s2.   100.070000000: tcp_probe: family=AF_INET src=10.1.0.1:40000 dest=10.1.0.2:5400 mark=0x0 data_len=0 snd_nxt=0x3a21 snd_una=0x989 snd_cwnd=7 ssthresh=7 snd_wnd=65160 srtt=41000 rcv_wnd=65536 sock_cookie=2a skbaddr=00000000e skaddr=00000000b
          <idle>-0       [000] ..s2.   100.110000000: tcp_cong_state_set: family=AF_INET sport=40000 dport=5400 saddr=10.1.0.1 daddr=10.1.0.2 saddrv6=::ffff:10.1.0.1 daddrv6=::ffff:10.1.0.2 cong_state=0
          <idle>-0       [000] ..s2.   100.110000100: tcp_probe: family=AF_INET src=10.1.0.9:40000 dest=10.1.0.2:5400 mark=0x0 data_len=0 snd_nxt=0x1 snd_una=0x1 snd_cwnd=99 ssthresh=9 snd_wnd=1 srtt=1 rcv_wnd=1 sock_cookie=2b skbaddr=00000000f skaddr=00000000g
"""


def _records(text: str) -> list[kt.Record]:
    trace = kt.KernelTrace([5400])
    out = []
    for line in text.splitlines():
        m = kt._LINE.match(line)
        if m and not line.startswith("#"):
            secs, event, rest = m.groups()
            whole, frac = secs.split(".")
            out.append(kt.Record(int(whole) * 10**9 + int(frac.ljust(9, "0")[:9]), event, dict(kt._FIELD.findall(rest))))
    trace.records = out
    return trace.flow(0x2A)


def test_trace_lines_become_one_flows_rows() -> None:
    recs = _records(LINES)
    assert [r.event for r in recs] == ["tcp_probe", "tcp_probe", "tcp_cong_state_set", "tcp_retransmit_skb",
                                       "tcp_probe", "tcp_cong_state_set"], "the other socket (cookie 0x2b) is left out"
    origin = 100 * 10**9
    rows = kt.rows(recs, origin, flow=3, isn1=0x3E9, mss=1448)
    s = rows["series"]
    assert s[0]["cwnd"] == 10 * 1448 and s[0]["ssthresh"] == (1 << 64) - 1, "0x7fffffff: no threshold yet"
    assert s[0]["srtt_ns"] == 40_000_000 and s[0]["time_ns"] == 100_000
    assert s[2]["ssthresh"] == 7 * 1448 and s[2]["delivered"] == 0x989 - 0x3E9
    ev = rows["events"]
    assert [(e["event"], e["label"], e["cwnd"], e["seq"]) for e in ev] == [
        ("recovery_enter", "recovery", 10 * 1448, 0), ("recovery_exit", "open", 7 * 1448, 0x989 - 0x3E9)]
    assert all(r["flow"] == 3 for k in rows for r in rows[k])


def test_without_root_or_tracefs_one_line_says_why(monkeypatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    why = kt.unavailable()
    assert why is not None and "root" in why and "\n" not in why


needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="the kernel's trace needs root (tracefs)")


@needs_root
def test_a_stale_instance_of_a_dead_owner_is_removed() -> None:
    root = kt.tracefs()
    if root is None:
        pytest.skip("tracefs cannot be mounted here")
    dead = 2**22 + 12345  # above pid_max's default: no such process
    inst = root / "instances" / f"{kt.PREFIX}{dead}-0"
    inst.mkdir()
    (inst / "events" / "tcp" / "tcp_probe" / "enable").write_text("1")
    assert f"{kt.PREFIX}{dead}-0" in kt.remove_stale(root)
    assert not inst.exists()


@pytest.fixture(scope="module")
def linux_run(emu: Path, tmp_path_factory):
    from test_live_real_tcp_fidelity import TOML

    import tcplab
    from tcplab.live.run import run_live
    from tcplab.results import write_results
    from tcplab.scenario import Scenario

    if (why := kt.unavailable()) is not None:
        pytest.skip(why)
    base = tmp_path_factory.mktemp("kernel-trace")
    sim = write_results(tcplab.run(Scenario.from_toml(TOML)), base / "sim")
    live = run_live(Scenario.from_toml(TOML + 'stack = "linux"\n'), base / "live", report=False)
    return sim, live


def test_a_linux_flow_is_traced_and_nothing_stays_on(linux_run) -> None:
    _, live = linux_run
    k = live.live["kernel_trace"]
    assert k["note"] is None and k["flows"] == ["f"] and k["records"] > 1000 and k["lost"] == 0, k
    root = kt.tracefs()
    assert root is not None
    assert not list((root / "instances").glob(f"{kt.PREFIX}{os.getpid()}-*")), "the run's instance is gone"
    assert (root / "events" / "tcp" / "tcp_probe" / "enable").read_text().strip() == "0"


def test_the_rows_agree_with_the_kernels_own_counts(linux_run) -> None:
    _, live = linux_run
    t = live.result.tables
    row = t["flows"].row(0, named=True)
    seg = t["segments"].filter(pl.col("flow") == 0)
    assert seg.filter(pl.col("retransmission") > 0).height == row["retransmits"] > 0
    new = seg.filter(pl.col("retransmission") == 0).sort("seq")
    assert new["seq"].to_list() == [0, *(new["seq"] + new["len"]).to_list()[:-1]], "new data: each byte once"
    rtx = seg.filter(pl.col("retransmission") > 0)
    assert (rtx["seq"] + rtx["len"] <= (new["seq"] + new["len"]).max()).all(), "resent what had left"
    assert new["len"].max() == 1448, "the scenario's mss is the payload per segment, as simulated"
    assert row["bytes_sent"] / row["segments_sent"] == pytest.approx(1448, abs=2)
    assert t["series"].filter(pl.col("flow") == 0).height > 1000, "a row per ACK"


def test_diff_pairs_the_kernels_loss_responses_with_the_simulations(linux_run) -> None:
    from tcplab import diff

    sim, live = linux_run
    d = diff.diff(diff.load(sim), diff.load(live.out_dir))
    n_sim, n_linux = d["streams"]["loss_response"]
    assert n_sim > 10 and n_linux > 10
    assert d["first_divergence"] is not None
    first = d["episodes"]["loss_responses"][0]
    assert first[1]["trigger"] == "fast_retransmit" and first[1]["ssthresh_after"] is not None
    assert re.fullmatch(r"\d+(\.\d+)?", str(first[1]["cwnd_before"]))
