"""The PyO3 module: listing, errors as ValueError, panics as RuntimeError."""

import json
import threading

import pytest

from tcplab import _native

from conftest import SMALL_TOML, canonical_of


def test_lists_and_version():
    assert "reno" in _native.controllers()
    assert set(_native.recoveries()) >= {"reno", "newreno", "sack"}
    assert _native.version().count(".") == 2


def test_default_tcp_config_is_json():
    c = json.loads(_native.default_tcp_config_json())
    assert c["mss"] == 1460 and "growth" in c


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("{", "scenario JSON"),
        ("[]", "scenario JSON"),
        (json.dumps({"name": "x"}), "missing field"),
    ],
)
def test_bad_json_is_value_error(text, fragment):
    with pytest.raises(ValueError, match=fragment):
        _native.Simulation(text)


def test_unknown_field_in_json_is_value_error():
    c = canonical_of(SMALL_TOML)
    c["topology"]["bottleneck"]["forward"]["colour"] = "red"
    with pytest.raises(ValueError, match="colour"):
        _native.Simulation(json.dumps(c))


def test_panic_becomes_runtime_error_not_panic_exception():
    with pytest.raises(RuntimeError, match=r"^internal error: boom \(at .*lib\.rs"):
        _native._panic_for_tests("boom")
    # and the module still works afterwards
    assert _native.controllers()


def test_tcp_config_problem():
    assert _native.tcp_config_problem_json(_native.default_tcp_config_json()) is None
    problem = json.loads(_native.tcp_config_problem_json(json.dumps({"mss": 10})))
    assert problem == {
        "field": "tcp.mss",
        "rule": "range",
        "value": 10,
        "limit": [64, 65000],
        "message": "tcp.mss = 10: expected 64..=65000 bytes",
    }
    with pytest.raises(ValueError, match="colour"):
        _native.tcp_config_problem_json(json.dumps({"colour": 1}))


def test_json_that_passes_pydantic_but_fails_rust_validation_is_value_error():
    # pydantic does not know each controller's parameters; the Rust ParamReader does.
    c = canonical_of(SMALL_TOML)
    c["flows"][0]["controller"]["params"] = {"no_such_parameter": 1.0}
    with pytest.raises(ValueError, match="no_such_parameter"):
        _native.Simulation(json.dumps(c))


def test_simulation_lifecycle():
    sim = _native.Simulation(json.dumps(canonical_of(SMALL_TOML)))
    assert sim.end_ns == 2_000_000_000
    assert not sim.done
    sim.run_until(sim.end_ns // 2)
    assert 0 < sim.now_ns <= sim.end_ns // 2
    sim.run_until(sim.end_ns)
    assert sim.done
    out = sim.finish()
    assert set(out) == {
        "flows",
        "udp",
        "links",
        "series",
        "queues",
        "drops",
        "events",
        "segments",
        "verdicts",
        "delay",
        "delay_histogram",
        "delay_series",
        "conservation",
        "stats",
        "pcap",
        "pcap_addresses",
    }
    import numpy as np

    assert isinstance(out["series"]["time_ns"], np.ndarray) and out["series"]["time_ns"].dtype == np.uint64
    assert isinstance(out["flows"]["name"], list)
    assert sim.done
    with pytest.raises(RuntimeError, match="already called"):
        sim.finish()


def test_simulations_run_in_parallel_threads():
    text = json.dumps(canonical_of(SMALL_TOML))
    results = [None] * 4

    def work(i):
        sim = _native.Simulation(text)
        sim.run_until(sim.end_ns)
        results[i] = sim.finish()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = results[0]
    for r in results[1:]:
        assert (r["series"]["cwnd"] == first["series"]["cwnd"]).all()


def test_results_schema_describes_the_tables_a_run_returns():
    """One column schema, declared in the simulator: every table and column a run returns,
    in order, with the numpy type the schema names; nullable columns become polars nulls."""
    import numpy as np
    import polars as pl

    from tcplab import Scenario, run
    from tcplab.run import SCHEMA, TABLES

    schema = json.loads(_native.results_schema_json())
    assert [t["name"] for t in schema] == list(TABLES) == list(SCHEMA)
    sim = _native.Simulation(json.dumps(canonical_of(SMALL_TOML)))
    sim.run_until(sim.end_ns)
    out = sim.finish()
    numpy = {"bool": np.bool_, "u8": np.uint8, "u32": np.uint32, "u64": np.uint64, "f64": np.float64}
    for table in schema:
        assert list(out[table["name"]]) == [c["name"] for c in table["columns"]], table["name"]
        for c in table["columns"]:
            values = out[table["name"]][c["name"]]
            assert c["description"], c["name"]
            if c["dtype"] == "str":
                assert isinstance(values, list)
            elif c["nullable"]:  # NaN for none in the native dict
                assert values.dtype == np.float64
            else:
                assert values.dtype == numpy[c["dtype"]], (table["name"], c["name"])
    flows = run(Scenario.from_toml(SMALL_TOML)).flows
    assert flows.schema["min_rtt_ns"] == pl.UInt64 and flows.schema["ff45_accuracy"] == pl.Float64
    nan = int(np.isnan(out["flows"]["ff45_accuracy"]).sum())
    assert flows["ff45_accuracy"].null_count() == nan
