"""The results directory of a run, written atomically.

Layout (docs/results.md documents every column)::

    <out>/
      flows.parquet udp.parquet links.parquet series.parquet
      queues.parquet drops.parquet events.parquet segments.parquet verdicts.parquet
      delay.parquet delay_histogram.parquet delay_series.parquet
      summary.json        scenario (as given and canonical), seed, version, git revision,
                          wall times, run stats, conservation, per-flow summary (with the
                          loss classification in Veno's Table I form, ``table_one``)
      scenario.toml       the scenario file as given (when it came from TOML)
      report.html         self-contained plots and tables (unless report=False)
      <link>.pcap         packet captures asked for by ``trace.pcap`` (docs/pcap.md)

Everything is built in a hidden temporary sibling directory that is renamed to ``<out>``
only when complete; on any error the temporary directory is removed, so a directory named
``<out>`` is always a complete result.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from tcplab.out_dir import OutDirError, building, check_out_dir, pause_for_tests
from tcplab.schema import TABLES, RunLike

__all__ = [
    "write_results",
    "default_out_dir",
    "check_out_dir",
    "git_revision",
    "OutDirError",
    "SUMMARY_SCHEMA",
    "TABLE_FORMATS",
]

#: Version of the summary.json layout; bump when keys change meaning.
SUMMARY_SCHEMA = 1

#: How the tables can be written: one file per table, ``<table>.<format>``.
TABLE_FORMATS = ("parquet", "csv")


def default_out_dir(name: str, when: datetime | None = None, base: str | Path = "results") -> Path:
    """``results/<scenario name>-<YYYYmmdd-HHMMSS>`` (with a ``-N`` suffix if taken)."""
    stamp = (when or datetime.now()).strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "run"
    out = Path(base) / f"{safe}-{stamp}"
    n = 2
    while out.exists():
        out = Path(base) / f"{safe}-{stamp}-{n}"
        n += 1
    return out


def git_revision(path: str | Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git work tree holding ``path`` (default: this package's source),
    or (None, None) when it is not in one or git is missing."""
    where = Path(path) if path is not None else Path(__file__).resolve().parent
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None, None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=5,
        )
        dirty = bool(status.stdout.strip()) if status.returncode == 0 else None
        return rev.stdout.strip() or None, dirty
    except (OSError, subprocess.SubprocessError):
        return None, None


def _json_default(o: Any) -> Any:
    if isinstance(o, datetime):
        return o.isoformat()
    if hasattr(o, "isoformat"):
        return o.isoformat()
    if hasattr(o, "item"):  # numpy scalars
        return o.item()
    return str(o)


def _clean(o: Any) -> Any:
    """NaN/inf -> None, recursively (JSON has neither)."""
    if isinstance(o, float) and (o != o or o in (float("inf"), float("-inf"))):
        return None
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    return o


def summary_document(result: RunLike, *, report: str | None, table_format: str = "parquet") -> dict[str, Any]:
    """The content of summary.json (NaN and inf become None when written:
    :func:`summary_parts`)."""
    rev, dirty = git_revision()
    source = result.scenario.source
    s = result.summary_frames()
    return {
            "schema": SUMMARY_SCHEMA,
            "tcplab_version": result.version,
            "git_revision": rev,
            "git_dirty": dirty,
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "scenario": {
                "name": result.name,
                "path": source.get("path"),
                "given": source.get("given"),
                "canonical": result.canonical,
            },
            "seed": result.seed,
            "started_at": result.started_at.isoformat(),
            "finished_at": result.finished_at.isoformat(),
            "wall_time_s": result.wall_time_s,
            "duration_s": s["duration_s"],
            "sim_time_s": s["sim_time_s"],
            "stats": s["stats"],
            "conservation": s["conservation"],
            "flows": s["flows"],
            "udp": s["udp"],
            "links": s["links"],
            "delay": s["delay"],
            "tables": {t: {"file": f"{t}.{table_format}", "rows": result.tables[t].height} for t in TABLES},
            "report": report,
            **pcap_summary(result),
            # A live run (tcplab run --live): stacks, timing fidelity, verdict (docs/live.md).
            **({"live": s["live"]} if "live" in s else {}),
        }


#: Rows of a frame that polars turns into JSON text at a time when summary.json is written:
#: the file is written part by part, so its size (50 MB for 10,000 flows) is not held in
#: memory several times over.
ROWS_PER_PART = 2048


