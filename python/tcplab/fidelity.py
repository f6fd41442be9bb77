"""``tcplab fidelity``: the ``linux`` profile simulated against the kernel of the machine it
runs on, through the live emulator (docs/fidelity.md).

Each cell of the grid — controller × rate × loss × buffer × transfer kind — is one scenario:
hosts a and b on one link, 20 ms each way (RTT 40 ms), a drop-tail buffer of 0.25 BDP
("shallow") or 1.5 BDP ("deep") packets each way (BDP = rate × 40 ms / 1500 B, at least 2),
Bernoulli loss on a -> b, one flow a -> b under ``[tcp] profile = "linux"`` with the
controller named (the profile's recovery); a ``long`` flow runs 30 s, a ``short`` one moves
200 kB. For every seed the cell runs simulated (``tcplab.run``) and with the kernel's TCP
(``tcplab.live.run.run_live``, ``stack = "linux"``, the kernel's trace recorded), each into
a results directory of its own.

Measured: throughput (long) or completion time from the first data transmission to the last
byte acknowledged (short: both sides counted alike, the live handshake left out), and
retransmitted segments. The tolerances are the issue's, fixed before any run: throughput or
completion time within ±10 % of the kernel's mean over the seeds; retransmissions within
±20 %, or both means under 5 segments. A cell that misses carries the first divergence of its
first seed from ``tcplab diff``.

More seeds where the spread asks for them (a rule fixed before any run, which does not look at
the verdict): a cell whose seeds scatter, on either side, by more than a measure's tolerance
(half the range over the seeds beyond ±10 % of the mean for throughput or completion time, or
beyond ±20 % for retransmissions when either side's mean is 5 or more) runs both ways up to
``max_seeds`` seeds before it is judged (`needs_more_seeds`).

A kernel run also says how its overflow drops sit against the emulator's stalls (stretches in
which it delivered packets at least 1 ms late, ``tcplab_live::stalls``): a stall compresses
what the hosts sent in it into a burst the model did not see coming, and the burst's echo (the
receiver's ACKs for data delivered late, answered by the sender) reaches the queue up to a
round trip later. `stall_drops` counts the drops inside a stall or within a round trip and one
buffer's drain time after it (`Cell.after_stall_ns`), beside the share of the run those
windows cover: the share the drops would have if stalls did not matter.
"""

from __future__ import annotations

import json
import os
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

RTT_S = 0.040
BUFFER_BDP = {"shallow": 0.25, "deep": 1.5}
KINDS = {"long": "30s", "short": "200kB"}
THROUGHPUT_TOLERANCE = 0.10
RETRANSMIT_TOLERANCE = 0.20
FEW_RETRANSMITS = 5.0
SYSCTLS = ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_congestion_control",
           "net.ipv4.tcp_recovery", "net.ipv4.tcp_early_retrans", "net.ipv4.tcp_frto",
           "net.ipv4.tcp_timestamps", "net.ipv4.tcp_sack", "net.ipv4.tcp_dsack",
           "net.ipv4.tcp_moderate_rcvbuf", "net.ipv4.tcp_adv_win_scale", "net.core.default_qdisc")


@dataclass(frozen=True)
class Cell:
    controller: str
    rate_bps: float
    loss: float
    buffer: str
    kind: str

    @property
    def name(self) -> str:
        return f"{self.controller}-{self.rate_bps / 1e6:g}M-loss{self.loss:g}-{self.buffer}-{self.kind}"

    @property
    def buffer_packets(self) -> int:
        return max(2, round(BUFFER_BDP[self.buffer] * self.rate_bps * RTT_S / (1500 * 8)))

    @property
    def drain_ns(self) -> int:
        """The time the link takes to send a full buffer of 1500-byte packets."""
        return round(self.buffer_packets * 1500 * 8 / self.rate_bps * 1e9)

    @property
    def after_stall_ns(self) -> int:
        """How long after a stall its bursts reach the queue: the round trip of the echo (data
        delivered late, ACKed at once, answered by the sender) and one drain of the buffer."""
        return round(RTT_S * 1e9) + self.drain_ns

    def scenario(self, seed: int) -> dict[str, Any]:
        """The cell's scenario as a dict: one flow of the kernel's TCP (``stack = "linux"``).
        The live run runs it with the kernel; simulated, the flow is the ``linux`` profile's
        twin of it, and its sender starts from the handshake's RTT sample as the kernel's
        does (``tcplab_sim::handshake``)."""
        link: dict[str, Any] = {"from": "a", "to": "b", "rate": f"{self.rate_bps / 1e6:g}Mbps",
                                "delay": f"{RTT_S * 500:g}ms", "buffer": self.buffer_packets}
        if self.loss:
            link["forward"] = {"loss": self.loss}
        flow: dict[str, Any] = {"src": "a", "dst": "b", "controller": self.controller}
        if self.kind == "short":
            flow["bytes"] = KINDS["short"]
        flow["stack"] = "linux"
        return {"name": f"fidelity-{self.name}", "seed": seed,
                "duration": KINDS["long"] if self.kind == "long" else "60s",
                "nodes": [{"name": "a", "kind": "host"}, {"name": "b", "kind": "host"}],
                "links": [link], "tcp": {"profile": "linux"}, "flows": [flow]}


