"""What the ``tcplab`` commands share: exit codes, the table format option, and the checks
that turn bad input into one line on stderr (``fail``) before anything runs."""

from __future__ import annotations

import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console

from tcplab.scenario import Scenario, ScenarioError, load_scenario

EXIT_INTERNAL = 1
EXIT_INVALID = 2


class TableFormat(StrEnum):
    """``--format``: how the results' tables are written (tcplab.results.TABLE_FORMATS)."""

    parquet = "parquet"
    csv = "csv"


def fail(message: str, code: int = EXIT_INVALID) -> NoReturn:
    """One line on stderr (nothing else) and exit `code`."""
    sys.stderr.write(f"error: {' '.join(message.splitlines())}\n")
    raise typer.Exit(code)


#: ``--plugin FILE.py`` (repeatable): Python files that register controllers.
PluginFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--plugin",
        help="Python file that registers controllers (tcplab.register_controller), run before the scenario is "
        "read; repeatable. Sweep workers run it too (docs/controllers/writing.md).",
        show_default=False,
        metavar="FILE.py",
    ),
]


def load_plugins(paths: list[Path] | None) -> None:
    """Runs every ``--plugin`` file; a missing or failing one is one line and exit 2."""
    from tcplab.plugins import PluginError, load_plugin

    for p in paths or []:
        try:
            load_plugin(p)
        except PluginError as e:
            fail(str(e), EXIT_INVALID)


def load(path: Path, seed: int | None = None) -> Scenario:
    try:
        sc = load_scenario(path)
        return sc.with_seed(seed) if seed is not None else sc
    except ScenarioError as e:
        fail(str(e), EXIT_INVALID)


def load_base(path: Path, seed: int | None = None) -> tuple[Scenario, dict[str, Any] | None]:
    """The file's scenario and its ``[sweep]`` table (None when it has none). The table is
    stripped here, so the base scenario validates as a plain one (``Scenario.from_toml`` keeps
    rejecting unknown fields); the source kept for results is the file as given."""
    from tcplab.toml_file import TomlError, read_toml

    try:
        data, text = read_toml(path)
    except TomlError as e:
        fail(str(e), EXIT_INVALID)
    table = data.pop("sweep", None)
    try:  # time-trace files are relative to the scenario file
        sc = Scenario.from_dict(data, name=path.stem, source={"toml": text, "path": str(path)}, base_dir=path.parent)
        return (sc.with_seed(seed) if seed is not None else sc), table
    except ScenarioError as e:
        fail(str(e), EXIT_INVALID)


def check_sweep(path: Path, sc: Scenario, table: dict[str, Any]) -> int:
    """Validates every point of the ``[sweep]`` table over ``sc`` (schema, then the
    simulator's checks; once for points that differ only in seed); the number of points."""
    from tcplab.sweep import SweepError, sweep_points

    try:
        return sweep_points(sc, table).validate()  # sc's base_dir: time-trace files as for the base scenario
    except (SweepError, ScenarioError) as e:
        fail(f"{path}: {e}", EXIT_INVALID)


def out_dir(out: Path | None, name: str, flag: str = "--out") -> Path:
    """``--out`` or the default directory for ``name``; exit 2 when it cannot be created
    there (checked before anything runs)."""
    from tcplab.out_dir import OutDirError, check_out_dir
    from tcplab.results import default_out_dir

    target = out if out is not None else default_out_dir(name)
    try:
        check_out_dir(target)
    except OutDirError as e:
        fail(f"{flag} {e}", EXIT_INVALID)
    return target


def store_dir(path: Path, flag: str) -> Path:
    """A directory that is reused (a sweep's or reproduce's store): exit 2 unless it is a
    directory this process can write in, or can be created."""
    from tcplab.out_dir import OutDirError, check_store_dir

    try:
        return check_store_dir(path)
    except OutDirError as e:
        fail(f"{flag} {e}", EXIT_INVALID)


def file_target(path: Path, flag: str) -> Path:
    """A file to be (re)written: exit 2 when it is a directory or its directory is unusable."""
    if path.is_dir():
        fail(f"{flag} {path}: is a directory", EXIT_INVALID)
    store_dir(path.parent, flag)
    return path


def write_out(write: Callable[[], Path], target: Path) -> Path:
    """``write()`` (a results or campaign directory at ``target``); exit 2 when ``target`` is
    unusable, 1 when it cannot be written."""
    from tcplab.out_dir import OutDirError

    try:
        return write()
    except OutDirError as e:
        fail(f"--out {e}", EXIT_INVALID)
    except OSError as e:
        fail(f"cannot write results to {target}: {e}", EXIT_INTERNAL)


def stdout_console() -> Console:
    """The console for tables on stdout: no wrapping when stdout is not a terminal (a pipe,
    a log)."""
    return Console() if sys.stdout.isatty() else Console(width=200)
