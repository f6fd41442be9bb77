"""A page's figures drawn in forked children (tcplab.report.drawing): the same page whoever
draws, a failed child's figure drawn here, no child or memory file left after a page, nor
after an error while it is built."""

from __future__ import annotations

import errno
import os
import signal
import sys
import time

import pytest
from matplotlib.figure import Figure

from conftest import SMALL_TOML
from tcplab.report import drawing, raster
from tcplab.report.drawing import drawn_page, parallel_drawing
from tcplab.report.html import png, png_data_uri

pytestmark = pytest.mark.skipif(
    not (hasattr(os, "fork") and hasattr(os, "memfd_create")), reason="drawing in children needs fork and memfd (Linux)"
)


@pytest.fixture(scope="module")
def small_run():
    import tcplab

    return tcplab.run(tcplab.Scenario.from_toml(SMALL_TOML))


def _figure(k: int, size: tuple[float, float] = (4, 3)) -> Figure:
    fig = Figure(figsize=size)
    ax = fig.add_subplot()
    ax.plot(range(10), [(i * k) % 7 for i in range(10)], label=f"line {k}")
    ax.set_title(f"figure {k}", y=1.0)
    ax.legend()
    return fig


def _page(n: int) -> str:
    return "\n".join(f'<img src="{png_data_uri(_figure(k))}">' for k in range(n))


def _fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


@pytest.fixture
def forks(monkeypatch):
    """The pids of the children the drawing forks."""
    pids: list[int] = []
    real = os.fork

    def fork() -> int:
        pid = real()
        if pid:
            pids.append(pid)
        return pid

    monkeypatch.setattr(drawing.os, "fork", fork)
    return pids


