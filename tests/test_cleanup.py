"""`tcplab cleanup`: what a killed live run or testbed left behind (its named network
namespaces and the processes in them) is removed, and nothing else. Needs root and `ip`;
skips saying which is missing."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest
from typer.testing import CliRunner

from tcplab.cli import app

runner = CliRunner()


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True)


def _namespaces() -> set[str]:
    return {line.split()[0] for line in _ip("netns", "list").stdout.splitlines() if line.strip()}


def test_cleanup_removes_a_dead_runs_namespaces_and_their_processes_only() -> None:
    if os.geteuid() != 0:
        pytest.skip("tcplab cleanup removes named namespaces, which only root makes")
    if shutil.which("ip") is None:
        pytest.skip("needs the 'ip' command (iproute2)")
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has any more: the owner of a killed run
    stale, alive = f"tcplab-{gone.pid}-c1ea-h0", f"tcplab-{os.getpid()}-c1ea-h0"
    for ns in (stale, alive):
        r = _ip("netns", "add", ns)
        assert r.returncode == 0, r.stderr
    daemon = subprocess.Popen(["ip", "netns", "exec", stale, "sleep", "300"])
    try:
        deadline = time.monotonic() + 10
        while not _ip("netns", "pids", stale).stdout.split() and time.monotonic() < deadline:
            time.sleep(0.05)
        r = runner.invoke(app, ["cleanup"])
        assert r.exit_code == 0, r.output
        assert f"removed namespace {stale}" in r.stdout
        names = _namespaces()
        assert stale not in names and alive in names  # a live owner's namespace stays
        assert daemon.wait(timeout=10) != 0  # killed with its namespace
        r = runner.invoke(app, ["cleanup"])
        assert r.exit_code == 0 and f"removed namespace {stale}" not in r.stdout
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        for ns in (stale, alive):
            _ip("netns", "del", ns)
