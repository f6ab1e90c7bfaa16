"""iozone: runs, throughput blocks and units (ingest/parsers/iozone.py), values read by hand.

Reading the auto/table rows by column position is tested in test_iozone_table.py.
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records
from tests.ingest.parsers.records import record_with

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "iozone"
parse = get_parser("iozone")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_keys(result, **keys):
    return {m.metric: m for m in record_with(result, **keys).measurements}


def test_auto_mode_rows():
    result = parse(read("debian-3.489-auto.txt"), {})
    assert [dict(r.keys) for r in result.records] == [
        {"file_size_kb": 1024, "record_size_kb": 4},
        {"file_size_kb": 1024, "record_size_kb": 64},
    ]
    row4 = by_keys(result, record_size_kb=4)
    row64 = by_keys(result, record_size_kb=64)
    assert row4["write"].value == 964120
    assert row64["rewrite"].value == 16468073
    assert row64["bkwd_read"].value == 17056672
    assert row64["record_rewrite"].value == 19994662
    assert row64["freread"].value == 19719260
    assert (row64["read"].unit, row64["read"].better) == ("KB/s", "higher")
    assert len(row64) == 13
    assert result.records[1].line == 31
    assert result.metadata == {"version": "3.489", "command": "iozone -a -s 1m -r 4k -r 64k"}


def test_microseconds_per_operation_is_lower_better():
    row = by_keys(parse(read("debian-3.489-auto-usec-per-op.txt"), {}), record_size_kb=4)
    assert (row["write"].value, row["write"].unit, row["write"].better) == (4, "us/op", "lower")


def test_throughput_mode():
    result = parse(read("debian-3.489-throughput.txt"), {})
    assert [r.keys["test"] for r in result.records] == [
        "initial writers",
        "rewriters",
        "readers",
        "re-readers",
    ]
    reread = by_keys(result, test="re-readers")
    assert reread["children_throughput"].value == 7054742.00
    assert reread["parent_throughput"].value == 767533.32
    assert reread["min_throughput_per_process"].value == 0.00
    assert reread["avg_throughput_per_process"].value == 3527371.00
    assert (reread["min_xfer"].value, reread["min_xfer"].unit) == (0.0, "KB")
    readers = by_keys(result, test="readers")
    assert readers["max_throughput_per_process"].value == 6529233.50
    assert dict(result.records[0].keys) == {
        "test": "initial writers",
        "procs": 2,
        "file_size_kb": 1024,
        "record_size_kb": 64,
    }


def test_per_child_lines():
    first = by_keys(
        parse(read("debian-3.489-throughput-per-child.txt"), {}), test="initial writers"
    )
    assert first["child0_xfer"].value == 1024.00
    assert first["child0_throughput"].value == 3083680.25
    assert first["child1_xfer"].value == 960.00
    assert first["min_xfer"].value == 960.00


def test_mail_without_banner_and_cpu_lines():
    result = parse(read("iommu-2021-01-27-lever-vtd-throughput-12procs.txt"), {})
    assert len(result.records) == 4
    rewriters = by_keys(result, test="rewriters", procs=12)
    assert rewriters["parent_throughput"].value == 5012539.29
    assert rewriters["min_xfer"].value == 1046528.00
    assert rewriters["cpu_utilization"].value == 80.73
    assert rewriters["cpu_wall_time"].value == 2.507
    assert by_keys(result, test="re-readers")["children_throughput"].value == 5812227.16
    assert result.warnings == ()


def test_two_runs_with_equal_keys_get_a_run_key():
    # Derived: the same real run pasted twice (as in mails comparing two kernels).
    text = read("debian-3.489-auto.txt")
    result = parse(text + "\n" + text, {})
    assert [r.keys.get("run") for r in result.records] == [1, 1, 2, 2]
    assert len(group_records(result.records)) == 4


def test_quoted_printable_mail_is_decoded():
    # Derived: the real throughput output encoded as a quoted-printable mail would carry it.
    body = read("debian-3.489-throughput.txt").replace("=", "=3D")
    text = "Content-Transfer-Encoding: quoted-printable\n\n" + body
    assert by_keys(parse(text, {}), test="readers")["children_throughput"].value == 10931089.00


def test_truncated_throughput_line_is_refused():
    # Derived: the real file cut in the middle of the readers' 'Parent sees' line.
    text = read("debian-3.489-throughput.txt").replace("= 1628780.63 kB/sec", "=")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 44
    assert "incomplete or garbled" in err.value.message


def test_no_results():
    with pytest.raises(ParseError, match="no iozone results"):
        parse(read("debian-3.489-auto.txt").split("                 ")[0], {})


def test_a_file_without_iozone_results_is_refused_at_a_line():
    with pytest.raises(ParseError) as err:
        parse("\nno numbers here\n", {})
    assert err.value.line == 2
    header = "              KB  reclen   write rewrite    read    reread\n\nprose\n"
    with pytest.raises(ParseError) as err:
        parse(header, {})
    assert err.value.line == 1 and "rows of numbers" in err.value.message