def grid(controllers: list[str], rates: list[float], losses: list[float], buffers: list[str],
         kinds: list[str]) -> list[Cell]:
    for b in buffers:
        if b not in BUFFER_BDP:
            raise ValueError(f"--buffers {b!r}: expected one of {sorted(BUFFER_BDP)}")
    for k in kinds:
        if k not in KINDS:
            raise ValueError(f"--kinds {k!r}: expected one of {sorted(KINDS)}")
    return [Cell(c, r, p, b, k) for c in controllers for r in rates for p in losses for b in buffers for k in kinds]


def measure(results: Path, kind: str, after_ns: int | None = None) -> dict[str, float]:
    """A run's measures from its results directory: ``value`` (throughput in bit/s, or the
    completion time in s from the first data transmission) and ``retransmits``; with
    `after_ns` (a live run) also how its overflow drops sit against the emulator's stalls
    (`stall_drops`)."""
    import polars as pl

    f = pl.read_parquet(results / "flows.parquet").row(0, named=True)
    out = {"retransmits": float(f["retransmits"] or 0)}
    if kind == "long":
        out["value"] = float(f["throughput_bps"])
    else:
        seg = pl.read_parquet(results / "segments.parquet").filter(pl.col("flow") == 0)
        first = seg["time_ns"].min() if len(seg) else f["start_ns"]
        out["value"] = (int(f["end_ns"]) - int(first)) / 1e9  # type: ignore[arg-type]
        out["completed"] = float(bool(f["completed"]))
    if after_ns is not None and (st := stall_drops(results, after_ns)) is not None:
        out.update(st)
    return out


def stall_drops(results: Path, after_ns: int) -> dict[str, float] | None:
    """How a live run's overflow drops sit against the emulator's stalls
    (``tcplab.live.fidelity.stalls``): a stall compresses what the hosts sent during it into a
    burst the model did not see coming, whose drops (its echo's too) fall within `after_ns`
    after the stall's last late write (`Cell.after_stall_ns`). Returns the stalls, their
    time, the overflow drops, those inside a stall or within `after_ns` of it, and the share of the
    run those windows cover (what the drops' share would be if stalls did not matter). None
    when the run records no stalls (a simulation, or an emulator that does not log them)."""
    import polars as pl

    from tcplab.live.fidelity import stall_windows

    summary = json.loads((results / "summary.json").read_text())
    st = (summary.get("live") or {}).get("emulator_stalls")
    if st is None:
        return None
    merged = stall_windows(st, after_ns)
    drops = pl.read_parquet(results / "drops.parquet").filter(pl.col("cause") == "buffer_overflow")
    times = sorted(drops["time_ns"].to_list())
    inside, k = 0, 0
    for t in times:
        while k < len(merged) and merged[k][1] < t:
            k += 1
        inside += k < len(merged) and merged[k][0] <= t
    span = int(summary.get("duration_s", 0) * 1e9) or 1
    out = {"stalls": float(st["count"]), "stall_ms": st["total_ns"] / 1e6, "overflow_drops": float(len(times)),
           "overflow_drops_after_stalls": float(inside),
           "stall_window_share": sum(b - a for a, b in merged) / span}
    cpu = summary["live"].get("machine_cpu_ms") or {}
    if "steal" in cpu:
        out["steal_ms"] = float(cpu["steal"])
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else float("nan")


def _spread(xs: list[float]) -> float:
    m = _mean(xs)
    return (max(xs) - min(xs)) / m if xs and m else 0.0


