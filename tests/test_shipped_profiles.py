"""The default profile is "linux" (issue 28); every shipped scenario, bench scenario and
paper experiment names the stack it models, so none of them changes with the default: a
file or an experiment that named nothing would silently move to Linux's settings."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT / "scenarios").glob("*.toml")) + sorted((ROOT / "bench" / "scenarios").glob("*.toml"))


def _profiles(doc: dict) -> set[str | None]:
    """The profile each flow ends up with (None: the default)."""
    top = (doc.get("tcp") or {}).get("profile")
    flows = doc.get("flows") or [{}]
    return {(f.get("tcp") or {}).get("profile", top) for f in flows}


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_every_shipped_scenario_names_its_profile(path: Path) -> None:
    assert None not in _profiles(tomllib.loads(path.read_text())), f"{path.name}: name tcp.profile"


def test_every_paper_experiment_names_its_profile() -> None:
    from tcplab.reproduce import select

    for e in select(["all"]):
        if e.live is not None:
            continue
        doc = e.points("quick")[0].document
        if "cfg" in doc:  # a campaign probe: its scenario
            continue
        assert None not in _profiles(doc), e.id


def test_the_campaigns_probe_and_cross_flows_are_rfc() -> None:
    from tcplab.campaign.config import CampaignConfig
    from tcplab.campaign.population import draw_paths
    from tcplab.campaign.probe_sweep import ProbeTask
    from tcplab.campaign.schedule import schedule

    cfg = CampaignConfig.from_dict({"schedule": {"paths": 3}})
    paths = draw_paths(cfg)
    probe = schedule(cfg, paths)[0]
    doc = ProbeTask(cfg, next(p for p in paths if p.id == probe.path), probe).scenario()
    assert _profiles(doc) == {"rfc"}
