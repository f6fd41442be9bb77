"""A host's probe plugin (tcplab.campaign.cluster.ProbeHost), without a cluster: a phase's
answer, a runner's failure as one line naming the host, a phase past ``probe_timeout_s``
stopped and answered ``timeout``, a stopped plugin refusing (the cluster itself:
tests/test_campaign_controller.py and tests/test_campaign_testbed.py)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

pytest.importorskip("distributed")

from tcplab.campaign.cluster import ProbeHost
from tcplab.campaign.live_probe import ProbeFailed


def test_a_phase_answers_its_result_or_one_line_naming_the_host() -> None:
    def runner(job: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
        if job["phase"] == "listen":
            return {"port": 5001}
        if job["phase"] == "send":
            raise ProbeFailed("sender: exit status 3")
        raise RuntimeError("boom\nsecond line")

    host = ProbeHost("h0", runner, probe_timeout_s=5)
    host.worker_id = "w1"
    try:
        assert host.run({"phase": "listen"}) == {"ok": True, "result": {"port": 5001}, "worker": "w1"}
        assert host.run({"phase": "send"}) == {"ok": False, "error": "h0: sender: exit status 3", "reason": None,
                                              "worker": "w1"}
        failed = host.run({"phase": "collect"})
        assert failed["ok"] is False and failed["error"] == "h0: probe failed: boom" and "\n" not in failed["error"]
    finally:
        host.teardown(None)


def test_a_phase_past_its_time_limit_is_stopped_and_answered_timeout() -> None:
    stopped = threading.Event()

    def runner(job: dict[str, Any], stop: threading.Event) -> dict[str, Any]:
        stop.wait(30)
        stopped.set()
        raise ProbeFailed("timeout")

    host = ProbeHost("h1", runner, probe_timeout_s=0.3)
    try:
        t = time.perf_counter()
        out = host.run({"phase": "send"})
        assert out["ok"] is False and out["reason"] == "timeout" and out["error"] == "h1: probe timed out after 0.3 s"
        assert stopped.is_set() and time.perf_counter() - t < 10  # the runner saw its stop
    finally:
        host.teardown(None)


def test_a_stopped_plugin_refuses_further_phases() -> None:
    host = ProbeHost("h2", lambda job, stop: {})
    host.teardown(None)
    assert host.run({"phase": "listen"})["error"] == "h2: the worker is stopping"
