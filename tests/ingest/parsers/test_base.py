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
    Curve,
    Histogram,
    Measurement,
    ProfileEntry,
    Record,
    Sample,
    SeriesColumn,
    Summary,
    UnknownParserError,
    finite_only,
    group_records,
    normalize_key_value,
    recognisers,
    record_samples,
    register,
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


def test_a_parse_error_names_its_line_when_known():
    error = ParseError("bad value", 4)
    assert (str(error), error.message, error.line) == ("line 4: bad value", "bad value", 4)
    assert str(ParseError("bad value")) == "bad value"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "a summary states at least a spread or a number of runs"),
        ({"sd": -1.0}, "a summary's sd is a finite number >= 0, not -1.0"),
        ({"sd_pct": math.nan}, "a summary's sd_pct is a finite number >= 0, not nan"),
        ({"runs": 0}, "a summary's runs is at least 1, not 0"),
    ],
)
def test_a_summary_is_refused_without_a_sane_spread_or_runs(fields, message):
    with pytest.raises(ValueError) as refused:
        Summary(**fields)
    assert str(refused.value) == message


def test_a_record_describes_its_keys_and_lists_every_value():
    assert Record(keys={"label": "2.6.0", "clients": 4}).describe() == "label=2.6.0 clients=4"
    assert Record().describe() == "(no keys)"
    assert Record().is_empty()
    record = Record(
        measurements=(Measurement("throughput", 1.0, "MB/s", "higher"),),
        profile=(ProfileEntry("do_page_fault", 5.0),),
        samples=(Sample("vmstat", "cs", 0, 7.0),),
        columns=(SeriesColumn("vmstat", "in", (8.0, 9.0)),),
        histograms=(Histogram("runqueue", "length", ((1.0, 10.0),)),),
        curves=(Curve("goodness", "length", "cycles", ((2.0, 11.0),)),),
    )
    assert not record.is_empty()
    assert record.values() == [1.0, 5.0, 7.0, 8.0, 9.0, 10.0, 11.0]


def test_a_result_holds_its_values_as_records():
    throughput = Measurement("throughput", 1.0, "MB/s", "higher")
    top = ParseResult(measurements=(throughput,))
    assert top.records == (Record(measurements=(throughput,)),)
    one = ParseResult(records=(Record(keys={"clients": 1}, measurements=(throughput,)),))
    assert one.measurements == (throughput,)  # one record: mirrored at the top
    second = Measurement("throughput", 2.0, "MB/s", "higher")
    two = ParseResult(
        records=(
            Record(keys={"clients": 1}, measurements=(throughput,)),
            Record(keys={"clients": 2}, measurements=(second,)),
        )
    )
    assert two.measurements == () and two.values() == [1.0, 2.0]
    with pytest.raises(ValueError, match="as records or at the top, not both"):
        ParseResult(measurements=(throughput,), records=one.records)
    with pytest.raises(ValueError, match="2 records: use record_samples"):
        two.all_samples()
    assert ParseResult().records == () and ParseResult().all_samples() == []


def test_record_samples_unrolls_columns():
    record = Record(
        samples=(Sample("vmstat", "r", 0, 1.0),),
        columns=(SeriesColumn("vmstat", "cs", (5.0, 6.0), True, ("20:18:35", "20:18:36")),),
    )
    assert record_samples(record) == [
        Sample("vmstat", "r", 0, 1.0),
        Sample("vmstat", "cs", 0, 5.0, since_boot=True, timestamp="20:18:35"),
        Sample("vmstat", "cs", 1, 6.0, since_boot=False, timestamp="20:18:36"),
    ]


@pytest.mark.parametrize(
    ("value", "text"),
    [(4.0, "4"), (4, "4"), (4.5, "4.5"), (True, "true"), (" 2.6.0 ", "2.6.0")],
)
def test_normalize_key_value(value, text):
    assert normalize_key_value(value) == text


def test_group_records_compares_keys_as_read_and_names_mixed_trials():
    groups = group_records(
        [
            Record(keys={"clients": 4}, line=3),
            Record(keys={"clients": 4.0}, line=9),  # the same client count
            Record(keys={"clients": 8}, line=12),
        ]
    )
    assert [(g.keys, [n for n, _ in g.trials], g.texts, g.line) for g in groups] == [
        ({"clients": 4}, [1, 2], {"clients": "4"}, 3),
        ({"clients": 8}, [1], {"clients": "8"}, 12),
    ]
    assert groups[0].describe() == "clients=4"
    with pytest.raises(ParseError, match=r"\(lines 3, 9\) mix numbered and unnumbered") as err:
        group_records(
            [Record(keys={"clients": 4}, trial=1, line=3), Record(keys={"clients": 4}, line=9)]
        )
    assert err.value.line == 3


def test_the_registry():
    assert "fio" in parser_names() and parser_names() == sorted(parser_names())
    with pytest.raises(UnknownParserError) as unknown:
        get_parser("nope")
    assert unknown.value.name == "nope"
    assert str(unknown.value).startswith("unknown parser 'nope'; known parsers: csv, ")
    with pytest.raises(RuntimeError, match="parser name 'fio' registered twice"):
        register("fio")(lambda text, options: ParseResult())
    assert {"lkp", "mmtests"} <= set(recognisers())
