"""tcplab reproduce: the experiment registry, --list, a tiny experiment end to end, the
generated docs; the WLAN, RED, parking-lot and ETH experiments' analyses and claims on
synthetic frames and tiny real runs."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tiny_suite import LOSSES, tiny_suite
from tcplab import reproduce
from tcplab.cli import app
from tcplab.reproduce.docs import render_docs, write_docs
from tcplab.reproduce.experiment import Claim
from tcplab.reproduce.verdict import (
    ABOUT,
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    DETERMINISTIC,
    VERDICTS,
    Estimate,
    about,
    above,
    at_least,
    at_most,
    below,
    combine,
    from_support,
    pooled_ratio,
    ratio_of_means,
    t_interval,
    within,
)
from tcplab.report.reproduce import render_report


def test_every_runnable_experiment_is_complete_and_ids_are_unique():
    ids = [e.id for e in reproduce.ALL]
    assert len(ids) == len(set(ids))
    ready = reproduce.ALL
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
        "veno-fig5-live",
    } == {e.id for e in ready}
    for e in ready:
        assert e.points and e.analyze and e.plots and e.table and e.setting and e.explanation, e.id
        assert e.command("full") == f"tcplab reproduce {e.id} --full"
    # every experiment's points are valid scenarios with distinct keys (no run)
    for e in ready:
        pts = e.points("quick")
        assert pts and len({p.key for p in pts}) == len(pts), e.id


def test_list_shows_every_experiment():
    r = CliRunner().invoke(app, ["reproduce", "--list"])
    assert r.exit_code == 0, r.output
    for needle in ("veno-fig5", "areno-fig7", "venoplus", "wlan-exp1", "areno-fig8", "eth-timeouts"):
        assert needle in r.output


def test_select_rejects_unknown_ids_and_leaves_live_ones_out_of_all():
    assert [e.id for e in reproduce.select(["veno-fig5"])] == ["veno-fig5"]
    assert "veno-fig5-live" not in [e.id for e in reproduce.select(["all"])]
    assert "veno-fig5-live" in [e.id for e in reproduce.select(["all", "veno-fig5-live"])]
    with pytest.raises(KeyError, match="unknown experiment 'nope'"):
        reproduce.select(["nope"])
    r = CliRunner().invoke(app, ["reproduce", "nope"])
    assert r.exit_code == 2


def test_tiny_experiment_end_to_end():
    suite = tiny_suite()
    fig4, fig5 = suite.outcomes
    assert fig5.runs == 3 * len(LOSSES) * 2 + 4  # + the sensitivity runs not in the main grid
    assert len(fig5.sensitivity) == 2 * 3 and fig5.sensitivity[0].published.startswith("headline")
    f = fig5.frame
    assert set(f["variant"].unique()) == {"reno", "veno", "veno (Linux flavor)"}
    assert sorted(f["loss"].unique().to_list()) == LOSSES
    # published vs measured: mean +- CI over the 2 seeds
    r = next(r for r in fig5.rows if r.quantity == "Veno at loss 1e-2")
    assert r.published == "146.5" and r.n == 2 and r.ci is not None and r.mean > 0
    assert "±" in r.measured()
    # both claims evaluated with their numbers
    assert [c.text for c in fig5.claims] == [c.text for c in reproduce.get("veno-fig5").claims]
    assert all(c.numbers and c.verdict in VERDICTS and c.quote and c.section for c in fig5.claims)
    assert "Veno/Reno at 1e-2 = " in fig5.claims[0].numbers
    assert len(fig5.plots) == 1 and fig5.plots[0].figure.axes[0].get_xscale() == "log"
    assert fig4.plots and fig4.claims == [] and fig4.readings == []
    # its reading: the same points, each with initial_cwnd 1, judged by the same claims
    under, counted = fig5.readings
    assert under.error is None and [c.text for c in under.claims] == [c.text for c in fig5.claims]
    assert all(c.verdict in VERDICTS for c in under.claims)
    # the counting reading judges the main runs by its own analysis: Veno/Reno doubled
    assert counted.error is None and counted.claims[0].estimate.value == pytest.approx(2 * fig5.claims[0].estimate.value)
    heads = fig5.headlines()
    assert [s["reading"] for s in heads[0]["settings"]] == ["the initial window of 2 segments",
                                                         "initial window: 1 segment", "Veno's bytes: counted twice"]
    html = render_report(suite)
    assert "<h3>Readings</h3>" in html and "initial window: 1 segment" in html
    # the verdicts counted per setting: one row per setting of fig5, each counting its claims
    counts = suite.reading_counts()
    assert [(e, s) for e, s, _ in counts] == [("veno-fig5", "main runs"), ("veno-fig5", "initial window: 1 segment"),
                                             ("veno-fig5", "Veno's bytes: counted twice")]
    main_counts = counts[0][2]
    assert main_counts == {v: sum(c.verdict == v for c in fig5.claims) for v in VERDICTS}
    assert all(sum(n.values()) == len(fig5.claims) for _, _, n in counts)
    holds = sum(h["verdict"] == HOLDS for h in heads)
    assert suite.tally().startswith(f"Of {len(heads)} claims, {holds} hold")
    assert f"under the main runs alone {main_counts[HOLDS]} hold" in suite.tally()
    assert "Verdicts per reading" in html and suite.tally() in html.replace("&#x27;", "'")
    doc = render_docs(suite)
    assert suite.tally() in doc and "| veno-fig5 | initial window: 1 segment |" in doc
    assert html.count("data:image/png;base64,") == 2
    assert "tcplab reproduce veno-fig5 --quick" in html and "Published vs measured" in html
    assert "holds" in html


def test_a_claim_is_a_test_that_can_fail_and_missing_data_is_inconclusive():
    suite = tiny_suite()
    frame = suite.outcomes[1].frame
    never = Claim("impossible", lambda f: at_least("max kB/s", t_interval(f["kBps"].to_list()), 1e9), quote="q", section="s")
    assert never.evaluate(frame).verdict == FAILS and not never.evaluate(frame).holds
    broken = Claim("missing data", lambda f: at_least("x", t_interval([f.filter(pl.col("loss") == 0.5)["kBps"][0]]), 0))
    res = broken.evaluate(frame)
    assert res.verdict == INCONCLUSIVE and "could not be evaluated" in res.numbers
    empty = Claim("no samples", lambda f: at_least("x", t_interval(f.filter(pl.col("loss") == 0.5)["kBps"]), 0))
    assert empty.evaluate(frame).verdict == INCONCLUSIVE and "x = n/a" in empty.evaluate(frame).numbers


# --------------------------------------------------------------------------------------------
# The verdict machinery (verdict.py) on synthetic data


def test_t_interval_and_bootstrap_intervals():
    e = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert e.value == 3.0 and e.n == 5 and e.method == "t"
    assert e.high - e.value == pytest.approx(2.776 * np.std([1, 2, 3, 4, 5], ddof=1) / np.sqrt(5), rel=1e-3)
    one = t_interval([7.0])
    assert one.value == 7.0 and one.low == -np.inf and one.high == np.inf
    r = ratio_of_means([2.0, 2.1, 1.9, 2.0, 2.0], [1.0, 1.05, 0.95, 1.0, 1.0])
    assert r.value == pytest.approx(2.0) and r.low < 2.0 < r.high and r.method == "bootstrap"
    assert 1.8 < r.low and r.high < 2.2
    assert ratio_of_means([1.0, 2.0], [1.0, 1.0]) == ratio_of_means([1.0, 2.0], [1.0, 1.0])  # seeded
    p = pooled_ratio([1, 0, 2], [10, 10, 10])
    assert p.value == pytest.approx(0.1) and 0 <= p.low <= p.value <= p.high <= 0.2
    # identical seeds (deterministic runs): one run, judged by its value, and said so
    # (once, "0.667 [0.667, 0.667], n = 20" passed a single value off as an interval)
    z = ratio_of_means([3.0, 3.0, 3.0], [2.0, 2.0, 2.0])
    assert z.low == z.high == pytest.approx(1.5) and z.n == 1 and z.method == DETERMINISTIC
    d = t_interval([0.667] * 20)
    assert (d.value, d.n, d.method) == (0.667, 1, DETERMINISTIC)
    assert d.text() == "0.667 (one deterministic run: every seed gave this value)"


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        ([1.20, 1.21, 1.19, 1.20, 1.22], HOLDS),  # interval wholly above 1.15
        ([1.00, 1.01, 0.99, 1.00, 1.02], FAILS),  # wholly below
        ([1.00, 1.30, 1.10, 1.25, 1.05], INCONCLUSIVE),  # straddles 1.15
        ([1.3], INCONCLUSIVE),  # one seed: no interval
    ],
)
def test_at_least_is_three_valued(samples, expected):
    assert at_least("A/B", t_interval(samples), 1.15).verdict == expected


def test_every_comparison_yields_each_verdict():
    def est(lo, hi):
        return Estimate((lo + hi) / 2, lo, hi, 5, "t")

    assert [at_most("x", e, 0.17).verdict for e in (est(0.0, 0.1), est(0.2, 0.3), est(0.1, 0.2))] == [HOLDS, FAILS, INCONCLUSIVE]
    assert [above("x", e, 1.1).verdict for e in (est(1.2, 1.3), est(0.9, 1.1), est(1.0, 1.2))] == [HOLDS, FAILS, INCONCLUSIVE]
    assert [below("x", e, 0.9).verdict for e in (est(0.5, 0.8), est(0.9, 1.0), est(0.8, 1.0))] == [HOLDS, FAILS, INCONCLUSIVE]
    w = [within("x", e, 0.9, 1.1).verdict for e in (est(0.95, 1.05), est(1.2, 1.3), est(0.5, 0.8), est(1.0, 1.2))]
    assert w == [HOLDS, FAILS, FAILS, INCONCLUSIVE]
    t = about("x", est(6.5, 7.5), 7.0)
    assert t.verdict == HOLDS and t.bound == "within [6.3, 7.7]"
    assert at_least("x", Estimate(float("nan"), 0, 1, 3, "t"), 0).verdict == INCONCLUSIVE
    assert [from_support("d", s, "b").verdict for s in (0.99, 0.01, 0.6, None)] == [HOLDS, FAILS, INCONCLUSIVE, INCONCLUSIVE]
    assert combine([HOLDS, HOLDS]) == HOLDS and combine([HOLDS, INCONCLUSIVE]) == INCONCLUSIVE
    assert combine([INCONCLUSIVE, FAILS, HOLDS]) == FAILS and combine([]) == INCONCLUSIVE
    assert ABOUT == 0.10


def test_an_inconclusive_test_projects_the_samples_that_would_decide_it():
    # half-width 0.1, 0.05 from the bound: a quarter of the width needs 4x the samples
    t = at_least("x", Estimate(1.2, 1.1, 1.3, 10, "t"), 1.15)
    assert t.verdict == INCONCLUSIVE and t.samples_to_decide() == 40
    assert "decidable with about 40 samples at this spread, now 10" in t.outcome()
    # the same per-sample spread at the projected count decides it (the t-quantile only helps)
    x = [1.0, 1.45, 1.1, 1.35, 1.2]
    first = at_least("x", t_interval(x), 1.15)
    need = first.samples_to_decide()
    assert first.verdict == INCONCLUSIVE and need is not None and need > len(x)
    tiled = (x * (need // len(x) + 1))[:need]
    assert at_least("x", t_interval(tiled), 1.15).verdict == HOLDS
    # decided tests and an estimate on the bound
    assert at_least("x", Estimate(2, 1.9, 2.1, 5, "t"), 1).samples_to_decide() is None
    on = within("x", Estimate(0.9, 0.8, 1.0, 5, "t"), 0.9, 1.1)
    assert on.verdict == INCONCLUSIVE and on.samples_to_decide() is None and "too close to the bound" in on.outcome()
    near = within("x", Estimate(0.905, 0.8, 1.01, 5, "t"), 0.9, 1.1)  # 0.005 away, half-width 0.105
    assert near.samples_to_decide() == 2205 and "more than 10x the samples, now 5" in near.outcome()


def test_a_claim_combines_its_tests_and_reports_the_first_estimate():
    def est(lo, hi):
        return Estimate((lo + hi) / 2, lo, hi, 5, "t")

    c = Claim("two", lambda f: [at_least("a", est(2, 3), 1), at_least("b", est(0, 2), 1)], "pub", quote="q", section="§1")
    r = c.evaluate(pl.DataFrame())
    assert r.verdict == INCONCLUSIVE and "a = 2.5 [2, 3] (needs ≥ 1): holds" in r.numbers
    assert r.estimate.value == 1 and r.measured() == "b: 1 [0, 2]"  # the test that decides the verdict
    s = r.summary()
    assert s["verdict"] == INCONCLUSIVE and s["measured"] == 1 and s["ci_low"] == 0 and s["ci_high"] == 2
    assert s["measured_quantity"] == "b" and s["samples_to_decide"] is None  # b's value sits on its bound
    assert s["quote"] == "q" and s["section"] == "§1" and s["published"] == "pub" and s["weakened"] is None


# --------------------------------------------------------------------------------------------
# Every claim states the paper


def test_every_claim_quotes_the_paper_with_section_threshold_and_weakened_reason():
    n = 0
    for e in reproduce.ALL:
        for c in e.claims:
            n += 1
            assert len(c.quote) > 20 and c.section and c.threshold and c.text and c.published, (e.id, c.text)
            assert "§" in c.section or "Table" in c.section or "Fig" in c.section, (e.id, c.section)
            assert c.weakened == "" or len(c.weakened) > 20, (e.id, c.text)  # a weakened claim says why
    assert n >= 40


def test_quick_mode_uses_enough_seeds():
    for id in ("wlan-exp1", "wlan-exp2", "wlan-exp3"):
        for p_seeds in _seeds_per_setting(reproduce.get(id).points("quick")).values():
            assert p_seeds >= 5, id
    for e in reproduce.ALL:
        # the campaign's uncertainty is over its probes; live runs take real time (their
        # simulated twins run more seeds)
        if not e.id.startswith("eth-") and e.live is None:
            assert e.seeds["quick"] >= 5, e.id


def _seeds_per_setting(pts):
    out: dict[str, set] = {}
    for p in pts:
        k = repr(sorted((k, str(v)) for k, v in p.params.items() if k != "seed"))
        out.setdefault(k, set()).add(p.params["seed"])
    return {k: len(v) for k, v in out.items()}


def test_html_top_table_shows_published_measured_and_verdict_and_summary_json(tmp_path):
    suite = tiny_suite()
    html = render_report(suite)
    top = html[html.index("<h2>Claims</h2>") : html.index("</table>", html.index("<h2>Claims</h2>"))]
    for col in ("the paper's words", "published", "measured (95% CI)", "verdict"):
        assert f"<th>{col}</th>" in top
    assert "146.5 / 81.9 kB/s = 1.79" in top and "§III-B, Fig. 5" in top and "80% higher" in top
    assert any(v in top for v in ("holds", "does not hold", "inconclusive"))
    assert "<h3>Sensitivity</h3>" in html and "growth per ack, delayed ACK on, reno recovery: Veno/Reno" in html
    path = reproduce.write_report(suite, tmp_path / "report.html")
    data = json.loads((path.parent / "summary.json").read_text())
    (fig5,) = [x for x in data["experiments"] if x["id"] == "veno-fig5"]
    c = fig5["claims"][0]
    assert set(c) >= {"verdict", "published", "measured", "ci_low", "ci_high", "quote", "section", "weakened", "threshold"}
    assert c["verdict"] in VERDICTS and c["quote"].startswith("at loss rate of 10^-2")


def test_areno_readings_are_named_in_one_place():
    from tcplab.reproduce import common

    assert common.areno_controller(None) == "areno"
    assert common.areno_controller("prose") == {"name": "areno", common.ARENO_W_INC: "prose"}
    assert common.ARENO_HEADLINE in common.ARENO_READINGS
    readings = common.areno_reading_list()
    assert readings == (list(common.ARENO_READINGS) if common.areno_readings_supported() else [None])
    from tcplab.reproduce import areno

    docs = [p.document for p in areno.fig6_points("quick") if p.params["other"] == "areno"]
    want = common.areno_controller(common.headline_reading())
    assert docs and all(d["flows"][1]["controller"] == want for d in docs)
    assert areno.FIG6.sensitivity is not None and areno.FIG7.sensitivity is not None


def test_generated_docs_replace_the_whole_file(tmp_path):
    suite = tiny_suite()
    doc = tmp_path / "reproductions.md"
    manual = "<!-- manual:begin -->\n## WLAN (hand-written)\n\nkept as is | 1.23\n<!-- manual:end -->"
    doc.write_text("# old\n\nold generated text 99.9\n\n" + manual + "\n\nold tail\n")
    write_docs(suite, doc)
    text = doc.read_text()
    assert "manual:begin" not in text and "hand-written" not in text
    assert "old generated text" not in text and "old tail" not in text
    assert "quick mode" in text and "## Summary" in text and "Veno/Reno throughput at loss 1e-2 within 1.79 ± 10%" in text
    assert "| published | measured (95% CI) | verdict |" in text and "§III-B, Fig. 5" in text
    assert "Sensitivity:" in text and "| setting | headline? | tcplab | unit |" in text
    assert "| initial window: 1 segment | a test's reading |" in text
    assert "## Pending" not in text
    write_docs(suite, doc)
    assert doc.read_text() == text
    assert render_docs(dataclasses.replace(suite, outcomes=[])).startswith("# Reproductions")


def test_reproduce_command_writes_report_and_docs(tmp_path, monkeypatch):
    from tiny_suite import TINY_FIG5

    monkeypatch.setattr(reproduce, "select", lambda ids: [TINY_FIG5])
    doc = tmp_path / "reproductions.md"
    args = ["reproduce", "veno-fig5", "--out", str(tmp_path / "out"), "--jobs", "1", "-q", "--readings",
            "--write-docs", str(doc)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 0, r.output
    assert "1 experiments, " in r.output and "holds" in r.output and "inconclusive" in r.output
    html = (tmp_path / "out" / "report.html").read_text()
    assert "data:image/png;base64," in html and "tcplab reproduce veno-fig5 --quick" in html
    assert "Veno/Reno throughput at loss 1e-2 within 1.79 ± 10%" in doc.read_text()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    (exp,) = summary["experiments"]
    assert exp["reading"] == "the initial window of 2 segments"
    assert [r["value"] for r in exp["readings"]] == ["1 segment", "counted twice"]
    assert all(len(c["headline"]["settings"]) == 3 for c in exp["claims"])
    # 4 sensitivity runs not in the main grid; the 18 again under the reading (the counting
    # reading runs nothing)
    assert len(list((tmp_path / "out" / "points").iterdir())) == 18 + 4 + 18
    assert "| main runs | the initial window of 2 segments |" in doc.read_text()


# --------------------------------------------------------------------------------------------
# WLAN paper (wlan.py): Table I, Exp. 2, Exp. 3


def _exp1_frame(thin_ll, fat_ll, thin_hl, fat_hl, jitter=10.0):
    """Per-run aggregates (5 seeds) with Veno/Reno ratios as given (Reno = 1000 kb/s)."""
    from tcplab.reproduce import wlan

    rows = []
    for (pipe, link), ratio in {("thin", "LL"): thin_ll, ("fat", "LL"): fat_ll, ("thin", "HL"): thin_hl, ("fat", "HL"): fat_hl}.items():
        for seed, j in zip(range(1, 6), (-2, -1, 0, 1, 2), strict=True):
            rows.append({"pipe": pipe, "link": link, "controller": "reno", "seed": seed, "total": 1000.0 + j * jitter, "std": 1.0})
            rows.append({"pipe": pipe, "link": link, "controller": "veno", "seed": seed, "total": 1000.0 * ratio - j * jitter, "std": 1.0})
    assert wlan.TABLE1[("thin", "HL")] == (1083, 1383)
    return pl.DataFrame(rows)


def test_wlan_exp1_claims_and_table():
    from tcplab.reproduce import wlan

    ll, hl, published = wlan.EXP1.claims
    f = _exp1_frame(1.05, 0.97, 1.27, 1.17)
    assert [c.evaluate(f).verdict for c in (ll, hl, published)] == [HOLDS, HOLDS, HOLDS]
    f = _exp1_frame(1.3, 1.0, 1.02, 1.5)  # LL thin far outside ±10%; HL thin inside the band; fat HL above 1.28
    assert [c.evaluate(f).verdict for c in (ll, hl, published)] == [FAILS, FAILS, FAILS]
    f = _exp1_frame(1.09, 1.0, 1.2, 1.2, jitter=60.0)  # wide intervals across the bounds
    assert ll.evaluate(f).verdict == INCONCLUSIVE and hl.evaluate(f).verdict == INCONCLUSIVE
    rows = wlan.exp1_table(f)
    assert len(rows) == 8 and rows[0].published == "1408" and rows[0].n == 5 and rows[0].mean == 1000.0


def _exp2_frame(per_case, seeds=5, noise=0.0):
    rows = []
    for case, flows in per_case.items():
        for seed in range(1, seeds + 1):
            for i, v in enumerate(flows):
                rows.append({"case": case, "seed": seed, "id": i, "controller": "reno", "kbps": float(v) * (1 + noise * (seed - 3))})
    return pl.DataFrame(rows)


def test_wlan_exp2_claims_and_table():
    from tcplab.reproduce import wlan

    keeps, fairer = wlan.EXP2.claims
    base = {"4 reno LL": [500, 500, 500, 500], "4 reno HL": [300, 300, 300, 300], "4": [290, 290, 400, 400]}
    f = _exp2_frame({**base, "1": [300, 300, 900, 900], "2": [500, 500, 700, 700], "3": [480, 480, 600, 600]})
    r = keeps.evaluate(f)
    assert r.verdict == HOLDS and "LL (case 3): Reno flows next to Veno / next to Reno = 0.96" in r.numbers
    assert fairer.evaluate(f).verdict == HOLDS  # STD 100 vs 300
    f = _exp2_frame({**base, "1": [500, 500, 700, 700], "2": [300, 300, 900, 900], "3": [400, 400, 600, 600]})
    assert keeps.evaluate(f).verdict == FAILS and fairer.evaluate(f).verdict == FAILS
    rows = wlan.exp2_table(f)
    assert [r.published for r in rows] == ["112", "66", "—", "—"] and rows[1].mean == 300.0


def _exp3_frame(agg_change, std_factor, network="wired"):
    rows = []
    for other in ("wired", "802.11b"):
        for cc in ("reno", "veno"):
            for seed in range(1, 6):
                a, s = (agg_change, std_factor) if other == network else (0.0, 0.5)
                rows.append({"network": other, "controller": cc, "queue": "drop-tail", "seed": seed, "total": 1500.0 + seed, "std": 40.0 + seed})
                rows.append({"network": other, "controller": cc, "queue": "RED", "seed": seed, "total": (1500.0 + seed) * (1 + a), "std": (40.0 + seed) * s})
    return pl.DataFrame(rows)


def test_wlan_exp3_claims_and_the_wired_variant_uses_reno_recovery():
    from tcplab.reproduce import wlan_red

    agg, std, agg11, std11 = wlan_red.EXP3.claims
    f = _exp3_frame(-0.05, 0.7)
    assert agg.evaluate(f).verdict == HOLDS and std.evaluate(f).verdict == HOLDS
    f = _exp3_frame(-0.2, 0.95)
    assert agg.evaluate(f).verdict == FAILS and std.evaluate(f).verdict == FAILS
    f = _exp3_frame(0.05, 1.2, network="802.11b")
    assert agg11.evaluate(f).verdict == HOLDS and std11.evaluate(f).verdict == FAILS
    assert std.weakened and not std11.weakened
    rows = wlan_red.exp3_table(_exp3_frame(-0.02, 0.5))
    assert len(rows) == 16 and rows[2].n == 5
    wired = [p for p in wlan_red.exp3_points("quick") if p.params["network"] == "wired"]
    assert wired and all(f["recovery"] == "reno" for p in wired for f in p.document["flows"])
    assert all(p.document["tcp"]["sack_blocks"] == 0 for p in wired)


def test_wlan_and_red_experiments_on_tiny_real_runs(tmp_path):
    """Exp. 3's points shortened to 3 s, one seed: analysis, table, plots, claims evaluate."""
    from tcplab.reproduce import wlan_red
    from tcplab.reproduce.experiment import run_suite

    def short(mode):
        pts = []
        for p in wlan_red.exp3_points(mode):
            if p.params["seed"] == 1:
                d = {**p.document, "duration": "3s"}
                pts += reproduce_points(d, p.params)
        return pts

    e = dataclasses.replace(wlan_red.EXP3, points=short)
    suite = run_suite([e], mode="quick", out=tmp_path, jobs=1, progress=False)
    (o,) = suite.outcomes
    assert o.runs == 8 and o.frame.height == 8
    assert set(o.frame["network"]) == {"wired", "802.11b"} and (o.frame["total"] > 100).all()
    assert len(o.plots) == 1 and len(o.rows) == 16 and len(o.claims) == 4
    assert all("could not be evaluated" not in c.numbers for c in o.claims)
    assert all(c.verdict == INCONCLUSIVE for c in o.claims)  # one seed: no interval


