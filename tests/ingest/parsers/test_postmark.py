"""postmark parser tests; expected values are read by hand from the fixture files."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "postmark"
parse = get_parser("postmark")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def test_verbose_report():
    result = parse(read("debian-1.53-verbose.txt"), {})
    (record,) = result.records
    got = values(record)
    assert got["total_time"] == 1
    assert got["transactions"] == 500
    assert got["files_created"] == 454
    assert got["creation_mixed"] == 254
    assert got["creation_mixed_rate"] == 254
    assert got["files_read"] == 239
    assert got["files_appended_rate"] == 261
    assert got["deletion_alone"] == 208
    assert got["deletion_mixed_rate"] == 246
    # 2.77 megabytes (postmark's KILOBYTE is 1024) = 2836.48 KiB, exactly.
    assert got["data_read"] == 2836.48
    assert got["data_written_rate"] == 5642.24
    assert len(got) == 23
    assert record.line == 6
    assert result.metadata == {"version": "1.51"}


def test_units_and_direction():
    m = {x.metric: x for x in parse(read("debian-1.53-verbose.txt"), {}).measurements}
    assert (m["total_time"].unit, m["total_time"].better) == ("s", "lower")
    assert (m["transactions"].unit, m["transactions"].better) == ("transactions/s", "higher")
    assert (m["files_read"].unit, m["files_read"].better) == ("files", "none")
    assert (m["files_read_rate"].unit, m["files_read_rate"].better) == ("files/s", "higher")
    assert (m["data_read"].unit, m["data_read_rate"].unit) == ("KiB", "KiB/s")


def test_megabytes_are_converted_exactly():
    got = values(parse(read("debian-1.53-verbose-megabytes.txt"), {}).records[0])
    assert got["data_read"] == 1252.17 * 1024 == 1282222.08
    assert got["data_written_rate"] == 306616.32  # 299.43 megabytes per second
    assert got["files_read"] == 10063


def test_mail_with_two_reports_and_set_parameters():
    result = parse(read("lkml-2006-04-18-vivier-ext3-percpu-counter.txt"), {})
    first, second = result.records
    # "With atomic_t:" / "With percpu_counter:" above the reports: two runs, not trials.
    assert dict(first.keys) == {
        "number": 100000,
        "transactions": 250000,
        "heading": "With atomic_t",
    }
    assert dict(second.keys)["heading"] == "With percpu_counter"
    assert values(first)["total_time"] == 3761
    assert values(first)["data_read"] == 748687.36  # 731.14 megabytes
    assert values(first)["data_read_rate"] == 199.07  # printed in kilobytes
    assert values(first)["deletion_alone_rate"] == 503
    assert values(second)["creation_alone_rate"] == 85
    assert values(second)["data_written_rate"] == 367.48
    assert (first.line, second.line) == (95, 115)
    assert [len(g.trials) for g in group_records(result.records)] == [1, 1]


def test_terse_lines():
    result = parse(read("debian-1.53-terse-two-runs.txt"), {})
    first, second = (values(r) for r in result.records)
    assert first["transactions"] == 500.00
    assert first["files_created_rate"] == 462.00
    assert first["deletion_mixed_rate"] == 238.00
    assert first["data_read_rate"] == 1529.9169921875  # 1566635.00 bytes/s in KiB/s
    assert second["creation_alone_rate"] == 300.00
    assert second["data_written_rate"] == 3520293.00 / 1024
    assert result.records[1].line == 10


@pytest.mark.parametrize(
    ("change", "line", "fragment"),
    [
        (lambda t: t.split("Data:")[0], 6, "incomplete"),
        (lambda t: t.replace("(2.77 megabytes", "(2,77 megabytes"), 21, "not understood"),
        (lambda t: t.replace("239 read (239", "239 read (2x9"), 14, "not understood"),
    ],
)
def test_broken_reports_are_refused(change, line, fragment):
    # Derived from the real verbose report: truncated, decimal comma, corrupted rate.
    with pytest.raises(ParseError) as err:
        parse(change(read("debian-1.53-verbose.txt")), {})
    assert err.value.line == line
    assert fragment in err.value.message


def test_no_report():
    with pytest.raises(ParseError, match="no postmark report"):
        parse("PostMark v1.51 : 8/14/01\nCreating files...Done\n", {})


def test_truncated_terse_line_is_refused():
    # Derived: the real terse line with its last field cut off.
    text = read("debian-1.53-terse-two-runs.txt").replace(" 2990197.00", "")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 6
    assert "12 fields, expected 13" in err.value.message
