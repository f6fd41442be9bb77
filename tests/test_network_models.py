"""RED, ECN, loss models and link schedules in the scenario schema and end to end
(docs/network-models.md)."""

import json

import pytest

import tcplab
from tcplab import _native
from tcplab.scenario import Scenario, ScenarioError, load_scenario

from conftest import SCENARIOS, SMALL_TOML, canonical_of

RED = '{ discipline = "red", min_th = 5, max_th = 10, max_p = 0.1, w_q = 0.005, gentle = false, wait = true, mode = "packets", ecn = false }'


def _bottleneck(extra: str) -> str:
    """SMALL_TOML with the bottleneck's forward table replaced by ``extra``."""
    return SMALL_TOML.replace("forward = { loss = 1e-2 }", f"forward = {{ {extra} }}")


def _error(text: str) -> str:
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text)
    return str(info.value)


def _roundtrip(c: dict) -> None:
    assert json.loads(_native.scenario_json_roundtrip(json.dumps(c))) == c
    _native.Simulation(json.dumps(c))


def test_red_queue_canonical_and_rust_reads_it():
    c = canonical_of(_bottleneck(f"queue = {RED}"))
    q = c["topology"]["bottleneck"]["forward"]["queue"]
    assert q == {
        "discipline": "red",
        "min_th": 5.0,
        "max_th": 10.0,
        "max_p": 0.1,
        "w_q": 0.005,
        "gentle": False,
        "wait": True,
        "mode": "packets",
        "ecn": False,
        "mean_packet_size": 1500,
    }
    assert c["topology"]["bottleneck"]["reverse"]["queue"] == {"discipline": "drop_tail"}
    _roundtrip(c)
    # Defaults for max_p and w_q; byte thresholds as sizes.
    c = canonical_of(_bottleneck('queue = { discipline = "red", min_th = "5KB", max_th = "15KB", mode = "bytes" }'))
    q = c["topology"]["bottleneck"]["forward"]["queue"]
    assert (q["min_th"], q["max_th"], q["max_p"], q["w_q"], q["mode"]) == (5000.0, 15000.0, 0.1, 0.002, "bytes")


@pytest.mark.parametrize(
    "queue, expected",
    [
        ('{ discipline = "red", min_th = 10, max_th = 5 }', "forward.queue.max_th: 5 must be greater than min_th (10)"),
        ('{ discipline = "red", min_th = 5, max_th = 10, max_p = 1.5 }', "forward.queue.max_p: 1.5 must be within [0, 1]"),
        ('{ discipline = "red", min_th = 5, max_th = 10, w_q = 0 }', "forward.queue.w_q: 0 must be within (0, 1]"),
        ('{ discipline = "red", min_th = -1, max_th = 10 }', "forward.queue.min_th: -1 must be >= 0"),
        ('{ discipline = "red", max_th = 10 }', "forward.queue.min_th: is required but missing"),
        ('{ discipline = "red", min_th = 5, max_th = 10, mode = "cells" }', "forward.queue.mode: 'cells' is not a RED mode"),
        ('{ discipline = "red", min_th = 5, max_th = 10, maxp = 0.1 }', "forward.queue.maxp: is not a known field of queue 'red'"),
        ('{ discipline = "codel" }', "forward.queue.discipline: 'codel' is not a known queue discipline"),
    ],
)
def test_red_errors_name_field_and_value(queue, expected):
    msg = _error(_bottleneck(f"queue = {queue}"))
    assert msg.startswith("topology.bottleneck."), msg
    assert expected in msg, msg


def test_rust_validation_names_red_fields():
    c = canonical_of(_bottleneck(f"queue = {RED}"))
    c["topology"]["bottleneck"]["forward"]["queue"]["min_th"] = 12.0
    c["topology"]["bottleneck"]["forward"]["queue"]["w_q"] = 2.0
    with pytest.raises(ValueError) as info:
        _native.Simulation(json.dumps(c))
    msg = str(info.value)
    assert "topology.bottleneck.forward.queue.max_th = 10: expected greater than min_th (12)" in msg, msg
    assert "topology.bottleneck.forward.queue.w_q = 2: expected a weight in (0, 1]" in msg, msg


def test_loss_models_canonical():
    cases = {
        'loss = { model = "ber", ber = 1e-6 }': {"model": "ber", "ber": 1e-6},
        'loss = { model = "gilbert_elliott", p_gb = 0.01, p_bg = 0.25 }': {
            "model": "gilbert_elliott",
            "p_gb": 0.01,
            "p_bg": 0.25,
            "loss_good": 0.0,
            "loss_bad": 1.0,
        },
        'loss = { model = "time_trace", times = ["1.5s", 0.25], intervals = [["1s", "1200ms"]] }': {
            "model": "time_trace",
            "times": [1_500_000_000, 250_000_000],
            "intervals": [[1_000_000_000, 1_200_000_000]],
        },
    }
    for toml, want in cases.items():
        c = canonical_of(_bottleneck(toml))
        assert c["topology"]["bottleneck"]["forward"]["loss"] == want
        _roundtrip(c)