def reproduce_points(doc, params):
    from tcplab.sweep import expand

    return expand(doc, params={k: v for k, v in params.items() if k != "seed"})


# --------------------------------------------------------------------------------------------
# AReno Fig. 8 (areno_fig8.py)


def _fig8_frame(ratios, forward=0.95, reverse=0.40):
    from tcplab.reproduce import areno_fig8

    rows = []
    for seed, j in zip(range(1, 6), (-2, -1, 0, 1, 2), strict=True):
        for p in areno_fig8.PATHS:
            rows.append({"kind": "flow", "seed": seed, "path": p, "controller": "reno", "direction": None, "value": 20.0})
            rows.append({"kind": "flow", "seed": seed, "path": p, "controller": "areno", "direction": None, "value": 20.0 * ratios[p]})
        for h in areno_fig8.HOPS:
            rows.append({"kind": "hop", "seed": seed, "path": h, "controller": None, "direction": "forward", "value": forward + 0.005 * j})
            rows.append({"kind": "hop", "seed": seed, "path": h, "controller": None, "direction": "reverse", "value": reverse + 0.005 * j})
    return pl.DataFrame(rows)


def test_areno_fig8_claims_and_table():
    from tcplab.reproduce import areno_fig8

    full, same, reverse = areno_fig8.FIG8.claims
    f = _fig8_frame({"long": 1.05, "cross0": 0.95, "cross1": 1.08, "reverse": 1.0})
    assert [c.evaluate(f).verdict for c in (full, same, reverse)] == [HOLDS, HOLDS, HOLDS]
    assert "AReno/Reno, cross0 path = 0.95" in same.evaluate(f).numbers
    f = _fig8_frame({"long": 1.05, "cross0": 1.7, "cross1": 1.8, "reverse": 0.74}, forward=0.84, reverse=0.6)
    assert [c.evaluate(f).verdict for c in (full, same, reverse)] == [FAILS, FAILS, FAILS]
    f = _fig8_frame({"long": 1.0, "cross0": 1.0, "cross1": 1.0, "reverse": 1.0}, forward=0.9, reverse=0.44)
    assert full.evaluate(f).verdict == INCONCLUSIVE and reverse.evaluate(f).verdict == INCONCLUSIVE
    rows = areno_fig8.fig8_table(f)
    assert len(rows) == 12 and rows[-1].published == "about 0.4"


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
        if e is eth.LOSS_EVENTS:  # "almost 20%" of the 200 probes are loss-free, but 200 probes leave an interval of ±5 points
            assert [r.verdict for r in res] == [HOLDS, INCONCLUSIVE], [r.numbers for r in res]
            continue
        assert all(r.holds for r in res), (e.id, [r.numbers for r in res])
        assert e.table(f), e.id
    assert eth.sack_shares(f)[1] == pytest.approx(100 * 100 / 107)
    # the same claims fail on data that contradict them
    g = _probe_frame(vegas_multiple=4, sack_used=(80, 20, 0, 0, 0, 0)).with_columns(
        pl.when(pl.col("protocol") == "reno").then(pl.col("throughput_bps") * 10).otherwise(pl.col("throughput_bps")).alias("throughput_bps"),
        pl.lit(5).alias("loss_events_any"),
    )
    assert not eth.THROUGHPUT.claims[0].evaluate(g).holds  # SACK above Reno
    assert [c.evaluate(g).verdict for c in eth.SACK_BLOCKS.claims] == [FAILS, FAILS]
    assert [c.evaluate(g).verdict for c in eth.LOSS_EVENTS.claims] == [FAILS, FAILS]
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
    assert len(eth.probe_tasks("quick")) == len(pts)
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
    from tcplab.run import run

    doc = {**veno.fig5_doc("reno"), "name": "bytes-sent"}  # at the file's loss, 1e-2
    doc["flows"][0]["bytes"] = "200KB"
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
        rows = []
        for seed in range(1, 6):
            rows += [
                {"variant": "reno", "loss": 0.0, "seed": seed, "reductions_after_slow_start": reno_red, "mean_cwnd": 20.0},
                {"variant": "veno", "loss": 0.0, "seed": seed, "reductions_after_slow_start": veno_red, "mean_cwnd": 20.0},
                {"variant": "reno", "loss": 1e-2, "seed": seed, "reductions_after_slow_start": 0, "mean_cwnd": reno_w + seed / 10},
                {"variant": "veno", "loss": 1e-2, "seed": seed, "reductions_after_slow_start": 0, "mean_cwnd": veno_w + seed / 10},
            ]
        return pl.DataFrame(rows)

    fewer, larger = veno_cwnd.FIG1.claims
    assert fewer.evaluate(frame(25, 15, 8.0, 14.0)).verdict == HOLDS  # 40% less
    assert larger.evaluate(frame(25, 15, 8.0, 14.0)).verdict == HOLDS
    assert fewer.evaluate(frame(24, 20, 8.0, 14.0)).verdict == FAILS  # 0.83, outside 0.6 ± 10%
    assert larger.evaluate(frame(24, 16, 14.0, 8.0)).verdict == FAILS
    assert larger.weakened and not fewer.weakened


