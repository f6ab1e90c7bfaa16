"""The compare page's numbers as text: four significant digits, thousands separated, a
report's spread as printed, p-values below the floor as a bound, never an exponent."""

from __future__ import annotations

import math

import pytest

from dashboards.pure.compare_text import (
    P_FLOOR,
    change_pct_text,
    number_text,
    p_text,
    percent_text,
    plain_text,
    report_side_text,
    side_text,
    without_exponents,
)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (13100.0, "13,100"),
        (1234567.0, "1,234,567"),
        (-25000.0, "-25,000"),
        (15.27, "15.27"),
        (0.0123, "0.0123"),
        (0.000123456, "0.0001235"),  # not 1.235e-04
        (0.0, "0"),
    ],
)
def test_a_number_keeps_four_significant_digits_without_an_exponent(value, text):
    assert number_text(value) == text


def test_a_side_is_mean_sd_and_n_the_sd_left_out_for_one_value():
    assert side_text(13100.0, 100.0, 3) == "13,100 ± 100 (3)"
    assert side_text(15.27, None, 1) == "15.27 (1)"
    assert side_text(None, None, 0) == "—"


def test_a_reports_side_keeps_its_spread_as_printed_and_its_stated_runs():
    assert report_side_text(676543.0, None, 3.0, None) == "676,543 ± 3 % (report)"
    assert report_side_text(1000.0, 30.0, None, 6) == "1,000 ± 30 (report, n 6)"
    assert report_side_text(1000.0, None, 1e-05, None) == "1,000 ± 0.00001 % (report)"
    assert report_side_text(1000.0, None, None, 6) == "1,000 (report, n 6)"


def test_a_change_is_signed_to_one_place_or_a_dash():
    assert [change_pct_text(c) for c in (-12.345, 5.0, None)] == ["-12.3 %", "+5.0 %", "—"]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (123.0, "123 %"),  # not 1.2e+02 %
        (32.4, "32 %"),
        (4.53, "4.5 %"),
        (0.25, "0.25 %"),
        (0.0012, "0.0012 %"),
        (0.0, "0 %"),
        (math.inf, "no test"),
    ],
)
def test_a_threshold_is_written_as_people_write_it(value, text):
    assert percent_text(value) == text


def test_plain_text_writes_the_digits_out():
    assert plain_text(1.2e-5, 2) == "0.000012"
    assert plain_text(123.456, 2) == "123"
    assert plain_text(0.0, 3) == "0"


def test_the_detectors_reasons_lose_their_exponents_not_their_digits():
    assert without_exponents("p = 2e-05; sd 1.50e-03, 3E+2") == "p = 0.00002; sd 0.00150, 300"
    assert without_exponents("run v2e5 moved") == "run v2e5 moved"  # part of a name


def test_a_p_value_below_the_floor_is_a_bound():
    assert p_text(1e-7) == "p < 0.0001"
    assert p_text(P_FLOOR) == "p = 0.0001"
    assert p_text(0.0312) == "p = 0.0312"
