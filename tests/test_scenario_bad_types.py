"""A table or a list where the schema expects a name (a topology kind, a loss model) is a
one-line ScenarioError naming the field, not a TypeError from a dict lookup."""

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
