import statistics
from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "sched"
parse = get_parser("sched-histogram")

# The fixture's numbers, copied here so the expectations are computed independently.
LENGTHS = {1: 40, 2: 75, 4: 60, 8: 20, 16: 4, 32: 1}
CYCLES = {1: 310, 2: 480, 4: 820, 8: 1490, 16: 2800, 32: 5530}


def measured(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


def test_statistics_match_an_independent_computation():
    result = parse((FIXTURES / "bryant-style.txt").read_text(), {})
    expanded = [length for length, count in LENGTHS.items() for _ in range(count)]
    slope = statistics.linear_regression(list(CYCLES), list(CYCLES.values())).slope
    assert measured(result) == pytest.approx(
        {
            "runqueue_length_mean": statistics.mean(expanded),
            "runqueue_length_sd": statistics.stdev(expanded),
            "runqueue_length_max": max(expanded),
            "goodness_cycles_per_element": slope,
        }
    )


def test_histogram_curve_and_units():
    result = parse((FIXTURES / "bryant-style.txt").read_text(), {})
    (histogram,) = result.histograms
    (curve,) = result.curves
    assert histogram.name == "runqueue_length"
    assert dict(histogram.bins) == LENGTHS
    assert curve.name == "goodness_cycles"
    assert dict(curve.points) == CYCLES
    assert {(m.metric, m.unit, m.better) for m in result.measurements} == {
        ("runqueue_length_mean", "tasks", "lower"),
        ("runqueue_length_sd", "tasks", "lower"),
        ("runqueue_length_max", "tasks", "lower"),
        ("goodness_cycles_per_element", "cycles", "lower"),
    }


def test_max_ignores_empty_bins():
    result = parse("# runqueue-length\n3 5\n7 2\n400 0\n", {})
    assert measured(result)["runqueue_length_max"] == 7


def test_either_section_alone():
    only_curve = parse("# goodness-cycles\n10 1700\n20 3400\n", {})
    assert measured(only_curve) == pytest.approx({"goodness_cycles_per_element": 170})
    assert only_curve.histograms == ()


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("", "no '# runqueue-length'", None),
        ("1 40\n", "data before any", 1),
        ("# runqueue-length\n1 40 7\n", "expected 'length value', found 3 fields", 2),
        ("# runqueue-length\n1 4,5\n", "decimal comma", 2),
        ("# goodness-cycles\n1 NaN\n", "is not a number", 2),
        ("# runqueue-length\n1 -3\n", "cannot be negative", 2),
        ("# goodness-cycles\n4 800\n4 810\n", "at least two different lengths", 2),
        ("# runqueue-length\n1 0\n", "has no counts", 2),
        ("# runqueue-length\n1 2\n# runqueue-length\n", "appears twice", 3),
    ],
)
def test_rejected(text, fragment, line):
    with pytest.raises(ParseError, match=fragment) as error:
        parse(text, {})
    assert error.value.line == line
