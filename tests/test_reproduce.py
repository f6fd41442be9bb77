"""tcplab reproduce: the experiment registry, --list, a tiny experiment end to end, the
generated docs; the WLAN, RED, parking-lot and ETH experiments' analyses and claims on
synthetic frames and tiny real runs."""

from __future__ import annotations

import dataclasses

import numpy as np
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
    assert {
        "veno-fig1",
        "veno-fig4",
        "veno-fig5",
        "veno-fig6",
        "veno-fig7",
        "veno-table1",
        "wlan-exp1",
        "wlan-exp2",
        "wlan-exp3",
        "areno-fig6",
        "areno-fig7",
        "areno-fig8",
        "areno-lab",
        "venoplus",
        "eth-throughput",
        "eth-timeouts",
        "eth-sack-blocks",
        "eth-loss-events",
    } == {e.id for e in ready}
    assert ready == reproduce.ALL  # nothing is pending
    for e in ready:
        assert e.points and e.analyze and e.plots and e.table and e.setting and e.explanation, e.id
        assert e.command("full") == f"tcplab reproduce {e.id} --full"
    # every experiment's points are valid scenarios with distinct keys (no run)
    for e in ready:
        pts = e.points("quick")
        assert pts and len({p.key for p in pts}) == len(pts), e.id


def test_list_shows_every_experiment_and_none_pending():
    r = CliRunner().invoke(app, ["reproduce", "--list"])
    assert r.exit_code == 0, r.output
    for needle in ("veno-fig5", "areno-fig7", "venoplus", "wlan-exp1", "areno-fig8", "eth-timeouts"):
        assert needle in r.output
    assert "pending" not in r.output


def test_select_rejects_unknown_and_pending_ids(monkeypatch):
    assert [e.id for e in reproduce.select(["veno-fig5"])] == ["veno-fig5"]
    assert all(e.pending is None for e in reproduce.select(["all"]))
    with pytest.raises(KeyError, match="unknown experiment 'nope'"):
        reproduce.select(["nope"])
    waiting = reproduce.Experiment("x-later", "t", "p", "Fig. 1", pending="a feature")
    monkeypatch.setattr(reproduce, "ALL", [*reproduce.ALL, waiting])
    with pytest.raises(KeyError, match="'x-later' is pending: needs a feature"):
        reproduce.select(["x-later"])
    assert "x-later" not in [e.id for e in reproduce.select(["all"])]
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


def test_generated_docs_replace_the_whole_file(tmp_path):
    suite = tiny_suite()
    doc = tmp_path / "reproductions.md"
    manual = "<!-- manual:begin -->\n## WLAN (hand-written)\n\nkept as is | 1.23\n<!-- manual:end -->"
    doc.write_text("# old\n\nold generated text 99.9\n\n" + manual + "\n\nold tail\n")
    write_docs(suite, doc)
    text = doc.read_text()
    assert "manual:begin" not in text and "hand-written" not in text
    assert "old generated text" not in text and "old tail" not in text
    assert "quick mode" in text and "## Summary" in text and "Veno/Reno ≥ 1.4 at loss 1e-2" in text
    assert "## Pending" not in text
    write_docs(suite, doc)
    assert doc.read_text() == text
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


# --------------------------------------------------------------------------------------------
# WLAN paper (wlan.py): Table I, Exp. 2, Exp. 3


def _exp1_frame(thin_ll, fat_ll, thin_hl, fat_hl):
    """Per-run aggregates (2 seeds) with Veno/Reno ratios as given (Reno = 1000 kb/s)."""
    from tcplab.reproduce import wlan

    rows = []
    for (pipe, link), ratio in {("thin", "LL"): thin_ll, ("fat", "LL"): fat_ll, ("thin", "HL"): thin_hl, ("fat", "HL"): fat_hl}.items():
        for seed, jitter in ((1, -10.0), (2, 10.0)):
            rows.append({"pipe": pipe, "link": link, "controller": "reno", "seed": seed, "total": 1000.0 + jitter, "std": 1.0})
            rows.append({"pipe": pipe, "link": link, "controller": "veno", "seed": seed, "total": 1000.0 * ratio + jitter, "std": 1.0})
    assert wlan.TABLE1[("thin", "HL")] == (1083, 1383)
    return pl.DataFrame(rows)


def test_wlan_exp1_claims_and_table():
    from tcplab.reproduce import wlan

    ll, hl = wlan.EXP1.claims
    f = _exp1_frame(1.09, 0.95, 1.20, 1.16)
    assert ll.evaluate(f).holds and hl.evaluate(f).holds
    assert "thin +9.0%, fat -5.0%" in ll.evaluate(f).numbers
    f = _exp1_frame(1.11, 1.0, 1.20, 1.14)  # one pipe out of each tolerance
    assert not ll.evaluate(f).holds and not hl.evaluate(f).holds
    rows = wlan.exp1_table(f)
    assert len(rows) == 8 and rows[0].published == "1408" and rows[0].n == 2 and rows[0].mean == 1000.0


