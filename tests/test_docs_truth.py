"""The README and docs/results.md tell the truth: the README's scenario is the shipped file,
its CLI tour runs in order, and every column's documented unit is the schema's
(``tcplab_sim::columns``, the one declaration)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys


from conftest import ROOT
from tcplab.schema import SCHEMA

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```$", text, flags=re.M | re.S)


def test_the_readme_scenario_is_the_shipped_demo():
    section = README[README.index("### The scenario format") :]
    block = _blocks(section, "toml")[0]
    assert block == (ROOT / "scenarios" / "demo-dumbbell.toml").read_text(encoding="utf-8")


#: Tour commands a test does not run: a Dask cluster, the whole suite, the papers' sizes,
#: live runs and testbeds (root, real time; tests/test_compare_live.py, the live tests,
#: tests/test_campaign_live.py and tests/test_fidelity_command.py run them).
NOT_RUN = ("--scheduler", "reproduce all", "--full", "...", "live", "testbed", "tcplab fidelity")


def _tour() -> list[list[str]]:
    """The README's commands in order: the main job of "Two commands", then the CLI tour."""
    first = _blocks(README[README.index("## Two commands") :], "sh")[0]
    main_job = first.split("&&", 1)[1].strip()
    tour = _blocks(README[README.index("### The CLI") :], "sh")[0]
    lines = [main_job] + [line.split("  #", 1)[0].strip() for line in tour.splitlines()]
    return [shlex.split(line) for line in lines if line and not any(s in line for s in NOT_RUN)]


def test_the_readme_tour_runs_in_order(tmp_path):
    for d in ("scenarios", "campaigns"):
        (tmp_path / d).symlink_to(ROOT / d)
    commands = _tour()
    assert len(commands) >= 8
    for argv in commands:
        assert argv[0] in (".venv/bin/tcplab", "python"), argv
        args = argv[1:] if argv[0] == ".venv/bin/tcplab" else argv[3:]
        if args[0] == "campaign":
            args += ["--max-probes", "2"]  # the campaign's own size override: the tour, not the study
        if args[0] == "compare":
            args += ["--modes", "simulated"]  # live modes (root, minutes): tests/test_compare_live.py
        r = subprocess.run(
            [sys.executable, "-m", "tcplab", *args],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "COLUMNS": "200"},
        )
        assert r.returncode == 0, f"{shlex.join(argv)}: {r.stderr}"
    assert (tmp_path / "results" / "demo" / "summary.json").is_file()
    assert (tmp_path / "results" / "demo-seed7" / "summary.json").is_file()
    assert (tmp_path / "results" / "demo-csv" / "flows.csv").is_file()


def _documented_units() -> dict[tuple[str, str], str]:
    """(table, column) -> unit, from every table row of docs/results.md."""
    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    out = {}
    for section in re.split(r"^## ", text, flags=re.M):
        m = re.match(r"`(\w+)`", section)
        if not m or m.group(1) not in SCHEMA:
            continue
        for line in section.splitlines():
            if not line.startswith("| `"):
                continue
            # cells split at pipes not escaped as \| (Markdown's way to write one in a cell)
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            assert len(cells) == 4, f"{m.group(1)}: a row without a unit column: {line}"
            names = re.findall(r"`([^`]+)`", cells[0])
            units = [u.strip() for u in cells[2].split(",")] if len(names) > 1 else [cells[2]]
            if len(units) == 1:
                units *= len(names)
            for name, unit in zip(names, units, strict=True):
                out[(m.group(1), name)] = unit
    return out


def _family(name: str) -> str:
    return re.sub(r"\d+", "N", name)


def test_every_column_is_documented_with_the_schemas_unit():
    documented = _documented_units()
    families = {(t, _family(n)): u for (t, n), u in documented.items()}
    for table, columns in SCHEMA.items():
        for c in columns:
            unit = documented.get((table, c["name"]), families.get((table, _family(c["name"]))))
            assert unit is not None, f"{table}.{c['name']} is not in docs/results.md"
            assert unit == c["unit"], f"{table}.{c['name']}: docs say {unit!r}, the schema {c['unit']!r}"
            if c["dtype"] not in ("str", "bool"):
                assert unit, f"{table}.{c['name']}: a number without a unit"


#: Dotted names in the docs that are not Python objects: a logger's name.
NOT_OBJECTS = {"tcplab.daemon"}


def test_every_dotted_name_the_docs_give_exists():
    """`tcplab.x.y` in README.md and docs/*.md names a module or an attribute a user can
    import (`tcplab.run.SCHEMA` was documented while `tcplab.run` is the function)."""
    import importlib

    missing = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for name in sorted(set(re.findall(r"`(tcplab(?:\.[A-Za-z_]\w*)+)`", path.read_text(encoding="utf-8")))):
            if name in NOT_OBJECTS:
                continue
            parts = name.split(".")
            for i in range(len(parts), 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                except ImportError:
                    continue
                try:
                    for attr in parts[i:]:
                        obj = getattr(obj, attr)
                except AttributeError:
                    missing.append(f"{path.name}: {name}")
                break
    assert not missing, missing