def needs_more_seeds(sim: list[dict[str, float]], linux: list[dict[str, float]]) -> bool:
    """Whether a cell's seeds scatter, on either side, by more than a measure's tolerance: half
    the range of its values over the seeds beyond the throughput (completion time) tolerance, or
    of its retransmissions beyond theirs when either side's mean is `FEW_RETRANSMITS` or more.
    The verdict plays no part."""
    def half_spread(runs: list[dict[str, float]], key: str) -> float:
        return _spread([r[key] for r in runs]) / 2

    if max(half_spread(sim, "value"), half_spread(linux, "value")) > THROUGHPUT_TOLERANCE:
        return True
    few = max(_mean([r["retransmits"] for r in sim]), _mean([r["retransmits"] for r in linux])) < FEW_RETRANSMITS
    return not few and max(half_spread(sim, "retransmits"), half_spread(linux, "retransmits")) > RETRANSMIT_TOLERANCE


def judge(sim: list[dict[str, float]], linux: list[dict[str, float]]) -> dict[str, Any]:
    """The cell's verdict from both sides' measures over the seeds."""
    sv, lv = _mean([r["value"] for r in sim]), _mean([r["value"] for r in linux])
    sr, lr = _mean([r["retransmits"] for r in sim]), _mean([r["retransmits"] for r in linux])
    value_ok = abs(sv - lv) <= THROUGHPUT_TOLERANCE * lv
    retx_ok = max(sr, lr) < FEW_RETRANSMITS or abs(sr - lr) <= RETRANSMIT_TOLERANCE * lr
    return {"sim": {"value": sv, "value_spread": _spread([r["value"] for r in sim]), "retransmits": sr,
                    "retransmits_spread": _spread([r["retransmits"] for r in sim])},
            "linux": {"value": lv, "value_spread": _spread([r["value"] for r in linux]), "retransmits": lr,
                      "retransmits_spread": _spread([r["retransmits"] for r in linux])},
            "value_diff": (sv - lv) / lv if lv else None, "retransmits_diff": (sr - lr) / lr if lr else None,
            "value_ok": value_ok, "retransmits_ok": retx_ok, "pass": value_ok and retx_ok,
            "linux_stalls": _stalls(linux)}


def _stalls(runs: list[dict[str, float]]) -> dict[str, float] | None:
    """The kernel runs' stalls summed over the seeds: the overflow drops, those after a
    stall, and the share of time those windows cover (mean over the seeds)."""
    if not runs or any("overflow_drops" not in r for r in runs):
        return None
    out = {"stall_ms": sum(r["stall_ms"] for r in runs), "overflow_drops": sum(r["overflow_drops"] for r in runs),
           "overflow_drops_after_stalls": sum(r["overflow_drops_after_stalls"] for r in runs),
           "stall_window_share": _mean([r["stall_window_share"] for r in runs])}
    if all("steal_ms" in r for r in runs):
        out["steal_ms"] = sum(r["steal_ms"] for r in runs)
    return out


def machine() -> dict[str, Any]:
    """The kernel and the settings the comparison depends on, as read here."""
    sysctls = {}
    for k in SYSCTLS:
        p = Path("/proc/sys") / k.replace(".", "/")
        sysctls[k] = " ".join(p.read_text().split()) if p.exists() else None
    return {"kernel": platform.release(), "cpus": os.cpu_count(), "sysctls": sysctls,
            "load_average": list(os.getloadavg())}


def recorded_kernel_runs(cells: list[Cell], seeds: int, kernel_runs: Path) -> dict[str, Any]:
    """The machine of an earlier grid whose kernel runs are to be reused (its
    ``fidelity.json``), after checking that it holds every cell's runs for every seed; raises
    ValueError naming the first one missing. (Runs beyond `seeds`, which the spread may ask
    for, are taken from it where it has them and run here otherwise: `_kernel_run`.)"""
    try:
        recorded = json.loads((kernel_runs / "fidelity.json").read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"--kernel-runs {str(kernel_runs)!r}: {e}") from e
    for cell in cells:
        for seed in range(1, seeds + 1):
            run = kernel_runs / "cells" / cell.name / f"linux-s{seed}"
            if not (run / "flows.parquet").exists():
                raise ValueError(f"--kernel-runs {str(kernel_runs)!r}: no kernel run {cell.name} seed {seed} ({run})")
    return dict(recorded["machine"])


