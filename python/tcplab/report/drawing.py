"""A page's figures drawn on every core while the page is built (:func:`parallel_drawing`).

Drawing a figure (matplotlib's Agg, then the palette and deflate of its PNG) is most of a
report's time, and it runs on one core. Inside ``with parallel_drawing() as drawing:``,
:func:`tcplab.report.html.png_data_uri` does not draw: it hands the figure over
(:meth:`Drawing.add`) and puts a placeholder where the image goes. While the page is being
built, a forked child draws the figures handed over so far (one child per other CPU at a
time); when the page is built (:meth:`Drawing.fill`), this process draws the figures left
from the last one back while new children take them from the first one on (see
:class:`Drawing` for the claims), and each PNG replaces its placeholder.

A child only draws and encodes (matplotlib, FreeType, PIL, zlib) into a memory file of its
own, then exits: it never calls polars, whose thread pool a forked process does not have,
and writes nothing else. Whoever draws it, an image is the same bytes (tested): a child runs
the same code on a copy of the same figure. A figure whose child failed, or that no child
took (the system refused a process or a memory file), is drawn by this process, as without
a session (raising what drawing raises). Every child is waited for
before the session ends; on an error or an interrupt the running ones are killed first.
Without ``os.fork`` and ``os.memfd_create`` (not Linux), or with one CPU, figures are drawn
at once in this process, as outside a session.

A figure handed over must not change afterwards: it may be drawn later.
"""

from __future__ import annotations

import contextlib
import contextvars
import fcntl
import gc
import mmap
import os
import re
import signal
import struct
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Drawing", "current", "drawn_page", "parallel_drawing"]

_SESSION: contextvars.ContextVar[Drawing | None] = contextvars.ContextVar("tcplab_drawing", default=None)

#: Before each image in a child's memory file: the figure's number and the image's length.
_RECORD = struct.Struct("<II")

#: Figures a session shares with its children (a byte each in a shared map whose pages exist
#: once touched); a page's figures past this many are drawn at once in its process.
MAX_SHARED_JOBS = 1 << 20


@dataclass
class _Job:
    fig: Any
    dpi: int
    compress_level: int
    png: str | None = None