def _exp2_frame(per_case):
    rows = []
    for case, flows in per_case.items():
        for seed in (1, 2):
            for i, v in enumerate(flows):
                rows.append({"case": case, "seed": seed, "id": i, "controller": "reno", "kbps": float(v)})
    return pl.DataFrame(rows)


def test_wlan_exp2_claims_and_table():
    from tcplab.reproduce import wlan

    keeps, fairer = wlan.EXP2.claims
    base = {"4 reno LL": [500, 500, 500, 500], "4 reno HL": [300, 300, 300, 300], "4": [270, 270, 400, 400]}
    f = _exp2_frame({**base, "1": [300, 300, 900, 900], "2": [500, 500, 700, 700], "3": [450, 450, 600, 600]})
    r = keeps.evaluate(f)
    assert r.holds and "LL: 900 vs 1000 kb/s (0.900)" in r.numbers
    assert fairer.evaluate(f).holds  # STD 100 < 300
    f = _exp2_frame({**base, "1": [500, 500, 700, 700], "2": [300, 300, 900, 900], "3": [440, 450, 600, 600]})
    assert not keeps.evaluate(f).holds and not fairer.evaluate(f).holds
    rows = wlan.exp2_table(f)
    assert [r.published for r in rows] == ["112", "66", "—", "—"] and rows[1].mean == 300.0


def _exp3_frame(agg_change, std_factor, network="wired"):
    rows = []
    for other in ("wired", "802.11b"):
        for cc in ("reno", "veno"):
            for seed in (1, 2, 3):
                a, s = (agg_change, std_factor) if other == network else (0.0, 0.5)
                rows.append({"network": other, "controller": cc, "queue": "drop-tail", "seed": seed, "total": 1500.0, "std": 40.0})
                rows.append({"network": other, "controller": cc, "queue": "RED", "seed": seed, "total": 1500.0 * (1 + a), "std": 40.0 * s})
    return pl.DataFrame(rows)


def test_wlan_exp3_claims_use_the_rust_tolerances():
    from tcplab.reproduce import wlan

    agg, std, agg11, std11 = wlan.EXP3.claims
    assert agg.evaluate(_exp3_frame(-0.049, 0.79)).holds and std.evaluate(_exp3_frame(-0.049, 0.79)).holds
    assert not agg.evaluate(_exp3_frame(-0.051, 0.5)).holds  # claims_red.rs: within ±5%
    assert not std.evaluate(_exp3_frame(0.0, 0.81)).holds  # claims_red.rs: below 0.8x
    f = _exp3_frame(-0.09, 0.95, network="802.11b")
    assert agg11.evaluate(f).holds and std11.evaluate(f).holds
    f = _exp3_frame(0.11, 1.01, network="802.11b")
    assert not agg11.evaluate(f).holds and not std11.evaluate(f).holds
    rows = wlan.exp3_table(_exp3_frame(-0.02, 0.5))
    assert len(rows) == 16 and rows[2].mean == pytest.approx(1470.0) and rows[2].n == 3


def test_wlan_and_red_experiments_on_tiny_real_runs(tmp_path):
    """Exp. 3's points shortened to 3 s, one seed: analysis, table, plots, claims evaluate."""
    from tcplab.reproduce import wlan
    from tcplab.reproduce.experiment import run_suite

    def short(mode):
        pts = []
        for p in wlan.exp3_points(mode):
            if p.params["seed"] == 1:
                d = {**p.document, "duration": "3s"}
                pts += reproduce_points(d, p.params)
        return pts

    e = dataclasses.replace(wlan.EXP3, points=short)
    suite = run_suite([e], mode="quick", out=tmp_path, jobs=1, progress=False)
    (o,) = suite.outcomes
    assert o.runs == 8 and o.frame.height == 8
    assert set(o.frame["network"]) == {"wired", "802.11b"} and (o.frame["total"] > 100).all()
    assert len(o.plots) == 1 and len(o.rows) == 16 and len(o.claims) == 4
    assert all("could not be evaluated" not in c.numbers for c in o.claims)


def reproduce_points(doc, params):
    from tcplab.sweep import expand

    return expand(doc, params={k: v for k, v in params.items() if k != "seed"})


# --------------------------------------------------------------------------------------------
# AReno Fig. 8 (areno_fig8.py)


