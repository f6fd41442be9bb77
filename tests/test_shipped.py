"""The shipped scenarios as package data: ``tcplab scenarios`` lists them with
their descriptions and copies them out, traces and sweeps included, ready to run."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.scenario import load_scenario
from tcplab.shipped import shipped, shipped_dir

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent


def test_the_package_carries_the_repositorys_scenarios() -> None:
    names = {n for n, _, _ in shipped()}
    repo = {p.name for p in (ROOT / "scenarios").glob("*.toml")} | \
        {f"sweeps/{p.name}" for p in (ROOT / "scenarios" / "sweeps").glob("*.toml")}
    assert names == repo and "demo-dumbbell.toml" in names
    assert (shipped_dir() / "traces").is_dir()


def test_list_shows_each_with_its_description() -> None:
    r = runner.invoke(app, ["scenarios"])
    assert r.exit_code == 0
    line = next(x for x in r.stdout.splitlines() if x.startswith("demo-dumbbell.toml"))
    assert "Reno+NewReno vs Reno+SACK" in line


def test_copy_gives_runnable_files_and_refuses_a_non_empty_place(tmp_path: Path) -> None:
    dest = tmp_path / "mine"
    r = runner.invoke(app, ["scenarios", "--copy", str(dest)])
    assert r.exit_code == 0, r.output
    for name, _, _ in shipped():
        assert (dest / name).is_file(), name
    # a scenario that names a delivery trace loads from the copy (the trace came along)
    assert load_scenario(dest / "trace-steps.toml").name
    r = runner.invoke(app, ["scenarios", "--copy", str(dest)])
    assert r.exit_code == 2 and "--copy" in r.output and "--out" not in r.output