def test_areno_lab_claims_compare_ratios():
    from tcplab.reproduce import areno_lab

    def frame(reno_alone, areno_alone, reno_next, areno_next):
        rows = []
        for seed in range(1, 6):
            d = 1 + (seed - 3) / 100
            rows += [
                {"run": "reno alone", "controller": "reno", "seed": seed, "mbps": reno_alone * d},
                {"run": "areno alone", "controller": "areno", "seed": seed, "mbps": areno_alone * d},
                {"run": "coexisting", "controller": "reno", "seed": seed, "mbps": reno_next * d},
                {"run": "coexisting", "controller": "areno", "seed": seed, "mbps": areno_next * d},
            ]
        return pl.DataFrame(rows)

    gain, same = areno_lab.LAB.claims
    f = frame(18.3, 232.1, 18.5, 227.4)
    assert gain.evaluate(f).verdict == HOLDS and same.evaluate(f).verdict == HOLDS
    f = frame(54.5, 222.4, 30.0, 222.0)
    assert gain.evaluate(f).verdict == FAILS and same.evaluate(f).verdict == FAILS  # x4.1; Reno 0.55 of alone


def test_areno_sensitivity_runs_and_reports_both_readings(tmp_path, monkeypatch):
    """With a build that takes the W_inc reading, the sensitivity runs AReno once per reading
    (here stood in by AReno's `a` parameter, 2 s runs) and reports each, the baseline
    Reno-Reno runs shared."""
    from tcplab.reproduce import areno_claims, areno_setup, common
    from tcplab.sweep import SweepResult, run_sweep

    def controller(reading):
        return "areno" if reading is None else {"name": "areno", "a": {"printed": 0.15, "prose": 0.5}[reading]}

    monkeypatch.setattr(common, "areno_readings_supported", lambda: True)
    monkeypatch.setattr(areno_claims, "areno_readings_supported", lambda: True)
    monkeypatch.setattr(areno_setup, "areno_controller", controller)
    monkeypatch.setattr(areno_claims, "FIG7_SECS", {"quick": 2, "full": 2})
    pts = areno_claims.fig7_sensitivity_points("quick")
    assert {p.params["reading"] for p in pts} == set(common.ARENO_READINGS)
    unique = {p.key: p for p in pts}
    assert len(unique) == len(pts) * 3 // 4  # the Reno-Reno runs are the same for both readings
    run_sweep(list(unique.values()), tmp_path, jobs=1, progress=False)
    rows = areno_claims.fig7_sensitivity(SweepResult(out=tmp_path, points=pts), "quick")
    assert len(rows) == 2 * 3 * 2
    assert {r.quantity.split(",")[0] for r in rows} == {"W_inc 'printed'", "W_inc 'prose'"}
    assert all(r.mean is not None for r in rows)
    assert [r.published for r in rows if "'printed'" in r.quantity] == ["headline"] * 6
    assert "claims use 'printed'" in areno_claims.readings_note("Fig. 7")