class Drawing:
    """The figures of one page: drawn by up to ``children`` forked processes at a time and
    by this one (see the module's docstring).

    Who draws which figure is decided by claims: a byte per figure in a map shared with the
    children (0 free, 1 claimed), changed only under a lock (a POSIX record lock on a memory
    file: held by a process, released when it exits, even killed). Children claim from the
    first figure on (among those that existed when they were forked), this process from the
    last. A child writes its images to a memory file of its own, each after its figure's
    number and length; this process reads the file when the child has ended, and draws
    itself every figure whose image is not there whole."""

    def __init__(self, children: int) -> None:
        self.children = children
        self._jobs: list[_Job] = []
        self._running: dict[int, int] = {}  # pid -> its memory file
        self._claims = mmap.mmap(-1, MAX_SHARED_JOBS)  # anonymous: shared with forked children
        self._lock = os.memfd_create("tcplab-figure-claims")
        self._token = f"tcplab-figure-{os.urandom(6).hex()}-"
        self._pattern = re.compile(re.escape(self._token) + r"(\d+)\.")

    def add(self, fig: Any, *, dpi: int, compress_level: int) -> str:
        """Takes ``fig`` to draw and returns the placeholder of its base64 PNG."""
        i = len(self._jobs)
        self._jobs.append(_Job(fig, dpi, compress_level))
        if i >= MAX_SHARED_JOBS:
            self._draw_here(i)
        else:
            self._reap(block=False)
            if len(self._running) < self.children:
                self._fork()
        return f"{self._token}{i}."

    def fill(self, text: str) -> str:
        """Draws the figures left here and in children, waits for every child, and returns
        ``text`` with each placeholder replaced by its image."""
        self._reap(block=False)
        # children for the figures added since the last one started (the running ones end
        # soon: a core would idle while they finish their last figure)
        free = self._claims[: min(len(self._jobs), MAX_SHARED_JOBS)].count(0)
        for _ in range(min(self.children, free - 1)):
            self._fork()
        while (i := self._claim(last=True)) is not None:
            self._draw_here(i)
        while self._running:
            self._reap(block=True)
        for i, job in enumerate(self._jobs):
            if job.png is None:  # its child failed: draw it here (and raise what drawing raises)
                self._draw_here(i)
        return self._pattern.sub(lambda m: self._png(int(m.group(1))), text)

    def close(self) -> None:
        """Kills and waits for the children still running (an error or an interrupt left the
        page unfinished), and closes their memory files, the lock and the map."""
        for pid, fd in list(self._running.items()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(fd)
        self._running.clear()
        self._jobs.clear()
        os.close(self._lock)
        self._claims.close()

    # ---- internals ---------------------------------------------------------------------------

    def _png(self, i: int) -> str:
        png = self._jobs[i].png
        if png is None:  # every job is drawn before placeholders are replaced
            raise RuntimeError(f"figure {i} of the page was not drawn")
        return png

    def _draw_here(self, i: int) -> None:
        from tcplab.report.raster import png

        job = self._jobs[i]
        job.png = png(job.fig, dpi=job.dpi, compress_level=job.compress_level)
        job.fig = None  # drawn: the page keeps its image, not the figure

    def _claim(self, *, last: bool, known: int | None = None) -> int | None:
        """Claims a free figure among the first ``known`` (default all): the last one
        (``last``) or the first one; None when there is none."""
        n = min(len(self._jobs) if known is None else known, MAX_SHARED_JOBS)
        fcntl.lockf(self._lock, fcntl.LOCK_EX)
        try:
            for i in range(n - 1, -1, -1) if last else range(n):
                if self._claims[i] == 0:
                    self._claims[i] = 1
                    return i
            return None
        finally:
            fcntl.lockf(self._lock, fcntl.LOCK_UN)

    def _fork(self) -> None:
        """Starts a child drawing free figures among those that exist now; when the system
        refuses a process or a memory file (a limit reached), none: this process draws."""
        known = len(self._jobs)
        try:
            out = os.memfd_create("tcplab-figures")
        except OSError:
            return
        # An interrupt waits until the child is inside the try that always exits and this
        # process has recorded it (so that unwinding the page kills it).
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns of fork() in a process with threads (polars' pool): the
                # child only draws, using none of those threads' locks (the module's docstring).
                warnings.simplefilter("ignore", DeprecationWarning)
                pid = os.fork()
            if pid == 0:
                self._child(known, out)  # never returns
            self._running[pid] = out
        except OSError:
            os.close(out)
        except BaseException:
            os.close(out)
            raise
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def _child(self, known: int, out: int) -> None:
        """The forked child: draws the figures it claims into its memory file ``out`` and
        exits. SIGINT stays blocked: an interrupted parent kills its children. The cyclic
        garbage collector is off: objects this process had dropped but not yet collected
        (a client's sockets, a temporary directory) are not finalised a second time here."""
        code = 1
        try:
            gc.disable()
            from tcplab.report.raster import png

            while (i := self._claim(last=False, known=known)) is not None:
                job = self._jobs[i]
                data = png(job.fig, dpi=job.dpi, compress_level=job.compress_level).encode("ascii")
                view = memoryview(_RECORD.pack(i, len(data)) + data)
                while view:
                    view = view[os.write(out, view) :]
            code = 0
        finally:
            os._exit(code)

    def _reap(self, *, block: bool) -> None:
        """Takes the images of the children that have ended (with ``block``, waits for one
        first)."""
        for pid in list(self._running):
            done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            if not done:
                continue
            out = self._running.pop(pid)
            try:
                for i, png in _records(out):
                    self._jobs[i].png, self._jobs[i].fig = png, None
            finally:
                os.close(out)
            if block:
                return


def _records(fd: int) -> Iterator[tuple[int, str]]:
    """The whole records of a child's memory file: (figure, base64 PNG); a record cut short
    (the child died writing it) and what follows are left out."""
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    data = b"".join(chunks)
    at = 0
    while at + _RECORD.size <= len(data):
        i, n = _RECORD.unpack_from(data, at)
        at += _RECORD.size
        if at + n > len(data):
            return
        yield i, data[at : at + n].decode("ascii")
        at += n


def _children() -> int:
    """Children at a time: one per CPU this process may use beyond its own, none where fork or
    memory files are missing."""
    if not (hasattr(os, "fork") and hasattr(os, "memfd_create") and hasattr(os, "sched_getaffinity")):
        return 0
    return len(os.sched_getaffinity(0)) - 1


def current() -> Drawing | None:
    """The session of the page being built, if any."""
    return _SESSION.get()


@contextlib.contextmanager
def parallel_drawing(children: int | None = None) -> Iterator[Drawing | None]:
    """A drawing session for one page (``children``: processes at a time, default one per
    other CPU); yields None (figures drawn at once, here) when there is no child to use or a
    session is already open. The caller builds the page and returns ``drawing.fill(page)``."""
    n = _children() if children is None else children
    drawing = None
    if n > 0 and _SESSION.get() is None:
        with contextlib.suppress(OSError):  # no memory file for the claims' lock: no session
            drawing = Drawing(n)
    if drawing is None:
        yield None
        return
    token = _SESSION.set(drawing)
    try:
        yield drawing
    finally:
        _SESSION.reset(token)
        drawing.close()


def drawn_page(build: Callable[[], str], children: int | None = None) -> str:
    """``build()``'s page (HTML) with its figures drawn in a drawing session
    (:func:`parallel_drawing`)."""
    with parallel_drawing(children) as drawing:
        text = build()
        return text if drawing is None else drawing.fill(text)
