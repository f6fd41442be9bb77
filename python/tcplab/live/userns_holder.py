"""The holder of an unprivileged live run's namespaces (run by path, standard library only:
``python -I userns_holder.py``; `tcplab.live.userns` starts it).

It dies with the process that started it (``PR_SET_PDEATHSIG``), makes a new user
namespace in which the caller's uid and gid are root (``0 UID 1``, setgroups denied: what an
unprivileged process may map) together with a network namespace of its own (the emulator's),
prints ``ready``, then serves lines on stdin: ``net`` forks a child that makes a new network
namespace (owned by the user namespace), dies with the holder, and waits; the holder prints
its pid (``/proc/PID/ns/net`` is the namespace). An error is ``error WHAT: WHY``. At EOF of
stdin (the owner closed it or died) the holder kills its children and exits; the namespaces
go with the last process in them.
"""

import ctypes
import os
import signal
import sys

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
PR_SET_PDEATHSIG = 1

_libc = ctypes.CDLL(None, use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")


def _die_with_parent(parent: int) -> None:
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl")
    if os.getppid() != parent:  # the parent died before the prctl
        os._exit(1)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _net_child(w: int) -> None:
    try:
        _die_with_parent(os.getppid())
        _check(_libc.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
    except OSError as e:
        os.write(w, f"error {e.args[1]}".encode())
        os._exit(1)
    os.write(w, b"ok")
    os.close(w)
    while True:
        signal.pause()


def main() -> None:
    uid, gid = os.getuid(), os.getgid()
    try:
        _die_with_parent(os.getppid())
        _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNET), "unshare(CLONE_NEWUSER | CLONE_NEWNET)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"0 {uid} 1")
        _write("/proc/self/gid_map", f"0 {gid} 1")
    except OSError as e:
        print(f"error {e.args[1] if len(e.args) > 1 else e}", flush=True)
        sys.exit(1)
    print("ready", flush=True)
    children: list[int] = []
    for line in sys.stdin:
        if line.strip() != "net":
            print(f"error unknown request {line.strip()!r}", flush=True)
            continue
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(r)
            _net_child(w)
        os.close(w)
        answer = os.read(r, 200).decode()
        os.close(r)
        if answer == "ok":
            children.append(pid)
            print(pid, flush=True)
        else:
            print(answer or "error the namespace holder died", flush=True)
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


if __name__ == "__main__":
    main()
