"""Live vs simulated throughput on a WLAN scenario (docs/live.md, "802.11b WLAN hops"):
the test scenario of tests/test_live_run.py (server -> HL and LL stations over the fat pipe,
two 1 MB Reno transfers, 6 s) over N seeds, live (root) and simulated, per flow mean and
standard deviation, and the compare rule's verdict (Welch, 95 %: docs/compare.md).

    sudo .venv/bin/python bench/live_wlan.py [SEEDS]      (default 5)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_live_run import WLAN  # noqa: E402

from tcplab.live.run import run_live  # noqa: E402
from tcplab.report.compare_stats import beyond_spread, spread  # noqa: E402
from tcplab.run import run  # noqa: E402
from tcplab.scenario import Scenario  # noqa: E402


def main(seeds: int) -> None:
    live, sim = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in range(1, seeds + 1):
            sc = Scenario.from_toml(WLAN).with_seed(seed)
            live.append(run_live(sc, Path(tmp) / f"s{seed}", realtime=True, report=False).result.flows["throughput_bps"].to_list())
            sim.append(run(sc).flows["throughput_bps"].to_list())
    for f, name in enumerate(("hl", "ll")):
        a, b = spread([s[f] for s in sim]), spread([x[f] for x in live])
        verdict, half, _ = beyond_spread(a, b)
        print(f"{name}: simulated {a.mean / 1e6:.3f} ± {a.sd / 1e6:.3f} Mb/s, live {b.mean / 1e6:.3f} ± {b.sd / 1e6:.3f} Mb/s, "
              f"live/simulated {b.mean / a.mean:.3f}, {verdict} (Welch half-width {half / 1e6 if half else 0:.3f} Mb/s)")
        print(f"  per seed simulated {[round(s[f] / 1e6, 3) for s in sim]}")
        print(f"  per seed live      {[round(x[f] / 1e6, 3) for x in live]}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
