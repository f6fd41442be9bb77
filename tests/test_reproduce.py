"""tcplab reproduce: the experiment registry, --list, a tiny experiment end to end, the
generated docs keeping manual sections."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest
from typer.testing import CliRunner

from tiny_suite import LOSSES, tiny_suite
from tcplab import reproduce
from tcplab.cli import app
from tcplab.reproduce.docs import render_docs, write_docs
from tcplab.reproduce.experiment import Claim
from tcplab.reproduce.html import render_report


def test_every_runnable_experiment_is_complete_and_ids_are_unique():
    ids = [e.id for e in reproduce.ALL]
    assert len(ids) == len(set(ids))
    ready = [e for e in reproduce.ALL if e.pending is None]
    assert {"veno-fig4", "veno-fig5", "veno-fig6", "veno-fig7", "veno-table1", "areno-fig6", "areno-fig7", "venoplus"} <= {
        e.id for e in ready
    }
    for e in ready:
        assert e.points and e.analyze and e.plots and e.table and e.setting and e.explanation, e.id
        assert e.command("full") == f"tcplab reproduce {e.id} --full"
    # every experiment's points are valid scenarios with distinct keys (no run)
    for e in ready:
        pts = e.points("quick")
        assert pts and len({p.key for p in pts}) == len(pts), e.id


def test_list_shows_ready_and_pending_experiments():
    r = CliRunner().invoke(app, ["reproduce", "--list"])
    assert r.exit_code == 0, r.output
    for needle in ("veno-fig5", "areno-fig7", "venoplus", "wlan-exp1", "pending: needs 802.11b", "eth-timeouts"):
        assert needle in r.output


def test_select_rejects_unknown_and_pending_ids():
    assert [e.id for e in reproduce.select(["veno-fig5"])] == ["veno-fig5"]
    assert all(e.pending is None for e in reproduce.select(["all"]))
    with pytest.raises(KeyError, match="unknown experiment 'nope'"):
        reproduce.select(["nope"])
    with pytest.raises(KeyError, match="'wlan-exp3' is pending: needs 802.11b WLAN model and RED"):
        reproduce.select(["wlan-exp3"])
    r = CliRunner().invoke(app, ["reproduce", "nope"])
    assert r.exit_code == 2


def test_tiny_experiment_end_to_end():
    suite = tiny_suite()
    fig4, fig5 = suite.outcomes
    assert fig5.runs == 3 * len(LOSSES) * 2
    f = fig5.frame
    assert set(f["variant"].unique()) == {"reno", "veno", "veno (Linux flavor)"}
    assert sorted(f["loss"].unique().to_list()) == LOSSES
    # published vs measured: mean +- CI over the 2 seeds
    r = next(r for r in fig5.rows if r.quantity == "Veno at loss 1e-2")
    assert r.published == "146.5" and r.n == 2 and r.ci is not None and r.mean > 0
    assert "±" in r.measured()
    # both claims evaluated with their numbers
    assert [c.text for c in fig5.claims] == [c.text for c in reproduce.get("veno-fig5").claims]
    assert all(c.numbers and isinstance(c.holds, bool) for c in fig5.claims)
    assert "Veno/Reno at 1e-2 = " in fig5.claims[0].numbers
    assert len(fig5.plots) == 1 and fig5.plots[0].figure.axes[0].get_xscale() == "log"
    assert fig4.plots and fig4.claims == []
    html = render_report(suite)
    assert html.count("data:image/png;base64,") == 2
    assert "tcplab reproduce veno-fig5 --quick" in html and "Published vs measured" in html
    assert "holds" in html


def test_a_claim_is_a_predicate_that_can_fail():
    suite = tiny_suite()
    frame = suite.outcomes[1].frame
    never = Claim("impossible", lambda f: (f["kBps"].max() > 1e9, "max kB/s"))
    assert not never.evaluate(frame).holds
    broken = Claim("missing data", lambda f: (f.filter(pl.col("loss") == 0.5)["kBps"][0] > 0, ""))
    res = broken.evaluate(frame)
    assert not res.holds and "could not be evaluated" in res.numbers


def test_generated_docs_keep_manual_sections(tmp_path):
    suite = tiny_suite()
    doc = tmp_path / "reproductions.md"
    manual = "<!-- manual:begin -->\n## WLAN (hand-written)\n\nkept as is | 1.23\n<!-- manual:end -->"
    doc.write_text("# old\n\nold generated text 99.9\n\n" + manual + "\n\nold tail\n")
    write_docs(suite, doc)
    text = doc.read_text()
    assert manual in text
    assert "old generated text" not in text and "old tail" not in text
    assert "quick mode" in text and "## Summary" in text and "Veno/Reno ≥ 1.4 at loss 1e-2" in text
    assert "wlan-exp1" in text  # pending list
    write_docs(suite, doc)  # idempotent for the manual part
    assert doc.read_text().count("manual:begin") == 1
    assert render_docs(dataclasses.replace(suite, outcomes=[])).startswith("# Reproductions")


def test_reproduce_command_writes_report_and_docs(tmp_path, monkeypatch):
    from tiny_suite import TINY_FIG5

    monkeypatch.setattr(reproduce, "select", lambda ids: [TINY_FIG5])
    doc = tmp_path / "reproductions.md"
    args = ["reproduce", "veno-fig5", "--out", str(tmp_path / "out"), "--jobs", "1", "-q", "--write-docs", str(doc)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "1 experiments, " in r.output and "claims hold" in r.output
    html = (tmp_path / "out" / "report.html").read_text()
    assert "data:image/png;base64," in html and "tcplab reproduce veno-fig5 --quick" in html
    assert "Veno/Reno ≥ 1.4 at loss 1e-2" in doc.read_text()
    assert len(list((tmp_path / "out" / "points").iterdir())) == 18
