"""``tcplab diff``: the first packet where two runs of one flow part ways (docs/diff.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from tcplab.cli.common import EXIT_INVALID, fail, stdout_console


def diff(
    a: Annotated[Path, typer.Argument(help="First results directory (of tcplab run, simulated or live).",
                                      show_default=False, metavar="A")],
    b: Annotated[Path, typer.Argument(help="Second results directory.", show_default=False, metavar="B")],
    flow: Annotated[str | None, typer.Option("--flow", help="Flow name (default: the first flow).")] = None,
    tolerance_ms: Annotated[
        float | None,
        typer.Option("--time-tolerance", help="Matched events further apart than this (ms) are reported as "
                     "a time divergence (default: 0 for two simulated runs, 5 when either is live)."),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the comparison as JSON on stdout.")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write an HTML page: both runs' cwnd and time-sequence "
                                  "plots overlaid, the divergence marked.")
    ] = None,
) -> None:
    """Align one flow of two runs event by event and report the first divergence.

    Events: transmissions, drops, loss responses, timeouts, undos, slow-start exit. The
    first divergence comes with both sides' state, then the runs are compared episode by
    episode. Exit 0 whether or not they differ."""
    from tcplab.diff import DiffError, load
    from tcplab.diff import diff as compare

    if tolerance_ms is not None and not tolerance_ms >= 0:
        fail(f"--time-tolerance {tolerance_ms}: must be a number of ms >= 0", EXIT_INVALID)
    try:
        ra, rb = load(a, flow), load(b, flow)
    except DiffError as e:
        fail(str(e), EXIT_INVALID)
    doc = compare(ra, rb, None if tolerance_ms is None else round(tolerance_ms * 1e6))
    if html is not None:
        from tcplab.report.diff_page import diff_page

        try:
            html.write_text(diff_page(ra, rb, doc), encoding="utf-8")
        except OSError as e:
            fail(f"--html {html}: {e.strerror or e}", EXIT_INVALID)
    if json_out:
        typer.echo(json.dumps(doc, default=str))
        return
    _print(doc)


def _event(e: dict[str, Any] | None) -> str:
    if e is None:
        return "(none: the stream ended)"
    return f"{e['stream']} {tuple(e['key'])} at {e['time_ms']:.3f} ms"


def _print(doc: dict[str, Any]) -> None:
    c = stdout_console()
    a, b = doc["a"], doc["b"]
    kind = {False: "simulated", True: "live"}
    c.print(f"A: {a['path']} flow {a['flow']} ({kind[a['live']]})", markup=False, highlight=False)
    c.print(f"B: {b['path']} flow {b['flow']} ({kind[b['live']]})", markup=False, highlight=False)
    c.print(f"times from each run's first data transmission; time tolerance {doc['time_tolerance_ms']:g} ms",
            markup=False, highlight=False)
    d = doc["first_divergence"]
    if d is None:
        c.print("no divergence: every stream has the same events in the same order", markup=False)
    else:
        c.print(f"first divergence: {d['stream']} event #{d['index']}", markup=False, highlight=False)
        c.print(f"  A: {_event(d['a'])}\n  B: {_event(d['b'])}", markup=False, highlight=False)
        if d["other_streams"]:
            c.print(f"  later divergences in: {', '.join(d['other_streams'])}", markup=False, highlight=False)
        st = Table(title="state there")
        for col in ("", "A", "B"):
            st.add_column(col, justify="left" if not col else "right")
        for k in dict.fromkeys([*d["state"][0], *d["state"][1]]):
            st.add_row(k, *(str(s.get(k, "–")) for s in d["state"]))
        c.print(st)
        bt = Table(title="events just before")
        bt.add_column("A")
        bt.add_column("B")
        before = d["before"]
        for i in range(max(len(before[0]), len(before[1]))):
            bt.add_row(*(_event(side[i]) if i < len(side) else "" for side in before))
        c.print(bt)
    t = doc["first_time_divergence"]
    if t is not None:
        c.print(f"first time divergence: {t['stream']} at {t['time_ms']:.3f} ms, B {t['apart_ms']:+.3f} ms from A",
                markup=False, highlight=False)
    ep = doc["episodes"]
    et = Table(title="episodes")
    for col in ("", "A", "B"):
        et.add_column(col, justify="left" if not col else "right")
    et.add_row("slow-start exit", *(f"{s['time_ms']:.1f} ms cwnd {s['cwnd']} ({s['why']})" if s else "–"
                                      for s in ep["slow_start_exit"]))
    et.add_row("loss responses", *(str(sum(1 for p in ep["loss_responses"] if p[k])) for k in (0, 1)))
    et.add_row("timeouts", *(str(n) for n in ep["timeouts"]))
    et.add_row("undos", *(", ".join(u) or "0" for u in ep["undos"]))
    for k, (x, y) in enumerate(ep["loss_responses"][:20]):
        et.add_row(f"response {k}", *(f"{r['trigger']} {r['verdict']} {r['time_ms']:.1f} ms cwnd {r['cwnd_before']}"
                                      f" -> ssthresh {r['ssthresh_after']}" if r else "–" for r in (x, y)))
    thr = ep["throughput_mbps_per_s"]
    et.add_row("Mb/s per second", *(" ".join(f"{v:g}" for v in side) for side in thr))
    c.print(et)


def register(app: typer.Typer) -> None:
    """Adds ``diff`` to the CLI."""
    app.command("diff")(diff)
