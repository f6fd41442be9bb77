"""`tcplab run` / `tcplab validate` on a scenario file with a [sweep] table (docs/sweeps.md):
validate checks the base scenario and every point; run runs the base scenario only and says so."""

import json
import os

import pytest
from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.scenario import Scenario, ScenarioError

from conftest import SMALL_TOML

runner = CliRunner()

LOSS = "topology.bottleneck.forward.loss.p"


def sweep_file(tmp_path, sweep: str, base: str = SMALL_TOML):
    p = tmp_path / "swept.toml"
    p.write_text(base + "\n[sweep]\n" + sweep)
    return p


def test_validate_checks_every_sweep_point(tmp_path):
    p = sweep_file(tmp_path, f'grid = {{ "{LOSS}" = [1e-3, 1e-2], "flows.0.controller" = ["reno", "veno"] }}\nseeds = 2\n')
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].startswith("ok: small")  # the base scenario (named after the file's name field)
    assert lines[1] == "ok: all 8 sweep points valid (tcplab sweep runs them)"


def test_validate_json_prints_the_base_scenario(tmp_path):
    p = sweep_file(tmp_path, f'grid = {{ "{LOSS}" = [1e-3, 0.2] }}\n')
    r = runner.invoke(app, ["validate", "--json", str(p)])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["topology"]["bottleneck"]["forward"]["loss"] == {"model": "bernoulli", "p": 0.01}
    assert "sweep" not in doc


@pytest.mark.parametrize(
    "sweep, expected",
    [
        # a point the schema rejects: the error names the point and the field
        (f'grid = {{ "{LOSS}" = [1e-3, 1.5] }}\n', f"sweep point ({LOSS} = 1.5): {LOSS}: 1.5 must be within [0, 1]"),
        # a point only the simulator rejects (a controller parameter it does not know)
        (
            'grid = { "flows.0.controller" = ["reno", { name = "reno", no_such_parameter = 1 }] }\n',
            "no_such_parameter",
        ),
        # the [sweep] table itself
        ("seeds = -1\n", "sweep.seeds: -1 must be >= 1"),
        ('colour = "red"\n', "sweep.colour: is not a known field"),
    ],
)
def test_validate_rejects_a_bad_sweep_point_exit_2_one_line(tmp_path, sweep, expected):
    p = sweep_file(tmp_path, sweep)
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2, r.output
    assert r.stderr.startswith(f"error: {p}: ") and r.stderr.count("\n") == 1
    assert expected in r.stderr
    assert r.stdout == ""


def test_validate_rejects_a_bad_base_scenario_before_the_sweep(tmp_path):
    p = sweep_file(tmp_path, "seeds = 2\n", base=SMALL_TOML.replace('rate = "2Mbps"', 'rate = "-5Mbps"', 1))
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2
    assert r.stderr.startswith("error: topology.bottleneck.rate: ") and r.stderr.count("\n") == 1


def test_run_runs_the_base_scenario_and_says_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # Every sweep point would have seed 99 and loss 0.2; the base has seed 7 and loss 0.01.
    p = sweep_file(tmp_path, f'grid = {{ "{LOSS}" = [0.2] }}\nseeds = [99]\n')
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", str(p), "--out", str(out), "--no-report", "--quiet"])
    assert r.exit_code == 0, r.output
    assert r.stdout == f"{out}\n"
    assert "[sweep] table; running the base scenario only" in r.stderr
    assert f"tcplab sweep {p} --out DIR" in r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["seed"] == 7
    assert (out / "scenario.toml").read_text() == p.read_text()  # the file as given
    assert sorted(os.listdir(tmp_path)) == ["out", "swept.toml"]


def test_run_seed_option_applies_to_the_base_scenario(tmp_path):
    p = sweep_file(tmp_path, "seeds = 3\n")
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", str(p), "--out", str(out), "--no-report", "--quiet", "--seed", "5"])
    assert r.exit_code == 0, r.output
    assert json.loads((out / "summary.json").read_text())["seed"] == 5


def test_from_toml_still_rejects_a_sweep_table(tmp_path):
    p = sweep_file(tmp_path, "seeds = 2\n")
    with pytest.raises(ScenarioError, match=r"^sweep: is not a known field"):
        Scenario.from_toml(p.read_text())
