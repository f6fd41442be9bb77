"""Child processes of live runs and of the campaign's probes: the few things every starter of
an endpoint needs, written once. An endpoint prints ``ready`` on stdout once its socket is
bound (:func:`wait_ready`); a process that fails says why on the last line of its stderr
(:func:`last_line`), which is read as it is reaped (:func:`kill`), before its pipes close.
An endpoint dies with the process that started it (:func:`owned_env`)."""

from __future__ import annotations

import os
import select
import subprocess
from typing import Any

#: The environment variable that names a live process's owner (this process): the endpoints
#: and the emulator set PR_SET_PDEATHSIG once they run, and exit at once if by then their
#: parent is no longer this owner (it died while they started: the signal would never come).
OWNER_ENV = "TCPLAB_OWNER_PID"


def owned_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """`env` (default: this process's) with :data:`OWNER_ENV` naming this process."""
    return {**(os.environ if env is None else env), OWNER_ENV: str(os.getpid())}


def last_line(text: str | None, default: str) -> str:
    """The last non-empty line of `text` (a process's stderr), else `default`."""
    lines = (text or "").strip().splitlines()
    return lines[-1] if lines else default


def kill(p: subprocess.Popen[Any]) -> str:
    """Kills `p` if it runs and reaps it; what it wrote to stderr (a pipe), or ""."""
    if p.poll() is None:
        p.kill()
    try:
        return p.communicate(timeout=5)[1] or ""
    except (subprocess.TimeoutExpired, ValueError, OSError):
        p.wait()
        return ""


def wait_ready(p: subprocess.Popen[str], what: str, error: type[Exception], timeout: float = 10.0) -> None:
    """Waits until `p` prints ``ready``; else kills it and raises `error` with its last line
    of stderr (or "`what` did not start")."""
    assert p.stdout is not None
    ready, _, _ = select.select([p.stdout], [], [], timeout)
    line = p.stdout.readline() if ready else ""
    if line.strip() != "ready":
        raise error(last_line(kill(p), f"{what} did not start"))
