"""The two ends of a kernel TCP bulk transfer, run inside a testbed's namespaces.

``python linux_endpoint.py recv --port P --out FILE`` (namespace B) accepts one
connection, reads until the sender closes and checks every byte against the pattern;
``... send --dst ADDR --port P --cc NAME [--bytes N] [--duration-ns D] [--until-ns T] --out FILE``
(namespace A) connects with congestion control NAME (``TCP_CONGESTION``), writes the pattern
until N bytes are written, D ns have passed since the connection or the clock reaches T, and
samples ``TCP_INFO`` every ``--interval-ns``. With ``--at-ns`` the sender connects at that time;
with ``--ready-file`` not before the receiver (given the same file) has created it, its socket
listening; ``--sport`` binds the sender's port. Both write JSON to ``--out`` (the sender's samples as raw
``tcp_info`` bytes, hex, parsed by `tcplab.live.linux_tcpinfo`) and die with their parent
(PR_SET_PDEATHSIG). `tcplab.live.linux` runs them as a script (not ``-m``), so that
starting them does not import tcplab's package (the simulator, polars: over a second).

The pattern: the stream is a sequence of 64-bit big-endian words, word k holding k, so a lost,
duplicated or reordered byte changes what every later offset holds. Times are
``CLOCK_MONOTONIC`` ns (``time.monotonic_ns``), the emulator's clock.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import select
import signal
import socket
import sys
import time
from pathlib import Path

import numpy as np

if __package__:
    from tcplab.live import linux_tcpinfo
else:  # run as a script: its directory is on sys.path
    import linux_tcpinfo  # type: ignore[no-redef, import-not-found]

TCP_CONGESTION = 13
TCP_WINDOW_CLAMP = 10
# TCP_REPAIR lets a privileged process read a socket's next send sequence number: the
# sender's initial sequence number, to name dropped segments by stream offset.
TCP_REPAIR, TCP_REPAIR_QUEUE, TCP_QUEUE_SEQ, TCP_SEND_QUEUE = 19, 20, 21, 2
SO_COOKIE = 57  # asm-generic/socket.h
CHUNK = 1 << 18  # bytes per send (a multiple of 8)
#: How long past its start a sender waits for its receiver to listen.
READY_WAIT_NS = 10_000_000_000


def _die_with_parent() -> None:
    """SIGKILL when the owner dies (PR_SET_PDEATHSIG); an owner that died while this
    process started (the signal would never come: the parent is already someone else) ends
    it now. The owner's pid: $TCPLAB_OWNER_PID (tcplab.live.netns.OWNER_ENV)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    owner = os.environ.pop("TCPLAB_OWNER_PID", "")  # this process's parent: not passed on
    if owner.isdigit() and os.getppid() != int(owner):
        os._exit(1)


def _realtime(on: bool) -> str:
    """SCHED_FIFO at priority 10 when `on` (as tcplab's own endpoints and the emulator ask with
    ``--realtime``): ``SCHED_FIFO``, ``refused`` or ``off``. A receiver that reads late makes
    the kernel acknowledge late and in stretches (its window cannot open until the data is
    read), which is the receiving application, not the TCP under test."""
    if not on:
        return "off"
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
    except (OSError, AttributeError):
        return "refused"
    return "SCHED_FIFO"


def pattern(offset: int, n: int) -> bytes:
    """Bytes [offset, offset + n) of the stream."""
    w0 = offset // 8
    w1 = (offset + n + 7) // 8
    words = np.arange(w0, w1, dtype=np.uint64).astype(">u8").tobytes()
    skip = offset - 8 * w0
    return words[skip:skip + n]


def _isn(s: socket.socket) -> int | None:
    """The sequence number of the first data byte (ISN + 1) of a connected socket with nothing
    sent yet, read in repair mode; None where repair mode is refused."""
    try:
        s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, 1)
    except OSError:
        return None
    try:
        s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR_QUEUE, TCP_SEND_QUEUE)
        return s.getsockopt(socket.IPPROTO_TCP, TCP_QUEUE_SEQ) & 0xFFFFFFFF
    except OSError:
        return None
    finally:
        s.setsockopt(socket.IPPROTO_TCP, TCP_REPAIR, -1)  # off, without a window probe