def test_an_explanation_quotes_the_numbers_beside_it():
    """Generated text comes from the numbers it sits beside: the AReno lab's
    explanation states this run's lone rates and gain, not numbers of another run."""
    from tcplab.reproduce import areno_lab

    frame = pl.DataFrame({"run": ["reno alone"] * 2 + ["areno alone"] * 2, "seed": [1, 2, 1, 2], "key": ["k"] * 4,
                          "id": [0] * 4, "controller": ["reno", "reno", "areno", "areno"],
                          "mbps": [50.0, 60.0, 160.0, 164.0]})
    text = areno_lab.LAB.explain(frame)
    assert "AReno alone gets 162 Mb/s" in text and "Reno alone 55.0 Mb/s" in text and "2.9x instead of 12.6x" in text
    assert areno_lab.LAB.explain(None) == ""
    static = next(e for e in reproduce.ALL if isinstance(e.explanation, str) and e.explanation)
    assert static.explain(None) == static.explanation


def test_a_reading_changes_only_the_documents_it_applies_to():
    from tcplab.reproduce import venoplus
    from tcplab.reproduce.readings import Reading, set_controller_param

    pts = [p for p in venoplus.venoplus_points("quick") if p.params["flows"] == 1 and p.params["seed"] == 1]
    r = Reading("W", "1000", "test", set_controller_param("venoplus", window=1000))
    under = r.points(pts)
    assert [(p.index, p.params) for p in under] == [(p.index, p.params) for p in pts]
    for p, q in zip(pts, under, strict=True):
        changed = p.params["controller"] == "venoplus"
        # Veno's runs are the same runs (shared with the main ones); Venoplus's are new.
        assert (p.key != q.key) == changed, p.params
        if changed:
            assert q.document["flows"][0]["controller"] == {"name": "venoplus", "window": 1000}