def run_grid(cells: list[Cell], seeds: int, out: Path, progress: Callable[[str], None] | None = None,
             kernel_runs: Path | None = None, max_seeds: int | None = None) -> dict[str, Any]:
    """Runs every cell `seeds` times both ways into `out` (``cells/<cell>/{sim,linux}-s<seed>``),
    and up to `max_seeds` (default: `seeds`) where `needs_more_seeds`, and writes
    ``fidelity.json``; returns its content. With `kernel_runs` (an earlier grid's results
    directory) the kernel side is not run again where that grid recorded it: each cell is
    judged against its recorded kernel runs (a seed it lacks is run here, on the same kernel
    only), and the machine is theirs."""
    import tcplab
    from tcplab import diff
    from tcplab.results import write_results
    from tcplab.scenario import Scenario

    here = machine() if kernel_runs is None else recorded_kernel_runs(cells, seeds, kernel_runs)
    max_seeds = max(seeds, max_seeds or seeds)
    doc: dict[str, Any] = {"machine": here, "seeds": seeds, "max_seeds": max_seeds,
                           "tolerances": {"throughput_or_completion": THROUGHPUT_TOLERANCE,
                                          "retransmits": RETRANSMIT_TOLERANCE,
                                          "few_retransmits": FEW_RETRANSMITS},
                           "cells": []}
    if kernel_runs is not None:
        doc["kernel_runs"] = str(kernel_runs.resolve())
    t0 = time.monotonic()
    for cell in cells:
        base = out / "cells" / cell.name
        sim: list[dict[str, float]] = []
        lin: list[dict[str, float]] = []

        def run_seeds(upto: int) -> None:
            for seed in range(len(sim) + 1, upto + 1):
                if progress:
                    progress(f"{cell.name} seed {seed}")
                s_dir = write_results(tcplab.run(Scenario.from_dict(cell.scenario(seed))), base / f"sim-s{seed}",
                                      report=False)
                sim.append(measure(s_dir, cell.kind))
                k_dir = _kernel_run(cell, seed, base, kernel_runs, here["kernel"])
                lin.append(measure(k_dir, cell.kind, cell.after_stall_ns))

        run_seeds(seeds)
        if max_seeds > seeds and needs_more_seeds(sim, lin):
            run_seeds(max_seeds)
        row: dict[str, Any] = {**asdict(cell), "name": cell.name, "buffer_packets": cell.buffer_packets,
                               "seeds": len(sim), "runs": {"sim": sim, "linux": lin}, **judge(sim, lin)}
        if not row["pass"]:
            try:
                d = diff.diff(diff.load(base / "sim-s1"), diff.load(_kernel_run(cell, 1, base, kernel_runs,
                                                                                 here["kernel"])))
                fd = d["first_divergence"]
                row["first_divergence"] = None if fd is None else {k: fd[k] for k in ("stream", "index", "a", "b")}
            except diff.DiffError as e:
                row["first_divergence"] = {"error": str(e)}
        doc["cells"].append(row)
    doc["wall_time_s"] = time.monotonic() - t0
    doc["passed"] = sum(c["pass"] for c in doc["cells"])
    out.mkdir(parents=True, exist_ok=True)
    (out / "fidelity.json").write_text(json.dumps(doc, indent=1, default=str))
    write_reports(doc, out)
    return doc


def _kernel_dir(cell: Cell, seed: int, base: Path, kernel_runs: Path | None) -> Path:
    return (base if kernel_runs is None else kernel_runs / "cells" / cell.name) / f"linux-s{seed}"


def _kernel_run(cell: Cell, seed: int, base: Path, kernel_runs: Path | None, kernel: str) -> Path:
    """The results directory of the cell's kernel run for `seed`: the recorded one of
    `kernel_runs` when it has it, else run now through the live emulator (on the kernel the
    grid is judged against, `kernel`: raises RuntimeError on another)."""
    if kernel_runs is not None:
        recorded = _kernel_dir(cell, seed, base, kernel_runs)
        if (recorded / "flows.parquet").exists():
            return recorded
        if platform.release() != kernel:
            raise RuntimeError(f"--kernel-runs {str(kernel_runs)!r}: {cell.name} seed {seed} is not recorded and "
                               f"this machine runs Linux {platform.release()}, not {kernel}")
    from tcplab.live.run import run_live
    from tcplab.scenario import Scenario

    return run_live(Scenario.from_dict(cell.scenario(seed)), base / f"linux-s{seed}", realtime=True,
                    report=False).out_dir


def _fmt(v: float | None, kind: str) -> str:
    if v is None or v != v:
        return "–"
    return f"{v / 1e6:.3f} Mb/s" if kind == "long" else f"{v:.3f} s"


#: The columns of a cell's row, in the terminal, the HTML page and the Markdown table alike.
COLUMNS = ("cell", "sim", "linux", "diff", "retx sim", "retx linux", "retx", "linux stalls", "first divergence")