@pytest.mark.parametrize(
    "loss, expected",
    [
        ('{ model = "ber", ber = 2 }', "forward.loss.ber: 2 must be within [0, 1]"),
        ('{ model = "gilbert_elliott", p_gb = 0.1 }', "forward.loss.p_bg: is required but missing"),
        ('{ model = "gilbert_elliott", p_gb = -0.1, p_bg = 0.5 }', "forward.loss.p_gb: -0.1 must be within [0, 1]"),
        ('{ model = "gilbert_elliott", p_gb = 0.1, p_bg = 0.5, loss_bad = 3 }', "forward.loss.loss_bad: 3 must be within [0, 1]"),
        ('{ model = "time_trace", intervals = [["2s", "1s"]] }', "forward.loss.intervals[0]: [2 s, 1 s] must have start < end"),
        ('{ model = "time_trace", times = ["soon"] }', "forward.loss.times[0]: 'soon'"),
        ('{ model = "time_trace" }', "forward.loss.times: is required but missing"),
        ('{ model = "pareto" }', "forward.loss.model: 'pareto' is not a known loss model"),
    ],
)
def test_loss_model_errors(loss, expected):
    msg = _error(_bottleneck(f"loss = {loss}"))
    assert expected in msg, msg


def test_time_trace_file_is_read_relative_to_the_scenario(tmp_path):
    (tmp_path / "losses.txt").write_text("# lost at these times\n0.5\n1s 1.1s   # an outage\n1500ms\n")
    scen = tmp_path / "s.toml"
    scen.write_text(_bottleneck('loss = { model = "time_trace", file = "losses.txt" }'))
    loss = load_scenario(scen).canonical()["topology"]["bottleneck"]["forward"]["loss"]
    assert loss == {
        "model": "time_trace",
        "times": [500_000_000, 1_500_000_000],
        "intervals": [[1_000_000_000, 1_100_000_000]],
    }
    (tmp_path / "bad.txt").write_text("1s\n2s 1s\n")
    scen.write_text(_bottleneck('loss = { model = "time_trace", file = "bad.txt" }'))
    with pytest.raises(ScenarioError) as info:
        load_scenario(scen)
    assert str(info.value) == "topology.bottleneck.forward.loss.file: 'bad.txt' line 2: '2s 1s' must have start < end ([2 s, 1 s])"
    (tmp_path / "bad.txt").write_text("1s\n\n# three\n1s 2s 3s\n")
    with pytest.raises(ScenarioError) as info:
        load_scenario(scen)
    assert str(info.value).endswith("'bad.txt' line 4: '1s 2s 3s' has 3 values: expected a time or a 'start end' pair")
    scen.write_text(_bottleneck('loss = { model = "time_trace", file = "missing.txt" }'))
    with pytest.raises(ScenarioError, match=r"forward\.loss\.file: 'missing\.txt' cannot be read"):
        load_scenario(scen)


def test_time_trace_file_base_dir_is_explicit_for_sweeps_and_seeds(tmp_path, monkeypatch):
    """No ambient state: the scenario's directory travels with it (from_dict's base_dir,
    load_sweep, expand, with_seed), whatever the current directory is."""
    from tcplab.sweep import expand, load_sweep

    (tmp_path / "losses.txt").write_text("0.5\n")
    text = _bottleneck('loss = { model = "time_trace", file = "losses.txt" }')
    (tmp_path / "s.toml").write_text(text + '\n[sweep]\nseeds = 2\n')
    monkeypatch.chdir(tmp_path.parent)
    doc, spec = load_sweep(tmp_path / "s.toml")
    points = expand(doc, spec)
    assert len(points) == 2
    sc = Scenario.from_dict(points[1].document)
    assert sc.canonical()["topology"]["bottleneck"]["forward"]["loss"]["times"] == [500_000_000]
    base = Scenario.from_toml(text, path=str(tmp_path / "s.toml"))
    assert base.source["base_dir"] == str(tmp_path)
    assert len(expand(base, {"seeds": 3})) == 3
    with pytest.raises(ScenarioError, match=r"'losses\.txt' cannot be read"):
        Scenario.from_toml(text)  # no directory given: the current one, which lacks the file


