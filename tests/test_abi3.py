"""The extension is built for CPython's stable ABI (pyo3's `abi3-py311`): one build, and one
wheel (tagged `cp311-abi3`), for Python 3.11 and every later version. Checked here: the
installed extension is the stable-ABI file, and another CPython (3.12 or later, when this
machine has one: on PATH or under pyenv) loads that very file and runs the simulator with
it. Without a second interpreter that part skips, saying so."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tcplab import _native
from tcplab.scenario import Scenario

from conftest import SMALL_TOML


#: Runs in the other interpreter: loads the extension by its path (the package's Python
#: modules need polars and numpy, which that interpreter need not have) and runs a
#: canonical scenario (argv[2], made here) to its end.
PROBE = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("tcplab._native", sys.argv[1])
n = importlib.util.module_from_spec(spec)
spec.loader.exec_module(n)
sim = n.Simulation(sys.argv[2])
sim.run_until(sim.end_ns)
print(sys.version_info[:2], n.version(), "reno" in n.controllers(), sim.done)
"""

def _other_interpreter() -> str | None:
    """A working CPython 3.12 or later other than this one (a pyenv shim of a version that is
    not selected fails, so each candidate is asked for its version)."""
    pyenv = os.environ.get("PYENV_ROOT", str(Path.home() / ".pyenv"))
    found = sorted(glob.glob(f"{pyenv}/versions/3.1[2-9]*/bin/python3"))
    found += [shutil.which(f"python3.{m}") or "" for m in range(12, 16)]
    for python in dict.fromkeys(p for p in found if p):
        r = subprocess.run([python, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip() == "True":
            return python
    return None


def test_the_extension_is_built_for_the_stable_abi() -> None:
    assert _native.__file__.endswith(".abi3.so"), _native.__file__


def test_another_python_runs_the_same_extension_file() -> None:
    python = _other_interpreter()
    if python is None:
        pytest.skip("no CPython 3.12 or later on PATH or under pyenv to load the extension with")
    assert sys.version_info < (3, 12) or python != sys.executable
    canonical = Scenario.from_toml(SMALL_TOML).canonical_json()
    r = subprocess.run([python, "-c", PROBE, _native.__file__, canonical], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(")", 1)[1].split() == [_native.version(), "True", "True"], r.stdout
