"""Writes the golden settings of the Rust claims tests (issue 26 §4, "one definition per
paper setting").

The claims tests (`crates/tcplab-sim/tests/claims_*.rs`) start every experiment from a
shipped scenario file and vary only what the experiment varies. Rust cannot read the TOML
files themselves (their units, defaults and profiles are resolved by the Python schema), so
this script writes each file's canonical scenario JSON, the form the simulator deserializes,
to `crates/tcplab-sim/tests/settings/<name>.json`; `common::settings::setting(name)` loads
it. `tests/test_claims_settings.py` fails when a shipped file and its golden JSON disagree:
run this script after editing one of the files below.

    .venv/bin/python scripts/claims_settings.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "python" / "tcplab" / "data" / "scenarios"
SETTINGS = ROOT / "crates" / "tcplab-sim" / "tests" / "settings"

#: The shipped scenarios the claims tests load (file stems), by claims file.
NAMES: tuple[str, ...] = (
    # claims_veno.rs
    "veno-fig5",
    "veno-fig6",
    "veno-fig7",
    "veno-table1",
    # claims_wlan.rs
    *(f"wlan-exp1-{p}-{q}-{cc}" for p in ("thin", "fat") for q in ("ll", "hl") for cc in ("reno", "veno")),
    *(f"wlan-exp2-case{k}" for k in (1, 2, 3, 4)),
    "wlan-exp3-droptail-reno",
    "wlan-exp3-droptail-veno",
    # claims_red.rs
    "red-dumbbell",
    # claims_areno.rs
    "areno-fig6",
    "areno-fig7",
    # claims_venoplus.rs
    "venoplus",
)


def golden(name: str) -> str:
    """The golden JSON text of shipped scenario ``name``: its canonical scenario JSON,
    pretty-printed with sorted keys and a trailing newline."""
    from tcplab.scenario import Scenario

    path = SHIPPED / f"{name}.toml"
    scenario = Scenario.from_toml(path.read_text(), name=name, path=str(path))
    return json.dumps(json.loads(scenario.canonical_json()), indent=2, sort_keys=True) + "\n"


def main() -> int:
    SETTINGS.mkdir(parents=True, exist_ok=True)
    stale = sorted(p.name for p in SETTINGS.glob("*.json") if p.stem not in NAMES)
    for name in stale:
        (SETTINGS / name).unlink()
        print(f"removed {name} (no longer loaded)")
    for name in NAMES:
        out = SETTINGS / f"{name}.json"
        text = golden(name)
        if not out.exists() or out.read_text() != text:
            out.write_text(text)
            print(f"wrote {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
