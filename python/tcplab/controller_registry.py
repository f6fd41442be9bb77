"""Congestion controllers written in Python, run by name like the built-in ones.

    import tcplab

    class Mine(tcplab.Controller):
        def on_ack(self, s):            # s: tcplab.AckSample (read-only)
            self.cwnd += s.mss * s.mss // self.cwnd
        def on_congestion(self, ev):    # ev: tcplab.CongestionEvent
            self.ssthresh = max(self.cwnd // 2, 2 * ev.mss)
            self.set_cwnd(ev.mss if ev.kind == "timeout" else self.cwnd)
            return ("1/2", 0.5)         # the verdict: a label and a number (or None)

    tcplab.register_controller("mine", Mine)
    tcplab.run(scenario)                # with controller = "mine" in a flow

The simulator builds one instance per flow with ``cls(ctx, params)`` (``ctx``: a
``tcplab.ControllerContext`` with ``mss``, ``initial_cwnd``, ``initial_ssthresh``, ``growth``
and ``growth_limit``; ``params``: the flow's controller parameters as a dict), calls its
methods with the same samples the Rust controllers get, and reads its ``cwnd`` and
``ssthresh`` attributes (bytes, non-negative integers) after every call. An exception ends the
run with one RuntimeError chained to it. Registration is per process: see
docs/controllers/writing.md (sweeps with ``jobs > 1`` run in worker processes).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

from tcplab import _native

AckSample = _native.AckSample
CongestionEvent = _native.CongestionEvent
CrossLayerReport = _native.CrossLayerReport
ControllerContext = _native.ControllerContext


class Controller(ABC):
    """A base for Python controllers: holds ``cwnd``/``ssthresh`` and gives the defaults the
    Rust trait documents for everything but ``on_ack`` and ``on_congestion``, which a
    subclass must define (a class missing one cannot be built: the run's scenario error
    names it).

    Optional methods the simulator calls when a class defines them: ``observe(sample)``
    (every ACK, before anything else; must not grow the window) and
    ``on_cross_layer(report)``.
    """

    def __init__(self, ctx: ControllerContext, params: dict[str, Any]) -> None:
        if params:
            raise ValueError(f"unknown parameters {sorted(params)}: {type(self).__name__} has none")
        self.mss = ctx.mss
        self.growth = ctx.growth
        self.growth_limit = ctx.growth_limit
        self.cwnd = max(ctx.initial_cwnd, ctx.mss)
        self.ssthresh = ctx.initial_ssthresh

    def set_cwnd(self, cwnd: int) -> None:
        """Sets the window (at least one segment); override to reset growth counters too."""
        self.cwnd = max(cwnd, self.mss)

    @abstractmethod
    def on_ack(self, s: AckSample) -> None:
        """An ACK that advanced the cumulative ACK point outside recovery: grow the window."""

    @abstractmethod
    def on_congestion(self, ev: CongestionEvent) -> tuple[str, float] | None:
        """A congestion signal: set ssthresh (and cwnd after a timeout or ECN) and return the
        verdict, a label and a number (or None)."""

    def on_recovery_exit(self, now_ns: int, cwnd: int) -> None:
        """Loss recovery ended; ``cwnd`` is what the recovery strategy proposes."""
        self.set_cwnd(cwnd)

    def on_repeated_timeout(self, now_ns: int) -> None:
        """The timer expired again before the ACK point moved: one segment (RFC 5681 §3.1)."""
        self.set_cwnd(self.mss)

    def on_undo(self, now_ns: int, prior_cwnd: int, prior_ssthresh: int) -> None:
        """The last reduction was spurious: back to at least the window before it."""
        if prior_cwnd > self.cwnd:
            self.set_cwnd(prior_cwnd)
        self.ssthresh = max(self.ssthresh, prior_ssthresh)


def register_controller(name: str, cls: type, description: str = "") -> None:
    """Makes ``cls`` the controller ``name`` for every simulation started later in this
    process. ``description`` (what ``tcplab list`` shows) defaults to the first line of the
    class's docstring. Raises ValueError for a malformed name or the name of a built-in
    controller."""
    if not callable(cls):
        raise TypeError(f"register_controller: cls = {cls!r}: expected a class")
    if not description:
        doc = (getattr(cls, "__doc__", None) or "").strip()
        description = doc.splitlines()[0].strip() if doc else ""
    _native.register_controller(name, cls, description)


def unregister_controller(name: str) -> bool:
    """Forgets a registered Python controller; False when ``name`` was not registered."""
    return _native.unregister_controller(name)


__all__ = [
    "AckSample",
    "CongestionEvent",
    "ControllerContext",
    "Controller",
    "CrossLayerReport",
    "register_controller",
    "unregister_controller",
]
