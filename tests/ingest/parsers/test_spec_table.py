"""ingest/parsers/spec_table.py: SPEC results tables pasted in mails, one record per row."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import Measurement, ParseError
from ingest.parsers.spec_table import normalize, read_tables
from ingest.parsers.text import numbered_lines

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "spec"
parse = get_parser("spec-summary")

# The layout of the SPECweb99 tables of the 2.5 era (docs/parsers/spec-summary.md).
TABLE = """Table 3

kernel    preemption     conforming     percent
          threshold      connections    improvement
======    ===========    ===========    ===========
2.5.33    0 (default)    2906           baseline
2.5.33    40             2990           2.9

Regards
"""


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_normalize():
    assert normalize("ops/sec") == "ops per sec"
    assert normalize("Conforming  Connections") == "conforming connections"
    assert normalize("%CPU") == "pct cpu"


def test_read_tables_gives_a_record_per_row_keyed_by_the_other_columns():
    warnings: list[str] = []
    records = read_tables(numbered_lines(TABLE), {}, warnings)
    assert [(r.keys, r.line) for r in records] == [
        ({"label": "2.5.33", "preemption_threshold": "0 (default)"}, 6),
        ({"label": "2.5.33", "preemption_threshold": 40}, 7),
    ]
    assert [r.measurements for r in records] == [
        (Measurement("conforming_connections", 2906.0, "connections", "higher"),),
        (Measurement("conforming_connections", 2990.0, "connections", "higher"),),
    ]
    assert warnings == [
        "line 5: column(s) 'percent improvement' compare the rows with each other and are not "
        "stored"
    ]


def test_a_table_without_a_spec_metric_is_not_read():
    assert read_tables(numbered_lines("kernel   run\n======   ===\n2.5.33   1\n"), {}, []) == []


def test_thousands_only_on_request():
    text = "kernel    ops/sec\n------    -------\n2.5.33    1,234\n"
    (record,) = read_tables(numbered_lines(text), {"thousands": True}, [])
    assert record.measurements == (Measurement("ops_per_s", 1234.0, "ops/s", "higher"),)
    with pytest.raises(ParseError, match="decimal comma") as err:
        read_tables(numbered_lines(text), {}, [])
    assert err.value.line == 3


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("kernel    ops/sec\n======    =======\n\n", "no rows under its rule", 2),
        ("kernel    ops/sec\n======    =======\n2.5.33\n", "no value under 'ops/sec'", 3),
    ],
)
def test_a_table_without_its_values_is_refused_naming_the_line(text, message, line):
    with pytest.raises(ParseError, match=message) as err:
        read_tables(numbered_lines(text), {}, [])
    assert err.value.line == line


def test_specweb99_results_table_from_a_mail_one_record_per_row():
    # Bill Hartner's Table 3 (LKML, 15 Oct 2002): a two-line header over a rule of '='
    result = parse(read("lkml-2002-10-15-hartner-specweb99-preemption-table.txt"), {})
    assert [(dict(r.keys), r.line) for r in result.records] == [
        ({"label": "2.5.33", "preemption_threshold": "0 (default)"}, 24),
        ({"label": "2.5.33", "preemption_threshold": 40}, 25),
    ]
    assert [[(m.metric, m.value, m.unit) for m in r.measurements] for r in result.records] == [
        [("conforming_connections", 2906, "connections")],
        [("conforming_connections", 2990, "connections")],
    ]
    assert "percent improvement" in result.warnings[0]  # derived: not stored


def test_specweb99_table_quoted_in_a_reply_reads_the_same():
    quoted = parse(read("lkml-2002-10-15-molnar-quoting-hartner-table.txt"), {})
    original = parse(read("lkml-2002-10-15-hartner-specweb99-preemption-table.txt"), {})
    assert [r.keys for r in quoted.records] == [r.keys for r in original.records]
    assert quoted.values() == original.values() == [2906, 2990]


def test_a_table_cell_that_is_not_a_number_is_refused_at_its_row():
    text = read("lkml-2002-10-15-hartner-specweb99-preemption-table.txt").replace(
        "2990    ", "2,990   "
    )
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 25