def _cookie(s: socket.socket) -> int | None:
    """The socket's cookie (SO_COOKIE), as the kernel's tcp_probe records name it; None where
    the kernel has none."""
    try:
        return int.from_bytes(s.getsockopt(socket.SOL_SOCKET, SO_COOKIE, 8), sys.byteorder)
    except OSError:
        return None


def _sleep_until(t_ns: int) -> None:
    """Sleeps until CLOCK_MONOTONIC reaches `t_ns` (the last 2 ms spinning)."""
    while (left := t_ns - time.monotonic_ns()) > 0:
        if left > 2_000_000:
            time.sleep((left - 2_000_000) * 1e-9)


def _wait_for(ready: Path, start_ns: int) -> bool:
    """Waits for the receiver's `ready` file (its socket listens); False when it has not
    appeared `READY_WAIT_NS` after `start_ns`."""
    while not ready.exists():
        if time.monotonic_ns() > start_ns + READY_WAIT_NS:
            return False
        time.sleep(0.001)
    return True


def send(a: argparse.Namespace) -> int:
    scheduling = _realtime(a.realtime)
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.setsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, a.cc.encode())
    except OSError as e:
        print(f"congestion control {a.cc!r}: refused by the kernel ({e.strerror})", file=sys.stderr)
        return 2
    if a.mss:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    if a.sport:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", a.sport))
    if a.ready_file and not _wait_for(Path(a.ready_file), a.at_ns or time.monotonic_ns()):
        print(f"port {a.port}: the receiver was not listening {READY_WAIT_NS / 1e9:.0f} s after the "
              "flow's start", file=sys.stderr)
        return 1
    if a.at_ns:
        _sleep_until(a.at_ns)
    t_connect = time.monotonic_ns()
    s.connect((a.dst, a.port))
    t_start = time.monotonic_ns()
    isn = _isn(s)
    cookie = _cookie(s)
    cc = s.getsockopt(socket.IPPROTO_TCP, TCP_CONGESTION, 16).rstrip(b"\0").decode()
    s.setblocking(False)
    limit = a.bytes if a.bytes is not None else None
    ends = [t for t in (t_start + a.duration_ns if a.duration_ns is not None else None, a.until_ns or None)
            if t is not None]
    deadline = min(ends) if ends else None
    times: list[int] = []
    infos: list[str] = []

    def sample() -> dict[str, int]:
        raw = linux_tcpinfo.read_raw(s)
        times.append(time.monotonic_ns())
        infos.append(raw.hex())
        return linux_tcpinfo.parse(raw)

    sample()
    written = 0
    buf = b""
    next_sample = t_start + a.interval_ns
    while True:
        now = time.monotonic_ns()
        if now >= next_sample:
            sample()
            next_sample += a.interval_ns * max(1, (now - next_sample) // a.interval_ns + 1)
        done = (limit is not None and written >= limit) or (deadline is not None and now >= deadline)
        if done:
            break
        if not buf:
            n = CHUNK if limit is None else min(CHUNK, limit - written)
            buf = pattern(written, n)
        wait = max(0, next_sample - now) * 1e-9
        if deadline is not None:
            wait = min(wait, max(0, deadline - now) * 1e-9)
        _, w, _ = select.select([], [s], [], wait)
        if w:
            try:
                k = s.send(buf)
            except BlockingIOError:
                k = 0
            written += k
            buf = buf[k:]
    s.shutdown(socket.SHUT_WR)
    # Wait until every byte (and the FIN) is acknowledged, sampling on.
    t_end = None
    give_up = time.monotonic_ns() + a.linger_ns
    while time.monotonic_ns() < give_up:
        info = linux_tcpinfo.parse(linux_tcpinfo.read_raw(s))
        if info["unacked"] == 0 and info.get("notsent_bytes", 0) == 0:
            t_end = time.monotonic_ns()
            break
        if time.monotonic_ns() >= next_sample:
            sample()
            next_sample += a.interval_ns
        time.sleep(0.0002)
    sample()
    sport = s.getsockname()[1]
    s.close()
    out = {"cc": cc, "isn1": isn, "cookie": cookie, "t_connect_ns": t_connect, "t_start_ns": t_start,
           "t_end_ns": t_end, "bytes_written": written, "sport": sport,
           "sample_ns": times, "tcp_info": infos, "scheduling": scheduling}
    Path(a.out).write_text(json.dumps(out))
    return 0


#: ``tcpi_state`` of a socket whose connection is over (TCP_CLOSE).
_TCP_CLOSE = 7


def _close_and_wait(c: socket.socket, wait_s: float) -> bool:
    """After the peer's FIN: sends ours (``shutdown``) and waits at most `wait_s` for its
    acknowledgment (the socket reaches TCP_CLOSE), so that the ``TCP_INFO`` read next counts
    every packet the peer sent before it and every packet this end sent (the counts a live
    run's conservation check compares with the sender's). True when it did."""
    try:
        c.shutdown(socket.SHUT_WR)
    except OSError:
        return False
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if linux_tcpinfo.parse(linux_tcpinfo.read_raw(c)).get("state") == _TCP_CLOSE:
            return True
        time.sleep(0.002)
    return False


def recv(a: argparse.Namespace) -> int:
    scheduling = _realtime(a.realtime)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if a.window_clamp:
        ls.setsockopt(socket.IPPROTO_TCP, TCP_WINDOW_CLAMP, a.window_clamp)
    if a.mss:
        ls.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, a.mss)
    ls.bind(("0.0.0.0", a.port))
    ls.listen(1)
    if a.ready_file:
        Path(a.ready_file).touch()
    print("ready", flush=True)
    ls.settimeout(a.idle)
    try:
        c, peer = ls.accept()
    except TimeoutError:
        Path(a.out).write_text(json.dumps({"error": "no connection"}))
        return 1
    c.settimeout(a.idle)
    got = 0
    bad: int | None = None
    t_first = t_last = None
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    error = None
    while True:
        try:
            n = c.recv_into(buf)
        except (TimeoutError, OSError) as e:
            error = f"receive failed: {e}"
            break
        if n == 0:
            break
        t_last = time.monotonic_ns()
        t_first = t_first or t_last
        if bad is None and view[:n] != pattern(got, n):
            want = pattern(got, n)
            bad = got + next(i for i in range(n) if buf[i] != want[i])
        got += n
    closed = _close_and_wait(c, a.close_wait) if error is None else False
    t_closed = time.monotonic_ns()
    info = linux_tcpinfo.read_raw(c).hex()
    c.close()
    Path(a.out).write_text(json.dumps({
        "bytes": got, "first_bad_offset": bad, "t_first_ns": t_first, "t_last_ns": t_last,
        "peer_port": peer[1], "error": error, "closed": closed, "t_closed_ns": t_closed, "tcp_info": info,
        "scheduling": scheduling}))
    return 0


