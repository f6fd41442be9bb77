"""Signals while results are written and while a sweep runs: nothing is left behind, no
worker outlives the sweep's main process, and a resumed sweep equals an uninterrupted one.
The results writer pauses at named stages when TCPLAB_TEST_PAUSE_DIR is set
(tcplab.out_dir.pause_for_tests), so the signals arrive at a controlled moment."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

from tcplab.out_dir import PAUSE_ENV

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            raise AssertionError(f"exited (rc {proc.returncode}) before {path.name}: {proc.stderr.read()}")
        assert time.monotonic() < deadline, f"{path.name} never reached"
        time.sleep(0.01)


def _start(args: list[str], cwd: Path, pause: Path | None) -> subprocess.Popen:
    env = dict(os.environ)
    if pause is not None:
        pause.mkdir(exist_ok=True)
        env[PAUSE_ENV] = str(pause)
    return subprocess.Popen(
        [sys.executable, "-m", "tcplab", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_ctrl_c_twice_while_writing_leaves_nothing(tmp_path, small_file):
    pause = tmp_path / "pause"
    proc = _start(["run", str(small_file), "--out", "out", "--no-report", "-q"], tmp_path, pause)
    _wait_for(pause / "writing", proc)  # the first table is written, the rest not yet
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]
    proc.send_signal(signal.SIGINT)
    _wait_for(pause / "cleanup", proc)  # removing the partial directory ...
    proc.send_signal(signal.SIGINT)  # ... when the second Ctrl-C arrives
    (pause / "cleanup.go").touch()
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr.read()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pause", "small.toml"]


def _children(pid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has stopped computing (its reaper may be slow)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to find the workers")
def test_sigkill_of_a_sweep_kills_its_workers_and_resume_is_identical(tmp_path, small_file):
    sweep = tmp_path / "sw.toml"
    sweep.write_text(small_file.read_text() + '\n[sweep]\ngrid = { "flows.0.controller" = ["reno", "veno"] }\nseeds = 2\n')
    pause = tmp_path / "pause"
    proc = _start(["sweep", str(sweep), "--out", "killed", "--jobs", "2", "-q"], tmp_path, pause)
    _wait_for(pause / "writing", proc)  # a worker holds a half-written point
    workers = _children(proc.pid)
    assert workers, "no worker processes found"
    proc.kill()
    proc.wait(timeout=10)
    deadline = time.monotonic() + 5
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = [w for w in workers if _alive(w)]
    for w in survivors:  # do not leave them to the next test
        os.kill(w, signal.SIGKILL)
    assert not survivors, f"workers {survivors} outlived the sweep's main process"

    for out in ("killed", "whole"):  # resume, and an uninterrupted run
        r = subprocess.run(
            [sys.executable, "-m", "tcplab", "sweep", str(sweep), "--out", out, "--jobs", "2", "-q"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
    points = sorted(p.name for p in (tmp_path / "whole" / "points").iterdir())
    assert sorted(p.name for p in (tmp_path / "killed" / "points").iterdir()) == points
    for key in points:
        for table in ("flows", "series", "drops"):
            a = pl.read_parquet(tmp_path / "killed" / "points" / key / f"{table}.parquet")
            b = pl.read_parquet(tmp_path / "whole" / "points" / key / f"{table}.parquet")
            assert a.equals(b), (key, table)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc to see the process")
def test_the_watchdog_ends_a_worker_whose_parent_died(tmp_path):
    """The fallback where prctl is missing: a process running the watchdog exits once its
    parent is gone (here the parent is SIGKILLed; no PR_SET_PDEATHSIG is set)."""
    pid_file = tmp_path / "child.pid"
    child = (
        "import os, sys; from tcplab.sweep.backends import _watch_parent; "
        f"open({str(pid_file)!r}, 'w').write(str(os.getpid())); _watch_parent(os.getppid())"
    )
    parent = subprocess.Popen(
        [sys.executable, "-c", f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(60)"]
    )
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    pid = int(pid_file.read_text())
    assert _alive(pid)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        raise AssertionError("the watchdog did not end the orphan")


def test_sigterm_while_writing_leaves_nothing_and_stale_ones_are_removed(tmp_path, small_file):
    """SIGTERM is handled as Ctrl-C (the partial directory goes); a hidden
    directory a SIGKILLed run left is removed by the next run to the same place."""
    pause = tmp_path / "pause"
    proc = _start(["run", str(small_file), "--out", "out", "--no-report", "-q"], tmp_path, pause)
    _wait_for(pause / "writing", proc)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]
    proc.send_signal(signal.SIGTERM)
    (pause / "cleanup.go").touch()
    proc.wait(timeout=60)
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr.read()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pause", "small.toml"]

    pause2 = tmp_path / "pause2"
    proc = _start(["run", str(small_file), "--out", "out", "--no-report", "-q"], tmp_path, pause2)
    _wait_for(pause2 / "writing", proc)
    proc.kill()  # SIGKILL: nothing can clean up
    proc.wait(timeout=10)
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.tmp-")]
    assert left
    r = subprocess.run([sys.executable, "-m", "tcplab", "run", str(small_file), "--out", "out", "--no-report", "-q"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "pause", "pause2", "small.toml"]
