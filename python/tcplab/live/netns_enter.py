"""Moving a thread into a network namespace (``setns``), for ``tcplab daemon --netns``.

A daemon of ``tcplab testbed`` keeps its worker's connections in the namespace it was
started in (the machine's: the scheduler and the other workers are on its loopback) and
runs its probes on threads that entered the host's namespace, so that every socket they
open and every process they start (the probes' endpoints) is the host's. ``setns`` moves
only the calling thread; the threads and child processes it starts later inherit it.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from tcplab.live.errors import LiveError

__all__ = ["check_netns", "enter_netns"]

CLONE_NEWNET = 0x40000000


def enter_netns(name: str) -> None:
    """Enters network namespace `name`: an ``ip netns`` name (``/run/netns/NAME``) or the
    path of a namespace file (``/proc/PID/ns/net``). LiveError (one line) when it cannot."""
    path = Path(name) if "/" in name else Path("/run/netns") / name
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as e:
        raise LiveError(f"netns = {name!r}: {e.strerror}") from None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.setns(fd, CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise LiveError(f"netns = {name!r}: setns: {os.strerror(err)}")
    finally:
        os.close(fd)


def check_netns(name: str) -> None:
    """LiveError (one line) unless `name` is a network namespace this process can open."""
    path = Path(name) if "/" in name else Path("/run/netns") / name
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_CLOEXEC))
    except OSError as e:
        raise LiveError(f"netns = {name!r}: {e.strerror}") from None
