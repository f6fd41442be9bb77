"""A table or a list where the schema expects a name (a topology kind, a loss model) is a
one-line ScenarioError naming the field, not a TypeError from a dict lookup."""

import tomllib

import pytest

from tcplab.scenario import Scenario, ScenarioError

from conftest import SMALL_TOML


@pytest.mark.parametrize(
    "old, new, expected",
    [
        ("[topology]\n", "[topology]\nkind = []\n", "topology.kind: [] is not a known topology kind (known: dumbbell,"),
        ("[topology]\n", '[topology]\nkind = { x = 1 }\n', "topology.kind: {x = 1} is not a known topology kind"),
        (
            "forward = { loss = 1e-2 }",
            "forward = { loss = { model = [] } }",
            "topology.bottleneck.forward.loss.model: [] is not a known loss model (known: none, bernoulli,",
        ),
        (
            "forward = { loss = 1e-2 }",
            'forward = { loss = { model = { name = "ber" } } }',
            "topology.bottleneck.forward.loss.model: {name = 'ber'} is not a known loss model",
        ),
    ],
)
def test_unhashable_names_are_scenario_errors(old, new, expected):
    assert old in SMALL_TOML
    with pytest.raises(ScenarioError) as e:
        Scenario.from_toml(SMALL_TOML.replace(old, new, 1))
    assert str(e.value).startswith(expected), str(e.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (2**64, "flows[0].bytes: 18446744073709551616 is out of range (at most 18446744073709551615)"),
        (-(2**63) - 1, "flows[0].bytes: -9223372036854775809 is out of range"),
        (float("inf"), "flows[0].bytes: inf is not a finite number"),
        (float("nan"), "flows[0].bytes: nan is not a finite number"),
    ],
)
def test_the_net_under_the_parsers_names_a_derived_number_the_simulator_cannot_hold(monkeypatch, value, message):
    """A canonical value no parser saw (a derived one) outside what the simulator holds is
    named at its field; the walk that finds it runs only when the JSON text shows a candidate."""
    doc = tomllib.loads(SMALL_TOML)
    canonical = Scenario.canonical

    def tampered(self):
        c = canonical(self)
        c["flows"][0]["bytes"] = value
        return c

    monkeypatch.setattr(Scenario, "canonical", tampered)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(doc)
    assert str(e.value).startswith(message), str(e.value)
    # 19-digit integers inside the range are taken
    monkeypatch.setattr(Scenario, "canonical", lambda self: {**canonical(self), "seed": 2**64 - 1})
    Scenario.from_dict(doc)