def main(argv: list[str] | None = None) -> None:
    _die_with_parent()
    p = argparse.ArgumentParser(prog="linux_endpoint.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("send")
    ps.add_argument("--dst", required=True)
    ps.add_argument("--port", type=int, required=True)
    ps.add_argument("--cc", required=True)
    ps.add_argument("--bytes", type=int)
    ps.add_argument("--duration-ns", type=int)
    ps.add_argument("--interval-ns", type=int, default=10_000_000)
    ps.add_argument("--linger-ns", type=int, default=20_000_000_000)
    ps.add_argument("--mss", type=int, default=0)
    ps.add_argument("--sport", type=int, default=0)
    ps.add_argument("--at-ns", type=int, default=0)
    ps.add_argument("--until-ns", type=int, default=0)
    ps.add_argument("--ready-file")
    ps.add_argument("--out", required=True)
    pr = sub.add_parser("recv")
    pr.add_argument("--port", type=int, required=True)
    pr.add_argument("--out", required=True)
    pr.add_argument("--idle", type=float, default=30.0)
    pr.add_argument("--window-clamp", type=int, default=0)
    pr.add_argument("--mss", type=int, default=0)
    pr.add_argument("--ready-file")
    pr.add_argument("--close-wait", type=float, default=5.0,
                    help="seconds to wait for the acknowledgment of our FIN before the last TCP_INFO")
    for sp in (ps, pr):
        sp.add_argument("--realtime", action="store_true", help="ask SCHED_FIFO (priority 10)")
    a = p.parse_args(argv)
    sys.exit(send(a) if a.cmd == "send" else recv(a))


if __name__ == "__main__":
    main()
