"""``tcplab validate`` and ``tcplab list``: a scenario checked without running it, and the
components a scenario can name."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from tcplab import _native
from tcplab.cli.common import EXIT_INTERNAL, EXIT_INVALID, PluginFiles, check_sweep, fail, load_base, load_plugins


def validate(
    scenario: Annotated[
        Path, typer.Argument(help="Scenario file (TOML).", show_default=False, metavar="SCENARIO.toml")
    ],
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the canonical JSON the simulator would run.")
    ] = False,
    plugin: PluginFiles = None,
) -> None:
    """Check a scenario file (schema, then the simulator's own checks) without running it.

    With a \\[sweep] table: the base scenario, then every point of the sweep."""
    load_plugins(plugin)
    sc, sweep_table = load_base(scenario)
    try:
        _native.check_scenario(sc.canonical_json())
    except ValueError as e:
        fail(f"{scenario}: {e}", EXIT_INVALID)
    except RuntimeError as e:
        fail(str(e), EXIT_INTERNAL)
    points = check_sweep(scenario, sc, sweep_table) if sweep_table is not None else None
    if json_out:
        typer.echo(sc.canonical_json(indent=2))  # the base scenario's
    else:
        typer.echo(f"ok: {sc.describe()}")
        if points is not None:
            typer.echo(f"ok: all {points} sweep points valid (tcplab sweep runs them)")


def list_components(plugin: PluginFiles = None) -> None:
    """List the congestion controllers and loss-recovery strategies, one line each.

    Installed and --plugin controllers included."""
    from tcplab.plugins import PluginError, load_entry_points

    load_plugins(plugin)
    try:
        load_entry_points()
    except PluginError as e:
        fail(str(e), EXIT_INVALID)
    for kind, title in (("controller", "controllers"), ("recovery", "recoveries")):
        typer.echo(f"{title}:")
        rows = [(name, about) for k, name, about in _native.components() if k == kind]
        width = max((len(name) for name, _ in rows), default=0)
        for name, about in rows:
            typer.echo(f"  {name:<{width}}  {about}".rstrip())


def scenarios(
    copy: Annotated[
        Path | None,
        typer.Option("--copy", help="Copy them (with their sweeps and traces) into this directory, which must not "
                                    "exist or be empty.", show_default=False),
    ] = None,
) -> None:
    """List the scenarios tcplab ships (the papers' settings, the demo, sweeps), or copy them out."""
    from tcplab.out_dir import OutDirError
    from tcplab.shipped import copy_shipped, shipped

    if copy is not None:
        try:
            copy_shipped(copy)
        except OutDirError as e:
            fail(f"--copy: {str(e).replace('--out', '--copy')}", EXIT_INVALID)
        typer.echo(f"copied {len(shipped())} scenarios to {copy} (run one: tcplab run {copy}/demo-dumbbell.toml)")
        return
    rows = shipped()
    width = max((len(n) for n, _, _ in rows), default=0)
    for name, about, _ in rows:
        typer.echo(f"{name:<{width}}  {about}".rstrip())


def register(app: typer.Typer) -> None:
    """Adds ``validate``, ``list``, ``scenarios`` to the CLI."""
    app.command("validate")(validate)
    app.command("list")(list_components)
    app.command("scenarios")(scenarios)
