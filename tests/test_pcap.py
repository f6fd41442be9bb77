"""pcap export end to end: ``trace.pcap`` -> ``<out>/<link>.pcap``, read back by tshark and
tcptrace, whose retransmission counts and SACK blocks must match tcplab's own counters for
the same run. .ci/run installs both tools from Debian; without them (and no way to install
them) these tests skip, saying so."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import tcplab
from tcplab.results import write_results
from tcplab.scenario import Scenario, ScenarioError

LOSSY_SACK = """
name = "pcap-sack"
seed = 11
duration = "20s"

[topology]
bottleneck = { rate = "4Mbps", delay = "20ms", buffer = 25, forward = { loss = 0.03 }, reverse = { loss = 0.01 } }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 1000 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 1000 }

[[flows]]
controller = "reno"
recovery = "sack"
bytes = "2MB"

[[udp]]
rate = "300kbps"
packet_size = 500
stop = "2s"

[trace]
pcap = ["s0-left", "left-right", "s1-left/forward"]
pcap_snaplen = 65535
"""


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "tshark", "tcptrace"], env=env, capture_output=True)
        path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed and cannot be installed here (apt-get install tshark tcptrace)")
    return path


@pytest.fixture(scope="module")
def capture(tmp_path_factory):
    r = tcplab.run(Scenario.from_toml(LOSSY_SACK))
    out = write_results(r, tmp_path_factory.mktemp("pcap") / "run", report=False)
    return r, out


def test_files_are_written_whole_with_a_summary(capture):
    r, out = capture
    names = sorted(p.name for p in out.iterdir() if "pcap" in p.name)
    assert names == ["left-right.pcap", "s0-left.pcap", "s1-left.forward.pcap"]
    doc = json.loads((out / "summary.json").read_text())
    files = {f["file"]: f for f in doc["pcap"]["files"]}
    assert files["s1-left.forward.pcap"]["directions"] == ["forward"]
    assert doc["pcap"]["addresses"]["s0"] == "10.0.0.1"
    assert doc["pcap"]["addresses"]["r0"] == "10.0.0.5"
    s0 = files["s0-left.pcap"]["counts"]
    flow = r.flows.row(0, named=True)
    assert s0["tcp_data"] == flow["segments_sent"]
    assert s0["tcp_retransmissions"] == flow["retransmits"] > 5
    assert files["s1-left.forward.pcap"]["counts"]["udp"] == r.udp.row(0, named=True)["packets_sent"]


def _tshark(path: Path, *args: str) -> list[str]:
    cmd = [
        tool("tshark"),
        "-r",
        str(path),
        "-o",
        "tcp.relative_sequence_numbers:FALSE",
        "-o",
        "ip.check_checksum:TRUE",
        "-o",
        "tcp.check_checksum:TRUE",
        "-o",
        "udp.check_checksum:TRUE",
        *args,
    ]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    # tshark warns when run as root; anything else on stderr is a reading problem.
    noise = [ln for ln in p.stderr.splitlines() if ln.strip() and "could be dangerous" not in ln]
    assert noise == [], p.stderr
    return [line for line in p.stdout.splitlines() if line.strip()]


def test_tshark_reads_valid_packets(capture):
    """Every packet decodes without an error-level expert note, every checksum verifies
    (snaplen 65535: the zero payload is in the file) and (source, IP ID) never repeats."""
    r, out = capture
    for f in r.pcap:
        rows = _tshark(
            out / f"{f['name']}.pcap",
            "-T",
            "fields",
            "-E",
            "occurrence=f",
            "-e",
            "ip.src",
            "-e",
            "ip.id",
            "-e",
            "ip.checksum.status",
            "-e",
            "tcp.checksum.status",
            "-e",
            "udp.checksum.status",
            "-e",
            "_ws.malformed",
            "-e",
            "_ws.expert.severity",
        )
        assert len(rows) == f["counts"]["packets"] > 0, f["name"]
        seen = set()
        for row in rows:
            src, ip_id, ip_ok, tcp_ok, udp_ok, malformed, severity = row.split("\t")
            assert ip_ok == "1" and (tcp_ok == "1" or udp_ok == "1"), (f["name"], row)
            assert malformed == "", row
            assert severity == "" or int(severity, 0) < 0x00800000, row  # below PI_ERROR
            assert (src, ip_id) not in seen, row
            seen.add((src, ip_id))


def test_tshark_retransmissions_and_sack_blocks_match(capture):
    r, out = capture
    flow = r.flows.row(0, named=True)
    counts = next(f["counts"] for f in r.pcap if f["name"] == "s0-left")
    path = out / "s0-left.pcap"
    rexmit = _tshark(
        path,
        "-Y",
        "tcp.analysis.retransmission || tcp.analysis.fast_retransmission || tcp.analysis.spurious_retransmission",
        "-T",
        "fields",
        "-e",
        "frame.number",
    )
    assert len(rexmit) == flow["retransmits"] == counts["tcp_retransmissions"]

    rows = _tshark(
        path,
        "-Y",
        "tcp.options.sack_le",
        "-T",
        "fields",
        "-E",
        "occurrence=a",
        "-E",
        "aggregator=,",
        "-e",
        "tcp.options.sack_le",
        "-e",
        "tcp.options.sack_re",
    )
    blocks = 0
    covered = 0
    for row in rows:
        le, re_ = row.split("\t")
        for a, b in zip(le.split(","), re_.split(",")):
            blocks += 1
            covered += int(b) - int(a)
    assert len(rows) == counts["acks_with_sack"] > 0
    assert blocks == counts["sack_blocks"]
    assert covered == counts["sack_bytes"]
    assert counts["sack_blocks_cut"] == 0


def test_ecn_bits_are_decoded(tmp_path):
    text = LOSSY_SACK.replace('bytes = "2MB"', 'bytes = "300KB"\ntcp = { ecn = true }').replace(
        "[[udp]]\nrate = \"300kbps\"\npacket_size = 500\nstop = \"2s\"\n", ""
    ).replace('"s1-left/forward"', '"s0-left/forward"')
    text = text.replace('pcap = ["s0-left", "left-right", "s0-left/forward"]', 'pcap = ["s0-left"]')
    r = tcplab.run(Scenario.from_toml(text))
    out = write_results(r, tmp_path / "ecn", report=False)
    ect = _tshark(out / "s0-left.pcap", "-Y", "ip.dsfield.ecn == 2", "-T", "fields", "-e", "frame.number")
    # Originals carry ECT(0); retransmissions do not (RFC 3168 §6.1.5).
    flow = r.flows.row(0, named=True)
    assert flow["retransmits"] > 0
    assert len(ect) == flow["segments_sent"] - flow["retransmits"]


def test_tcptrace_counts_the_same_retransmissions(capture):
    r, out = capture
    flow = r.flows.row(0, named=True)
    p = subprocess.run(
        [tool("tcptrace"), "-l", "-n", str(out / "s0-left.pcap")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 0, p.stderr
    rexmt = [int(m) for m in re.findall(r"rexmt data pkts:\s+(\d+)", p.stdout)]
    assert rexmt, p.stdout
    # One connection; the a2b direction carries the data, b2a only ACKs.
    assert sum(rexmt) == flow["retransmits"], p.stdout
    sent = [int(m) for m in re.findall(r"actual data pkts:\s+(\d+)", p.stdout)]
    assert max(sent) == flow["segments_sent"]


def test_bad_selectors_name_the_field():
    with pytest.raises(ScenarioError, match=r"trace\.pcap\[1\]: 'left-rigth' is not a link"):
        Scenario.from_toml(LOSSY_SACK.replace('"left-right",', '"left-rigth",'))
    with pytest.raises(ScenarioError, match=r"trace\.pcap\[0\]: 's0-left/up' has an unknown direction"):
        Scenario.from_toml(LOSSY_SACK.replace('"s0-left",', '"s0-left/up",'))
    with pytest.raises(ScenarioError, match=r"trace\.pcap_snaplen: 0 must be within \[1, 65535\]"):
        Scenario.from_toml(LOSSY_SACK.replace("pcap_snaplen = 65535", "pcap_snaplen = 0"))
    s = Scenario.from_toml(LOSSY_SACK.replace('pcap = ["s0-left", "left-right", "s1-left/forward"]', 'pcap = "all"'))
    assert s.canonical()["trace"]["pcap"] == ["all"]