def _fig8_frame(ratios, forward=0.9, reverse=0.45):
    from tcplab.reproduce import areno_fig8

    rows = []
    for seed in (1, 2, 3):
        for p in areno_fig8.PATHS:
            rows.append({"kind": "flow", "seed": seed, "path": p, "controller": "reno", "direction": None, "value": 20.0})
            rows.append({"kind": "flow", "seed": seed, "path": p, "controller": "areno", "direction": None, "value": 20.0 * ratios[p]})
        for h in areno_fig8.HOPS:
            rows.append({"kind": "hop", "seed": seed, "path": h, "controller": None, "direction": "forward", "value": forward})
            rows.append({"kind": "hop", "seed": seed, "path": h, "controller": None, "direction": "reverse", "value": reverse})
    return pl.DataFrame(rows)


def test_areno_fig8_claims_and_table():
    from tcplab.reproduce import areno_fig8

    full, same, reverse = areno_fig8.FIG8.claims
    f = _fig8_frame({"long": 1.05, "cross0": 1.25, "cross1": 0.8, "reverse": 1.0})
    assert full.evaluate(f).holds and same.evaluate(f).holds and reverse.evaluate(f).holds
    assert "cross0 1.25" in same.evaluate(f).numbers
    f = _fig8_frame({"long": 1.05, "cross0": 1.7, "cross1": 1.8, "reverse": 0.74}, forward=0.84, reverse=0.6)
    assert not full.evaluate(f).holds and not same.evaluate(f).holds and not reverse.evaluate(f).holds
    rows = areno_fig8.fig8_table(f)
    assert len(rows) == 12 and rows[1].mean == pytest.approx(21.0) and rows[-1].published == "about 0.4"


def test_areno_fig8_analysis_on_a_tiny_real_run(tmp_path):
    from tcplab.reproduce import areno_fig8
    from tcplab.sweep import SweepResult, expand, run_sweep

    doc = {**areno_fig8._doc(), "duration": "1s"}
    pts = expand(doc, {"seeds": 1})
    run_sweep(pts, tmp_path, jobs=1, progress=False)
    f = areno_fig8.fig8_analyze(SweepResult(out=tmp_path, points=pts), "quick")
    flows = f.filter(pl.col("kind") == "flow")
    assert sorted(flows["path"].unique()) == sorted(areno_fig8.PATHS) and flows.height == 8
    hops = f.filter(pl.col("kind") == "hop")
    assert hops.height == 4 and set(hops["direction"]) == {"forward", "reverse"}
    assert ((hops["value"] >= 0) & (hops["value"] <= 1)).all() and (flows["value"] > 0).all()


# --------------------------------------------------------------------------------------------
# ETH report (eth.py): the campaign's probes as sweep points


def _probe_frame(n=40, vegas_multiple=2, sack_used=((100, 3, 1, 1, 1, 1))):
    rng = np.random.default_rng(3)
    rows = []
    for p, mbps, to in (("reno", 0.5, 4), ("vegas-ca", 0.3, 5), ("fack", 0.9, 1), ("rh", 0.9, 1), ("lrd", 0.8, 0)):
        for i in range(n):
            rows.append(
                {
                    "protocol": p,
                    "throughput_bps": mbps * 1e6 * (0.8 + 0.4 * rng.random()),
                    "normalized_throughput": 0.2,
                    "completed": True,
                    "timeouts": to,
                    "timeouts_lost_fast_rtx": 0 if p == "lrd" else 1,
                    "timeouts_mpl_lost_rtx": 0 if p == "lrd" else 1,
                    "timeouts_mpl_missing_acks": 1,
                    "timeouts_non_trigger": 2 if p == "vegas-ca" else 1,
                    "timeouts_lost_timeout_rtx": 0,
                    "timeouts_other": 0,
                    "loss_events_multiple": vegas_multiple if p == "vegas-ca" else 3,
                    "loss_events_any": 0 if i < n // 5 else 5,
                    **{f"sack_block_{k}_used": sack_used[k - 1] if p in ("fack", "rh", "lrd") else 0 for k in range(1, 7)},
                }
            )
    return pl.DataFrame(rows)


def test_eth_claims_on_a_synthetic_probe_frame():
    from tcplab.reproduce import eth

    f = _probe_frame()
    for e in eth.EXPERIMENTS:
        res = [c.evaluate(f) for c in e.claims]
        assert all(r.holds for r in res), (e.id, [r.numbers for r in res])
        assert e.table(f), e.id
    assert eth.sack_shares(f)[1] == pytest.approx(100 * 100 / 107)
    # the same claims fail on data that contradict them
    g = _probe_frame(vegas_multiple=4, sack_used=(80, 20, 0, 0, 0, 0)).with_columns(
        pl.when(pl.col("protocol") == "reno").then(pl.col("throughput_bps") * 10).otherwise(pl.col("throughput_bps")).alias("throughput_bps"),
        pl.lit(5).alias("loss_events_any"),
    )
    assert not eth.THROUGHPUT.claims[0].evaluate(g).holds  # SACK above Reno
    assert [c.evaluate(g).holds for c in eth.SACK_BLOCKS.claims] == [False, False]
    assert [c.evaluate(g).holds for c in eth.LOSS_EVENTS.claims] == [False, False]
    rows = eth.sack_table(f)
    assert [r.published for r in rows] == ["96.0", "2.6", "0.8", "0.3", "0.2", "0.1"] and rows[0].n == 3 * 40 * 107