def rows(doc: dict[str, Any]) -> list[list[str]]:
    """One row of `COLUMNS` per cell: both sides' means (± their spread over the seeds), the
    verdicts, and a missed cell's first divergence (stream, index, both sides' event)."""
    out = []
    for c in doc["cells"]:
        s, li = c["sim"], c["linux"]
        fd = c.get("first_divergence") or {}
        if c["pass"]:
            where = ""
        elif "stream" in fd:
            where = f"{fd['stream']} #{fd['index']}: {_event(fd.get('a'))} / {_event(fd.get('b'))}"
        else:
            where = str(fd.get("error", ""))
        out.append([c["name"],
                    f"{_fmt(s['value'], c['kind'])} ±{s['value_spread'] * 50:.0f} %",
                    f"{_fmt(li['value'], c['kind'])} ±{li['value_spread'] * 50:.0f} %",
                    f"{(c['value_diff'] or 0) * 100:+.0f} %" + ("" if c["value_ok"] else " miss"),
                    f"{s['retransmits']:.1f}", f"{li['retransmits']:.1f}",
                    "ok" if c["retransmits_ok"] else "miss", _stall_text(c.get("linux_stalls")), where])
    return out


def _stall_text(st: dict[str, float] | None) -> str:
    """The kernel runs' overflow drops that followed an emulator stall, against the share of
    time such windows cover: "9 of 40 drops in 3 % of time"."""
    if not st:
        return "–"
    return (f"{st['overflow_drops_after_stalls']:.0f} of {st['overflow_drops']:.0f} drops "
            f"in {st['stall_window_share']:.0%} of time")


def _event(e: Any) -> str:
    """A divergent event as diff gives it (a dict with stream, key and time), or "end"."""
    if not isinstance(e, dict):
        return "end" if e is None else str(e)
    key = e.get("key")
    at = e.get("time_ms")
    return f"{tuple(key) if isinstance(key, list) else key}" + \
        (f" at {at:.1f} ms" if isinstance(at, (int, float)) else "")


def headline(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    reused = " (its kernel runs recorded earlier, the simulations run again)" if doc.get("kernel_runs") else ""
    return (f"{doc['passed']} of {len(doc['cells'])} cells pass against Linux {m['kernel']}{reused}; "
            f"{_seeds_text(doc)}; "
            f"wall time {doc['wall_time_s']:.0f} s. Rule (fixed before running): throughput or completion time "
            f"within ±{THROUGHPUT_TOLERANCE:.0%} of Linux's mean, retransmissions within "
            f"±{RETRANSMIT_TOLERANCE:.0%} or both under {FEW_RETRANSMITS:g}; ± after a mean is half its spread "
            f"(max − min) over the seeds.")


def _seeds_text(doc: dict[str, Any]) -> str:
    """"3 seeds", or "3 seeds, up to 6 where the spread asks for them (12 cells)"."""
    base, most = doc["seeds"], doc.get("max_seeds", doc["seeds"])
    if most <= base:
        return f"{base} seeds"
    more = sum(c.get("seeds", base) > base for c in doc["cells"])
    return f"{base} seeds, up to {most} where the spread asks for them ({more} cells)"


def report_html(doc: dict[str, Any]) -> str:
    """The grid as one HTML page: the machine, the rule, a row per cell."""
    from tcplab.report.html import esc, html_table, page

    m = doc["machine"]
    body = [f"<h1>tcplab fidelity: the linux profile against Linux {esc(m['kernel'])}</h1>",
            f"<p>{esc(headline(doc))}</p>", html_table(list(COLUMNS), rows(doc)),
            "<h2>Machine</h2>", html_table(["setting", "value"], [[k, v] for k, v in m["sysctls"].items()])]
    return page("tcplab fidelity", body)


def report_markdown(doc: dict[str, Any]) -> str:
    """The grid as Markdown (the table of docs/fidelity.md): the rule, a row per cell, the
    machine's kernel and settings."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    m = doc["machine"]
    out = [headline(doc), "", line(list(COLUMNS)), line(["---"] * len(COLUMNS))]
    out += [line(r) for r in rows(doc)]
    out += ["", f"Machine: Linux {m['kernel']}, {m['cpus']} CPUs, load average at the start "
            f"{', '.join(f'{x:.2f}' for x in m.get('load_average', []))}; "
            + "; ".join(f"`{k}` = {v}" for k, v in m["sysctls"].items() if v is not None) + "."]
    return "\n".join(out) + "\n"


def write_reports(doc: dict[str, Any], out: Path) -> None:
    """report.html and fidelity.md of `doc` into `out`."""
    (out / "report.html").write_text(report_html(doc))
    (out / "fidelity.md").write_text(report_markdown(doc))
