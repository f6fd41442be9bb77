"""Every command that writes checks its output location before it simulates (one line naming
the flag and the path, rc 2); `run --json` and `run --format csv`; help texts and `list`."""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

import tcplab
from tcplab import _native
from tcplab.cli import app
from tcplab.schema import TABLES

runner = CliRunner()


def _unusable(kind: str, tmp_path: Path) -> Path:
    """An --out that cannot be created, of the given kind."""
    if kind == "proc":
        if not Path("/proc/self").exists():
            pytest.skip("no /proc on this system")
        return Path("/proc/x")
    if kind == "dangling_symlink":
        p = tmp_path / "link"
        p.symlink_to(tmp_path / "nowhere")
        return p
    if kind == "name_too_long":
        return tmp_path / ("n" * 300)
    if kind == "file_as_directory":
        (tmp_path / "afile").write_text("x")
        return tmp_path / "afile" / "sub"
    if kind == "no_permission":
        if os.geteuid() == 0:
            pytest.skip("root may write in any directory: permissions cannot be tested as root")
        d = tmp_path / "ro"
        d.mkdir(mode=0o500)
        return d / "out"
    raise AssertionError(kind)


KINDS = ["proc", "dangling_symlink", "name_too_long", "file_as_directory", "no_permission"]


def _no_simulation(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("simulated before checking --out")

    for module, name in (
        ("tcplab.run", "run"),
        ("tcplab.sweep", "run_sweep"),
        ("tcplab.campaign.virtual_campaign", "run_campaign"),
        ("tcplab.reproduce", "run_suite"),
    ):
        monkeypatch.setattr(importlib.import_module(module), name, refuse)


def _one_line(r, flag: str, path: Path) -> None:
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"error: {flag} {path}"), r.stderr
    assert "Traceback" not in r.output


@pytest.mark.parametrize("kind", KINDS)
def test_run_refuses_an_unusable_out_before_simulating(kind, tmp_path, small_file, monkeypatch):
    out = _unusable(kind, tmp_path)
    _no_simulation(monkeypatch)
    r = runner.invoke(app, ["run", str(small_file), "--out", str(out)])
    _one_line(r, "--out", out)


def test_sweep_reproduce_campaign_check_their_out_first(tmp_path, small_file, monkeypatch):
    from conftest import ROOT

    out = _unusable("file_as_directory", tmp_path)
    _no_simulation(monkeypatch)
    sweep = tmp_path / "sw.toml"
    sweep.write_text(small_file.read_text() + "\n[sweep]\nseeds = 2\n")
    _one_line(runner.invoke(app, ["sweep", str(sweep), "--out", str(out)]), "--out", out)
    _one_line(runner.invoke(app, ["reproduce", "veno-fig5", "--out", str(out)]), "--out", out)
    _one_line(
        runner.invoke(app, ["reproduce", "veno-fig5", "--out", str(tmp_path / "ok"), "--write-docs", str(out)]),
        "--write-docs",
        out.parent,
    )
    campaign = ROOT / "campaigns" / "eth-default.toml"
    _one_line(runner.invoke(app, ["campaign", str(campaign), "--out", str(out)]), "--out", out)
    _one_line(
        runner.invoke(app, ["campaign", str(campaign), "--out", str(tmp_path / "c"), "--store", str(out)]),
        "--store",
        out,
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "small.toml", "sw.toml"]


def test_run_json_prints_only_the_summary_on_stdout(tmp_path, small_file):
    out = tmp_path / "out"
    r = runner.invoke(app, ["run", str(small_file), "--out", str(out), "--json", "--no-report"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)  # nothing else on stdout
    assert doc["results"] == str(out)
    written = json.loads((out / "summary.json").read_text())
    assert {k: v for k, v in doc.items() if k not in ("results", "intervals")} == written
    assert doc["intervals"] and "streams" in doc["intervals"][0]  # iperf3 -J's, tests/test_intervals.py
    assert [f["name"] for f in doc["flows"]] == ["newreno", "sack"]
    assert "small" in r.stderr  # the progress bar went to stderr


def test_run_format_csv_writes_the_same_tables_as_csv(tmp_path, small_file):
    r = runner.invoke(app, ["run", str(small_file), "--out", str(tmp_path / "csv"), "--format", "csv", "-q"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["run", str(small_file), "--out", str(tmp_path / "pq"), "-q", "--no-report"])
    assert r.exit_code == 0, r.output
    csv, pq = tmp_path / "csv", tmp_path / "pq"
    assert not list(csv.glob("*.parquet"))
    summary = json.loads((csv / "summary.json").read_text())
    for t in TABLES:
        assert summary["tables"][t]["file"] == f"{t}.csv"
        expected = pl.read_parquet(pq / f"{t}.parquet")
        got = pl.read_csv(csv / f"{t}.csv", schema=expected.schema) if expected.height else None
        if got is not None:
            assert got.equals(expected), t


def test_run_format_rejects_an_unknown_format(small_file):
    r = runner.invoke(app, ["run", str(small_file), "--format", "xlsx"])
    assert r.exit_code == 2 and "xlsx" in r.output


@pytest.mark.parametrize("command", ["run", "sweep", "validate"])
def test_help_shows_the_sweep_table_name(command):
    r = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert r.exit_code == 0
    assert "[sweep]" in r.stdout


def test_list_describes_every_controller_and_recovery():
    r = runner.invoke(app, ["list"])
    assert r.exit_code == 0
    lines = r.stdout.splitlines()
    for kind, name, about in _native.components():
        assert about, f"{kind} {name} has no description"
        assert any(line.split() == [name, *about.split()] for line in lines), (name, r.stdout)
    assert [n for k, n, _ in _native.components() if k == "controller"] == _native.controllers()
    assert [n for k, n, _ in _native.components() if k == "recovery"] == _native.recoveries()


def test_list_shows_a_python_controllers_docstring_first_line():
    class Mine(tcplab.Controller):
        """Reno, written in Python for the list test.

        More text that is not shown."""

        def on_ack(self, s):
            pass

        def on_congestion(self, ev):
            return None

    tcplab.register_controller("listed-mine", Mine)
    try:
        r = runner.invoke(app, ["list"])
        assert any(line.split() == ["listed-mine", "Reno,", "written", "in", "Python", "for", "the", "list", "test."]
                   for line in r.stdout.splitlines()), r.stdout
    finally:
        tcplab.unregister_controller("listed-mine")


@pytest.mark.parametrize("command", ["run", "diff", "fidelity", "sweep", "compare"])
def test_help_shows_no_type_beside_a_plain_flag(command):
    """Flags take no value, so their help shows no ``<bool>``; options that take a
    value keep their type."""
    r = runner.invoke(app, [command, "--help"], terminal_width=200)
    assert r.exit_code == 0
    assert "<bool>" not in r.stdout
    assert "--help" in r.stdout and "<" in r.stdout


def test_every_command_has_a_one_line_summary():
    """`tcplab --help` lists each command by its help's first paragraph, newlines kept: a
    summary that spans lines breaks mid-sentence in that list."""
    import click
    import typer.main

    group = typer.main.get_command(app)
    ctx = click.Context(group)
    broken = {}
    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        first = (cmd.help or "").strip().split("\n\n")[0]
        if not first or "\n" in first:
            broken[name] = first
    assert not broken, broken