def test_every_reading_of_the_suite_changes_what_it_names():
    """A setting changes some of its experiment's runs (valid scenarios), a counting reading
    none; each names where it comes from. Spot checks of what the settings change. On the
    first seed's points (a reading changes every seed's documents alike; validating every
    point of the quick suite under every reading took most of this test's 38 s)."""
    seen = 0
    for e in reproduce.ALL:
        if not e.readings or e.live is not None:
            continue
        pts = e.points("quick")
        first = min(p.params.get("seed", 1) for p in pts)
        pts = [p for p in pts if p.params.get("seed", 1) == first]
        for r in e.readings:
            assert r.source and r.parameter and r.value, (e.id, r.name)
            under = r.points(pts)
            changed = [(p, q) for p, q in zip(pts, under, strict=True) if p.key != q.key]
            assert bool(changed) == (r.apply is not None), (e.id, r.name)
            seen += 1
            if e.id == "wlan-exp3" and r.parameter == "channel":
                # the wired-hop runs are the same runs; the 802.11b ones fade
                assert all(q.document["topology"]["kind"] == "wlan_access" for _, q in changed)
                assert all(q.document["topology"]["channel"]["coherence"] == "5ms" for _, q in changed)
            if e.id == "veno-table1" and r.parameter == "wireless hop":
                # every run: the Veno flow's last hop is the 802.11b segment, the background's wired
                assert len(changed) == len(pts)
                assert all(q.document["wlan"][0]["stations"] == [{"node": "r0", "preset": "HL"}] for _, q in changed)
                assert all(f["dst"] == "r0" for _, q in changed for f in q.document["flows"])
            if e.id == "veno-table1" and r.parameter == "BaseRTT":
                assert r.diagnostic and {p.params["flavor"] for p, _ in changed} == {"paper"}
            if e.id == "veno-table1" and r.parameter == "Veno's RTT clock":
                # the Linux flavor's runs are unchanged (the clock is the paper flavor's)
                assert {p.params["flavor"] for p, _ in changed} == {"paper"}
            if e.id == "veno-fig7":
                assert {p.params["loss"] for p, _ in changed} == {1e-2}
                assert all(q.document["topology"]["bottleneck"]["forward"]["loss"] == 2e-2 for _, q in changed)
            if e.id == "areno-lab" and r.parameter == "bottleneck rate":
                assert all(q.document["topology"]["bottleneck"]["rate"] == "100Mbps" for _, q in changed)
    assert seen >= 20


