"""Reno (RFC 5681) window rules written in Python: the built-in ``reno`` line for line, so a
run with ``controller = "python_reno"`` gives bit-identical results to ``controller = "reno"``
(tests/test_python_controller.py checks it on scenarios/demo-dumbbell.toml).

    import tcplab
    from examples.python_reno import Reno

    tcplab.register_controller("python_reno", Reno)
    result = tcplab.run("scenarios/demo-dumbbell.toml")   # after setting controller = "python_reno"

Growth follows ``tcp.growth`` as the Rust ``cc::Window`` does: one MSS per ACK in slow start
and MSS*MSS/cwnd in congestion avoidance ("per_ack"), appropriate byte counting with limit L
("byte_counting", RFC 3465), or Linux's per-acked-segment counting ("linux").
"""

from __future__ import annotations

import tcplab


class Reno(tcplab.Controller):
    def __init__(self, ctx: tcplab.ControllerContext, params: dict) -> None:
        super().__init__(ctx, params)
        self.ca_acked = 0  # bytes (byte counting) or segments (linux) acked in avoidance

    def set_cwnd(self, cwnd: int) -> None:
        self.cwnd = max(cwnd, self.mss)
        self.ca_acked = 0

    def set_ssthresh(self, target: int) -> None:
        self.ssthresh = max(target, 2 * self.mss)

    # -- growth (cc::Window::grow) ------------------------------------------------------------
    def on_ack(self, s: tcplab.AckSample) -> None:
        if self.cwnd < self.ssthresh:
            left = self._slow_start(s.acked_bytes)
            if left > 0 and self.cwnd >= self.ssthresh:
                self._additive_increase(left)
        else:
            self._additive_increase(s.acked_bytes)

    def _slow_start(self, acked: int) -> int:
        """Grows the window; returns the acked bytes left over past ssthresh."""
        mss = self.mss
        if self.growth == "per_ack":
            self.cwnd += mss
            return 0
        if self.growth == "byte_counting":
            assert self.growth_limit is not None  # given in byte_counting mode
            inc = min(acked, self.growth_limit * mss)
            used = min(inc, max(self.ssthresh - self.cwnd, 0))
            self.cwnd += used
            return inc - used
        segs = -(-acked // mss)
        used = min(segs, max(self.ssthresh - self.cwnd, 0) // mss)
        self.cwnd += used * mss
        return (segs - used) * mss

    def _additive_increase(self, acked: int) -> None:
        mss = self.mss
        if self.growth == "per_ack":
            self.cwnd += max(mss * mss // max(self.cwnd, 1), 1)
        elif self.growth == "byte_counting":
            self.ca_acked += acked
            if self.ca_acked >= self.cwnd:
                self.ca_acked -= self.cwnd
                self.cwnd += mss
        else:
            w = max(self.cwnd // mss, 1)
            if self.ca_acked >= w:
                self.ca_acked = 0
                self.cwnd += mss
            self.ca_acked += -(-acked // mss)
            if self.ca_acked >= w:
                delta = self.ca_acked // w
                self.ca_acked -= delta * w
                self.cwnd += delta * mss

    # -- reduction (cc::reno::reno_reduction) -------------------------------------------------
    def on_congestion(self, ev: tcplab.CongestionEvent) -> tuple[str, float]:
        self.set_ssthresh(self.cwnd // 2)
        if ev.kind == "timeout":
            self.set_cwnd(self.mss)
        elif ev.kind == "ecn":
            self.set_cwnd(self.ssthresh)
        return ("1/2", 0.5)
