"""The kinds of live flow (`tcplab.live.stacks`) serve `tcplab run --live` and the campaign's
probes alike: each protocol a probe may name is a stack whose ends run apart, and what the
tcplab ends are built from is the probe's own settings (no root or namespace needed)."""

from __future__ import annotations

import typing

import pytest

from tcplab.campaign.live_probe import ProbeJob, ProbeSpec
from tcplab.live.errors import LiveError
from tcplab.live.stacks import STACKS, TCPLAB_MSS, transfer_scenario


def _probe_stacks() -> set[str]:
    models = typing.get_args(ProbeSpec.model_fields["protocol"].annotation)
    return {typing.get_args(m.model_fields["stack"].annotation)[0] for m in models}


def test_every_probe_protocol_is_a_stack_that_runs_its_ends_apart() -> None:
    kinds = _probe_stacks()
    assert kinds == {"tcplab", "tcplab-tcp", "linux"}
    assert kinds <= set(STACKS)
    assert {k for k, s in STACKS.items() if s.apart} == kinds


def _job(**protocol: object) -> ProbeJob:
    return ProbeJob(phase="send", probe="p1", peer="b", source="a", sink="b", source_address="10.0.0.1",
                    sink_address="10.0.0.2", port=40000, bytes=100_000, time_limit_s=5, mss=1200,
                    tcp={"initial_cwnd": 1, "rto_min": "1s"}, protocol=protocol)


def test_the_tcplab_ends_of_a_probe_are_its_settings() -> None:
    job = _job(stack="tcplab", controller="veno", recovery="fack", controller_params={"beta": 3})
    sc = transfer_scenario(job, 5.0)
    (flow,) = sc["flows"]
    assert flow["controller"] == {"name": "veno", "params": {"beta": 3.0}}
    assert flow["recovery"]["name"] == "fack" and flow["bytes"] == 100_000
    assert flow["tcp"]["mss"] == 1200 and flow["tcp"]["initial_cwnd"] == 1
    assert sc["duration"] == 5_000_000_000
    job = _job(stack="tcplab", controller="reno", recovery="newreno")
    assert transfer_scenario(job.model_copy(update={"mss": None}), 1.0)["flows"][0]["tcp"]["mss"] == TCPLAB_MSS


def test_bad_probe_settings_are_one_line_naming_the_field() -> None:
    job = _job(stack="tcplab", controller="renoo", recovery="newreno")
    with pytest.raises(LiveError, match=r"^probe settings: .*renoo") as e:
        transfer_scenario(job, 1.0)
    assert "\n" not in str(e.value)
