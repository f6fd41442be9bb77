"""The PyO3 module: listing, errors as ValueError, panics as RuntimeError."""

import json
import threading

import polars as pl
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

    assert isinstance(out["series"], _native.ArrowTable) and out["series"].name == "series"
    series = pl.DataFrame(out["series"])
    assert series.schema["time_ns"] == pl.UInt64 and len(out["series"]) == series.height > 0
    assert pl.DataFrame(out["flows"]).schema["name"] == pl.String
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
        assert pl.DataFrame(r["series"]).equals(pl.DataFrame(first["series"]))


def test_results_schema_describes_the_tables_a_run_returns():
    """One column schema, declared in the simulator: every table and column a run returns,
    in order, with the type the schema names; nullable columns hold nulls, not NaN."""

    from tcplab.run import SCHEMA, TABLES

    schema = json.loads(_native.results_schema_json())
    assert [t["name"] for t in schema] == list(TABLES) == list(SCHEMA)
    sim = _native.Simulation(json.dumps(canonical_of(SMALL_TOML)))
    sim.run_until(sim.end_ns)
    out = sim.finish()
    dtypes = {"str": pl.String, "bool": pl.Boolean, "u8": pl.UInt8, "u32": pl.UInt32, "u64": pl.UInt64,
              "f64": pl.Float64}
    for table in schema:
        names = [c["name"] for c in table["columns"]]
        assert out[table["name"]].column_names == names, table["name"]
        frame = pl.DataFrame(out[table["name"]])
        assert frame.columns == names and frame.height == len(out[table["name"]])
        for c in table["columns"]:
            assert c["description"], c["name"]
            assert frame.schema[c["name"]] == dtypes[c["dtype"]], (table["name"], c["name"])
            if c["nullable"] and c["dtype"] == "f64":
                assert frame[c["name"]].is_nan().sum() == 0, (table["name"], c["name"])
    flows = pl.DataFrame(out["flows"])
    # reno on this path: no 4/5 decisions, so no accuracy; every flow took RTT samples
    assert flows["ff45_accuracy"].null_count() == flows.height
    assert flows["min_rtt_ns"].null_count() == 0


def test_an_arrow_table_is_the_same_frame_as_its_rows_and_outlives_nothing():
    """The Arrow export against an independent construction of the same table (its rows
    rebuilt column by column through numpy, as a live run builds its tables), exported twice,
    read after the ArrowTable and its run are gone; an empty table has its columns."""
    import gc

    from polars.testing import assert_frame_equal

    from tcplab.live.run import frame_of
    from tcplab.run import table_frame

    sim = _native.Simulation(json.dumps(canonical_of(SMALL_TOML)))
    sim.run_until(sim.end_ns)
    out = sim.finish()
    frames = {name: table_frame(name, t) for name, t in out.items() if isinstance(t, _native.ArrowTable)}
    again = table_frame("flows", out["flows"])
    del out, sim
    gc.collect()
    assert_frame_equal(again, frames["flows"])
    for name in ("flows", "links", "series", "drops", "events"):
        f = frames[name]
        rows = [{k: v for k, v in r.items() if k != "id"} for r in f.iter_rows(named=True)]
        assert_frame_equal(frame_of(name, rows), f, check_exact=True)
    assert frames["series"].height > 100 and frames["flows"]["completed"].dtype == pl.Boolean
    assert frames["udp"].height == 0 and frames["udp"].columns[0] == "id"


def test_arrow_capsules_dropped_unread_release_their_arrays_and_pyarrow_reads_them():
    """Capsules nobody imports free what they hold (their release runs at the capsule's
    end); where pyarrow is installed (the `pandas` extra), the reference implementation
    reads every table and its full validation passes, with the values polars reads."""
    import gc

    sim = _native.Simulation(json.dumps(canonical_of(SMALL_TOML)))
    sim.run_until(sim.end_ns)
    out = sim.finish()
    for _ in range(3):
        schema, array = out["flows"].__arrow_c_array__()
        del schema, array
    gc.collect()
    pa = pytest.importorskip("pyarrow", reason="pyarrow (the pandas extra) is not installed")
    for name, t in out.items():
        if isinstance(t, _native.ArrowTable):
            batch = pa.record_batch(t)
            batch.validate(full=True)
            assert pl.from_arrow(batch).equals(pl.DataFrame(t)), name


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


@pytest.mark.skipif(__import__("platform").libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_memory_goes_back_to_the_system():
    import ctypes

    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.free.argtypes = [ctypes.c_void_p]
    chunk, count = 64 * 1024, 1024  # 64 MB in chunks glibc keeps in its heap (below mmap's threshold)
    blocks = [libc.malloc(chunk) for _ in range(count)]
    keep = libc.malloc(chunk)  # above them: the freed ones are not the heap's top
    for b in blocks:
        ctypes.memset(b, 1, chunk)  # resident
    for b in blocks:
        libc.free(b)
    held = _rss_kib()
    _native.release_freed_memory()
    released = held - _rss_kib()
    libc.free(keep)
    # malloc_trim gives back every whole free page: nearly all of the 64 MB; half is a bound
    # no allocator bookkeeping comes near.
    assert released >= chunk * count // 1024 // 2, f"{released} KiB released of {chunk * count // 1024} KiB freed"


def test_a_run_gives_its_freed_memory_back(monkeypatch):
    import tcplab

    calls = []
    monkeypatch.setattr(_native, "release_freed_memory", lambda: calls.append(1))
    tcplab.run(tcplab.Scenario.from_toml(SMALL_TOML))
    assert calls == [1]
