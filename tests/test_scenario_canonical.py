"""The canonical form at scale (issue 27 §5): the canonical JSON text made from the pieces
alike flows share is json.dumps of canonical(), validation still names the field and value
of one bad flow among many, and a scenario changed after validation gives what its fields
are now (nothing is kept by identity). No timings: bench/validate_scale.py measures."""

from __future__ import annotations

import json
import math

import pytest

import tcplab
from tcplab.scenario import Scenario, ScenarioError, load_scenario
from tcplab.scenario.checks import component_key, given_key
from tcplab.run import simulator_check
from tcplab.scenario.flows import TcpOverrides, expand_flow_groups

from conftest import ROOT

SHIPPED = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "bench" / "scenarios").glob("*.toml"))


def many(*middle: dict, count: int = 300, **top) -> dict:
    """A dumbbell with ``count`` alike flows, then ``middle``, then 200 more alike flows."""
    alike = {"controller": "reno", "recovery": "sack"}
    return {
        "name": "many",
        "duration": "2s",
        "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 100}},
        "tcp": {"profile": "rfc"},
        "flows": [{"count": count, **alike}, *middle, {"count": 200, **alike}],
        "trace": {"series": "off"},
        **top,
    }


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_the_canonical_text_is_json_dumps_of_the_canonical_form(path):
    sc = load_scenario(path)
    text = sc.canonical_json()
    assert text == json.dumps(sc.canonical())
    assert sc.with_seed(11).canonical_json() == json.dumps(sc.with_seed(11).canonical())
    for indent in (1, 2, 4):  # what tcplab validate --json prints (indent 2)
        assert sc.canonical_json(indent=indent) == json.dumps(sc.canonical(), indent=indent)


