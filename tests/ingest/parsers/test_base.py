"""ingest/parsers/base.py: results, records, trials, the registry and the finite-number check.

Every parser refuses a number it cannot store exactly: a token too long for a double, NaN or
infinity (``finite_only``: no write path stores a NaN).
"""

from __future__ import annotations

import math
import random
import re
from pathlib import Path

import pytest

from ingest.parsers import ParseError, ParseResult, get_parser, parser_names
from ingest.parsers.base import (
    Histogram,
    Measurement,
    ProfileEntry,
    Record,
    SeriesColumn,
    finite_only,
    require_finite,
)

FORMATS = Path(__file__).resolve().parents[2] / "fixtures" / "formats"
# What a hostile or broken file can put where a number goes.
HOSTILE = ("9" * 400, "1e999", "-1e400", "nan", "NaN", "inf", "-Infinity")
NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")


def _every_number(result: ParseResult) -> list[float]:
    numbers: list[float] = []
    for record in result.records:
        numbers += [m.value for m in record.measurements]
        for p in record.profile:
            numbers += [v for v in (p.ticks, p.load, p.share_pct) if v is not None]
        numbers += [s.value for s in record.samples]
        for column in record.columns:
            numbers += column.values
        for histogram in record.histograms:
            numbers += [v for pair in histogram.bins for v in pair]
        for curve in record.curves:
            numbers += [v for pair in curve.points for v in pair]
    return numbers


def test_every_registered_parser_is_behind_the_check():
    assert all(getattr(get_parser(name), "finite_only", False) for name in parser_names())


def _fixtures() -> list[tuple[str, Path]]:
    names = set(parser_names())
    return [
        (folder.name, path)
        for folder in sorted(FORMATS.iterdir())
        if folder.name in names
        for path in sorted(folder.iterdir())[:2]
        if path.suffix in (".txt", ".json", ".csv", ".log", "")
    ]


@pytest.mark.parametrize(("parser", "path"), _fixtures(), ids=lambda v: getattr(v, "name", v))
def test_a_hostile_number_in_a_real_file_is_refused_or_never_read(parser, path):
    """Each real file with one of its numbers replaced: the parser either refuses the file
    with a ParseError or returns only finite numbers (the token was not a value); never a
    crash, never an infinity or NaN handed on."""
    parse = get_parser(parser)
    text = path.read_text(errors="replace")
    try:
        read = set(_every_number(parse(text, {})))
    except ParseError:
        pytest.skip("the file needs options this test does not give")
    # the tokens that are values the parser stores (a page number or a date is not)
    spans = [m.span() for m in NUMBER.finditer(text) if float(m.group()) in read]
    rng = random.Random(path.name)
    refused = 0
    for start, end in rng.sample(spans, min(len(spans), 6)):
        for token in HOSTILE:
            try:
                result = parse(text[:start] + token + text[end:], {})
            except ParseError:
                refused += 1
                continue
            assert all(math.isfinite(v) for v in _every_number(result)), (token, start)
    assert refused > 0  # at least one of the replaced tokens was a value the parser reads


def test_the_check_names_the_column_and_the_row():
    column = SeriesColumn("vmstat", "cs", (1.0, 2.0, math.inf, 4.0))
    result = ParseResult(records=(Record(keys={"label": "2.6.0"}, line=7, columns=(column,)),))
    with pytest.raises(ParseError) as refused:
        require_finite(result)
    assert refused.value.line == 7
    assert "vmstat column 'cs', value 3 of 4 reads as inf (label=2.6.0)" in str(refused.value)


@pytest.mark.parametrize(
    "record",
    [
        Record(measurements=(Measurement("throughput", math.nan, "msg/s", "higher"),)),
        Record(measurements=(Measurement("time", 1.0, "s", "lower", resolution=math.inf),)),
        Record(profile=(ProfileEntry("do_page_fault", 12.0, load=math.nan),)),
        Record(histograms=(Histogram("latency", "us", ((math.inf, 3.0),)),)),
    ],
)
def test_each_kind_of_number_is_checked(record):
    with pytest.raises(ParseError, match="not a finite number"):
        require_finite(ParseResult(records=(record,)))


def test_finite_values_whose_sum_overflows_pass():
    big = Measurement("bytes", 1.5e308, "B", "none")
    result = ParseResult(records=(Record(measurements=(big, big)),))
    require_finite(result)  # no error: each value is finite


def test_an_overflow_inside_a_parser_is_a_parse_error():
    def parse(text: str, options: object) -> ParseResult:
        return ParseResult(measurements=(Measurement("n", float(int(text)), "", "none"),))

    with pytest.raises(ParseError, match="too large to store as a double"):
        finite_only(parse)("9" * 400, {})
    assert finite_only(parse)("12", {}).measurements[0].value == 12.0
