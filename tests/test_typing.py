"""tcplab is a typed package: py.typed, a stub of the extension that names exactly what the
extension defines, and mypy accepts user code of the public API with the right types."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tcplab
from tcplab import _native

PACKAGE = Path(tcplab.__file__).resolve().parent
STUB = PACKAGE / "_native.pyi"


def _public(names) -> set[str]:
    return {n for n in names if not (n.startswith("__") and n.endswith("__"))}


def _stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def test_the_package_is_marked_typed():
    assert (PACKAGE / "py.typed").is_file()


def test_the_stub_names_what_the_extension_defines():
    tree = _stub_tree()
    stubbed = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    stubbed |= {n.target.id for n in tree.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
    assert stubbed == _public(dir(_native))


def test_the_stub_classes_name_their_members():
    for node in _stub_tree().body:
        if not isinstance(node, ast.ClassDef):
            continue
        members = {n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")}
        actual = _public(dir(getattr(_native, node.name)))
        assert members == actual, node.name


USER_CODE = """
import polars as pl
import tcplab
from tcplab import _native

r = tcplab.run("scenarios/demo-dumbbell.toml", seed=3)
reveal_type(r)
frame: pl.DataFrame = r.flows
out = r.write("results/x", report=False, table_format="csv")
sc = tcplab.load_scenario("scenarios/demo-dumbbell.toml")
reveal_type(sc)
reveal_type(_native.Simulation("{}").end_ns)
reveal_type(_native.components())
"""


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install tcplab[test])")
def test_mypy_accepts_user_code_and_reveals_run_result(tmp_path):
    (tmp_path / "user.py").write_text(USER_CODE)
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--no-color-output", "user.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    revealed = [  # mypy versions differ in spelling builtins
        line.split("Revealed type is ", 1)[1].replace("builtins.", "")
        for line in r.stdout.splitlines()
        if "Revealed type" in line
    ]
    assert revealed == [
        '"tcplab.run.RunResult"',
        '"tcplab.scenario.model.Scenario"',
        '"int"',
        '"list[tuple[str, str, str]]"',
    ], r.stdout


#: The modules of the run API, the results writer and the CLI: type-checked on their own.
CHECKED = ["tcplab", "tcplab.run", "tcplab.results", "tcplab.out_dir", "tcplab.schema", "tcplab.cli",
           "tcplab.cli.common", "tcplab.cli.runs", "tcplab.cli.compare", "tcplab.cli.scenarios", "tcplab.cli.sweeps",
           "tcplab.cli.campaigns", "tcplab.cli.live",
           "tcplab.sweep", "tcplab.sweep.spec", "tcplab.sweep.points", "tcplab.sweep.store", "tcplab.sweep.backends",
           "tcplab.controller_registry"]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (pip install tcplab[test])")
def test_mypy_is_clean_on_the_public_api_modules(tmp_path):
    args = [a for m in CHECKED for a in ("-m", m)]
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "--follow-imports=silent", *args],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(PACKAGE.parent)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