def test_the_canonical_text_of_flows_with_every_optional_field():
    doc = {
        "name": "odd \u00e9 \"quoted\"",
        "description": "non-ASCII \u2603 and \\ backslashes",
        "duration": "3s",
        "topology": {"pairs": 3, "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 100}},
        "tcp": {"profile": "linux", "rto_min": "100ms"},
        "flows": [
            {"name": "a\u00e9", "src": "s1", "dst": "r2", "bytes": "1MB", "stop": "2s", "start": "10ms"},
            {"controller": {"name": "cubic", "beta": 0.7}, "recovery": "sack", "tcp": {"mss": 1000, "sack_blocks": 0}},
            {"controller": "reno", "tcp": {"growth": {"mode": "byte_counting", "limit": 2}}, "stack": "tcplab"},
        ],
        "udp": [{"rate": "1Mbps", "packet_size": 500, "src": "s0", "dst": "r0", "stop": "1s"}],
    }
    doc["flows"].append({"src": "s0", "dst": "r0", "route": ["s0", "left", "right", "r0"], "framing": "eth",
                         "controller": {"name": "cubic", "beta": 1, "fast_convergence": False}})
    sc = Scenario.from_dict(doc)
    assert sc.canonical_json() == json.dumps(sc.canonical())
    assert json.loads(sc.canonical_json()) == sc.canonical()
    for indent in (1, 2, 3):
        assert sc.canonical_json(indent=indent) == json.dumps(sc.canonical(), indent=indent)
    for indent in (0, "\t"):  # json.dumps's other layouts: the slow way
        assert sc.canonical_json(indent=indent) == json.dumps(sc.canonical(), indent=indent)
    udp_only = Scenario.from_dict({**doc, "flows": []})
    assert udp_only.canonical_json(indent=2) == json.dumps(udp_only.canonical(), indent=2)
    assert udp_only.canonical_json() == json.dumps(udp_only.canonical())


def test_a_bad_flow_among_many_is_named_with_its_value():
    cases = [
        ({"controller": "renoo", "recovery": "sack"}, "flows[300].controller: 'renoo' is not a known controller"),
        (
            {"controller": "reno", "recovery": "sack", "tcp": {"rto_min": "1s", "rto_max": "10ms"}},
            "flows[300].tcp.rto_min: 1 s must be <= rto_max (10 ms)",
        ),
        ({"controller": "reno", "recovery": "sack", "tcp": {"mss": 10}}, "flows[300].tcp.mss: 10 must be within [64, 65000]"),
        ({"controller": "reno", "recovery": "sack", "start": "5s"}, "flows[300].start: 5 s must be at most the duration (2 s)"),
        ({"controller": "reno", "recovery": "sack", "src": "s9999"}, "flows[300].src: 's9999' is not a host"),
    ]
    for bad, message in cases:
        with pytest.raises(ScenarioError) as e:
            Scenario.from_dict(many(bad))
        assert str(e.value).startswith(message), str(e.value)
        assert e.value.path.startswith("flows[300]")


def test_a_bad_member_of_a_big_group_names_the_member_and_its_group():
    doc = many({"count": 50, "controller": "reno", "recovery": "sack", "tcp": {"initial_cwnd": -1}})
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(doc)
    assert str(e.value) == "flows[300].tcp.initial_cwnd: -1 must be within [0, 4294967295] (flow 0 of the group flows[1])"


def test_a_scenario_changed_after_validation_gives_its_new_canonical_form():
    sc = Scenario.from_dict(many(count=3))
    before = sc.canonical()
    assert before["flows"][1]["controller"]["name"] == "reno"

    sc.flows[1].controller = {"name": "cubic", "params": {}}
    sc.flows[2].tcp = TcpOverrides(mss=1000)
    sc.flows[0].start = 5_000_000
    sc.tcp = TcpOverrides(profile="rfc", rto_min="300ms")
    after = sc.canonical()
    assert after["flows"][1]["controller"]["name"] == "cubic"
    assert after["flows"][2]["tcp"]["mss"] == 1000
    assert after["flows"][3]["tcp"]["mss"] == before["flows"][3]["tcp"]["mss"]
    assert after["flows"][0]["start"] == 5_000_000
    assert after["tcp"]["rto_min"] == 300_000_000 and after["flows"][4]["tcp"]["rto_min"] == 300_000_000
    assert sc.canonical_json() == json.dumps(after)

    # a change inside a flow's own table (no assignment a model sees), of the flow whose
    # recovery the alike flows share
    sc.flows[0].recovery["name"] = "newreno"
    assert [f["recovery"]["name"] for f in sc.canonical()["flows"][:4]] == ["newreno", "sack", "sack", "sack"]
    sc.flows.append(sc.flows[0].model_copy(update={"name": "extra"}))
    assert sc.canonical()["flows"][-1]["name"] == "extra"
    assert sc.canonical_json() == json.dumps(sc.canonical())


def test_a_scenario_changed_after_validation_is_checked_again_when_it_runs():
    sc = Scenario.from_dict(many(count=3))
    sc.flows[2].start = 10_000_000_000  # after the end (2 s): the simulator's rule
    with pytest.raises(ScenarioError) as e:
        tcplab.run(sc)
    assert "flows[2].start" in str(e.value)
    with pytest.raises(ScenarioError) as e:
        simulator_check(sc.canonical())
    assert "flows[2].start" in str(e.value)
    sc.flows[2].start = 0
    simulator_check(sc.canonical())


def test_copies_share_nothing_stale():
    sc = Scenario.from_dict(many(count=3))
    seeded = sc.with_seed(9)
    assert json.loads(seeded.canonical_json())["seed"] == 9
    other = sc.model_copy(update={"tcp": TcpOverrides(profile="rfc", mss=1200)})
    assert {f["tcp"]["mss"] for f in other.canonical()["flows"]} == {1200}
    assert {f["tcp"]["mss"] for f in sc.canonical()["flows"]} != {1200}
    assert other.canonical_json() == json.dumps(other.canonical())


def test_canonical_gives_copies_callers_may_change():
    sc = Scenario.from_dict(many(count=2))
    c = sc.canonical()
    c["flows"][0]["tcp"]["mss"] = 1
    c["flows"][0]["tcp"]["growth"]["mode"] = "changed"
    c["flows"][0]["controller"]["params"]["x"] = 1.0
    again = sc.canonical()
    assert again["flows"][0]["tcp"]["mss"] != 1 and again["flows"][1]["tcp"]["mss"] != 1
    assert again["flows"][0]["tcp"]["growth"]["mode"] != "changed"
    assert again["flows"][0]["controller"]["params"] == {}


def test_a_value_that_is_not_plain_json_takes_the_slow_way():
    sc = Scenario.from_dict(many(count=2))
    sc.flows[0].controller = {"name": "reno", "params": {"x": math.nan}}
    try:
        expected = json.dumps(sc.canonical())
    except ValueError as e:  # the simulator's completion refuses it: so does the text
        with pytest.raises(type(e)):
            sc.canonical_json()
    else:
        assert sc.canonical_json() == expected


def test_memo_keys_are_alike_exactly_when_the_json_is():
    def key(params):
        return component_key({"name": "cubic", "params": params})

    assert key({}) == key({})
    assert key({"a": 1.0, "b": True}) == key({"b": True, "a": 1.0})  # sorted, as before
    assert key({"a": 1.0}) != key({"a": True})
    assert key({"a": 1}) != key({"a": 1.0})
    assert key({"a": 0.0}) != key({"a": -0.0})
    assert key({"a": "1"}) != key({"a": 1})
    assert component_key(None) is None
    assert given_key(None) is None
    assert given_key(TcpOverrides(mss=1000)) == given_key(TcpOverrides(mss=1000))
    assert given_key(TcpOverrides(mss=1000)) != given_key(TcpOverrides(mss=1001))
    assert given_key(TcpOverrides(timestamps=True)) != given_key(TcpOverrides(timestamps=False))
    assert given_key(TcpOverrides()) != given_key(TcpOverrides(mss=1000))


def test_a_groups_flows_are_copies_of_its_tables():
    flows = expand_flow_groups([{"count": 3, "controller": {"name": "cubic", "beta": 0.7}, "route": ["a", "b"]}])
    flows[0]["controller"]["beta"] = 0.5
    flows[0]["route"].append("c")
    assert flows[1]["controller"] == {"name": "cubic", "beta": 0.7}
    assert flows[2]["route"] == ["a", "b"]
