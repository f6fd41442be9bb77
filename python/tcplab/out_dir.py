"""Output directories: checked before any simulation, built atomically, removed on failure
or interrupt without leaving anything behind.

- :func:`check_out_dir`: a results directory to be created (absent, or an empty directory)
  at a place where it can be created: the nearest existing ancestor is a directory this
  process can create entries in, every missing name fits the file system, the path is not
  a dangling symbolic link. Called by the CLI before it simulates (``--out``, rc 2).
- :func:`check_store_dir`: the same for a directory that is reused (a sweep's store).
- :func:`building`: a hidden sibling ``.NAME.tmp-PID-RANDOM`` renamed to ``out`` when
  complete; on any error (KeyboardInterrupt included) it is removed by :func:`remove_tree`,
  which defers SIGINT/SIGTERM/SIGHUP while it removes, so a second Ctrl-C cannot leave it
  half removed. SIGTERM while it builds is a Ctrl-C (KeyboardInterrupt); the siblings of
  ``out`` that processes no longer running left (SIGKILL) are removed first.
"""

from __future__ import annotations

import errno
import glob
import os
import secrets
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["OutDirError", "check_out_dir", "check_store_dir", "building", "remove_tree", "temporary_name"]

#: Test hook: when set to a directory, writing pauses at each named stage (``writing``,
#: ``cleanup``) after touching ``<dir>/<stage>`` until ``<dir>/<stage>.go`` exists (at
#: most 60 s), so a test can send signals at a controlled moment.
PAUSE_ENV = "TCPLAB_TEST_PAUSE_DIR"

#: The signals deferred while a partial directory is removed.
_DEFERRED = tuple(s for s in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, s))


class OutDirError(ValueError):
    """The output directory cannot be used."""


