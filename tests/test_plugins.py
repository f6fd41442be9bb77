"""Python controllers from outside the process: ``--plugin FILE.py`` for run,
validate, list, sweep (its workers, local or Dask, run the file too) and compare, and
installed packages' ``tcplab.controllers`` entry points."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PLUGIN = '''
import tcplab


class Halver(tcplab.Controller):
    """Halves its window at every loss (a plugin's controller)."""

    def on_ack(self, s):
        if self.cwnd < self.ssthresh:
            self.cwnd += self.mss
        else:
            self.cwnd += max(1, self.mss * self.mss // self.cwnd)

    def on_congestion(self, ev):
        self.ssthresh = max(self.cwnd // 2, 2 * self.mss)
        self.set_cwnd(self.mss if ev.kind == "timeout" else self.ssthresh)
        return ("1/2", 0.5)


tcplab.register_controller("{name}", Halver)
'''

SCENARIO = """
name = "pl"
seed = 1
duration = "2s"
[topology]
kind = "dumbbell"
pairs = 1
[topology.bottleneck]
rate = "5Mbps"
delay = "10ms"
buffer = 20
forward.loss = 1e-2
[[flows]]
controller = "{name}"
recovery = "sack"
"""


def _tcplab(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tcplab", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def _files(tmp: Path, name: str) -> tuple[Path, Path]:
    (tmp / "halver.py").write_text(PLUGIN.replace("{name}", name))
    (tmp / "s.toml").write_text(SCENARIO.replace("{name}", name))
    return tmp / "halver.py", tmp / "s.toml"


def test_run_validate_and_list_with_a_plugin(tmp_path: Path) -> None:
    plugin, scen = _files(tmp_path, "halver")
    r = _tcplab(["run", str(scen), "--out", "out", "--no-report", "--json", "--plugin", str(plugin)], tmp_path)
    assert r.returncode == 0, r.stderr
    (flow,) = json.loads(r.stdout)["flows"]
    assert flow["controller"] == "halver" and flow["bytes_delivered"] > 0 and flow["retransmits"] > 0
    assert _tcplab(["validate", str(scen), "--plugin", str(plugin)], tmp_path).returncode == 0
    listed = _tcplab(["list", "--plugin", str(plugin)], tmp_path)
    assert "halver" in listed.stdout and "Halves its window" in listed.stdout
    # without the plugin the name is unknown: one line, rc 2
    r = _tcplab(["validate", str(scen)], tmp_path)
    assert r.returncode == 2 and "'halver' is not a known controller" in r.stderr


def test_bad_plugins_are_one_line(tmp_path: Path) -> None:
    _, scen = _files(tmp_path, "halver")
    r = _tcplab(["run", str(scen), "--plugin", "missing.py"], tmp_path)
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0 and "--plugin missing.py" in r.stderr
    (tmp_path / "bad.py").write_text("raise RuntimeError('no luck')\n")
    r = _tcplab(["run", str(scen), "--plugin", "bad.py"], tmp_path)
    assert r.returncode == 2 and "--plugin bad.py: RuntimeError: no luck" in r.stderr
    assert not (tmp_path / "results").exists()


def test_sweep_workers_run_the_plugin(tmp_path: Path) -> None:
    plugin, scen = _files(tmp_path, "halver")
    scen.write_text(scen.read_text() + "\n[sweep]\nseeds = 3\n")
    r = _tcplab(["sweep", str(scen), "--out", "sw", "--jobs", "2", "-q", "--plugin", str(plugin)], tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(list((tmp_path / "sw" / "points").iterdir())) == 3


def test_dask_workers_run_the_plugin(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    from tcplab.plugins import load_plugin
    from tcplab.sweep import load_sweep, run_sweep, sweep_points

    name = "halver_dask"
    plugin, scen = _files(tmp_path, name)
    scen.write_text(scen.read_text() + "\n[sweep]\nseeds = 2\n")
    load_plugin(plugin)
    doc, spec = load_sweep(scen)
    pts = list(sweep_points(doc, spec))
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                                       silence_logs=50,
                                       scheduler_kwargs={"dashboard_address": ":0"})  # HTTP server: a free port, not 8787
    try:
        with distributed.Client(cluster) as client:
            res = run_sweep(pts, tmp_path / "dask", scheduler=client, progress=False)
            assert res.flows().height == 2
            assert set(res.flows()["controller"].to_list()) == {name}
    finally:
        cluster.close()
        from tcplab.controller_registry import unregister_controller

        unregister_controller(name)


def test_an_installed_entry_point_is_a_controller(tmp_path: Path) -> None:
    """A package declaring ``halver_ep = "halver_pkg:Halver"`` in the ``tcplab.controllers``
    group: its controller runs by name with no --plugin."""
    pkg = tmp_path / "site"
    pkg.mkdir()
    (pkg / "halver_pkg.py").write_text(PLUGIN.replace('tcplab.register_controller("{name}", Halver)\n', ""))
    dist = pkg / "halver_pkg-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: halver-pkg\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[tcplab.controllers]\nhalver_ep = halver_pkg:Halver\n")
    _, scen = _files(tmp_path, "halver_ep")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(pkg), os.environ.get("PYTHONPATH", "")])}
    r = _tcplab(["run", str(scen), "--out", "out", "--no-report", "--json"], tmp_path, env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["flows"][0]["controller"] == "halver_ep"
    assert "halver_ep" in _tcplab(["list"], tmp_path, env).stdout
