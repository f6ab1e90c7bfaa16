"""Parser `table` with option ``layout = "rows"``: a row per quantity, a column per kernel,
the unit printed at the row's end (Randy Hron's Unixbench table, LKML 2002-02-22, in the mail
corpus). Broken variants are derived in the test code from that real table and say so."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

MAIL = (
    Path(__file__).parents[1]
    / "corpus"
    / "files"
    / "lkml-2002-02-22-hron-tiobench-lmbench-tables-2.4.18-rc2.txt"
)
parse = get_parser("table")
ROWS = {"header_line": 23, "layout": "rows"}
KERNELS = ["2.4.18rc2aa2", "2.4.18-rc2", "2.4.18-rc2-jam1"]


def text() -> str:
    return MAIL.read_text()


def test_each_kernel_column_is_a_record_and_each_row_a_metric_in_its_own_unit():
    result = parse(text(), ROWS)
    assert [r.keys["label"] for r in result.records] == KERNELS
    jam = {m.metric: (m.value, m.unit) for m in result.records[2].measurements}
    assert len(jam) == 9
    assert jam["execl_throughput"] == (299.0, "lps")  # the cell that carries the unit
    assert jam["pipe_throughput"] == (324554.7, "lps")
    assert jam["shell_scripts_1_concurrent"] == (620.7, "lpm")
    aa2 = {m.metric: (m.value, m.unit) for m in result.records[0].measurements}
    assert aa2["shell_scripts_64_concurrent"] == (11.8, "lpm")  # no unit printed in this cell
    assert all(m.better == "none" for r in result.records for m in r.measurements)


def test_by_default_the_table_is_refused_with_the_option_that_reads_it():
    with pytest.raises(ParseError) as err:
        parse(text(), {"header_line": 23})
    assert err.value.line == 29
    assert "'lpm' here but 'lps' at line 24" in err.value.message
    assert 'layout = "rows" with header_line = 23' in err.value.message


@pytest.mark.parametrize(
    ("old", "new", "fragment"),
    [
        # derived: the unit printed on the middle number of a row, not at its end
        ("    303.7        299.0 lps", "    303.7lps     299.0    ", "not on the last one"),
        # derived: two units in one row
        ("386034.4     324554.7 lps", "386034.4lpm  324554.7 lps", "two units"),
        # derived: a word where a number was
        ("84108.7      82547.7 lps", "84108.7      eighty  lps", "not one number"),
    ],
)
def test_broken_rows_are_refused_naming_their_line(old, new, fragment):
    original = text()
    assert old in original
    with pytest.raises(ParseError) as err:
        parse(original.replace(old, new, 1), ROWS)
    assert fragment in err.value.message
    line = next(n for n, t in enumerate(original.splitlines(), 1) if old in t)
    assert err.value.line == line


def test_option_rows_names_skips_and_directs_rows():
    options = {
        **ROWS,
        "rows": {
            "Execl Throughput": {"metric": "execl", "better": "higher"},
            "Pipe Throughput": False,
        },
    }
    record = parse(text(), options).records[1]
    metrics = {m.metric: m for m in record.measurements}
    assert "pipe_throughput" not in metrics and "execl_throughput" not in metrics
    assert (metrics["execl"].value, metrics["execl"].better) == (303.7, "higher")


def test_a_bad_layout_is_named():
    with pytest.raises(ParseError, match="option layout = 'diagonal'"):
        parse(text(), {**ROWS, "layout": "diagonal"})


def test_two_rows_of_one_name_are_refused():
    # derived: the 16-concurrent row relabelled as the 1-concurrent one
    changed = text().replace("Shell Scripts (16 concurrent)", "Shell Scripts (1 concurrent) ")
    with pytest.raises(ParseError, match="both give 'shell_scripts_1_concurrent'"):
        parse(changed, ROWS)
