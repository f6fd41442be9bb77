"""Unprivileged live runs: the run's network namespaces inside a user namespace.

Where the kernel allows it, a process that is not root may make a user namespace in which
it is root, and inside it network namespaces that it may configure, enter and open TUN
devices in (the capabilities are over namespaces owned by that user namespace only; nothing
outside is reachable). `UserNamespace` starts one holder process per run
(``userns_holder.py``): it makes the user namespace (the caller's uid and gid mapped to 0)
with a network namespace of its own, where the emulator runs, and forks one child per host,
each holding a new network namespace. A namespace is addressed by its holder's pid
(``/proc/PID/ns/net``, the path the emulator enters); a process runs in it with
``nsenter --target PID --user --net --preserve-credentials``. The holders die with the
owning process (``PR_SET_PDEATHSIG``, the children with the holder), and a namespace goes
with the last process in it, so nothing of a run outlives it: there is nothing for a later
run to clean up.

`support()` says in one line why such runs cannot be made here (or None).
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

from tcplab.live.errors import LiveError

HOLDER = Path(__file__).with_name("userns_holder.py")
_SYSCTLS = (
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "kernel.unprivileged_userns_clone = 0"),
    ("/proc/sys/user/max_user_namespaces", "0", "user.max_user_namespaces = 0"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
     "kernel.apparmor_restrict_unprivileged_userns = 1"),
)


def _sysctl_refusal() -> str | None:
    for path, bad, what in _SYSCTLS:
        try:
            if Path(path).read_text().strip() == bad:
                return what
        except OSError:
            pass
    return None


@cache
def support() -> str | None:
    """None when this process can make a user namespace with network namespaces and TUN
    devices in it, else why not (one line; the caller says what it is for)."""
    if (why := _sysctl_refusal()) is not None:
        return f"user namespaces are disabled ({why})"
    for tool in ("nsenter", "ip"):
        if shutil.which(tool) is None:
            return f"the {tool!r} command is missing ({'util-linux' if tool == 'nsenter' else 'iproute2'})"
    if not os.access("/dev/net/tun", os.R_OK | os.W_OK):
        return "/dev/net/tun is missing or not readable and writable by this user"
    try:
        ns = UserNamespace()
        try:
            pid = ns.add_netns()
            r = subprocess.run([*ns.prefix(pid), "ip", "link", "set", "lo", "up"],
                               capture_output=True, text=True, timeout=10)
            if r.returncode != 0:
                return f"a network namespace in a user namespace cannot be configured: {_last(r.stderr)}"
        finally:
            ns.close()
    except LiveError as e:
        return f"no user namespace could be made: {e}"
    return None


def _last(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[-1] if lines else "no message"


class UserNamespace:
    """A user namespace held for a run (see the module's text); `close` ends it."""

    def __init__(self) -> None:
        self.holder = subprocess.Popen([sys.executable, "-I", str(HOLDER)], stdin=subprocess.PIPE,
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.netns: list[int] = []
        answer = self._answer()
        if answer != "ready":
            self.close()
            raise LiveError(answer.removeprefix("error "))

    def _answer(self) -> str:
        assert self.holder.stdout is not None
        ready, _, _ = select.select([self.holder.stdout], [], [], 10.0)
        line = self.holder.stdout.readline().strip() if ready else ""
        return line or "error the user namespace's holder did not answer"

    def add_netns(self) -> int:
        """A new network namespace in the user namespace: its holder's pid."""
        assert self.holder.stdin is not None
        try:
            self.holder.stdin.write("net\n")
            self.holder.stdin.flush()
        except BrokenPipeError:
            raise LiveError("the user namespace's holder died") from None
        answer = self._answer()
        if not answer.isdigit():
            raise LiveError(answer.removeprefix("error "))
        self.netns.append(int(answer))
        return int(answer)

    def prefix(self, pid: int | None = None) -> list[str]:
        """The argv prefix that runs a command as root of the user namespace in the network
        namespace held by `pid` (None: the holder's own, the emulator's)."""
        target = self.holder.pid if pid is None else pid
        return ["nsenter", "--target", str(target), "--user", "--net", "--preserve-credentials", "--"]

    @staticmethod
    def path(pid: int) -> str:
        """The namespace file of the network namespace held by `pid`."""
        return f"/proc/{pid}/ns/net"

    def close(self) -> None:
        """Ends the holder and its children (the namespaces go with their last process)."""
        try:
            self.holder.communicate(timeout=5)  # closes stdin: the holder's EOF
        except subprocess.TimeoutExpired:
            self.holder.kill()
            self.holder.communicate()
        self.netns = []
