"""The WLAN/RED and Adaptive Reno experiments take their setting from the shipped scenario files
(issue 26 §4): a point at a file's own values is that file, apart from what the experiment says
it varies, and a change to a file reaches every point built from it."""

from __future__ import annotations

import shutil

import pytest

from tcplab.reproduce import select
from tcplab.reproduce.common import areno_controller, headline_reading, shipped_doc
from tcplab.scenario import as_scenario

IDS = ["wlan-exp1", "wlan-exp2", "wlan-exp3", "areno-fig6", "areno-fig7", "areno-fig8", "areno-lab"]


def _points(eid: str) -> list:
    (e,) = select([eid])
    return [p for p in e.points("quick") if p.params["seed"] == 1]


def _setting(doc: dict) -> dict:
    """The canonical scenario without what names or traces a run (the suite's points keep their own)."""
    c = as_scenario(doc).canonical()
    for k in ("name", "description", "seed", "trace"):
        del c[k]
    for f in c["flows"]:
        del f["name"]
    return c


def _shipped(name: str, **controllers: object) -> dict:
    """``scenarios/<name>.toml`` with the flows of controller ``k`` run as ``controllers[k]``."""
    doc = shipped_doc(name)
    for f in doc["flows"]:
        f["controller"] = controllers.get(f["controller"], f["controller"])
    return doc


def _areno() -> object:
    return areno_controller(headline_reading())


def test_wlan_points_are_their_shipped_files():
    for p in _points("wlan-exp1"):
        q = p.params
        name = f"wlan-exp1-{q['pipe']}-{q['link'].lower()}-{q['controller']}"
        assert _setting(p.document) == _setting(shipped_doc(name)), name
    for p in _points("wlan-exp2"):
        case = p.params["case"]
        name = f"wlan-exp2-case{case}" if isinstance(case, int) else f"wlan-exp1-fat-{case[-2:].lower()}-reno"
        assert _setting(p.document) == _setting(shipped_doc(name)), case


def test_wlan_exp3_points_are_their_shipped_files():
    from tcplab.reproduce.wlan_red import WIRED_RECOVERY

    pts = _points("wlan-exp3")
    assert {p.params["network"] for p in pts} == {"802.11b", "wired"}
    for p in pts:
        cc, red = p.params["controller"], p.params["queue"] == "RED"
        if p.params["network"] == "802.11b":
            want = shipped_doc(f"wlan-exp3-{'red' if red else 'droptail'}-{cc}")
        else:  # varied: controller, queue, and the Veno paper's stack (Reno recovery, no SACK)
            want = shipped_doc("red-dumbbell")
            want["tcp"]["sack_blocks"] = 0
            for f in want["flows"]:
                f.update(controller=cc, recovery=WIRED_RECOVERY)
            if not red:
                want["topology"]["bottleneck"]["queue"] = {"discipline": "drop_tail"}
        assert _setting(p.document) == _setting(want), p.params


@pytest.mark.parametrize(("eid", "name", "at"), [("areno-fig6", "areno-fig6", ("capacity", 100)),
                                                 ("areno-fig7", "areno-fig7", ("loss", 1e-3))])
def test_areno_fig6_fig7_points_at_the_files_values_are_the_files(eid, name, at):
    pts = [p for p in _points(eid) if p.params[at[0]] == at[1]]
    assert {p.params["other"] for p in pts} == {"reno", "highspeed", "areno"}
    for p in pts:
        other = p.params["other"]
        assert _setting(p.document) == _setting(_shipped(name, areno=_areno() if other == "areno" else other))


def test_areno_fig8_points_are_the_parking_lot_file():
    for p in _points("areno-fig8"):
        assert _setting(p.document) == _setting(_shipped("areno-parking-lot", areno=_areno()))


def test_areno_lab_is_the_fig6_dumbbell_at_the_labs_rate_and_loss():
    from tcplab.reproduce import areno_lab

    (p,) = [p for p in _points("areno-lab") if p.params["run"] == "coexisting"]
    want = _shipped("areno-fig6", areno=_areno())
    topo = want["topology"]
    topo["bottleneck"].update(rate="300Mbps", buffer=2500, forward={"loss": areno_lab.LOSS})
    for side in ("sender_access", "receiver_access"):
        topo[side]["rate"] = "3Gbps"
    want["duration"] = f"{areno_lab.SECS['quick']}s"
    assert _setting(p.document) == _setting(want)


@pytest.mark.parametrize("eid", IDS)
def test_a_change_to_the_shipped_file_reaches_every_point(eid, tmp_path, monkeypatch):
    import tcplab.shipped

    src = tcplab.shipped.shipped_dir()
    for f in src.glob("*.toml"):
        text = f.read_text()
        (tmp_path / f.name).write_text(text.replace("mss = 1460", "mss = 1000"))
    shutil.copytree(src / "traces", tmp_path / "traces")
    monkeypatch.setattr(tcplab.shipped, "shipped_dir", lambda: tmp_path)
    pts = _points(eid)
    assert pts and all(as_scenario(p.document).canonical()["tcp"]["mss"] == 1000 for p in pts)