def test_a_counting_reading_reads_the_main_runs():
    from tcplab.reproduce import venoplus
    from tcplab.reproduce.readings import Reading

    pts = venoplus.venoplus_points("quick")[:6]
    r = Reading("interval", "common", "test", analyze=lambda res, mode: pl.DataFrame())
    assert [p.key for p in r.points(pts)] == [p.key for p in pts]
    with pytest.raises(ValueError, match="reading 'interval: common': neither runs"):
        Reading("interval", "common", "test")


def test_the_slow_start_episode_ends_at_the_first_drop_after_its_first_response():
    from tcplab.reproduce.veno_cwnd import reductions_after_episode

    ms = 1_000_000
    # the overshoot drops 3 packets before the first response at 100 ms; its reductions at
    # 100, 150 (fast retransmits), 400 (timeout) and 600 (false fast retransmit) are the
    # episode's; the next drop (2000) starts what counts: responses at 2100 and 5100
    events = pl.DataFrame({"time_ns": [t * ms for t in (50, 100, 150, 400, 600, 2100, 3000, 5100)],
                           "event": ["window", "recovery_enter", "recovery_enter", "timeout", "recovery_enter",
                                     "recovery_enter", "recovery_exit", "recovery_enter"]})
    drops = pl.DataFrame({"time_ns": [t * ms for t in (60, 70, 80, 2000, 5000)]})
    assert reductions_after_episode(events, drops) == 2
    # no drop after the first response: nothing after the episode; no response at all: 0
    assert reductions_after_episode(events, drops.head(3)) == 0
    assert reductions_after_episode(events.head(1), drops) == 0


