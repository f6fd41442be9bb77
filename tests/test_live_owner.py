"""A live process dies with the process that started it (PR_SET_PDEATHSIG), including when
that owner dies while it is still starting: the kernel's signal would then never come (the
process has been re-parented before it asked for it), so each endpoint and the emulator
compare their parent with the owner the starter names ($TCPLAB_OWNER_PID,
`tcplab.live.processes.owned_env`) and exit at once when they differ. A Python endpoint
takes a few hundred ms to start on a loaded machine: a killed run once left one running
(issue 28). Checked here by naming an owner that is not the parent; the endpoints must
then refuse to start, and start as usual under their real parent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tcplab.live.processes import OWNER_ENV, owned_env
from tcplab.live.endpoints import flow_binary

ENDPOINT = Path(__file__).resolve().parents[1] / "python" / "tcplab" / "live" / "linux_endpoint.py"


def _not_my_pid() -> str:
    """A pid that is not this process's (so not the parent of what it starts)."""
    return str(os.getppid())


def test_an_endpoint_whose_owner_is_gone_does_not_start(tmp_path: Path) -> None:
    env = {**os.environ, OWNER_ENV: _not_my_pid()}
    argv = [sys.executable, str(ENDPOINT), "recv", "--port", "0", "--out", str(tmp_path / "r.json"),
            "--ready-file", str(tmp_path / "ready"), "--idle", "0.2"]
    r = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and not (tmp_path / "r.json").exists(), r.stderr
    # under its real owner it runs (here: idles out after 0.2 s without a sender)
    r = subprocess.run(argv, env=owned_env(), capture_output=True, text=True, timeout=60)
    assert r.returncode != 1 or "owner" not in r.stderr, r.stderr


def test_a_live_binary_whose_owner_is_gone_does_not_start(tmp_path: Path) -> None:
    exe = flow_binary()
    if not exe.exists():
        pytest.skip(f"{exe} is not built (cargo build --release -p tcplab-live)")
    argv = [str(exe), "send", "--config", str(tmp_path / "missing.json"), "--out", str(tmp_path)]
    r = subprocess.run(argv, env={**os.environ, OWNER_ENV: _not_my_pid()}, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and r.stderr.strip() == f"the owning process {_not_my_pid()} is gone: not starting"
    # under its real owner it gets as far as its config
    r = subprocess.run(argv, env=owned_env(), capture_output=True, text=True, timeout=60)
    assert "owning process" not in r.stderr and "missing.json" in r.stderr, r.stderr