def summary_parts(doc: dict[str, Any]) -> Iterator[str]:
    """summary.json's text, in parts (joined, the file): one top-level field per line, and
    one item per line in the top-level lists (flows, links...). A polars frame's rows are
    written by polars (as JSON lines, :data:`ROWS_PER_PART` at a time:
    :meth:`RunResult.summary_frames` gives them with non-finite floats as nulls); other
    values are encoded compactly by json's C encoder (indent=2 makes json use its
    pure-Python encoder: ~10 s for 1,000 flows), NaN and inf as None (:func:`_clean`,
    walked only for the values that hold one)."""

    strict = json.JSONEncoder(default=_json_default, allow_nan=False, check_circular=False)
    lenient = json.JSONEncoder(default=_json_default)

    def enc(v: Any) -> str:
        try:
            return strict.encode(v)
        except ValueError:
            return lenient.encode(_clean(v))

    yield "{\n"
    for i, (k, v) in enumerate(doc.items()):
        if i:
            yield ",\n"
        if isinstance(v, pl.DataFrame) and v.height:
            yield f"  {enc(k)}: [\n    "
            for start in range(0, v.height, ROWS_PER_PART):
                if start:
                    yield ",\n    "
                # A string's newline is escaped in JSON: the text's newlines end the rows.
                yield v.slice(start, ROWS_PER_PART).write_ndjson().rstrip("\n").replace("\n", ",\n    ")
            yield "\n  ]"
        elif isinstance(v, list) and v:
            yield f"  {enc(k)}: [\n    " + ",\n    ".join(enc(x) for x in v) + "\n  ]"
        else:
            yield f"  {enc(k)}: {enc([] if isinstance(v, pl.DataFrame) else v)}"
    yield "\n}\n"


def write_summary(doc: dict[str, Any], path: Path) -> None:
    """Writes summary.json's text to ``path`` part by part (:func:`summary_parts`)."""
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(summary_parts(doc))


def pcap_summary(result: RunLike) -> dict[str, Any]:
    """summary.json's ``pcap`` entry (absent without captures): the files with what each
    holds by the simulator's own count, the address of every node and the port scheme."""
    if not result.pcap:
        return {}
    return {
        "pcap": {
            "files": [
                {
                    "file": f"{f['name']}.pcap",
                    "link": f["link"],
                    "directions": list(f["directions"]),
                    "counts": dict(f["counts"]),
                }
                for f in result.pcap
            ],
            "snaplen": result.canonical["trace"].get("pcap_snaplen"),
            "addresses": dict(result.pcap_addresses),
            "ports": getattr(result, "pcap_ports", None) or {
                "tcp_sender": "10000 + flow index % 50000",
                "tcp_receiver": 5001,
                "udp_source": "10000 + udp index % 50000",
                "udp_destination": 9,
            },
        }
    }


def write_pcap_files(result: RunLike, directory: Path) -> list[Path]:
    """Writes each capture to ``<directory>/<name>.pcap``: first under a ``.partial`` name,
    renamed when complete, so a file named ``.pcap`` is never a partial capture."""
    written = []
    for f in result.pcap:
        final = directory / f"{f['name']}.pcap"
        partial = directory / f"{f['name']}.pcap.partial"
        with open(partial, "wb") as fh:
            fh.write(f["data"])
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(partial, final)
        written.append(final)
    return written


def write_table(frame: Any, path: Path, table_format: str) -> None:
    """One table as ``path`` in ``table_format`` (:data:`TABLE_FORMATS`)."""
    if table_format == "csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)


def read_table(path: Path, name: str) -> Any:
    """Table `name` of the results directory `path` as a polars frame, whichever format it was
    written in; None when it is not there."""
    for ext, read in ((".parquet", pl.read_parquet), (".csv", pl.read_csv)):
        f = path / f"{name}{ext}"
        if f.exists():
            return read(f)
    return None


def write_results(
    result: RunLike, out: str | Path | None = None, *, report: bool = True, table_format: str = "parquet"
) -> Path:
    """Writes the results directory of ``result`` to ``out`` (default
    ``results/<name>-<timestamp>``) atomically and returns its path. ``table_format``:
    ``"parquet"`` (default) or ``"csv"``, one file per table."""
    if table_format not in TABLE_FORMATS:
        raise ValueError(f"table_format = {table_format!r}: expected one of {', '.join(TABLE_FORMATS)}")
    out = Path(out) if out is not None else default_out_dir(result.name)
    if report:  # the report's modules (matplotlib) are imported while the tables are written
        from tcplab.report.preload import prepare

        prepare()
    with building(out) as tmp:
        for i, t in enumerate(TABLES):
            write_table(result.tables[t], tmp / f"{t}.{table_format}", table_format)
            if i == 0:
                pause_for_tests("writing")
        write_pcap_files(result, tmp)
        source = result.scenario.source
        if source.get("toml"):
            (tmp / "scenario.toml").write_text(source["toml"], encoding="utf-8")
        report_name = None
        if report:
            from tcplab.report import write_report

            write_report(result, tmp / "report.html")
            report_name = "report.html"
        doc = summary_document(result, report=report_name, table_format=table_format)
        write_summary(doc, tmp / "summary.json")
    return out
