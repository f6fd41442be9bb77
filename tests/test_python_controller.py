"""Controllers written in Python (tcplab.register_controller): examples/python_reno.py gives
the built-in reno's results bit for bit, composes with every recovery strategy, and a
failing controller ends the run with one clear error."""

from __future__ import annotations

import importlib.util
import tomllib

import pytest

import tcplab
from tcplab.scenario import ScenarioError

from conftest import ROOT, SCENARIOS, SMALL_TOML


def _example_reno() -> type:
    spec = importlib.util.spec_from_file_location("python_reno", ROOT / "examples" / "python_reno.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.Reno


@pytest.fixture
def python_reno():
    tcplab.register_controller("python_reno", _example_reno(), "Reno in Python")
    yield "python_reno"
    tcplab.unregister_controller("python_reno")


def _with_controller(doc: dict, name: str, recovery: str | None = None) -> dict:
    doc = {**doc, "flows": [dict(f) for f in doc["flows"]]}
    for f in doc["flows"]:
        f["controller"] = name
        if recovery is not None:
            f["recovery"] = recovery
            f.pop("tcp", None)  # SACK-based strategies need SACK blocks
    return doc


def _same(a: tcplab.RunResult, b: tcplab.RunResult, tables) -> None:
    for t in tables:
        x, y = a.tables[t], b.tables[t]
        if "controller" in x.columns:
            x, y = x.drop("controller"), y.drop("controller")
        assert x.height > 0 or t != "flows"
        assert x.equals(y), f"table {t} differs"


def test_python_reno_is_bit_identical_to_reno_on_the_demo(python_reno):
    doc = tomllib.loads((SCENARIOS / "demo-dumbbell.toml").read_text())
    rust = tcplab.run(doc)
    py = tcplab.run(_with_controller(doc, python_reno))
    assert py.flows["controller"].to_list() == [python_reno] * 2
    _same(rust, py, ("flows", "series", "events", "verdicts", "drops"))


@pytest.mark.parametrize("recovery", tcplab.recoveries())
def test_python_reno_composes_with_every_recovery(python_reno, recovery):
    doc = tomllib.loads(SMALL_TOML)
    rust = tcplab.run(_with_controller(doc, "reno", recovery))
    py = tcplab.run(_with_controller(doc, python_reno, recovery))
    _same(rust, py, ("flows", "series", "verdicts"))


def test_runs_in_threads_share_the_gil_without_deadlock(python_reno):
    """Each simulation releases the GIL and takes it back only to call its controller."""
    from concurrent.futures import ThreadPoolExecutor

    doc = _with_controller(tomllib.loads(SMALL_TOML), python_reno)
    alone = tcplab.run(doc)
    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(lambda _: tcplab.run(doc), range(3)))
    for r in results:
        _same(alone, r, ("flows", "series"))


def test_registered_names_are_listed_and_built_in_names_refused(python_reno):
    assert tcplab.controllers()[-1] == python_reno
    with pytest.raises(ValueError, match='name = "reno": a built-in controller'):
        tcplab.register_controller("reno", _example_reno())
    with pytest.raises(ValueError, match="name = "):
        tcplab.register_controller("bad name", _example_reno())
    tcplab.unregister_controller(python_reno)
    assert python_reno not in tcplab.controllers()
    with pytest.raises(ScenarioError, match="python_reno"):
        tcplab.run(_with_controller(tomllib.loads(SMALL_TOML), python_reno))


class _Fails(tcplab.Controller):
    def on_ack(self, s):
        if s.snd_una > 20_000:
            raise ZeroDivisionError("boom in on_ack")
        self.cwnd += s.mss

    def on_congestion(self, ev):
        self.ssthresh = self.cwnd // 2
        return None


class _BadWindow(_Fails):
    def on_ack(self, s):
        self.cwnd = -1


@pytest.mark.parametrize(
    ("cls", "message", "cause"),
    [
        (
            _Fails,
            'controller "failing" failed in on_ack: ZeroDivisionError: boom in on_ack',
            ZeroDivisionError,
        ),
        (_BadWindow, "cwnd = -1: expected a non-negative integer", ValueError),
    ],
)
def test_an_exception_in_a_controller_is_one_error_for_the_run(cls, message, cause):
    tcplab.register_controller("failing", cls)
    try:
        with pytest.raises(RuntimeError) as info:
            tcplab.run(_with_controller(tomllib.loads(SMALL_TOML), "failing"))
        assert message in str(info.value)
        assert "internal error" not in str(info.value)
        assert isinstance(info.value.__cause__, cause)
    finally:
        tcplab.unregister_controller("failing")


def test_a_failing_constructor_is_a_scenario_error():
    doc = _with_controller(tomllib.loads(SMALL_TOML), "params")
    doc["flows"][0]["controller"] = {"name": "params", "beta": 0.7}
    tcplab.register_controller("params", _Fails)
    try:
        with pytest.raises(ScenarioError, match=r'controller = "params": the Python class failed: .*beta'):
            tcplab.run(doc)
    finally:
        tcplab.unregister_controller("params")


def test_samples_carry_the_ack_facts():
    seen: list = []

    class Recorder(tcplab.Controller):
        def observe(self, s):
            seen.append(s)

        def on_ack(self, s):
            self.cwnd += s.mss

        def on_congestion(self, ev):
            self.ssthresh = max(self.cwnd // 2, 2 * ev.mss)
            return ("half", 0.5)

    tcplab.register_controller("recorder", Recorder)
    try:
        tcplab.run(_with_controller(tomllib.loads(SMALL_TOML), "recorder"))
    finally:
        tcplab.unregister_controller("recorder")
    assert len(seen) > 100
    s = seen[-1]
    assert isinstance(s, tcplab.AckSample) and s.mss == 1460 and s.snd_nxt >= s.snd_una
    assert any(x.rtt_ns and x.rtt_ns > 40_000_000 for x in seen)
    with pytest.raises(AttributeError):
        s.mss = 1


def test_a_controller_missing_a_required_method_is_refused_when_built():
    import tcplab
    from tcplab.scenario import ScenarioError

    class Half(tcplab.Controller):
        def on_ack(self, s):
            pass

    tcplab.register_controller("half", Half)
    try:
        doc = {
            "name": "half",
            "duration": "1s",
            "topology": {"pairs": 1, "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 20}},
            "flows": [{"controller": "half", "recovery": "newreno"}],
        }
        try:
            tcplab.run(doc)
        except ScenarioError as e:
            assert "half" in str(e) and "on_congestion" in str(e), e
        else:
            raise AssertionError("a controller without on_congestion ran")
    finally:
        tcplab.unregister_controller("half")


def test_the_example_passes_mypy() -> None:
    """The shipped example is typed as the package is."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "mypy", str(ROOT / "examples" / "python_reno.py")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