def _name_max(directory: Path) -> int:
    try:
        return os.pathconf(directory, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # pragma: no cover - not POSIX
        return 255


def _check_creatable(p: Path, probe: bool = True) -> None:
    """Fails unless the missing part of ``p`` can be created (when ``p`` exists: unless a
    sibling can be created beside it and renamed onto it)."""
    if p.is_symlink():
        target = os.readlink(p)
        if not p.exists():
            raise OutDirError(f"{p}: is a dangling symbolic link (to {target})")
        raise OutDirError(f"{p}: is a symbolic link (give its target, {target}, instead)")
    missing: list[str] = []
    anchor = p.parent if p.exists() else p
    while not os.path.lexists(anchor):
        missing.append(anchor.name)
        anchor = anchor.parent
    if not anchor.is_dir():
        what = "a dangling symbolic link" if anchor.is_symlink() and not anchor.exists() else "not a directory"
        raise OutDirError(f"{p}: {anchor} is {what}")
    limit = _name_max(anchor)
    for name in missing:
        if len(os.fsencode(name)) > limit:
            raise OutDirError(f"{p}: the name {name[:40]}... is longer than {limit} bytes")
    if probe:
        _probe(anchor, p)


def _probe(anchor: Path, p: Path) -> None:
    """Creates (and removes) a directory in ``anchor``: the only check that holds for root,
    read-only mounts and /proc alike."""
    probe = anchor / f".tcplab-probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        probe.mkdir()
    except OSError as e:
        reason = e.strerror or errno.errorcode.get(e.errno or 0, str(e))
        raise OutDirError(f"{p}: cannot create a directory in {anchor} ({reason})") from None
    try:
        probe.rmdir()
    except OSError:  # pragma: no cover - just created
        pass


def check_out_dir(out: str | Path, probe: bool = True) -> Path:
    """Fails (:class:`OutDirError`) unless ``out`` is absent or an empty directory, and can
    be created where it is (with ``probe=False`` the caller's own ``mkdir`` is the test of
    the last point: no probe directory is made, so none can be left by a killed process)."""
    p = Path(out)
    with _as_out_dir_error(p):
        if p.exists():
            if not p.is_dir():
                raise OutDirError(f"{p}: exists and is not a directory")
            if any(p.iterdir()):
                raise OutDirError(f"{p}: exists and is not empty (choose another --out)")
        _check_creatable(p, probe)
    return p


def check_store_dir(out: str | Path) -> Path:
    """Fails (:class:`OutDirError`) unless ``out`` is a directory (possibly holding earlier
    results, which are reused) this process can write in, or can be created."""
    p = Path(out)
    with _as_out_dir_error(p):
        if p.exists():
            if not p.is_dir():
                raise OutDirError(f"{p}: exists and is not a directory")
            _probe(p, p)
        else:
            _check_creatable(p)
    return p


@contextmanager
def _as_out_dir_error(p: Path) -> Iterator[None]:
    """What the file system answers while ``p`` is checked (a name too long, a loop of
    symbolic links, no permission to look) as one :class:`OutDirError` line."""
    try:
        yield
    except OSError as e:
        reason = e.strerror or str(e)
        raise OutDirError(f"{p}: {reason}") from None


def temporary_name(out: Path) -> Path:
    """The hidden sibling ``out`` is built in (the name is shortened so that it fits where
    ``out``'s does)."""
    return out.parent / f".{out.name[:64]}.tmp-{os.getpid()}-{secrets.token_hex(4)}"


def pause_for_tests(stage: str) -> None:
    """The :data:`PAUSE_ENV` hook (no-op unless set)."""
    where = os.environ.get(PAUSE_ENV)
    if not where:
        return
    Path(where, stage).touch()
    deadline = time.monotonic() + 60
    while not Path(where, f"{stage}.go").exists() and time.monotonic() < deadline:
        time.sleep(0.01)


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP are held (blocked, not lost) inside; delivered on exit."""
    if not hasattr(signal, "pthread_sigmask"):  # pragma: no cover - not POSIX
        yield
        return
    sigs = {getattr(signal, s) for s in _DEFERRED}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def remove_tree(path: Path) -> None:
    """Removes ``path`` entirely, whatever signals arrive meanwhile: they are deferred while
    it removes; a KeyboardInterrupt they cause once delivered is re-raised after the
    removal is complete."""
    interrupted: KeyboardInterrupt | None = None
    while True:
        try:
            with _signals_deferred():
                pause_for_tests("cleanup")
                shutil.rmtree(path, ignore_errors=True)
            break
        except KeyboardInterrupt as e:  # delivered on leaving the block: make sure, then re-raise
            interrupted = e
    if interrupted is not None:
        raise interrupted


def _pid_running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's
    return True


def remove_stale(out: Path) -> list[Path]:
    """Removes the hidden siblings ``.NAME.tmp-PID-*`` of ``out`` whose process is no longer
    running (left by a SIGKILL); returns them."""
    gone: list[Path] = []
    prefix = f".{out.name[:64]}.tmp-"
    try:
        siblings = list(out.parent.glob(f"{glob.escape(prefix)}*"))
    except OSError:
        return gone
    for p in siblings:
        pid = p.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not _pid_running(int(pid)) and p.is_dir() and not p.is_symlink():
            remove_tree(p)
            gone.append(p)
    return gone


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """Inside, SIGTERM raises KeyboardInterrupt as SIGINT does (main thread only)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


@contextmanager
def building(out: Path) -> Iterator[Path]:
    """Yields a fresh hidden sibling of ``out`` to fill; renames it to ``out`` when the block
    ends normally (``out`` must still be absent or empty), removes it on any exception
    (SIGTERM included: it interrupts as Ctrl-C does)."""
    check_out_dir(out, probe=False)
    remove_stale(out)
    with _sigterm_interrupts():
        with _building(out) as tmp:
            yield tmp


@contextmanager
def _building(out: Path) -> Iterator[Path]:
    tmp = temporary_name(out)
    with _as_out_dir_error(out):
        out.parent.mkdir(parents=True, exist_ok=True)
    try:
        tmp.mkdir()  # the probe: a killed process leaves a ".tmp-" name, which sweeps clean
    except OSError as e:
        reason = e.strerror or errno.errorcode.get(e.errno or 0, str(e))
        raise OutDirError(f"{out}: cannot create a directory in {out.parent} ({reason})") from None
    try:
        yield tmp
        check_out_dir(out, probe=False)
        if out.exists():
            out.rmdir()  # empty (checked): rename needs the name free
        os.rename(tmp, out)
    except BaseException:
        remove_tree(tmp)
        raise