def test_throughput_over_the_common_interval_ends_at_the_first_completion():
    from tcplab.reproduce.veno import common_interval_kbps

    s = 1_000_000_000
    flows = pl.DataFrame({"id": [0, 1], "start_ns": [0, s], "end_ns": [10 * s, 20 * s]})
    series = pl.DataFrame({"flow": [0, 0, 1, 1, 1], "time_ns": [5 * s, 10 * s, 5 * s, 10 * s, 20 * s],
                           "delivered": [500_000, 1_000_000, 200_000, 450_000, 1_000_000]})
    # flow 0: 1 MB in its 10 s = 100 kB/s; flow 1: 450 kB from 1 s to 10 s = 50 kB/s
    assert common_interval_kbps(flows, series) == pytest.approx([100.0, 50.0])


def test_a_headline_names_the_reading_a_claim_holds_under():
    from tcplab.reproduce.verdict import ClaimResult
    from tcplab.reproduce.readings import Reading, ReadingOutcome, headline

    def claim(verdict):
        return ClaimResult("c", verdict, "n", estimate=Estimate(1.0, 0.9, 1.1, 3, "t"))

    r = Reading("RTT", "180 ms", "s", lambda d: d)
    h = headline(claim(FAILS), "RTT 120 ms", [ReadingOutcome(r, [claim(HOLDS)])], 0)
    assert (h["verdict"], h["reading"]) == (HOLDS, "RTT: 180 ms")
    h = headline(claim(HOLDS), "RTT 120 ms", [ReadingOutcome(r, [claim(HOLDS)])], 0)
    assert (h["verdict"], h["reading"]) == (HOLDS, "RTT 120 ms")
    h = headline(claim(FAILS), "RTT 120 ms", [ReadingOutcome(r, [claim(FAILS)])], 0)
    assert (h["verdict"], h["note"]) == (FAILS, "holds under no tested reading")
    h = headline(claim(FAILS), "RTT 120 ms", [ReadingOutcome(r, [], "ValueError: x")], 0)
    assert h["settings"][1] == {"reading": "RTT: 180 ms", "verdict": INCONCLUSIVE, "measured": "ValueError: x",
                                "diagnostic": False}
    assert h["note"] == "holds under no tested reading; undecided under some"
    # A diagnostic reading (a setting the paper does not allow, testing an explanation) is
    # shown with its verdict but never makes the headline hold.
    d = Reading("BaseRTT", "kept", "not the paper's", lambda d: d, diagnostic=True)
    assert d.label == "BaseRTT: kept (a test of the explanation, not a reading of the paper)"
    h = headline(claim(FAILS), "main", [ReadingOutcome(d, [claim(HOLDS)])], 0)
    assert (h["verdict"], h["main"], h["note"]) == (FAILS, True, "holds under no tested reading")
    assert h["settings"][1]["verdict"] == HOLDS and h["settings"][1]["diagnostic"]
    h = headline(claim(FAILS), "main", [ReadingOutcome(d, [claim(HOLDS)]), ReadingOutcome(r, [claim(HOLDS)])], 0)
    assert (h["verdict"], h["reading"]) == (HOLDS, "RTT: 180 ms")
