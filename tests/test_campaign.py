"""``tcplab campaign``: configuration, population, schedule, analysis, end to end."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

from tcplab.campaign import analysis
from tcplab.campaign.config import (
    CampaignConfig,
    CampaignError,
    Choice,
    LogNormal,
    LogUniform,
    Uniform,
    load_campaign,
)
from tcplab.campaign.measure import PROBE_COLUMNS
from tcplab.campaign.population import draw_paths, sample
from tcplab.campaign.schedule import schedule
from tcplab.cli import app

from conftest import ROOT

runner = CliRunner()

TINY = """
name = "tiny"
seed = 5
[schedule]
paths = 3
span_h = 12
mean_interval_h = 3
[transfer]
bytes = 40000
time_limit_s = 20
warmup_s = 0.5
[paths]
tcp_flows = { dist = "uniform", low = 0, high = 2 }
"""


# --------------------------------------------------------------------------------------------
# Population and schedule


def test_population_is_deterministic_per_seed():
    cfg = CampaignConfig.from_dict({"seed": 11, "schedule": {"paths": 20}})
    assert draw_paths(cfg) == draw_paths(cfg)
    other = draw_paths(cfg.with_overrides(seed=12))
    assert [p.rtt_ms for p in other] != [p.rtt_ms for p in draw_paths(cfg)]
    # the probe schedule too
    paths = draw_paths(cfg)
    assert schedule(cfg, paths) == schedule(cfg, paths)


def test_sample_follows_the_distributions():
    rng = np.random.default_rng(1)
    n = 20_000
    x = sample(LogUniform(dist="loguniform", low=1e-4, high=1e-2, p_zero=0.3), rng, n)
    zero = x == 0
    assert abs(zero.mean() - 0.3) < 0.015
    logs = np.log10(x[~zero])
    assert logs.min() >= -4 and logs.max() <= -2
    assert abs(logs.mean() - (-3)) < 0.03  # uniform in log: mean of the log is the middle
    # truncated symmetrically in log space (±ln 2 = ±1.39 sigma): the median stays 100, and
    # the share beyond 1 sigma is (Phi(1.39) - Phi(1)) / (Phi(1.39) - Phi(-1.39)) per side
    x = sample(LogNormal(dist="lognormal", median=100, sigma=0.5, low=50, high=200), rng, n)
    assert x.min() >= 50 and x.max() <= 200
    assert abs(np.median(x) / 100 - 1) < 0.02
    phi = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))  # noqa: E731
    tail = (phi(math.log(2) / 0.5) - phi(1)) / (phi(math.log(2) / 0.5) - phi(-math.log(2) / 0.5))
    assert abs((np.log(x / 100) > 0.5).mean() - tail) < 0.01
    x = sample(Choice(dist="choice", values=[1, 2, 4], weights=[1, 1, 2]), rng, n)
    assert set(np.unique(x)) == {1.0, 2.0, 4.0}
    assert abs((x == 4).mean() - 0.5) < 0.015
    x = sample(Uniform(dist="uniform", low=2, high=6), rng, n)
    assert abs(x.mean() - 4) < 0.05 and x.min() >= 2 and x.max() <= 6


def test_paths_follow_the_config():
    cfg = CampaignConfig.from_dict(
        {
            "schedule": {"paths": 400},
            "paths": {
                "rate_mbps": {"dist": "choice", "values": [2, 10]},
                "rtt_ms": {"dist": "uniform", "low": 50, "high": 150},
                "buffer_bdp": 1.0,
                "buffer_min_packets": 4,
                "loss": {"dist": "loguniform", "low": 1e-4, "high": 1e-3, "p_zero": 0.5},
            },
        }
    )
    paths = draw_paths(cfg)
    assert {p.rate_mbps for p in paths} == {2.0, 10.0}
    assert all(50 <= p.rtt_ms <= 150 for p in paths)
    assert abs(np.mean([p.rtt_ms for p in paths]) - 100) < 5
    for p in paths:  # one bandwidth-delay product, at least 4 packets of 1024 + 40 bytes
        bdp = p.rate_mbps * 1e6 / 8 * p.rtt_ms / 1e3
        assert p.buffer_bytes == max(4 * 1064, round(bdp))
    lossless = np.mean([p.loss == 0 for p in paths])
    assert 0.4 < lossless < 0.6


def test_schedule_exponential_gaps_and_uniform_protocols():
    cfg = CampaignConfig.from_dict(
        {"seed": 3, "schedule": {"paths": 50, "span_h": 1000, "mean_interval_h": 10}}
    )
    paths = draw_paths(cfg)
    probes = schedule(cfg, paths)
    assert [p.id for p in probes] == list(range(len(probes)))
    assert all(0 <= p.time_h < 1000 for p in probes)
    assert all(a.time_h <= b.time_h for a, b in zip(probes, probes[1:]))
    # ~100 probes per path; gaps exponential with mean 10 h (the coefficient of variation is 1)
    gaps = np.concatenate([np.diff(sorted(p.time_h for p in probes if p.path == path.id)) for path in paths])
    assert abs(len(probes) / 50 - 100) < 10
    assert abs(gaps.mean() - 10) < 0.5
    assert abs(gaps.std() / gaps.mean() - 1) < 0.08
    # protocols uniform: chi-square with 4 degrees of freedom below its 99.9 % point (18.47)
    counts = np.array([sum(p.protocol == q for p in probes) for q in cfg.schedule.protocols])
    expected = len(probes) / 5
    assert ((counts - expected) ** 2 / expected).sum() < 18.47
    # cross traffic follows the load factor: more competing flows at high load
    hi = [p.tcp_flows for p in probes if p.load > 1.25]
    lo = [p.tcp_flows for p in probes if p.load < 0.75]
    assert np.mean(hi) > np.mean(lo)
    # a cap keeps the first probes in time order
    capped = schedule(cfg.with_overrides(max_probes=7), paths)
    assert [p.time_h for p in capped] == [p.time_h for p in probes[:7]]


# --------------------------------------------------------------------------------------------
# Configuration errors


@pytest.mark.parametrize(
    "data, expected",
    [
        (
            {"paths": {"rtt_ms": {"dist": "lognormal", "median": 100, "sigma": -1}}},
            "paths.rtt_ms.sigma: -1 must be >= 0",
        ),
        ({"paths": {"rtt_ms": {"dist": "gauss"}}}, "paths.rtt_ms.dist: 'gauss' is not a known distribution"),
        ({"paths": {"rtt_ms": {"median": 100}}}, "paths.rtt_ms.dist: is required but missing"),
        ({"paths": {"rtt_ms": "100ms"}}, "paths.rtt_ms: '100ms' is not a distribution"),
        (
            {"paths": {"loss": {"dist": "uniform", "low": 0, "high": 2}}},
            "paths.loss: must only give values a probability",
        ),
        ({"paths": {"rate_mbps": 0}}, "paths.rate_mbps: must only give values > 0"),
        (
            {"schedule": {"protocols": ["reno", "fak"]}},
            "schedule.protocols[1]: 'fak' is not a known protocol",
        ),
        ({"schedule": {"paths": 0}}, "schedule.paths: 0 must be >= 1"),
        ({"schedule": {"pathz": 3}}, "schedule.pathz: is not a known field"),
        (
            {"transfer": {"initial_ssthresh_bytes": 1024}},
            "transfer.initial_ssthresh_bytes: 1024 must be >= 2 packets",
        ),
        ({"protocols": {"x": {"controller": "reno"}}}, "protocols.x.recovery: is required but missing"),
    ],
)
def test_bad_config_names_the_field(data, expected):
    with pytest.raises(CampaignError) as e:
        CampaignConfig.from_dict(data)
    assert str(e.value).startswith(expected), str(e.value)
    assert "\n" not in str(e.value)


def test_bad_protocol_component_is_one_error_before_running(tmp_path):
    # a protocol whose controller parameter only the simulator can refuse
    text = TINY.replace("mean_interval_h = 3", 'mean_interval_h = 3\nprotocols = ["reno", "odd"]')
    text += (
        '\n[protocols.odd]\ncontroller = "vegas"\nrecovery = "reno"\ncontroller_params = { mode = "nope" }\n'
    )
    (tmp_path / "c.toml").write_text(text)
    r = runner.invoke(app, ["campaign", str(tmp_path / "c.toml"), "--out", str(tmp_path / "out"), "-q"])
    assert r.exit_code == 2, r.output
    assert "protocols.odd: the probe scenario is invalid" in r.stderr and r.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_cli_bad_config_exit_2(tmp_path):
    (tmp_path / "bad.toml").write_text('[paths]\nrate_mbps = { dist = "uniform", low = 5, high = 1 }\n')
    r = runner.invoke(app, ["campaign", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "out")])
    assert r.exit_code == 2
    assert (
        r.stderr.startswith("error: ")
        and "paths.rate_mbps" in r.stderr
        and "high (1) must be >= low (5)" in r.stderr
    )
    assert not (tmp_path / "out").exists()


def test_cross_traffic_is_one_flow_group_with_each_flows_start():
    from tcplab.campaign.population import probe_scenario
    from tcplab.scenario import Scenario

    cfg = load_campaign(ROOT / "campaigns" / "eth-default.toml")
    paths = {p.id: p for p in draw_paths(cfg)}
    probe = next(pr for pr in schedule(cfg, list(paths.values())) if pr.tcp_flows >= 2)
    doc = probe_scenario(cfg, paths[probe.path], probe, 10.0)
    assert sum("count" in f for f in doc["flows"]) == 1
    flows = Scenario.from_dict(doc).canonical()["flows"]
    assert [f["name"] for f in flows] == ["probe"] + [f"cross{k}" for k in range(probe.tcp_flows)]
    assert [f["start"] for f in flows[1:]] == [round(s * 1e9) for s in probe.cross_start_s[: probe.tcp_flows]]
    assert {f["controller"]["name"] for f in flows[1:]} == {cfg.cross.controller}


def test_shipped_campaign_is_valid():
    cfg = load_campaign(ROOT / "campaigns" / "eth-default.toml")
    assert cfg.name == "eth-default"
    assert cfg.schedule.protocols == ["reno", "vegas-ca", "fack", "rh", "lrd"]
    t = cfg.transfer
    assert (t.bytes, t.packet_bytes, t.initial_ssthresh_bytes, t.rcv_buf_bytes) == (
        1048576,
        1024,
        65536,
        262144,
    )


# --------------------------------------------------------------------------------------------
# Analysis on synthetic frames


def test_ecdf_and_cdf_frame():
    x, y = analysis.ecdf([3, 1, 2, 2])
    assert x.tolist() == [1, 2, 3] and y.tolist() == [0.25, 0.75, 1.0]
    df = pl.DataFrame({"protocol": ["a", "b", "a"], "v": [1.0, 5.0, 3.0]})
    c = analysis.cdf_frame(df, "v", ["b", "a"])
    assert c["protocol"].to_list() == ["b", "a", "a"]
    assert c["cdf"].to_list() == [1.0, 0.5, 1.0]


def test_loss_bins_follow_the_report():
    # x stands for loss rates in (x - 0.02, x]; exactly 0 is its own bin
    assert analysis.loss_bin([0, 1e-9, 0.01, 0.02, 0.020001, 0.04, 0.05]).tolist() == [
        0.0,
        0.02,
        0.02,
        0.02,
        0.04,
        0.04,
        0.06,
    ]
    df = pl.DataFrame(
        {
            "protocol": ["r", "r", "r", "r", "f"],
            "loss_rate": [0.0, 0.01, 0.015, 0.02, 0.03],
            "normalized_throughput": [0.9, 0.3, 0.5, 0.1, 0.2],
        }
    )
    m = analysis.median_by_loss_bin(df)
    rows = {(r["protocol"], r["loss_bin"]): (r["connections"], r["median"]) for r in m.iter_rows(named=True)}
    assert rows == {("r", 0.0): (1, 0.9), ("r", 0.02): (3, 0.3), ("f", 0.04): (1, 0.2)}


def test_percentiles_are_observed_counts():
    v = list(range(1, 11))  # 1..10
    assert [analysis.percentile(v, q) for q in (10, 25, 50, 75, 90)] == [1, 3, 5, 8, 9]
    df = pl.DataFrame(
        {"protocol": ["a"] * 4, "loss_events_any": [0, 0, 4, 8], "loss_events_multiple": [0, 0, 1, 3]}
    )
    t = analysis.loss_event_percentiles(df, qs=(25, 50, 75, 100))
    any_ = t.filter(pl.col("kind") == "any").row(0, named=True)
    assert (any_["p25"], any_["p50"], any_["p75"], any_["p100"]) == (0, 0, 4, 8)


def _synthetic_probes() -> pl.DataFrame:
    rows = []
    spec = {  # protocol: (timeouts per connection, throughput, non-trigger, multiple, lost fast, lost mpl)
        "reno": ([0, 2, 4, 6], 1.0, 2, 3, 1, 0),
        "vegas-ca": ([0, 0, 4, 8], 0.5, 3, 1, 1, 0),
        "fack": ([0, 0, 0, 2], 2.0, 0, 3, 1, 1),
        "rh": ([0, 0, 1, 1], 2.5, 0, 3, 1, 2),
        "lrd": ([0, 0, 0, 1], 3.0, 0, 3, 0, 1),
    }
    for p, (touts, tput, nt, mult, lf, lm) in spec.items():
        for i, t in enumerate(touts):
            rows.append(
                {
                    "protocol": p,
                    "timeouts": t,
                    "throughput_bps": tput * 1e6 * (1 + i / 10),
                    "normalized_throughput": tput / 10,
                    "completed": True,
                    "loss_rate": 0.01 * i,
                    "timeouts_non_trigger": nt,
                    "timeouts_mpl_missing_acks": 0,
                    "timeouts_mpl_lost_rtx": lm,
                    "timeouts_lost_fast_rtx": lf,
                    "timeouts_lost_timeout_rtx": 0,
                    "timeouts_other": 0,
                    "loss_events_multiple": mult,
                    "loss_events_any": mult + 1,
                }
            )
    return pl.DataFrame(rows)


def test_timeout_statistics():
    df = _synthetic_probes()
    free = {r["protocol"]: r["timeout_free"] for r in analysis.timeout_free_share(df).iter_rows(named=True)}
    assert free == {"reno": 0.25, "vegas-ca": 0.5, "fack": 0.75, "rh": 0.5, "lrd": 0.75}
    b = analysis.timeout_breakdown(df)
    reno = {r["class"]: r for r in b.filter(pl.col("protocol") == "reno").iter_rows(named=True)}
    assert reno["non_trigger"]["per_connection"] == 2.0
    assert reno["non_trigger"]["share"] == 8 / 12
    assert reno["mpl"]["per_connection"] == 0.0
    m = {r["protocol"]: r for r in analysis.mpl_breakdown(df).iter_rows(named=True)}
    assert m["rh"]["lost_rtx"] == 2.0 and m["rh"]["missing_acks"] == 0.0


def test_directions_hold_and_fail_on_synthetic_data():
    df = _synthetic_probes()
    d = {x["key"]: x for x in analysis.directions(df)}
    assert d["sack_fewer_timeouts"]["holds"] is True
    assert d["sack_higher_throughput"]["holds"] is True
    assert d["vegas_fewer_multiple_loss"]["holds"] is True
    assert d["vegas_more_non_trigger"]["holds"] is True
    assert d["vegas_lower_throughput"]["holds"] is True
    assert d["lrd_fewest_lost_rtx_timeouts"]["holds"] is True
    assert all(0.5 < s <= 1.0 for s in d["sack_fewer_timeouts"]["support"])
    # make Vegas as fast as FACK: that direction no longer holds
    faster = df.with_columns(
        pl.when(pl.col("protocol") == "vegas-ca")
        .then(pl.col("throughput_bps") * 10)
        .otherwise(pl.col("throughput_bps"))
        .alias("throughput_bps")
    )
    d = {x["key"]: x for x in analysis.directions(faster)}
    assert d["vegas_lower_throughput"]["holds"] is False
    # a missing protocol: not checked rather than a verdict
    d = {x["key"]: x for x in analysis.directions(df.filter(pl.col("protocol") != "vegas-ca"))}
    assert d["vegas_lower_throughput"]["holds"] is None
    assert d["vegas_lower_throughput"]["verdict"] == "not probed"


def test_weak_support_is_inconclusive_and_says_how_many_samples_would_decide():
    """A direction seen in only some bootstrap resamples (here Vegas a little slower
    than Reno over noisy connections) is inconclusive, not "does not hold", with about how
    many connections per protocol would decide it."""
    df = _synthetic_probes()
    noisy = df.with_columns(
        pl.when(pl.col("protocol") == "vegas-ca")
        .then(pl.col("throughput_bps") * 1.9 + pl.col("timeouts") * 2e5)
        .otherwise(pl.col("throughput_bps") + pl.col("timeouts") * 2e5)
        .alias("throughput_bps")
    )
    d = {x["key"]: x for x in analysis.directions(noisy)}["vegas_lower_throughput"]
    (support,) = d["support"]
    assert 0.025 < support < 0.975, support
    assert d["verdict"] == "inconclusive" and d["holds"] is None
    assert d["decide_n"] is not None and d["decide_n"] > 4


def test_samples_to_decide_scales_with_the_square_of_the_z_ratio():
    from tcplab.aggregate import samples_to_decide, support_verdict

    assert support_verdict(0.98) is True and support_verdict(0.02) is False and support_verdict(0.7) is None
    assert support_verdict(None) is None
    # support 0.8413 is Phi(1): z must grow to 1.96, so n grows by 1.96^2 = 3.84
    assert samples_to_decide(40, 0.8413447) == 154
    assert samples_to_decide(40, 0.5) is None
    assert samples_to_decide(40, 0.99) == 40, "already decided: no more needed"


# --------------------------------------------------------------------------------------------
# End to end


def test_tiny_campaign_writes_every_output(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY)
    out = tmp_path / "out"
    r = runner.invoke(app, ["campaign", str(tmp_path / "tiny.toml"), "--out", str(out), "--jobs", "2"])
    assert r.exit_code == 0, r.output
    assert sorted(os.listdir(out)) == [
        "campaign.json",
        "campaign.toml",
        "paths.parquet",
        "probes.parquet",
        "report.html",
    ]
    probes = pl.read_parquet(out / "probes.parquet")
    assert probes.columns == list(PROBE_COLUMNS)
    assert probes.height > 5 and probes["completed"].all()
    assert (probes["bytes_delivered"] == 40000).all()
    assert probes["probe"].to_list() == list(range(probes.height))
    # timeout classes add up; loss events from the simulator's flow columns
    classes = sum(probes[c] for c in PROBE_COLUMNS if c.startswith("timeouts_"))
    assert (classes == probes["timeouts"]).all()
    assert (probes["loss_events_any"] == probes["loss_events_single"] + probes["loss_events_multiple"]).all()
    assert (
        (probes["normalized_throughput"] - probes["throughput_bps"] / (probes["rate_mbps"] * 1e6)).abs()
        < 1e-12
    ).all()
    doc = json.loads((out / "campaign.json").read_text())
    assert doc["probes"] == probes.height and doc["paths"] == 3
    assert {d["key"] for d in doc["directions"]} == {
        "sack_fewer_timeouts",
        "sack_higher_throughput",
        "lrd_fewest_lost_rtx_timeouts",
        "vegas_fewer_multiple_loss",
        "vegas_more_non_trigger",
        "vegas_lower_throughput",
    }
    assert doc["cpu_time_s"] > 0 and doc["wall_time_s"] > 0
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == 6
    for s in ("Published directions", "Table 3", "Fig. 4", "Fig. 7", "Fig. 8", "Fig. 9", "0.80"):
        assert s in html
    # the same seed gives the same probes (the pool does not change results)
    out2 = tmp_path / "out2"
    r = runner.invoke(
        app, ["campaign", str(tmp_path / "tiny.toml"), "--out", str(out2), "--jobs", "1", "-q", "--no-report"]
    )
    assert r.exit_code == 0, r.output
    again = pl.read_parquet(out2 / "probes.parquet")
    assert again.drop("wall_s", "cpu_s").equals(probes.drop("wall_s", "cpu_s"))
    assert not (out2 / "report.html").exists()
    assert math.isclose(doc["config"]["transfer"]["bytes"], 40000)


def test_campaign_store_resumes_without_running_again(tmp_path, monkeypatch):
    """The probes run through the sweep engine: with a store, a second run reuses every row."""
    from tcplab.campaign import probe_sweep
    from tcplab.campaign.virtual_campaign import run_campaign

    cfg = CampaignConfig.from_toml(TINY).with_overrides(max_probes=4)
    store = tmp_path / "store"
    first = run_campaign(cfg, jobs=1, store=store)
    assert first.probes.height == 4
    assert len(list((store / "points").iterdir())) == 4
    assert json.loads((store / "sweep.json").read_text())["points"][0]["params"]["probe"] == 0

    def boom(*a, **k):
        raise AssertionError("a stored probe ran again")

    monkeypatch.setattr(probe_sweep, "run_probe", boom)
    again = run_campaign(cfg, jobs=1, store=store)
    assert again.probes.equals(first.probes)
    # without a store nothing is left behind and the rows are the same (but for timing)
    monkeypatch.undo()
    fresh = run_campaign(cfg, jobs=1)
    assert fresh.probes.drop("wall_s", "cpu_s").equals(first.probes.drop("wall_s", "cpu_s"))


def test_probe_row_reads_the_simulators_loss_event_columns():
    """The probe row's loss events are the flows table's loss_events_single/_multiple."""
    from types import SimpleNamespace

    from tcplab.campaign.measure import probe_row

    cfg = CampaignConfig.from_dict({"schedule": {"paths": 1, "span_h": 50}})
    path = draw_paths(cfg)[0]
    probe = schedule(cfg, [path])[0]
    flow = {
        "completed": True,
        "bytes_delivered": 1_048_576,
        "throughput_bps": 1e6,
        "goodput": 0.99,
        "segments_sent": 1100,
        "retransmits": 12,
        "spurious_retransmits": 1,
        "fast_retransmits": 4,
        "recovery_restarts": 0,
        "timeouts": 2,
        "loss_events": 6,
        "data_drops": 11,
        "ack_drops": 0,
        "loss_indication_p": 6 / 1100,
        "start_ns": 2 * 10**9,
        "end_ns": 10 * 10**9 + 2 * 10**9,
        "mean_rtt_ns": 100_000_000,
        **{
            f"timeouts_{c}": 0
            for c in ("mpl_missing_acks", "mpl_lost_rtx", "lost_fast_rtx", "lost_timeout_rtx", "other")
        },
        "timeouts_non_trigger": 2,
    }
    fake = SimpleNamespace(flows=pl.DataFrame([{**flow, "loss_events_single": 3, "loss_events_multiple": 2}]))
    row = probe_row(fake, probe, path, cfg, wall_s=0.1, cpu_s=0.1)
    assert (row["loss_events_single"], row["loss_events_multiple"]) == (3, 2)
    assert row["loss_events_any"] == 5
    assert row["duration_s"] == 10.0 and row["loss_rate"] == 11 / 1100
    assert math.isclose(row["normalized_throughput"], 1e6 / (path.rate_mbps * 1e6))
    # Mathis: MSS 1024 B, RTT 0.1 s, p = 6/1100
    assert math.isclose(row["mathis_bps"], 1024 * 8 / 0.1 * math.sqrt(1.5) / math.sqrt(6 / 1100))
    assert list(row) == list(PROBE_COLUMNS)


def test_direction_claims_show_the_effect_beside_the_published_one():
    """A direction-only claim shows its measured effect size beside the report's
    and says when it is outside the published one ± 10 % (synthetic probes: FACK 0.5 timeouts
    per connection against Reno's 3, -83 % against the report's -48 %)."""
    from tcplab.reproduce.eth_claims import direction_claim, effect_text

    tests = direction_claim("sack_fewer_timeouts", {("fack", "reno"): -0.48})(_synthetic_probes())
    fack = next(t for t in tests if "fack" in t.label)
    assert "; effect -83% (published -48%, outside ±10 %)" in fack.label, fack.label
    assert effect_text(("reno", "vegas-ca"), (2.0, 2.7), {("vegas-ca", "reno"): 0.347}) == \
        "; effect +35% (published +35%)"
