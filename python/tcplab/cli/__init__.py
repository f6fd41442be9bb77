"""The ``tcplab`` command line: run, compare, validate, list, sweep, reproduce, campaign, and the
live campaign's daemon and testbed. One module per group of commands, each adding its own
(``register``); :mod:`tcplab.cli.common` holds what they share.

Exit codes: 0 success; 1 the simulator failed (internal error) or the results could not be
written; 2 invalid scenario or usage (one line on stderr, no traceback).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from tcplab import _native
from tcplab.cli import campaigns, compare, diff, fidelity, live, runs, scenarios, sweeps

__all__ = ["app"]


def _flags_without_type() -> None:
    """Help shows no type beside a plain flag (``--json``, ``--help``): typer labels every
    option with its type, ``<bool>`` for a flag, which takes no value."""
    from typer.core import TyperOption

    shown = TyperOption.display_type_rich

    def display_type_rich(self: TyperOption, ctx: Any) -> str | None:
        if getattr(self, "is_bool_flag", False) and self.metavar is None:
            return None
        return shown(self, ctx)

    TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign,assignment]


_flags_without_type()

app = typer.Typer(
    name="tcplab",
    help="tcplab: a TCP congestion-control laboratory (packet-level simulation).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"tcplab {_native.version()}")
        raise typer.Exit()


@app.callback()


def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """tcplab: simulate TCP congestion control and loss recovery on configurable networks."""


# In the order `tcplab --help` lists them.
for group in (runs, compare, diff, fidelity, scenarios, sweeps, campaigns, live):
    group.register(app)


if __name__ == "__main__":  # pragma: no cover
    app()