def test_schedule_canonical_and_errors():
    sched = 'schedule = [{ at = "0.5s", rate = "1Mbps" }, { at = "1s", loss = { model = "bernoulli", p = 0.5 }, buffer = 5, delay = "1ms" }]'
    c = canonical_of(_bottleneck(sched))
    fwd = c["topology"]["bottleneck"]["forward"]
    assert fwd["schedule"] == [
        {"at": 500_000_000, "rate": 1_000_000},
        {"at": 1_000_000_000, "delay": 1_000_000, "buffer": {"packets": 5}, "loss": {"model": "bernoulli", "p": 0.5}},
    ]
    assert "schedule" not in c["topology"]["bottleneck"]["reverse"]
    _roundtrip(c)
    for bad, expected in (
        (
            'schedule = [{ at = "1s", rate = "1Mbps" }, { at = "0.5s", rate = "2Mbps" }]',
            "forward.schedule[1].at: 500 ms must be later than schedule[0].at (1 s)",
        ),
        ('schedule = [{ at = "5s", rate = "1Mbps" }]', "topology.bottleneck.forward.schedule[0].at: 5 s must be at most the duration (2 s)"),
        ('schedule = [{ at = "1s" }]', "forward.schedule[0]: changes nothing"),
        ('schedule = [{ at = "1s", buffer = 0 }]', "forward.schedule[0].buffer: 0 must be >= 1 packet"),
        ('schedule = [{ at = "1s", rate = "fast" }]', "forward.schedule[0].rate: 'fast'"),
        ('schedule = [{ at = "1s", loss = 7 }]', "forward.schedule[0].loss.p: 7 must be within [0, 1]"),
        ('schedule = [{ at = "1s", jitter = "1ms" }]', "forward.schedule[0].jitter: is not a known field of a change"),
    ):
        msg = _error(_bottleneck(bad))
        assert expected in msg, msg


def test_red_dumbbell_scenario_runs_with_marks_off_and_red_drops():
    sc = load_scenario(SCENARIOS / "red-dumbbell.toml")
    q = sc.canonical()["topology"]["bottleneck"]["forward"]["queue"]
    assert (q["min_th"], q["max_th"], q["max_p"], q["w_q"]) == (5.0, 10.0, 0.1, 0.005)
    data = sc.source["given"]
    data = {**data, "duration": "20s", "name": "red-short"}
    r = tcplab.run(Scenario.from_dict(data))
    links = r.links.filter((r.links["link"] == "left-right") & (r.links["direction"] == "forward"))
    assert links["drops_aqm_early"][0] > 0
    assert links["drops_buffer_overflow"][0] == 0
    assert links["ecn_marks"][0] == 0
    assert "ecn_marks" in r.flows.columns and "ecn_reductions" in r.flows.columns


def test_ecn_end_to_end_marks_and_reductions():
    text = SMALL_TOML.replace(
        "forward = { loss = 1e-2 }",
        'queue = { discipline = "red", min_th = 2, max_th = 8, max_p = 0.2, w_q = 0.02, ecn = true }',
    ).replace('rto_min = "200ms"', 'rto_min = "200ms"\necn = true')
    r = tcplab.run(Scenario.from_toml(text).with_seed(3))
    fwd = r.links.filter((r.links["link"] == "left-right") & (r.links["direction"] == "forward"))
    assert fwd["ecn_marks"][0] > 0
    assert fwd["ecn_marks"][0] == r.flows["ecn_marks"].sum()
    assert r.flows["ecn_reductions"].sum() > 0
    assert r.conservation["ok"], r.conservation["violations"]


@pytest.mark.parametrize(
    "old, new, expected",
    [
        # The simulator's rules (tcplab_sim::validate), worded in user units at the TOML path.
        ('start = "50ms"', 'start = "50ms"\nstop = "20ms"', "flows[1].stop: 20 ms must be after start (50 ms)"),
        ('start = "50ms"', 'start = "2.5s"', "flows[1].start: 2.5 s must be at most the duration (2 s)"),
        (
            "forward = { loss = 1e-2 }",
            'schedule = [{ at = "3s", rate = "1Mbps" }]',
            "topology.bottleneck.schedule[0].at: 3 s must be at most the duration (2 s)",
        ),
        (
            "forward = { loss = 1e-2 }",
            'reverse = { schedule = [{ at = "4s", delay = "1ms" }] }',
            "topology.bottleneck.reverse.schedule[0].at: 4 s must be at most the duration (2 s)",
        ),
        (
            'receiver_access = { rate = "20Mbps", delay = "2.5ms", buffer = 100 }',
            'receiver_access = [{ rate = "20Mbps", delay = "2.5ms", buffer = 100 }, '
            '{ rate = "20Mbps", delay = "2.5ms", buffer = 100, schedule = [{ at = "9s", rate = "1Mbps" }] }]',
            "topology.receiver_access[1].schedule[0].at: 9 s must be at most the duration (2 s)",
        ),
    ],
)
def test_simulator_rules_name_the_toml_field_in_user_units(old, new, expected):
    assert old in SMALL_TOML
    msg = _error(SMALL_TOML.replace(old, new))
    assert expected in msg, msg


def test_simulator_rules_on_explicit_links_and_udp():
    from test_topology import GRAPH

    sched = GRAPH.replace('delay = "100ms"', 'delay = "100ms"\nforward = { schedule = [{ at = "7s", rate = "1Mbps" }] }', 1)
    assert sched != GRAPH
    assert "links[1].forward.schedule[0].at: 7 s must be at most the duration (2 s)" in _error(sched)
    udp = SMALL_TOML + '[[udp]]\nsrc = "s0"\ndst = "r0"\nrate = "1Mbps"\npacket_size = 500\nstart = "1s"\nstop = "1s"\n'
    assert "udp[0].stop: 1 s must be after start (1 s)" in _error(udp)
