"""Flow groups: ``[[flows]] count = N`` stands for N copies of the block (docs/scenario.md)."""

from __future__ import annotations

import tomllib

import pytest

import tcplab
from tcplab.scenario import Scenario, ScenarioError

from conftest import ROOT

BASE = {
    "name": "groups",
    "seed": 3,
    "duration": "2s",
    "topology": {"bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 20}},
}


def canonical(flows, **top):
    return Scenario.from_dict({**BASE, **top, "flows": flows}).canonical()


def b4_copied() -> str:
    """bench/scenarios/B4.toml with its group written out as 64 copied blocks (its old form)."""
    text = (ROOT / "bench/scenarios/B4.toml").read_text()
    head, group = text.split("[[flows]]\ncount = 64\n")
    assert group.strip() == 'controller = "reno"\nrecovery = "sack"'
    return head + "".join(f"[[flows]]\n{group.strip()}\n\n" for _ in range(64))


def test_b4_group_gives_the_canonical_json_of_the_copied_blocks():
    grouped = tcplab.load_scenario(ROOT / "bench/scenarios/B4.toml")
    copied = Scenario.from_toml(b4_copied(), name="B4")
    assert len(grouped.canonical()["flows"]) == 64
    assert grouped.canonical_json() == copied.canonical_json()


def test_b4_group_runs_bit_identical_to_the_copied_blocks():
    doc = tomllib.loads((ROOT / "bench/scenarios/B4.toml").read_text())
    copied = tomllib.loads(b4_copied())
    assert "count" in doc["flows"][0] and len(copied["flows"]) == 64
    a = tcplab.run({**doc, "duration": "3s"})
    b = tcplab.run({**copied, "duration": "3s"})
    assert a.flows["bytes_delivered"].sum() > 0
    assert a.flows.equals(b.flows) and a.links.equals(b.links)


def test_names_get_the_index_and_unnamed_members_the_default_names():
    flows = canonical(
        [
            {"controller": "reno", "recovery": "reno"},
            {"name": "bulk", "count": 3, "controller": "reno", "recovery": "sack"},
            {"count": 2, "controller": "veno", "recovery": "reno"},
        ]
    )["flows"]
    assert [f["name"] for f in flows] == ["flow0", "bulk0", "bulk1", "bulk2", "flow4", "flow5"]
    assert [f["src"] for f in flows] == [f"s{i}" for i in range(6)]
    assert [f["recovery"]["name"] for f in flows] == ["reno", "sack", "sack", "sack", "reno", "reno"]


def test_start_step_spaces_the_members():
    flows = canonical([{"count": 4, "controller": "reno", "recovery": "reno", "start": "1s", "start_step": "100ms"}])["flows"]
    assert [f["start"] for f in flows] == [1_000_000_000, 1_100_000_000, 1_200_000_000, 1_300_000_000]


def test_start_list_gives_each_member_its_start():
    flows = canonical([{"count": 2, "controller": "reno", "recovery": "reno", "start": ["5ms", 0.5]}])["flows"]
    assert [f["start"] for f in flows] == [5_000_000, 500_000_000]


def test_start_jitter_is_drawn_from_the_seed_deterministically():
    group = [{"count": 8, "controller": "reno", "recovery": "reno", "start": "1s", "start_jitter": "1s"}]
    starts = [f["start"] for f in canonical(group)["flows"]]
    assert starts == [f["start"] for f in canonical(group)["flows"]]
    assert all(1_000_000_000 <= s <= 2_000_000_000 for s in starts) and len(set(starts)) == 8
    other = [f["start"] for f in canonical(group, seed=4)["flows"]]
    assert other != starts
    sc = Scenario.from_dict({**BASE, "flows": group})
    assert [f["start"] for f in sc.with_seed(4).canonical()["flows"]] == other


def test_the_given_document_keeps_the_group():
    sc = Scenario.from_dict({**BASE, "flows": [{"count": 2, "controller": "reno", "recovery": "reno"}]})
    assert sc.source["given"]["flows"] == [{"count": 2, "controller": "reno", "recovery": "reno"}]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"count": 0}, "flows[0].count: 0 is not a whole number of flows >= 1"),
        ({"count": "3"}, "flows[0].count: '3' is not a whole number of flows >= 1"),
        ({"start_step": "1s"}, "flows[0].start_step: is only allowed in a flow group (with count = N)"),
        ({"count": 2, "start_jitter": "-1s"}, "flows[0].start_jitter: '-1s' must be >= 0"),
        ({"count": 3, "start": ["1s"]}, "flows[0].start: has 1 start times for count = 3 flows"),
        ({"count": 2, "start": ["1s", "x"]}, "flows[0].start[1]: 'x' is not a duration"),
    ],
)
def test_bad_groups_are_one_line_naming_the_field(entry, message):
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({**BASE, "flows": [{"controller": "reno", "recovery": "reno", **entry}]})
    assert str(e.value).startswith(message)
    assert "\n" not in str(e.value)


def test_an_error_in_a_groups_flow_names_the_flow_and_its_group():
    flows = [
        {"controller": "reno", "recovery": "reno"},
        {"name": "bulk", "count": 3, "controller": "renoo", "recovery": "reno"},
    ]
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({**BASE, "flows": flows})
    assert str(e.value).startswith("flows[1].controller: 'renoo' is not a known controller")
    assert str(e.value).endswith("(flow 0 of the group flows[1])")
    flows = [{"count": 2, "controller": "reno", "recovery": "reno", "start": "1s", "start_step": "5s"}]
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict({**BASE, "flows": flows})  # the second flow starts after the end (2 s)
    assert str(e.value).startswith("flows[1].start") and str(e.value).endswith("(flow 1 of the group flows[0])")
