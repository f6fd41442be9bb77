"""Individual [[flows]] entries at scale (issue 27 §5): runs of plain entries are read
without tomllib (tcplab.toml_file) and entries alike but for their names, endpoints and
times are validated by pydantic once (tcplab.scenario.entries). Both must give exactly what
tomllib and pydantic give: the same values and types, the same errors, and no flow that
shares a table with another. No timings: bench/validate_scale.py --individual measures."""

from __future__ import annotations

import json
import random
import tomllib

import pytest

import tcplab.scenario.model as model
from tcplab.scenario import Scenario, ScenarioError
from tcplab.toml_file import TomlError, parse_toml


def same(a, b) -> bool:
    """Equal, with the same types and key order all the way down (1, 1.0 and true differ)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def tomllib_result(text: str):
    try:
        return "ok", tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return "error", f"invalid TOML: {e}"


def parse_result(text: str):
    try:
        return "ok", parse_toml(text)
    except TomlError as e:
        return "error", str(e)


def assert_parses_as_tomllib(text: str) -> None:
    want, got = tomllib_result(text), parse_result(text)
    assert got[0] == want[0], (text, got, want)
    if want[0] == "ok":
        assert same(got[1], want[1]), text
    else:
        assert got[1] == want[1]


PLAIN = "".join(
    f'\n[[flows]]\nname = "f{i}"\nsrc = "s{i}"\ndst = "r{i}"\ncontroller = "reno"\nstart = "{i}ms"\n' for i in range(5)
)

TRICKY = [
    PLAIN,
    PLAIN.rstrip("\n"),  # no newline at the end
    'name = "x"\n' + PLAIN + '[trace]\nseries = "off"\n' + PLAIN,
    '[[flows]]\nname = "a"\nname = "b"\n',  # a key given twice
    'd = """\n[[flows]]\nname = "x"\n[a]"""\n',  # a header inside a multi-line string
    'd = """\n[[flows]]\nname = "x"\n"""\n',
    "x = [\n[[flows]]\n[1]]\n",  # inside an array
    'x = [\n[[flows]]\nname = "a"\n]\n',
    'flows = 1\n[[flows]]\nname = "a"\n',
    '[[flows]]\nname = "a"\n[flows.tcp]\nmss = 1\n',
    '[[flows]]\nname = "a"\ntcp = { mss = 1 }\n[[flows]]\nname = "b"\n[[flows]]\nname = "c"\n',
    '[[flows]]\nname = "a"\n[[ flows ]]\nname = "b"\n',
    '[[flows]]\nname = "a"\n[["fl\\u006fws"]]\nname = "b"\n',
    "[[flows]]\nstart = 01\n",
    '[[flows]]\nstart = 1.5\nb = -0\nc = +7\nd = 1e5\ne = -0.0\nf = true\ng = false\nh = ""\n# c\n\n  k = 3 # x\n',
    '[[flows]]\nname = "a\tb"\n',
    '[[flows]]\r\nname = "a"\r\n',
    '[[flows]]\nname = "\u00e9"\n',
    '[[flows]]\nname = "a" x\n',
    "[[flows]]\n[[flows]]\n[[flows]]\n",
    "[[flows]]\na = 1\n[[flows]]\na = 1\nb = [1,\n2]\n[[flows]]\nc = 1\n[[flows]]\nd = 2\n",
    "[[flows]]\na = 99999999999999999999999999999999999\n",
    "[[flows]]\na = 1e400\n",
    "[[flows]]\na.b = 1\n",
    "[[flows]] # c\na = 1\n",
    " [[flows]]\na = 1\n",
    '[[flows]]\na = "x"\n[[flows]]\nb = inf\n[[flows]]\nc = nan\n[[flows]]\nd = 1\n',
    "[[flows]]\na = 1\n[x]\n[[flows]]\nb = 2\n[x.y]\n",
    "[[flows]]\na = 1\n[flows]\n",
    "[x]\n[[flows]]\na=1\n[[x.flows]]\n",
    "[[flows]]\na = 'literal'\n",
]


@pytest.mark.parametrize("text", TRICKY, ids=range(len(TRICKY)))
def test_plain_flows_entries_parse_as_tomllib_does(text):
    assert_parses_as_tomllib(text)


def test_plain_flows_entries_with_random_damage_parse_as_tomllib_does():
    rng = random.Random(5)
    alphabet = list('[]"=\n #\\ab1.e-+\t\'{}')
    for _ in range(1500):
        s = list(PLAIN)
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(s))
            op = rng.random()
            if op < 0.4:
                s[i] = rng.choice(alphabet)
            elif op < 0.7:
                del s[i]
            else:
                s.insert(i, rng.choice(alphabet))
        assert_parses_as_tomllib("".join(s))


def scenario(*flows: dict, **top) -> dict:
    return {
        "name": "entries",
        "duration": "2s",
        "topology": {"pairs": 8, "bottleneck": {"rate": "10Mbps", "delay": "10ms", "buffer": 100}},
        "tcp": {"profile": "rfc"},
        "flows": list(flows),
        "trace": {"series": "off"},
        **top,
    }


def by_pydantic(doc: dict, monkeypatch) -> tuple[str, object]:
    """What the scenario gives with every entry validated by pydantic on its own."""
    with monkeypatch.context() as m:
        m.setattr(model, "validate_entries", lambda entries: entries)
        return outcome(doc)


def outcome(doc: dict) -> tuple[str, object]:
    try:
        sc = Scenario.from_dict(doc)
    except ScenarioError as e:
        return "error", str(e)
    return "ok", sc


def assert_as_pydantic(doc: dict, monkeypatch) -> Scenario | None:
    want, got = by_pydantic(doc, monkeypatch), outcome(doc)
    assert got[0] == want[0], (got, want)
    if want[0] == "error":
        assert got[1] == want[1]
        return None
    a, b = got[1], want[1]
    assert a.canonical_json() == b.canonical_json() == json.dumps(b.canonical())
    for x, y in zip(a.flows, b.flows, strict=True):
        assert type(x) is type(y)
        assert same(x.__dict__.keys() and {k: _plain(v) for k, v in x.__dict__.items()},
                    {k: _plain(v) for k, v in y.__dict__.items()})
        assert x.model_fields_set == y.model_fields_set
        assert x == y
    return a


def _plain(v):
    return v.model_dump() if hasattr(v, "model_dump") else v


ALIKE = {"src": "s0", "dst": "r0", "controller": "reno", "recovery": "sack"}


def test_alike_entries_give_what_pydantic_gives(monkeypatch):
    flows = [{**ALIKE, "name": f"f{i}", "src": f"s{i}", "dst": f"r{i}", "start": f"{i}ms"} for i in range(8)]
    sc = assert_as_pydantic(scenario(*flows), monkeypatch)
    assert [f.start for f in sc.flows] == [i * 1_000_000 for i in range(8)]


@pytest.mark.parametrize(
    "first, second",
    [
        ({"controller": {"name": "cubic", "beta": 0.7}}, {"controller": {"name": "cubic", "beta": 0.8}}),
        ({"controller": {"name": "cubic", "beta": 0.7}}, {"controller": {"name": "cubic", "beta": 1}}),
        ({"tcp": {"mss": 1000}}, {"tcp": {"mss": 1001}}),
        ({"tcp": {"growth": {"mode": "byte_counting", "limit": 2}}}, {"tcp": {"growth": {"mode": "byte_counting", "limit": 3}}}),
        ({"tcp": {"timestamps": True}}, {"tcp": {"timestamps": False}}),
        ({"route": ["s0", "left", "right", "r0"]}, {"src": "s1", "dst": "r1", "route": ["s1", "left", "right", "r1"]}),
        ({"recovery": "sack"}, {"recovery": "newreno"}),
        ({"bytes": 1000}, {"bytes": "2KB"}),
        ({"stop": "1s"}, {"stop": 1.5}),
    ],
)
def test_alike_entries_that_differ_in_one_nested_field_stay_apart(first, second, monkeypatch):
    a = {**ALIKE, **first}
    b = {**ALIKE, **second}
    sc = assert_as_pydantic(scenario(a, b, dict(a), dict(b)), monkeypatch)
    flows = json.loads(sc.canonical_json())["flows"]
    assert flows[0] != flows[1]
    assert {k: v for k, v in flows[0].items() if k != "name"} == {k: v for k, v in flows[2].items() if k != "name"}
    assert {k: v for k, v in flows[1].items() if k != "name"} == {k: v for k, v in flows[3].items() if k != "name"}


@pytest.mark.parametrize(
    "bad",
    [
        {"start": "soon"},
        {"start": True},
        {"start": -1},
        {"name": 5},
        {"src": None},
        {"dst": ["r0"]},
        {"bytes": "lots"},
        {"stop": "1 fortnight"},
        {"controller": "renoo"},
        {"recovery": {"name": "sack", "x": [1]}},
        {"tcp": {"timestamps": 1}},
        {"tcp": {"mss": "big"}},
        {"colour": "red"},
        {"route": "s0"},
    ],
)
def test_a_bad_entry_among_alike_ones_is_named_as_pydantic_names_it(bad, monkeypatch):
    flows = [{**ALIKE, "name": f"f{i}", "start": f"{i}ms"} for i in range(6)]
    flows[4] = {**flows[4], **bad}
    assert_as_pydantic(scenario(*flows), monkeypatch)


def test_one_and_one_point_zero_and_true_are_different_entries(monkeypatch):
    flows = [
        {**ALIKE, "tcp": {"initial_cwnd": 10}},
        {**ALIKE, "tcp": {"initial_cwnd": 10.0}},
        {**ALIKE, "tcp": {"initial_cwnd": True}},
    ]
    assert_as_pydantic(scenario(*flows), monkeypatch)
    assert_as_pydantic(scenario(*flows[:2]), monkeypatch)


def test_unusual_values_go_to_pydantic(monkeypatch):
    flows = [
        {**ALIKE, "name": "caf\u00e9"},
        {**ALIKE, "name": "caf\u00e9s"},
        {**ALIKE, "start": 0.25},
        {**ALIKE, "start": 1},
        {**ALIKE, "start": "1.5ms"},
        {**ALIKE, "start": "99999999999999s"},
    ]
    assert_as_pydantic(scenario(*flows), monkeypatch)


def test_changing_one_flows_table_changes_no_alike_flow():
    flows = [
        {**ALIKE, "controller": {"name": "cubic", "beta": 0.7}, "tcp": {"growth": {"mode": "byte_counting"}},
         "route": ["s0", "left", "right", "r0"]}
        for _ in range(3)
    ]
    sc = Scenario.from_dict(scenario(*flows))
    before = json.loads(sc.canonical_json())["flows"]
    # the first is pydantic's own flow, the others are made from a shape: change the second
    sc.flows[1].controller["params"]["beta"] = 0.5
    sc.flows[1].tcp.growth["limit"] = 7
    sc.flows[1].tcp.mss = 1000
    sc.flows[1].route.append("x")
    sc.flows[1].stop = 1_000_000_000
    after = json.loads(sc.canonical_json())["flows"]
    assert after[0] == before[0] and after[2] == before[2]
    assert after[1]["controller"]["params"]["beta"] == 0.5
    assert after[1]["tcp"]["growth"]["limit"] == 7 and after[1]["tcp"]["mss"] == 1000
    assert after[1]["route"][-1] == "x"
    assert sc.flows[1].model_fields_set == {"src", "dst", "controller", "recovery", "tcp", "route", "stop"}
    assert sc.flows[2].model_fields_set == {"src", "dst", "controller", "recovery", "tcp", "route"}
    assert "mss" in sc.flows[1].tcp.model_fields_set and "mss" not in sc.flows[2].tcp.model_fields_set
    # and a fourth scenario of the same shapes starts from the values as given
    again = Scenario.from_dict(scenario(*flows))
    assert json.loads(again.canonical_json())["flows"] == before


def test_a_file_of_many_plain_entries_validates_as_tomllib_and_pydantic_give_it(monkeypatch, tmp_path):
    text = 'name = "many"\nduration = "2s"\n[topology]\nbottleneck = { rate = "10Mbps", delay = "10ms", buffer = 100 }\n'
    text += '[tcp]\nprofile = "rfc"\n'
    controllers = ["reno", "cubic", "veno"]
    text += "".join(
        f'\n[[flows]]\nname = "f{i}"\nsrc = "s{i}"\ndst = "r{i}"\ncontroller = "{controllers[i % 3]}"\n'
        f'recovery = "sack"\nstart = "{i * 10}us"\n'
        for i in range(300)
    )
    doc = parse_toml(text)
    assert same(doc, tomllib.loads(text))
    assert_as_pydantic(doc, monkeypatch)
    bad = text.replace('start = "2990us"', 'start = "2990 us"').replace('dst = "r7"\n', 'dst = "r7"\ndst = "r8"\n')
    assert_parses_as_tomllib(bad)
    with pytest.raises(ScenarioError, match="invalid TOML"):
        Scenario.from_toml(bad)
