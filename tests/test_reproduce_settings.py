"""The Veno and Venoplus experiments take their setting from their shipped scenario (issue 26
§4: one definition per paper setting): the point at the file's own values is the file, apart
from what the experiment states it changes, and a change to the file reaches every point."""

from __future__ import annotations

import shutil
from typing import Any

import pytest

from tcplab import shipped
from tcplab.reproduce import get
from tcplab.reproduce.common import shipped_doc
from tcplab.scenario import as_scenario

LOSS = "topology.bottleneck.forward.loss.p"
#: Changed by every experiment: the description (the points' parameters tell them apart), the
#: trace (what the experiment reads) and the flow names (a file names its flows after its mix).
ALWAYS = ("description", "trace", "flows.*.name")
#: experiment: (shipped file, its point at the file's values (seed 1), what else it changes)
CASES: dict[str, tuple[str, dict[str, Any], tuple[str, ...]]] = {
    "veno-fig5": ("veno-fig5", {"variant": "veno", LOSS: 1e-2}, ()),
    "veno-fig4": ("veno-fig5", {"variant": "veno", LOSS: 1e-2}, ()),
    "veno-fig1": ("veno-fig5", {"variant": "veno", LOSS: 1e-2}, ("name", "duration", "flows.0.bytes")),
    "veno-fig6": ("veno-fig6", {"mix": "2 reno + 2 veno", "loss": 1e-2}, ()),
    "veno-fig7": ("veno-fig7", {"k": 2, "loss": 1e-2}, ()),
    "veno-table1": ("veno-table1", {"flavor": "paper", "udp": "500 kb/s"}, ()),
    "venoplus": ("venoplus", {"flows": 16, "controller": "venoplus",
                              "topology.receiver_access.forward.loss.p": 1e-2}, ()),
    "veno-fig5-live": ("veno-fig5-live", {"run": "live", "variant": "veno", "loss": 1e-2}, ()),
}


def _points(id: str) -> list:
    e = get(id)
    return list(e.points("quick")) + (list(e.live.points("quick")) if e.live is not None else [])


def _flat(d: Any, pre: str = "") -> dict[str, Any]:
    if isinstance(d, dict):
        return {k: v for key, x in d.items() for k, v in _flat(x, f"{pre}{key}.").items()}
    if isinstance(d, list):
        return {k: v for i, x in enumerate(d) for k, v in _flat(x, f"{pre}{i}.").items()}
    return {pre[:-1]: d}


def _without(flat: dict[str, Any], changed: tuple[str, ...]) -> dict[str, Any]:
    def kept(path: str) -> bool:
        parts = path.split(".")
        return not any(
            len(parts) >= len(c.split(".")) and all(a in ("*", b) for a, b in zip(c.split("."), parts, strict=False))
            for c in changed
        )

    return {k: v for k, v in flat.items() if kept(k)}


@pytest.mark.parametrize("id", CASES)
def test_point_at_the_files_values_is_the_file(id):
    name, where, changed = CASES[id]
    (point,) = [p for p in _points(id) if p.params["seed"] == 1 and all(p.params[k] == v for k, v in where.items())]
    got = _without(_flat(as_scenario(point.document).canonical()), ALWAYS + changed)
    want = _without(_flat(as_scenario(shipped_doc(name)).canonical()), ALWAYS + changed)
    assert got == want


def test_points_follow_the_shipped_files(tmp_path, monkeypatch):
    root = tmp_path / "scenarios"
    shutil.copytree(shipped.shipped_dir(), root)
    for name in {c[0] for c in CASES.values()}:
        p = root / f"{name}.toml"
        text = p.read_text(encoding="utf-8")
        assert text.count("mss = 1460") == 1
        p.write_text(text.replace("mss = 1460", "mss = 1200"), encoding="utf-8")
    monkeypatch.setattr(shipped, "shipped_dir", lambda: root)
    for id in CASES:
        pts = _points(id)
        assert pts and {p.document["tcp"]["mss"] for p in pts} == {1200}, id
