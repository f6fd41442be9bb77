"""The command line (typer CliRunner in-process, and one real subprocess)."""

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tcplab.cli import app

from conftest import SCENARIOS, SMALL_TOML
from test_scenario import INVALID

runner = CliRunner()


def test_list():
    r = runner.invoke(app, ["list"])
    assert r.exit_code == 0
    assert "controllers:" in r.stdout and "recoveries:" in r.stdout
    assert "reno" in r.stdout and "newreno" in r.stdout


def test_version():
    r = runner.invoke(app, ["--version"])
    assert r.exit_code == 0 and r.stdout.startswith("tcplab ")


@pytest.mark.parametrize(
    "case", ["wrong_type", "negative_rate", "unknown_controller", "loss_above_one", "unknown_field"]
)
@pytest.mark.parametrize("command", ["run", "validate"])
def test_invalid_scenario_exit_2_one_line_no_results(case, command, tmp_path, monkeypatch):
    text, expected = INVALID[case]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.toml").write_text(text)
    r = runner.invoke(app, [command, "bad.toml"])
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("error: ")
    assert expected in r.stderr
    assert "Traceback" not in r.output
    assert sorted(os.listdir(tmp_path)) == ["bad.toml"]  # no results/ directory at all


def test_missing_file_exit_2(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", "nope.toml"])
    assert r.exit_code == 2 and "nope.toml: no such file" in r.stderr
    assert os.listdir(tmp_path) == []


def test_non_empty_out_dir_exit_2(tmp_path, small_file):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep").write_text("x")
    r = runner.invoke(app, ["run", str(small_file), "--out", str(out)])
    assert r.exit_code == 2 and "not empty" in r.stderr
    assert os.listdir(out) == ["keep"]


def test_python_dash_m_subprocess_invalid(tmp_path):
    (tmp_path / "bad.toml").write_text(INVALID["negative_rate"][0])
    p = subprocess.run(
        [sys.executable, "-m", "tcplab", "run", "bad.toml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert p.stderr == "error: topology.bottleneck.rate: -5 must be > 0\n"
    assert os.listdir(tmp_path) == ["bad.toml"]


def test_validate_ok():
    r = runner.invoke(app, ["validate", str(SCENARIOS / "demo-dumbbell.toml")])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("ok: demo-dumbbell")
    r = runner.invoke(app, ["validate", "--json", str(SCENARIOS / "demo-dumbbell.toml")])
    assert json.loads(r.stdout)["name"] == "demo-dumbbell"


def test_validate_rust_side_error_exit_2(tmp_path):
    p = tmp_path / "x.toml"
    p.write_text(
        SMALL_TOML.replace('controller = "reno"', 'controller = { name = "reno", no_such_parameter = 1 }', 1)
    )
    r = runner.invoke(app, ["validate", str(p)])
    assert r.exit_code == 2 and "no_such_parameter" in r.stderr


def test_run_writes_results(tmp_path, small_file, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = runner.invoke(app, ["run", str(small_file), "--seed", "3", "--no-report"])
    assert r.exit_code == 0, r.output
    runs = os.listdir(tmp_path / "results")
    assert len(runs) == 1 and runs[0].startswith("small-")
    out = tmp_path / "results" / runs[0]
    assert f"results: {os.path.join('results', runs[0])}" in r.stdout.replace("\n", "")
    assert json.loads((out / "summary.json").read_text())["seed"] == 3
    assert not (out / "report.html").exists()
    assert "newreno" in r.stdout  # summary table


def test_run_quiet_prints_only_the_path(tmp_path, small_file):
    out = tmp_path / "o"
    r = runner.invoke(app, ["run", str(small_file), "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    assert r.stdout == f"{out}\n"
    assert (out / "report.html").exists()
