"""ingest/parsers/table_cells.py: cells, units and directions of hand-made tables.

Expected values were read by hand from the fixture files (tests/fixtures/formats/table). Broken
variants are derived in the test code from a real file and say so.
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.table_cells import (
    Cell,
    direction,
    groups,
    is_number_token,
    is_unit_token,
    option_entry,
    read_cell,
    snake_case,
    split_header,
)
from tests.ingest.parsers.records import record, units, values

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "table"
parse = get_parser("table")

HARTNER = "linux-mm-2002-09-17-hartner-volanomark-rmap.txt"
AXBOE = "linux-mm-2009-06-25-axboe-writeback-quoted.txt"
LOOPBACK_1227 = "volano-report-2001-12-27-loopback-table.txt"
LU = "lkml-2023-06-30-lu-task-group-body-excerpt.txt"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_tokens_that_are_numbers_or_units():
    assert all(map(is_number_token, ["*2,720,600", "3.49M", "-3.5", "12995,"]))
    assert not any(map(is_number_token, ["KB", "1.2.3", "2.5.35mm1"]))
    assert all(map(is_unit_token, ["KB", "MB/sec", "msg/s", "%", "M", "usecs", "GiB"]))
    assert not is_unit_token("kernel")


def test_groups_merge_the_tokens_of_one_cell():
    found = groups("2.5.35mm1  *6,154,512 KB *8,875,112 KB  99.9")
    assert [(g.text, g.start, g.end) for g in found] == [
        ("2.5.35mm1", 0, 9),
        ("*6,154,512 KB", 11, 24),
        ("*8,875,112 KB", 25, 38),
        ("99.9", 40, 44),
    ]
    line = "Linux (green threads, nojit)  2182, 2261, 2266  0 (default)  3.49 M  48.78 ± 0.61%"
    assert [g.text for g in groups(line)] == [
        "Linux (green threads, nojit)",
        "2182, 2261, 2266",
        "0 (default)",
        "3.49 M",
        "48.78 ± 0.61%",
    ]


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("*2,720,600 KB", Cell("number", (2720600.0,), "KB", "*")),
        ("184MB/sec", Cell("number", (184.0,), "MB/sec")),
        ("3.49 M", Cell("number", (3490000.0,))),  # a multiplier printed apart
        ("384624k", Cell("number", (384624.0,), "k")),  # kilobytes as free prints them
        ("89623.85±0.35%", Cell("number", (89623.85,), spread=0.35, spread_unit="%")),
        ("2182, 2261, 2266, 2252", Cell("number", (2182.0, 2261.0, 2266.0, 2252.0))),
        ("0 (default)", Cell("text", (0.0,), note="0 (default)")),
        ("Linux (green threads)", Cell("text", note="Linux (green threads)")),
        ("....", Cell("missing")),
        ("n/a", Cell("missing")),
    ],
)
def test_read_cell(text, cell):
    assert read_cell(text, line=1, what="cell") == cell


@pytest.mark.parametrize(
    ("text", "thousands", "message"),
    [
        ("96,3", True, "'96,3' has a decimal comma (localized output); write decimal points"),
        ("1,987,024 KB", False, "'1,987,024 KB' has a comma; option thousands is off"),
        ("51x24", True, "'51x24' is not a number"),
        ("1.2.3", True, "'1.2.3' is not a number"),
    ],
)
def test_read_cell_refuses_a_broken_number_naming_the_line(text, thousands, message):
    with pytest.raises(ParseError) as err:
        read_cell(text, line=62, what="%CPU", thousands=thousands)
    assert err.value.message.startswith(f"%CPU {message}")
    assert err.value.line == 62


def test_direction_in_words():
    assert direction("Bigger numbers are faster.") == "higher"
    assert direction("time(less is better)") == "lower"
    assert direction("Throughput") is None
    assert direction("higher is better, lower is better") is None  # both: no direction


@pytest.mark.parametrize(
    ("header", "parts"),
    [
        ("Throughput (msg/s)", ("throughput", "msg/s", None)),
        ("Elapsed [s]", ("elapsed", "s", None)),
        ("msg/s", ("msg_per_s", "msg/s", None)),  # a header that is only a unit
        ("%CPU", ("cpu_pct", "%", None)),
        ("time(less is better)", ("time", None, "lower")),
        ("transactions(higher is better)", ("transactions", None, "higher")),
        ("%sys/%user", ("pct_sys_per_pct_user", None, None)),
    ],
)
def test_split_header(header, parts):
    assert split_header(header) == parts


def test_snake_case():
    assert snake_case("Total swpin") == "total_swpin"
    assert snake_case("2.4.14 + MQ") == "col_2_4_14_plus_mq"
    assert snake_case("2.4.17") == "col_2_4_17"


def test_option_entry():
    options = {"columns": {"MSG/S": {"metric": "throughput"}, "%sys/%user": False}}
    assert option_entry("msg/s", options) == {"metric": "throughput"}
    assert option_entry("%sys/%user", options) is None  # skipped
    assert option_entry("%CPU", options) == {}
    assert option_entry("run", {"rows": {"Run": {"unit": "s"}}}, "rows") == {"unit": "s"}
    with pytest.raises(ParseError, match="option columns must be a table"):
        option_entry("a", {"columns": ["a"]})
    with pytest.raises(ParseError, match="option columns.'a' must be a table or false"):
        option_entry("a", {"columns": {"a": 3}})


@pytest.mark.parametrize(
    ("old", "new", "fragment", "line"),
    [
        # derived from HARTNER: a decimal comma in the %CPU cell of 2.5.26
        ("51824  96.3 1.42", "51824  96,3 1.42", "decimal comma", 62),
        # derived from HARTNER: a non-number in the msg/s cell of 2.5.26rmap
        ("46053  90.8", "46O53  90.8", "is not a number", 63),
        # derived from HARTNER: a KB cell written in MB
        ("3,139,324 KB  3,887", "3,139 MB      3,887", "'MB' here but 'KB'", 63),
    ],
)
def test_broken_cells_are_rejected(old, new, fragment, line):
    text = read(HARTNER)
    assert old in text
    with pytest.raises(ParseError) as err:
        parse(text.replace(old, new, 1), {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_units_from_cells_and_headers():
    rec = record(parse(read(HARTNER), {}), label="2.5.26", table=1)
    assert units(rec)["total_swpin"] == ("KB", "none")
    assert units(rec)["cpu_pct"] == ("%", "none")
    assert units(rec)["msg_per_s"] == ("msg/s", "none")  # the header is a unit
    axboe = parse(read(AXBOE), {})
    rec = axboe.records[0]
    assert values(rec) == {
        "throughput": 184,
        "usr": 19.51,
        "sys": 50.49,
        "ctx": 12995,
        "util": 82.88,
    }
    assert units(rec)["throughput"] == ("MB/sec", "none")


def test_marker_is_dropped_and_warned():
    result = parse(read(HARTNER), {})
    assert values(record(result, label="2.5.35mm1", table=1))["total_swpin"] == 2720600
    assert any("line 65" in w and "'*'" in w for w in result.warnings)


def test_direction_from_the_caption():
    rec = record(parse(read(LOOPBACK_1227), {}), label="IBM 1.3.0 Linux")
    assert units(rec)["score"] == ("", "higher")  # "Bigger numbers are faster."


def test_decimal_comma_message_fits_a_hand_made_table():
    # derived from HARTNER (as above): tool parsers say "re-run with LC_ALL=C"; a table cannot
    # be re-run, so its message says what to change in the file.
    with pytest.raises(ParseError) as err:
        parse(read(HARTNER).replace("51824  96.3 1.42", "51824  96,3 1.42", 1), {})
    assert "decimal points" in err.value.message
    assert "LC_ALL" not in err.value.message


def test_thousands_off_refuses_commas():
    with pytest.raises(ParseError, match="thousands") as err:
        parse(read(HARTNER), {"thousands": False})
    assert err.value.line == 62


def test_text_with_one_number_is_stored_with_a_warning():
    # Derived from AXBOE: the first ctx cell annotated the way people do ('0 (default)').
    text = read(AXBOE).replace("12995   82.88%", "12995   82.88% (default)", 1)
    result = parse(text, {})
    assert values(result.records[0])["util"] == 82.88
    assert any("line 43" in w and "(default)" in w for w in result.warnings)


@pytest.mark.parametrize(
    ("table", "label", "metric", "value", "unit", "better"),
    [
        (1, "per_node", "transactions", 132401.37, "", "higher"),
        (1, "per_node", "transactions_spread", 0.83, "%", "none"),
        (2, "aligned", "time", 47.43, "", "lower"),  # 'time(less is better)'
        (3, "aligned", "throughput", 9415.97, "", "higher"),
        (4, "aligned", "transactions", 62291.58, "", "none"),  # no phrase in this header
        (8, "aligned", "throughput_spread", 11.46, "%", "none"),
    ],
)
def test_spread_cells_and_header_directions(table, label, metric, value, unit, better):
    rec = record(parse(read(LU), {"table": table}), label=label, table=table)
    found = {m.metric: m for m in rec.measurements}[metric]
    assert (found.value, found.unit, found.better) == (pytest.approx(value), unit, better)


def test_spread_printed_in_two_units_is_refused():
    # Real: the CSL hackbench table has 'aligned: 48.78±0.61%' but 'per_node: 48.95±1.06'.
    with pytest.raises(ParseError, match="± part in '' here but '%'") as err:
        parse(read(LU), {})
    assert err.value.line == 65
    assert parse(read(LU), {"table": 8}).metadata["tables"] == 8
