"""ingest/parsers/fio_common.py: exact numbers, percentile names and latency units of fio."""

from decimal import Decimal

import pytest

from ingest.parsers.base import Measurement, ParseError
from ingest.parsers.fio_common import (
    BW_UNITS,
    LAT_UNITS,
    exact,
    lat_stats,
    measurement,
    percentile_name,
)


@pytest.mark.parametrize(
    ("token", "suffix", "expected"),
    [
        (" 83205.880149 ", False, Decimal("83205.880149")),  # clat_ns mean, kept to the digit
        ("10.9k", True, Decimal("10900")),  # IOPS=10.9k
        ("5317.1k", True, Decimal("5317100")),  # max=5317.1k (nsec)
        ("5.3M", True, Decimal("5300000")),
        ("577", False, Decimal("577")),
    ],
)
def test_exact_reads_fio_numbers_as_printed(token, suffix, expected):
    assert exact(token, line=1, what="value", suffix=suffix) == expected


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("10.9k", "clat avg '10.9k' is not a number"),  # a suffix where none is allowed
        ("77,79", "clat avg '77,79' has a decimal comma"),
        ("1.2.3", "clat avg '1.2.3' is not a number"),
        ("nan", "clat avg 'nan' is not a number"),
    ],
)
def test_exact_refuses_other_tokens_naming_the_line(token, message):
    with pytest.raises(ParseError) as err:
        exact(token, line=4, what="clat avg")
    assert err.value.line == 4
    assert message in err.value.message


def test_units_convert_exactly():
    assert exact("42.6", line=1, what="BW") * BW_UNITS["MiB"] == Decimal("43622.4")
    assert exact("2048", line=1, what="BW") * BW_UNITS["B"] == 2
    assert exact("83205.880149", line=1, what="clat") * LAT_UNITS["nsec"] == Decimal("83.205880149")


@pytest.mark.parametrize(
    ("prefix", "percent", "name"),
    [
        ("clat", "99.900000", "clat_p99_9_us"),  # JSON key
        ("clat", "99.990000", "clat_p99_99_us"),
        ("clat", "99.00th", "clat_p99_us"),  # normal output
        ("lat", "50.000000%", "lat_p50_us"),  # terse field
    ],
)
def test_percentile_name_is_one_per_percentile_however_printed(prefix, percent, name):
    assert percentile_name(prefix, percent, line=1) == name


def test_percentile_name_refuses_a_percentile_that_is_no_number():
    with pytest.raises(ParseError, match="percentile 'x' is not a number") as err:
        percentile_name("clat", "x%", line=9)
    assert err.value.line == 9


def test_measurement_stores_the_decimal_as_a_float():
    assert measurement("iops", Decimal("9617.764471"), "IOPS", "higher") == Measurement(
        "iops", 9617.764471, "IOPS", "higher"
    )


def test_lat_stats_converts_the_stats_present_to_microseconds():
    stats = {"min": Decimal("53"), "mean": Decimal("77.79"), "stddev": Decimal("1.5")}
    assert lat_stats("clat", stats, LAT_UNITS["nsec"]) == [
        Measurement("clat_min_us", 0.053, "us", "lower"),
        Measurement("clat_mean_us", 0.07779, "us", "lower"),
        Measurement("clat_stddev_us", 0.0015, "us", "lower"),
    ]
    assert lat_stats("slat", {"max": Decimal(2)}, LAT_UNITS["msec"]) == [
        Measurement("slat_max_us", 2000.0, "us", "lower")
    ]
