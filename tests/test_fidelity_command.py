"""``tcplab fidelity`` (docs/fidelity.md): bad input is one line before anything runs; with root,
one short cell of the grid runs both ways and is judged, with the kernel recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_live
from typer.testing import CliRunner

from tcplab.cli import app
from tcplab.fidelity import Cell, judge, needs_more_seeds, run_grid, stall_drops

runner = CliRunner()
emu = test_live.emu  # skips without root, builds tcplab-emu and tcplab-flow


@pytest.mark.parametrize("args,expected", [(["--buffers", "huge"], "--buffers 'huge'"),
                                           (["--rates", "fast"], "--rates 'fast'"),
                                           (["--kinds", "medium"], "--kinds 'medium'")])
def test_bad_grid_is_one_line_and_runs_nothing(args: list[str], expected: str, tmp_path: Path) -> None:
    r = runner.invoke(app, ["fidelity", *args, "--out", str(tmp_path / "out")])
    assert r.exit_code == 2, r.output
    assert expected in r.output and len(r.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_rule_is_the_issues() -> None:
    sim = [{"value": 1.09, "retransmits": 12.0}]
    assert judge(sim, [{"value": 1.0, "retransmits": 10.0}])["pass"], "+9 %, +20 %"
    assert not judge(sim, [{"value": 0.98, "retransmits": 10.0}])["value_ok"], "+11 %"
    assert not judge(sim, [{"value": 1.0, "retransmits": 9.0}])["retransmits_ok"], "+33 %"
    assert judge([{"value": 1.0, "retransmits": 4.0}], [{"value": 1.0, "retransmits": 1.0}])["retransmits_ok"], \
        "both under 5 segments"
    assert Cell("reno", 10e6, 0.0, "shallow", "long").buffer_packets == 8
    assert Cell("reno", 1.6e6, 0.0, "shallow", "long").buffer_packets == 2, "at least 2"


def test_more_seeds_where_either_side_scatters_beyond_a_tolerance() -> None:
    def runs(values: list[float], retx: list[float]) -> list[dict[str, float]]:
        return [{"value": v, "retransmits": r} for v, r in zip(values, retx)]

    steady = runs([1.0, 1.0, 1.0], [10.0, 10.0, 10.0])
    assert not needs_more_seeds(steady, steady)
    # Half the range beyond ±10 % of the mean (on either side), whatever the verdict.
    assert needs_more_seeds(steady, runs([0.85, 1.0, 1.15], [10.0, 10.0, 10.0]))
    assert not needs_more_seeds(steady, runs([0.91, 1.0, 1.09], [10.0, 10.0, 10.0])), "±9 %: within"
    assert needs_more_seeds(runs([1.0, 1.0, 1.0], [6.0, 10.0, 14.0]), steady), "retransmissions ±40 %"
    few = runs([1.0, 1.0, 1.0], [0.0, 1.0, 4.0])
    assert not needs_more_seeds(few, few), "both under 5 retransmissions: their scatter does not count"


def test_a_scattering_cell_runs_up_to_max_seeds_against_recorded_kernel_runs(tmp_path: Path) -> None:
    """Without root: the "kernel runs" recorded here are simulations of seeds 1-4 (a lossy
    short cell whose retransmissions scatter from seed to seed), so the grid judged against them
    must take the recorded runs beyond its first seeds instead of running the kernel."""
    import tcplab
    from tcplab.results import write_results
    from tcplab.scenario import Scenario

    cell = Cell("bbr", 10e6, 1e-2, "shallow", "short")
    old = tmp_path / "old"
    for seed in range(1, 5):
        write_results(tcplab.run(Scenario.from_dict(cell.scenario(seed))), old / "cells" / cell.name /
                      f"linux-s{seed}", report=False)
    (old / "fidelity.json").write_text(json.dumps(_doc()))
    doc = run_grid([cell], 2, tmp_path / "new", kernel_runs=old, max_seeds=4)
    (row,) = doc["cells"]
    first = [r["retransmits"] for r in row["runs"]["sim"][:2]]
    assert needs_more_seeds(row["runs"]["sim"][:2], row["runs"]["linux"][:2]), first
    assert row["seeds"] == 4 and len(row["runs"]["sim"]) == len(row["runs"]["linux"]) == 4
    assert row["runs"]["sim"] == row["runs"]["linux"], "the same simulations both ways"
    assert "2 seeds, up to 4 where the spread asks for them (1 cells)" in (tmp_path / "new" / "fidelity.md").read_text()
    # Without the extension the same grid stops at its seeds.
    assert run_grid([cell], 2, tmp_path / "two", kernel_runs=old)["cells"][0]["seeds"] == 2


def test_one_short_cell_runs_both_ways(emu: Path, tmp_path: Path) -> None:
    out = tmp_path / "fid"
    r = runner.invoke(app, ["fidelity", "--controllers", "reno", "--rates", "10e6", "--losses", "0",
                            "--buffers", "shallow", "--kinds", "short", "--seeds", "1", "--out", str(out)])
    assert r.exit_code == 0, r.output
    doc = json.loads((out / "fidelity.json").read_text())
    assert doc["machine"]["kernel"] and doc["machine"]["sysctls"]["net.ipv4.tcp_rmem"]
    (cell,) = doc["cells"]
    assert cell["name"] == "reno-10M-loss0-shallow-short"
    for side in ("sim", "linux"):
        run = cell["runs"][side][0]
        assert run["completed"] == 1.0 and 0.1 < run["value"] < 5.0, (side, run)
        assert (out / "cells" / cell["name"] / f"{side}-s1" / "flows.parquet").exists()
    assert cell["pass"] or cell["first_divergence"] is not None
    assert "tcplab fidelity" in (out / "report.html").read_text()
    kernel = cell["runs"]["linux"][0]
    assert kernel["overflow_drops_after_stalls"] <= kernel["overflow_drops"], kernel
    assert 0.0 <= kernel["stall_window_share"] <= 1.0 and cell["linux_stalls"] is not None
    # The kernel's answers to deliveries are read at the deliveries' modelled times
    # (docs/live.md#stalls).
    answers = json.loads((out / "cells" / cell["name"] / "linux-s1" / "summary.json").read_text())
    assert answers["live"]["kernel_answers"]["packets"] > 0, answers["live"]["kernel_answers"]
    # ... and never overtake what their host sent before them: the kernel sender's new data
    # reaches the model in sequence order (a late answer once did, and the kernel saw
    # reordering: docs/fidelity.md, group 4).
    import polars as pl

    sends = pl.read_parquet(out / "cells" / cell["name"] / "linux-s1" / "segments.parquet")
    new = sends.filter(pl.col("retransmission") == 0).sort("time_ns", maintain_order=True)
    assert new["seq"].is_sorted(), "new data offered out of order"

    # The same cell against the kernel run just recorded: only the simulation runs again.
    again = tmp_path / "again"
    r = runner.invoke(app, ["fidelity", "--controllers", "reno", "--rates", "10e6", "--losses", "0",
                            "--buffers", "shallow", "--kinds", "short", "--seeds", "1", "--out", str(again),
                            "--kernel-runs", str(out)])
    assert r.exit_code == 0, r.output
    redo = json.loads((again / "fidelity.json").read_text())
    assert redo["kernel_runs"] == str(out.resolve()) and redo["machine"] == doc["machine"]
    assert redo["cells"][0]["runs"] == cell["runs"], "the same simulation, the same recorded kernel run"
    assert not (again / "cells" / cell["name"] / "linux-s1").exists()
    assert "kernel runs recorded earlier" in (again / "fidelity.md").read_text()


def test_kernel_runs_missing_a_cell_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "fidelity.json").write_text(json.dumps(_doc()))
    r = runner.invoke(app, ["fidelity", "--controllers", "reno", "--rates", "10e6", "--losses", "0",
                            "--buffers", "deep", "--kinds", "long", "--seeds", "2", "--kernel-runs",
                            str(tmp_path / "old"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "no kernel run reno-10M-loss0-deep-long seed 1" in r.output
    assert not (tmp_path / "out").exists()


def test_overflow_drops_are_set_beside_the_emulators_stalls(tmp_path: Path) -> None:
    import polars as pl

    ms = 1_000_000
    # Two stalls: 100-117 ms and 500-502 ms (run time); a drain time of 10 ms makes the
    # windows 100-127 and 500-512 ms, 39 ms of a 1 s run.
    stalls = {"threshold_ns": ms, "count": 2, "total_ns": 19 * ms, "cut": 0, "from_ns": [100 * ms, 500 * ms],
              "until_ns": [117 * ms, 502 * ms], "worst_ns": [17 * ms, 2 * ms], "packets": [14, 2]}
    (tmp_path / "summary.json").write_text(json.dumps({"duration_s": 1.0, "live": {
        "emulator_stalls": stalls, "machine_cpu_ms": {"steal": 12.0, "idle": 900.0}}}))
    drops = [(99, "buffer_overflow"), (100, "buffer_overflow"), (126, "buffer_overflow"), (128, "buffer_overflow"),
             (505, "link_error"), (511, "buffer_overflow"), (900, "buffer_overflow")]
    pl.DataFrame({"time_ns": [t * ms for t, _ in drops], "cause": [c for _, c in drops]}) \
        .write_parquet(tmp_path / "drops.parquet")
    st = stall_drops(tmp_path, 10 * ms)
    assert st == {"stalls": 2.0, "stall_ms": 19.0, "overflow_drops": 6.0, "overflow_drops_after_stalls": 3.0,
                  "stall_window_share": pytest.approx(0.039), "steal_ms": 12.0}
    (tmp_path / "summary.json").write_text(json.dumps({"duration_s": 1.0}))
    assert stall_drops(tmp_path, 10 * ms) is None, "a simulation has no stalls"
    assert Cell("reno", 10e6, 0.0, "shallow", "long").drain_ns == 9_600_000
    # a burst's echo (late data ACKed at once and answered) reaches the queue up to a round trip later
    assert Cell("reno", 10e6, 0.0, "shallow", "long").after_stall_ns == 40_000_000 + 9_600_000



def test_a_flows_stalled_time_is_the_stalls_within_its_span() -> None:
    from tcplab.live.fidelity import stall_windows, stalled_ns

    ms = 1_000_000
    # Overlapping stalls 100-117 and 110-130 ms merge; 500-502 ms stands alone.
    live = {"emulator_stalls": {"from_ns": [500 * ms, 100 * ms, 110 * ms], "until_ns": [502 * ms, 117 * ms, 130 * ms]}}
    assert stall_windows(live["emulator_stalls"]) == [(100 * ms, 130 * ms), (500 * ms, 502 * ms)]
    assert stall_windows(live["emulator_stalls"], 10 * ms) == [(100 * ms, 140 * ms), (500 * ms, 512 * ms)]
    assert stalled_ns(live, 0, 1000 * ms) == 32 * ms
    assert stalled_ns(live, 120 * ms, 501 * ms) == 11 * ms, "only the part inside the span counts"
    assert stalled_ns(live, 600 * ms, 900 * ms) == 0
    assert stalled_ns({}, 0, 1000 * ms) == 0, "a simulation has no stalls"

def _doc() -> dict:
    def side(v: float, r: float) -> dict:
        return {"value": v, "value_spread": 0.1, "retransmits": r, "retransmits_spread": 0.0}

    cells = [{"name": "reno-10M-loss0-deep-long", "kind": "long", **judge([{"value": 9.5e6, "retransmits": 10.0}],
                                                                          [{"value": 9.4e6, "retransmits": 11.0}])},
             {"name": "cubic-1.6M-loss0.01-shallow-short", "kind": "short",
              **judge([{"value": 2.0, "retransmits": 9.0}], [{"value": 1.5, "retransmits": 3.0}]),
              "first_divergence": {"stream": "drop", "index": 0, "a": {"stream": "drop", "time_ms": 12.5, "key": [2896]},
                                   "b": None}}]
    for c in cells:
        c["sim"], c["linux"] = side(c["sim"]["value"], c["sim"]["retransmits"]), \
            side(c["linux"]["value"], c["linux"]["retransmits"])
    return {"machine": {"kernel": "6.18-test", "cpus": 2, "load_average": [0.5, 0.4, 0.3],
                        "sysctls": {"net.ipv4.tcp_rmem": "4096 131072 16777216"}},
            "seeds": 3, "wall_time_s": 12.0, "passed": 1, "cells": cells}


def test_render_writes_the_markdown_table_from_fidelity_json(tmp_path: Path) -> None:
    (tmp_path / "fidelity.json").write_text(json.dumps(_doc()))
    r = runner.invoke(app, ["fidelity", "--render", str(tmp_path)])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "fidelity.md").read_text()
    assert md.startswith("1 of 2 cells pass against Linux 6.18-test; 3 seeds")
    lines = md.splitlines()
    assert lines[2].startswith("| cell | sim | linux | diff |")
    assert "| reno-10M-loss0-deep-long | 9.500 Mb/s ±5 % | 9.400 Mb/s ±5 % | +1 % |" in md
    assert "+33 % miss" in md and "drop #0: (2896,) at 12.5 ms / end" in md
    assert "`net.ipv4.tcp_rmem` = 4096 131072 16777216" in md
    assert "cubic-1.6M-loss0.01-shallow-short" in (tmp_path / "report.html").read_text()


def test_render_of_a_missing_file_is_one_line(tmp_path: Path) -> None:
    r = runner.invoke(app, ["fidelity", "--render", str(tmp_path / "none")])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "--render" in r.output
