"""The golden settings of the Rust claims tests (`crates/tcplab-sim/tests/settings/*.json`)
are the canonical scenario JSON of their shipped files now: editing a shipped scenario the
claims tests load without regenerating them fails here (issue 26 §4)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
from claims_settings import NAMES, SETTINGS, SHIPPED, golden  # noqa: E402

REGENERATE = "run `.venv/bin/python scripts/claims_settings.py`"


@pytest.mark.parametrize("name", NAMES)
def test_golden_setting_is_the_shipped_file(name: str) -> None:
    path = SETTINGS / f"{name}.json"
    assert path.exists(), f"{path.relative_to(ROOT)} is missing: {REGENERATE}"
    assert path.read_text() == golden(name), (
        f"{path.relative_to(ROOT)} differs from scenarios/{name}.toml: {REGENERATE}"
    )


def test_every_golden_setting_has_its_shipped_file() -> None:
    present = sorted(p.stem for p in SETTINGS.glob("*.json"))
    assert present, f"no golden settings in {SETTINGS}: {REGENERATE}"
    for name in present:
        assert (SHIPPED / f"{name}.toml").exists(), f"settings/{name}.json: no scenarios/{name}.toml"
    unlisted = sorted(set(present) - set(NAMES))
    assert not unlisted, f"settings/ holds files no claims test loads ({unlisted}): {REGENERATE}"
