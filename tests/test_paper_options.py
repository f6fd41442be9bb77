"""Named options where a paper and the RFCs (or the paper's own text) disagree: the receiver's
``tcp.sack_style`` and Adaptive Reno's ``w_inc`` / ``rtt_cong_update`` reach the simulator
from a scenario file, and bad values give one line naming the field and the value."""

import json

import pytest

import tcplab
from tcplab.scenario import Scenario, ScenarioError, default_tcp_config

from conftest import SMALL_TOML

# Three drops in the first window of ten (packets 3, 5, 7): the out-of-order packets 4, 6, 8
# and 9 form three ranges (4, 6, 8-9) but four packets.
TRACE = """
name = "sack-style"
seed = 1
duration = "30s"

[topology]
bottleneck = { rate = "10Mbps", delay = "10ms", buffer = 100, forward = { loss = { model = "trace", packets = [3, 5, 7] } } }
sender_access = { rate = "100Mbps", delay = "1ms", buffer = 100 }
receiver_access = { rate = "100Mbps", delay = "1ms", buffer = 100 }

[tcp]
initial_cwnd = 10
delayed_ack = false
sack_blocks = 6
{style}

[[flows]]
controller = {controller}
recovery = "sack"
bytes = 43800
"""


def _trace(style: str = "", controller: str = '"reno"') -> Scenario:
    return Scenario.from_toml(TRACE.replace("{style}", style).replace("{controller}", controller))


def test_sack_style_default_and_canonical():
    assert default_tcp_config()["sack_style"] == "ranges"
    c = json.loads(_trace().canonical_json())
    assert c["flows"][0]["tcp"]["sack_style"] == "ranges"
    c = json.loads(_trace('sack_style = "eth_packets"').canonical_json())
    assert c["flows"][0]["tcp"]["sack_style"] == "eth_packets"


def test_eth_packets_reach_the_receiver():
    # Ranges never need a fourth block here; one packet per block does.
    fr = tcplab.run(_trace()).flows.row(0, named=True)
    fp = tcplab.run(_trace('sack_style = "eth_packets"')).flows.row(0, named=True)
    assert fr["completed"] and fp["completed"]
    assert fr["sack_block_4_carried"] == 0
    assert fp["sack_block_4_carried"] > 0


@pytest.mark.parametrize("bad", ['"packets"', "1", "true"])
def test_bad_sack_style_is_one_line_naming_field_and_value(bad):
    text = SMALL_TOML.replace("tcp = { sack_blocks = 0 }", f"tcp = {{ sack_style = {bad} }}")
    with pytest.raises(ScenarioError) as info:
        Scenario.from_toml(text)
    msg = str(info.value)
    assert msg.startswith("flows[0].tcp.sack_style: ") and "\n" not in msg, msg
    assert "is not a known SACK style (" in msg and "known: ranges, eth_packets)" in msg, msg
    assert ("did you mean 'eth_packets'?" in msg) == (bad == '"packets"'), msg


def test_areno_options_pass_through():
    s = _trace(controller='{ name = "areno", w_inc = "prose", rtt_cong_update = "congestive" }')
    c = json.loads(s.canonical_json())
    assert c["flows"][0]["controller"]["params"] == {"w_inc": "prose", "rtt_cong_update": "congestive"}
    assert tcplab.run(s).flows.row(0, named=True)["completed"]


@pytest.mark.parametrize(
    "param, bad, shown",
    [("w_inc", '"both"', '"both"'), ("rtt_cong_update", '"sometimes"', '"sometimes"'), ("w_inc", "1", "1")],
)
def test_bad_areno_option_is_one_line_naming_field_and_value(param, bad, shown):
    s = _trace(controller=f'{{ name = "areno", {param} = {bad} }}')
    with pytest.raises(ScenarioError) as info:
        tcplab.run(s)
    msg = str(info.value)
    assert f"areno.{param} = " in msg and shown in msg and "\n" not in msg, msg
