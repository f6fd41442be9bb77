"""``tcplab run --live`` with real TCP in both directions (docs/real-tcp.md): results,
instruments and a pcap of the wire, as for every live flow. Needs root, `ip netns`,
/dev/net/tun and cargo; skips saying which is missing. tshark is installed when missing (as
tests/test_pcap.py does) or the tshark test skips.

One run of a 2-pair dumbbell (access 100 Mb/s 1 ms, bottleneck 20 Mb/s 5 ms, 100 packets,
1 % random loss on the bottleneck's forward direction), the bottleneck captured:
- flow 0: tcplab's Veno sender with SACK recovery (``stack = "tcplab-tcp"``, s0 attached)
  to a Linux socket sink in r0's namespace;
- flow 1: a Linux CUBIC sender in s1's namespace to tcplab's receiver
  (``stack = "linux"``, ``receiver = "tcplab"``, r1 attached).

Asserted (tolerance: none): both transfers arrive whole and intact; packet conservation holds
for flow 0, whose data segments are counted by its sender, the emulator's drop log and the
Linux sink's ``TCP_INFO`` independently; every data drop is matched to the transmission it
dropped; the sender's retransmissions are the model's data drops plus the duplicates the sink
received; the instruments classified its loss responses (each one's cause recomputed from the
segments and drops tables); tshark decodes the capture with no
malformed packet and no bad checksum, and both handshakes carry MSS, SACK-permitted,
timestamps and window scale.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import polars as pl
import pytest
import test_live
import test_live_real_tcp
import test_pcap

from tcplab.live.real_tcp_results import attached_hosts, attachment_refusal
from tcplab.scenario import Scenario

emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow

MB3 = 3_000_000

FLOWS = f"""
[[flows]]
name = "tcplab-veno"
src = "s0"
dst = "r0"
controller = "veno"
recovery = "sack"
bytes = {MB3}
stack = "tcplab-tcp"
[[flows]]
name = "linux-cubic"
src = "s1"
dst = "r1"
controller = "cubic"
recovery = "sack"
bytes = {MB3}
stack = "linux"
receiver = "tcplab"
[trace]
series = "interval"
interval = "100ms"
pcap = ["left-right"]
"""


def scenario() -> Scenario:
    return test_live_real_tcp.dumbbell(FLOWS, loss=0.01, duration="30s", name="real-tcp-run", pairs=2)


@pytest.fixture(scope="module")
def run(emu: Path, tmp_path_factory: pytest.TempPathFactory):
    from tcplab.live.run import run_live

    out = tmp_path_factory.mktemp("real-tcp-run") / "out"
    return run_live(scenario(), out, report=False)


def test_both_directions_arrive_whole_and_intact(run) -> None:
    flows = run.result.tables["flows"]
    assert flows["name"].to_list() == ["tcplab-veno", "linux-cubic"]
    assert flows["bytes_delivered"].to_list() == [MB3, MB3]
    assert flows["completed"].to_list() == [True, True]
    live = run.live
    assert live["stacks"]["tcplab-tcp"] == ["tcplab-veno"]
    assert live["stacks"]["linux-to-tcplab"] == ["linux-cubic"]
    veno, cubic = live["flows"]["tcplab-veno"], live["flows"]["linux-cubic"]
    assert veno["intact"] and veno["linux_receiver"]["closed"], veno["linux_receiver"]
    assert veno["connection"]["state"] == "TimeWait"
    assert veno["connection"]["negotiated"]["sack"] and veno["connection"]["negotiated"]["timestamps"]
    assert cubic["intact"] and cubic["receiver"] == "tcplab"
    r = cubic["linux"]["tcplab_receiver"]
    assert (r["state"], r["outcome"], r["intact"]) == ("Closed", "Orderly", True), r


def test_packets_are_conserved_and_every_data_drop_is_a_transmission(run) -> None:
    res = run.result
    assert res.conservation["ok"], res.conservation["violations"]
    veno = run.live["flows"]["tcplab-veno"]
    assert veno["unaccounted"] == {"data": 0, "ack": 0}, veno
    assert veno["drops"]["unmatched"] == 0
    drops = res.tables["drops"].filter((pl.col("flow") == 0) & (pl.col("packet") == "data"))
    assert veno["drops"]["data"] == drops.height > 0, "1 % of ~2000 segments: some are lost"
    row = res.tables["flows"].row(0, named=True)
    assert row["retransmits"] == drops.height + row["spurious_retransmits"], row


def test_the_instruments_measure_the_tcplab_sender(run) -> None:
    t = run.result.tables
    v = t["verdicts"].filter(pl.col("flow") == 0)
    assert v.height == run.result.tables["flows"].row(0, named=True)["fast_retransmits"] + \
        run.result.tables["flows"].row(0, named=True)["timeouts"] > 0
    # Veno labels each reduction by its factor: 1/2 (congestive) or 4/5 (random, its verdict
    # when the backlog is small).
    assert set(v["label"].to_list()) <= {"1/2", "4/5"}, v["label"].unique().to_list()
    # Each response names the cause of the drop of its segment's latest transmission before
    # it (random losses here, slow start's overflow possibly), or none when that one was not
    # dropped (docs/loss-classification.md: e.g. a recovery entered while the segment's
    # retransmission, sent in the recovery before, is still on its way; the live timing
    # decides whether that happens). Checked against the wire's own tables: the segment's
    # transmissions before the response, and its drops after the latest of them.
    causes = v["cause"].to_list()
    assert set(causes) <= {"link_error", "buffer_overflow", "none"} and "link_error" in causes, causes
    segs = t["segments"].filter(pl.col("flow") == 0)
    drops = t["drops"].filter((pl.col("flow") == 0) & (pl.col("packet") == "data"))
    for r in v.iter_rows(named=True):
        at, seq = r["time_ns"], r["seq"]
        sent = segs.filter((pl.col("seq") == seq) & (pl.col("time_ns") < at))["time_ns"]
        assert sent.len() > 0, r
        lost = drops.filter((pl.col("seq") == seq) & pl.col("time_ns").is_between(sent.max(), at))
        assert r["cause"] == (lost["cause"][-1] if lost.height else "none"), (r, sent.to_list(), lost)
    assert t["series"].filter(pl.col("flow") == 0).height > 5
    delay = t["delay"].filter(pl.col("flow") == 0).row(0, named=True)
    assert delay["packets_sent"] == t["flows"].row(0, named=True)["segments_sent"]


def test_tshark_decodes_the_wire_and_both_handshakes(run) -> None:
    pcap = run.out_dir / "left-right.pcap"
    tshark = test_pcap.tool("tshark")
    base = [tshark, "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "tcp.check_checksum:TRUE"]
    bad = subprocess.run([*base, "-Y", "_ws.malformed || ip.checksum.status == 0 || tcp.checksum.status == 0",
                          "-T", "fields", "-e", "frame.number"], capture_output=True, text=True, check=True)
    if frames := bad.stdout.split():  # say what is wrong with the first one
        detail = subprocess.run([*base, "-V", "-Y", f"frame.number == {frames[0]}"], capture_output=True, text=True)
        raise AssertionError(f"frames {frames[:20]} malformed or with a bad checksum; the first:\n{detail.stdout[-3000:]}")
    n = subprocess.run([*base, "-T", "fields", "-e", "frame.number"], capture_output=True, text=True, check=True)
    assert len(n.stdout.split()) > 2000
    syn = subprocess.run([*base, "-Y", "tcp.flags.syn == 1", "-T", "fields", "-E", "separator=,", "-e", "tcp.flags.ack",
                          "-e", "tcp.options.mss_val", "-e", "tcp.options.sack_perm", "-e", "tcp.options.wscale.shift",
                          "-e", "tcp.options.timestamp.tsval"], capture_output=True, text=True, check=True)
    rows = [line.split(",") for line in syn.stdout.split()]
    assert sorted(r[0] for r in rows) == ["0", "0", "1", "1"], rows  # two SYNs, two SYN-ACKs
    for _ack, mss, sack_perm, shift, tsval in rows:
        assert mss == "1460" and sack_perm and shift and tsval, rows
    summary = json.loads((run.out_dir / "summary.json").read_text())
    assert summary["pcap"]["files"][0]["counts"]["packets"] == len(n.stdout.split())


def test_an_attached_host_serves_one_flow() -> None:
    canonical = scenario().canonical()
    assert attached_hosts(canonical) == ("s0", "r1")
    assert attachment_refusal(canonical) is None
    canonical["flows"][1]["src"] = "s0"
    msg = attachment_refusal(canonical)
    assert msg is not None and msg.startswith("flows[1].src = 's0': that host is flows[0].src"), msg
