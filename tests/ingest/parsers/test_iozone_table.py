"""ingest/parsers/iozone_table.py: iozone's auto/table rows read by column position."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.iozone_table import add_row, cell_value, extend_header, finish, header, is_row
from tests.ingest.parsers.records import record_with

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "iozone"
parse = get_parser("iozone")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_keys(result, **keys):
    return {m.metric: m for m in record_with(result, **keys).measurements}


def test_the_header_names_the_columns_of_a_known_layout():
    lines = read("debian-3.489-auto.txt").split("\n")
    table = header(lines[28], 29)  # "kB  reclen    write  rewrite    read    reread ..."
    assert table is not None
    assert table.names == [
        "write",
        "rewrite",
        "read",
        "reread",
        "random_read",
        "random_write",
        "bkwd_read",
        "record_rewrite",
        "stride_read",
        "fwrite",
        "frewrite",
        "fread",
        "freread",
    ]
    assert (table.line, table.kb_end, table.exact) == (29, 16, True)
    add_row(table, lines[29], 30)
    add_row(table, lines[30], 31)
    finish(table)
    rows = [(row.line, row.file_kb, row.record_kb) for row in table.rows]
    assert rows == [(30, 1024, 4), (31, 1024, 64)]
    assert table.rows[1].cells[1] == "16468073" and table.rows[1].cells[12] == "19719260"


def test_other_lines_are_no_header_and_an_edited_one_is_refused():
    assert header("Iozone: Performance Test of File I/O", 1) is None
    assert header("   KB  reclen", 1) is None  # no test column
    with pytest.raises(ParseError, match="is not iozone's column order") as err:
        header("              KB  reclen   write    read", 7)
    assert err.value.line == 7


def test_a_wrapped_header_continues_in_iozone_order():
    table = header("              KB  reclen   write rewrite    read", 3)
    assert table is not None
    assert not extend_header(table, "random read")  # not the next header words
    assert extend_header(table, "reread    read")
    assert table.names == ["write", "rewrite", "read", "reread", "random_read"]
    assert not table.exact  # the wrapped columns' ends are lost


def test_is_row_and_cell_value():
    assert is_row("            1024       4   964120")
    assert not is_row("              kB  reclen    write")
    assert not is_row("")
    assert cell_value("964120", "write", 30) == 964120.0
    with pytest.raises(ParseError, match="iozone write '96412O' is not a number") as err:
        cell_value("96412O", "write", 30)
    assert err.value.line == 30


def test_blank_cells_are_tests_not_run():
    row = by_keys(parse(read("debian-3.489-auto-skipped-tests.txt"), {}), record_size_kb=4)
    assert row.keys() == {"write", "rewrite", "random_read", "random_write", "stride_read"}
    assert row["random_write"].value == 2604895
    assert row["stride_read"].value == 4044965


def test_3408_short_blanks_still_land_in_the_right_column():
    # 3.408 prints a skipped test's blank one column short, so stride read ends at 99, not 100.
    row = by_keys(parse(read("github-3.408-skipped-tests.txt"), {}), record_size_kb=64)
    assert {k: m.value for k, m in row.items()} == {
        "write": 31782,
        "rewrite": 22524,
        "random_read": 816017,
        "random_write": 10411,
        "stride_read": 3779260,
    }


def test_wrapped_row_is_joined():
    # Derived: the 64k row of the real file wrapped after its 7th value, as a mailer would.
    lines = read("debian-3.489-auto.txt").split("\n")
    row = lines[30]
    cut = row.index("18291580") + len("18291580")
    lines[30:31] = [row[:cut], row[cut:].strip()]
    result = parse("\n".join(lines), {})
    row64 = by_keys(result, record_size_kb=64)
    assert row64["random_write"].value == 15295157
    assert row64["freread"].value == 19719260
    assert len(row64) == 13


def test_merged_numbers_split_by_known_field_widths():
    # Derived: 3.408's rewrite cell made 8 digits wide so it touches the write cell.
    text = read("github-3.408-skipped-tests.txt").replace("   31782   22524", "   3178212345678")
    row = by_keys(parse(text, {}), record_size_kb=64)
    assert (row["write"].value, row["rewrite"].value) == (31782, 12345678)


def test_merged_numbers_after_a_blank_are_refused():
    # Derived: after skipped (blank, possibly short) columns the split points are unknown.
    text = read("github-3.408-skipped-tests.txt").replace("  816017   10411", "  81601712345678")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 31
    assert "cannot be split" in err.value.message


@pytest.mark.parametrize(
    ("change", "line", "fragment"),
    [
        (lambda t: t.replace("964120", "96412O"), 30, "not a whole number"),
        (lambda t: t.replace("   964120", "   964120\n1 2 3", 1), 30, "do not fill"),
        (lambda t: t.replace("            1024       4", "          1024       4"), 30, "line up"),
    ],
)
def test_broken_tables_are_refused(change, line, fragment):
    # Derived from the real auto-mode file: a corrupted digit, a bad wrap, shifted spacing.
    with pytest.raises(ParseError) as err:
        parse(change(read("debian-3.489-auto.txt")), {})
    assert err.value.line == line
    assert fragment in err.value.message


def _mail_wrap(text: str, width: int = 72) -> str:
    """Break long lines at the last space before ``width``, as a mail client does."""
    out = []
    for line in text.split("\n"):
        while len(line) > width and (cut := line.rfind(" ", 0, width)) > 0:
            out.append(line[:cut])
            line = line[cut + 1 :]
        out.append(line)
    return "\n".join(out)


def test_auto_mode_table_wrapped_by_a_mail_client_reads_the_same_values():
    # the real Debian 3.489 -a run with its header and rows wrapped at 72 columns
    text = read("debian-3.489-auto.txt")
    wrapped = parse(_mail_wrap(text), {})
    original = parse(text, {})
    assert [r.keys for r in wrapped.records] == [r.keys for r in original.records]
    assert wrapped.values() == original.values()


def test_wrapped_rows_with_skipped_tests_are_refused_at_their_row():
    # blank cells of skipped tests cannot be placed once the row's tail is wrapped
    with pytest.raises(ParseError) as err:
        parse(_mail_wrap(read("debian-3.489-auto-skipped-tests.txt")), {})
    assert err.value.line == 32 and "do not fill the table's columns" in err.value.message
