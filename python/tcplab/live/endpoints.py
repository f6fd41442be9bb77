"""The endpoint programs of every live flow and campaign probe, and their command lines,
written once: tcplab's transport (``tcplab-flow``, Rust: crates/tcplab-live) and the kernel's
TCP (``linux_endpoint.py``). Who starts an endpoint only chooses where it runs: a namespace of
the testbed (`tcplab.live.stacks`: ``tcplab run --live``) or a campaign host's worker
(`tcplab.campaign.live_probe`); `tcplab.live.processes` supervises the processes."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tcplab.live.netns import emulator_binary

__all__ = ["LINUX_ENDPOINT", "checked_flow_binary", "flow_binary", "linux_recv", "linux_send", "tcplab_flow"]

#: The kernel-TCP endpoint, run as a script (it does not import tcplab: it starts fast).
LINUX_ENDPOINT = Path(__file__).with_name("linux_endpoint.py")


def flow_binary() -> Path:
    """`tcplab-flow`: $TCPLAB_FLOW, else next to the emulator binary."""
    if env := os.environ.get("TCPLAB_FLOW"):
        return Path(env)
    return emulator_binary().with_name("tcplab-flow")


def checked_flow_binary(error: type[Exception]) -> Path:
    """:func:`flow_binary`, or `error` (one line) saying how to get it."""
    exe = flow_binary()
    if not exe.exists():
        raise error(f"tcplab-flow = {str(exe)!r}: not found (bash scripts/setup.sh, or set TCPLAB_FLOW)")
    return exe


def tcplab_flow(mode: str, config: dict[str, Any], out_dir: Path, fd: int | None = None) -> list[str]:
    """``tcplab-flow MODE`` (send, recv, tcp-send, tcp-recv) with `config` written to
    `out_dir`/config.json and its output in `out_dir` (created); `fd`: the raw device it
    speaks real TCP through (the tcp modes)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "config.json").write_text(json.dumps(config))
    argv = [str(flow_binary()), mode, "--config", str(out_dir / "config.json"), "--out", str(out_dir)]
    return argv + (["--fd", str(fd)] if fd is not None else [])


def _options(**opts: Any) -> list[str]:
    """``--name value`` for every option given (None, 0 and False: left to the default)."""
    argv: list[str] = []
    for name, v in opts.items():
        flag = "--" + name.replace("_", "-")
        if v is True:
            argv.append(flag)
        elif v is not None and v is not False and v != 0:
            argv += [flag, str(v)]
    return argv


def linux_recv(port: int, out: Path, *, idle: float, ready_file: Path | None = None, mss: int = 0,
               window_clamp: int = 0, realtime: bool = False) -> list[str]:
    """The kernel's TCP sink: accepts one connection on `port`, reads the stream (checked
    against the pattern) and writes its JSON to `out`; gives up after `idle` s without one."""
    return [sys.executable, str(LINUX_ENDPOINT), "recv", "--port", str(port), "--out", str(out),
            "--idle", str(idle), *_options(ready_file=ready_file, mss=mss, window_clamp=window_clamp,
                                           realtime=realtime)]


def linux_send(dst: str, port: int, cc: str, out: Path, *, at_ns: int = 0, ready_file: Path | None = None,
               interval_ns: int | None = None, bytes: int | None = None, duration_ns: int | None = None,
               until_ns: int | None = None, linger_ns: int | None = None, mss: int = 0, sport: int = 0,
               realtime: bool = False) -> list[str]:
    """The kernel's TCP source with congestion control `cc`: connects to `dst`:`port` at
    `at_ns` (CLOCK_MONOTONIC; 0: now), sends `bytes` (or for `duration_ns`, or until
    `until_ns`), samples TCP_INFO every `interval_ns` and writes its JSON to `out`."""
    return [sys.executable, str(LINUX_ENDPOINT), "send", "--dst", dst, "--port", str(port), "--cc", cc,
            "--out", str(out),
            *_options(at_ns=at_ns, ready_file=ready_file, interval_ns=interval_ns, bytes=bytes,
                      duration_ns=duration_ns, until_ns=until_ns, linger_ns=linger_ns, mss=mss, sport=sport,
                      realtime=realtime)]