def test_eth_probes_on_tiny_real_runs(tmp_path):
    """Three probes of the quick population run through the suite's store: rows are the
    campaign's probe rows plus the SACK-block columns."""
    from tcplab.campaign.measure import PROBE_COLUMNS
    from tcplab.reproduce import eth
    from tcplab.sweep import SweepResult, run_sweep

    pts = eth.eth_points("quick")
    assert len(pts) > 300 and len({p.key for p in pts}) == len(pts)
    assert len(eth._tasks("quick")) == len(pts)
    some = [p for p in pts if p.document["flows"][0]["recovery"] != "reno"][:2] + pts[:1]
    run_sweep(some, tmp_path, jobs=1, progress=False)
    f = eth.probes_frame(SweepResult(out=tmp_path, points=some), "quick")
    assert f.height == 3 and f.columns[: len(PROBE_COLUMNS)] == list(PROBE_COLUMNS)
    assert f.columns[len(PROBE_COLUMNS) :] == [f"sack_block_{n}_used" for n in range(1, 7)]
    assert (f["probe"].to_list() == [p.params["probe"] for p in some]) and f["completed"].all()
    assert (f["loss_events_any"] == f["loss_events_single"] + f["loss_events_multiple"]).all()


def test_series_bytes_sent_is_the_sending_rate_source():
    """The series table's bytes_sent (used by Veno Fig. 4) is cumulative and covers what was
    delivered plus what was retransmitted."""
    from tcplab.reproduce import veno
    from tcplab.reproduce.common import bulk_flows
    from tcplab.run import run

    trace = {"series": "interval", "interval": "160ms", "segments": False, "drops": False, "events": False}
    doc = veno._fig3a(1, "1.6Mbps", 12, 1e-2, bulk_flows(["reno"], "reno", bytes="200KB"), "bytes-sent", trace)
    r = run(doc)
    s = r.series.sort("time_ns")
    sent = s["bytes_sent"].to_numpy().astype(np.int64)
    assert (np.diff(sent) >= 0).all()
    assert (sent >= s["delivered"].to_numpy().astype(np.int64)).all()
    f = r.flows.row(0, named=True)
    assert 0 < sent[-1] <= f["bytes_sent"]


def test_veno_cwnd_mean_is_time_weighted_and_claims_can_fail():
    from tcplab.reproduce import veno_cwnd

    # cwnd 10 segments for 1 s, then 20 segments for 3 s (to the end at 4 s): mean 17.5.
    s = pl.DataFrame({"time_ns": [0, 1_000_000_000], "cwnd": [14_600, 29_200]})
    assert veno_cwnd.mean_cwnd_segments(s, 4.0) == pytest.approx(17.5)

    def frame(reno_red, veno_red, reno_w, veno_w):
        return pl.DataFrame(
            {
                "variant": ["reno", "veno", "reno", "veno"],
                "loss": [0.0, 0.0, 1e-2, 1e-2],
                "reductions_after_slow_start": [reno_red, veno_red, 0, 0],
                "mean_cwnd": [20.0, 20.0, reno_w, veno_w],
            }
        )

    fewer, larger = (c.check for c in veno_cwnd.FIG1.claims)
    assert fewer(frame(24, 16, 8.0, 14.0))[0] and larger(frame(24, 16, 8.0, 14.0))[0]
    assert not fewer(frame(24, 20, 8.0, 14.0))[0]  # 0.83 > 0.8
    assert not larger(frame(24, 16, 14.0, 8.0))[0]


def test_areno_lab_claims_compare_ratios():
    from tcplab.reproduce import areno_lab

    def frame(reno_alone, areno_alone, reno_next):
        return pl.DataFrame(
            {
                "run": ["reno alone", "areno alone", "coexisting", "coexisting"],
                "controller": ["reno", "areno", "reno", "areno"],
                "mbps": [reno_alone, areno_alone, reno_next, 200.0],
            }
        )

    gain, friendly = (c.check for c in areno_lab.LAB.claims)
    assert gain(frame(18.3, 232.1, 18.5))[0] and friendly(frame(18.3, 232.1, 18.5))[0]
    assert not gain(frame(54.5, 222.4, 49.5))[0]  # x4.1 < x5
    assert not friendly(frame(50.0, 222.4, 30.0))[0]  # 0.6 < 0.8
