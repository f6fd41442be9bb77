import pytest

from tcplab.units import UnitError, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize(
    "value, ns",
    [
        ("120ms", 120_000_000),
        ("300s", 300_000_000_000),
        ("0.1s", 100_000_000),
        ("1.5 s", 1_500_000_000),
        ("250us", 250_000),
        ("250µs", 250_000),
        ("7ns", 7),
        ("2min", 120_000_000_000),
        ("1h", 3_600_000_000_000),
        ("1e-3s", 1_000_000),
        (0.12, 120_000_000),
        (60, 60_000_000_000),
        (0, 0),
    ],
)
def test_durations(value, ns):
    assert parse_duration(value) == ns


@pytest.mark.parametrize(
    "value, bps",
    [
        ("1.6Mbps", 1_600_000),
        ("10Gbps", 10_000_000_000),
        ("500kbps", 500_000),
        ("500Kbps", 500_000),
        ("2 Mbit/s", 2_000_000),
        ("1MBps", 8_000_000),
        ("100bps", 100),
        (1e6, 1_000_000),
        (64000, 64000),
        # tc(8)'s forms: SI with "bit", IEC with "ibit".
        ("10mbit", 10_000_000),
        ("100kbit", 100_000),
        ("1gbit", 1_000_000_000),
        ("100kibit", 102_400),
        ("2mibit", 2 * 2**20),
        ("1.6Mbit/s", 1_600_000),
    ],
)
def test_rates(value, bps):
    assert parse_rate(value) == bps


@pytest.mark.parametrize(
    "value, n",
    [
        ("32MB", 32_000_000),
        ("64KiB", 65536),
        ("64KB", 64000),
        ("1.5KB", 1500),
        ("1GiB", 2**30),
        ("1460B", 1460),
        (1460, 1460),
        (1e6, 1_000_000),
    ],
)
def test_sizes(value, n):
    assert parse_size(value) == n


@pytest.mark.parametrize(
    "parse, value, fragment",
    [
        (parse_duration, "120", "needs a unit"),
        (parse_duration, "3 parsecs", "unknown duration unit"),
        (parse_duration, "-1s", "must be >= 0"),
        (parse_duration, True, "is not a duration"),
        (parse_duration, float("nan"), "finite"),
        (parse_rate, -5, "must be > 0"),
        (parse_rate, 0, "must be > 0"),
        (parse_rate, "10 furlongs", "unknown rate unit"),
        (parse_size, "64kb", "B not b"),
        (parse_size, 1.5, "whole number of bytes"),
        (parse_size, "fast", "is not a size"),
    ],
)
def test_unit_errors(parse, value, fragment):
    with pytest.raises(UnitError, match=fragment):
        parse(value)


def test_a_size_may_be_zero_bytes_the_fields_rule_is_the_simulators():
    # Whether 0 bytes is allowed is each field's rule (tcplab_sim::validate), not the parser's.
    assert parse_size("0B") == 0 and parse_size(0) == 0
    with pytest.raises(UnitError, match="must be >= 0"):
        parse_size(-1)


def test_positive_duration():
    with pytest.raises(UnitError, match="must be > 0"):
        parse_duration("0s", positive=True)


@pytest.mark.parametrize("value", ["10ibit", "10kibps", "10mbitx", "10 kB/s/s"])
def test_rate_unit_errors_list_every_form(value):
    with pytest.raises(UnitError) as e:
        parse_rate(value)
    msg = str(e.value)
    assert msg.startswith("has an unknown rate unit")
    for form in ("Mbps", "Mbit/s", "mbit", "kibit", "MBps"):
        assert form in msg, (form, msg)