def _gone(pid: int) -> bool:
    """True when ``pid`` is neither running nor a zombie of this process."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


@pytest.mark.parametrize("children", [1, 3])
def test_the_run_report_is_the_same_drawn_in_children_or_here(small_run, forks, children):
    from tcplab.report.page import _render

    here = drawn_page(lambda: _render(small_run), children=0)
    assert not forks
    fds = _fds()
    shared = drawn_page(lambda: _render(small_run), children=children)
    assert forks, "no figure was drawn in a child"
    assert shared == here
    assert "tcplab-figure-" not in shared
    assert all(_gone(p) for p in forks)
    assert _fds() == fds


def test_many_figures_and_more_children_than_figures(forks):
    here = drawn_page(lambda: _page(13), children=0)
    assert drawn_page(lambda: _page(13), children=2) == here
    assert drawn_page(lambda: _page(1), children=4) == drawn_page(lambda: _page(1), children=0)
    assert drawn_page(lambda: "<p>no figure</p>", children=2) == "<p>no figure</p>"
    assert all(_gone(p) for p in forks)


@pytest.mark.parametrize("how", ["exit", "kill", "raise"])
def test_a_failed_childs_figures_are_drawn_here(monkeypatch, forks, how):
    parent = os.getpid()
    real = raster.png

    def failing(fig, **kw):
        if os.getpid() != parent:
            if how == "exit":
                os._exit(3)
            if how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError("a child's drawing failed")
        return real(fig, **kw)

    here = drawn_page(lambda: _page(5), children=0)
    monkeypatch.setattr(raster, "png", failing)
    assert drawn_page(lambda: _page(5), children=2) == here
    assert forks
    assert all(_gone(p) for p in forks)


def test_an_image_cut_short_is_drawn_again_here(monkeypatch, forks):
    parent = os.getpid()
    real_write, real_claim, real_draw = os.write, drawing.Drawing._claim, drawing.Drawing._draw_here
    written = [0]
    drawn_here: list[int] = []

    def write(fd, data):
        if os.getpid() != parent:
            written[0] += 1
            if written[0] == 2:  # a child's second image: half of it, then the child ends
                real_write(fd, bytes(data[: len(data) // 2]))
                os._exit(0)
        return real_write(fd, data)

    def claim(self, *, last, known=None):  # the children draw every figure
        return None if last else real_claim(self, last=last, known=known)

    def draw_here(self, i):
        if self._claims[i]:  # a child claimed it (this process claims none here)
            drawn_here.append(i)
        real_draw(self, i)

    def page() -> str:  # the figures made first: handed over within a millisecond, while the
        # first child draws the first one, so the end's child takes the five others
        figures = [_figure(k) for k in range(6)]
        return "\n".join(f'<img src="{png_data_uri(f)}">' for f in figures)

    here = drawn_page(page, children=0)
    monkeypatch.setattr(drawing.os, "write", write)
    monkeypatch.setattr(drawing.Drawing, "_claim", claim)
    monkeypatch.setattr(drawing.Drawing, "_draw_here", draw_here)
    assert drawn_page(page, children=1) == here
    assert drawn_here, "no child's image was cut short and drawn again here"
    assert forks
    assert all(_gone(p) for p in forks)


@pytest.mark.parametrize("refused", ["fork", "memfd_create"])
def test_a_refused_child_leaves_the_figures_here(monkeypatch, refused):
    def refuse(*args):
        raise OSError(errno.EAGAIN, f"{refused} refused")

    here = drawn_page(lambda: _page(4), children=0)
    fds = _fds()
    monkeypatch.setattr(drawing.os, refused, refuse)
    assert drawn_page(lambda: _page(4), children=2) == here
    assert _fds() == fds


def test_an_error_while_the_page_is_built_leaves_no_child(monkeypatch, forks):
    parent = os.getpid()
    real = raster.png

    def slow(fig, **kw):
        if os.getpid() != parent:
            time.sleep(60)  # killed long before
        return real(fig, **kw)

    monkeypatch.setattr(raster, "png", slow)
    fds = _fds()

    def build() -> str:
        _page(3)
        raise KeyError("the page failed")

    with pytest.raises(KeyError, match="the page failed"):
        drawn_page(build, children=2)
    assert forks
    assert all(_gone(p) for p in forks)
    assert _fds() == fds


def test_what_drawing_raises_is_raised_from_the_page(forks):
    too_tall = Figure(figsize=(4, 30))  # 3,000 px at 100 dpi: more than MAX_IMAGE_PX
    too_tall.add_subplot()
    with pytest.raises(ValueError, match="larger than"):
        drawn_page(lambda: _page(2) + png_data_uri(too_tall), children=2)
    assert all(_gone(p) for p in forks)


def test_without_a_session_or_inside_one_figures_are_drawn_at_once():
    fig = _figure(1)
    assert drawing.current() is None
    assert png_data_uri(fig) == "data:image/png;base64," + png(_figure(1))
    with parallel_drawing(children=1) as outer:
        assert outer is not None and drawing.current() is outer
        with parallel_drawing(children=1) as inner:
            assert inner is None  # one session per page: the outer one draws
        assert outer.fill(png_data_uri(_figure(2))) == "data:image/png;base64," + png(_figure(2))
    assert drawing.current() is None


def test_one_cpu_draws_here(monkeypatch):
    monkeypatch.setattr(drawing.os, "sched_getaffinity", lambda pid: {0})
    with parallel_drawing() as d:
        assert d is None
    if sys.platform == "linux":
        monkeypatch.setattr(drawing.os, "sched_getaffinity", lambda pid: {0, 1, 2})
        assert drawing._children() == 2


def test_a_child_killed_holding_the_claims_lock_does_not_stop_the_page(monkeypatch, forks):
    parent = os.getpid()
    real = drawing.fcntl.lockf

    def lockf(fd, cmd, *args):
        real(fd, cmd, *args)
        if cmd == drawing.fcntl.LOCK_EX and os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)  # dies holding the lock

    def stuck(signum, frame):
        raise TimeoutError("the page waited 120 s for a lock its dead child held")

    here = drawn_page(lambda: _page(4), children=0)
    monkeypatch.setattr(drawing.fcntl, "lockf", lockf)
    old = signal.signal(signal.SIGALRM, stuck)
    signal.alarm(120)
    try:
        assert drawn_page(lambda: _page(4), children=2) == here
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert forks
    assert all(_gone(p) for p in forks)
