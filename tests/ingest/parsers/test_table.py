"""Parser `table`: real hand-made tables from mails and reports (SOURCES.md).

Finding tables, their headers and rows is ingest/parsers/table.py's; reading their cells is
tested in test_table_cells.py.

Expected values were read by hand from the fixture files. Broken variants are derived in the
test code from a real file (a cell corrupted, a row shifted) and say so.
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records
from tests.ingest.parsers.records import record, units, values

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "table"
parse = get_parser("table")

HARTNER = "linux-mm-2002-09-17-hartner-volanomark-rmap.txt"
HARTNER_2419 = "linux-mm-2002-09-27-hartner-volanomark-2.4.19.txt"
MORTON_QUOTED = "linux-mm-2002-09-17-morton-reply-quoted.txt"
MORTON_2538 = "linux-mm-2002-10-02-morton-reply-2.5.38.txt"
AXBOE = "linux-mm-2009-06-25-axboe-writeback-quoted.txt"
NARAYANAN = "lkml-2002-01-08-narayanan-volanomark-o1.txt"
PIGGIN = "lkml-2003-10-22-piggin-kernbench-quoted.txt"
LOOPBACK_0413 = "volano-report-2001-04-13-loopback-table.txt"
NETWORK_0413 = "volano-report-2001-04-13-network-table.txt"
LOOPBACK_0529 = "volano-report-2001-05-29-loopback-table.txt"
LOOPBACK_1227 = "volano-report-2001-12-27-loopback-table.txt"
BLACKDOWN_OPENJIT = "Blackdown 1.3.0 Linux (green threads, OpenJIT)"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "keys", "metric", "expected"),
    [
        (HARTNER, {"label": "2.5.26", "table": 1}, "msg_per_s", 51824),
        (HARTNER, {"label": "2.5.26", "table": 1}, "total_swpin", 1987024),
        (HARTNER, {"label": "2.5.26rmap", "table": 1}, "pct_sys_per_pct_user", 1.55),
        (HARTNER, {"label": "2.5.35mm1", "table": 1}, "total_swapio", 8875112),
        (HARTNER, {"label": "2.5.35", "table": 2}, "cpu_pct", 99.9),
        (HARTNER_2419, {"label": "2.4.19rmap", "table": 1}, "total_swpout", 3800336),
        (HARTNER_2419, {"label": "2.4.19rmap", "table": 2}, "total_swpout", 2363388),
        (HARTNER_2419, {"label": "2.4.19", "table": 2}, "msg_per_s", 55386),
        (MORTON_QUOTED, {"label": "2.5.26rmap", "table": 1}, "msg_per_s", 46053),
        (MORTON_QUOTED, {"label": "2.5.35mm1", "table": 2}, "pct_sys_per_pct_user", 1.42),
        (MORTON_2538, {"label": "2.5.38mm3", "table": 1}, "msg_per_s", 44950),
        (MORTON_2538, {"label": "2.5.35mm1", "table": 1}, "total_swpout", 6154512),
        (MORTON_2538, {"label": "2.5.38", "table": 2}, "msg_per_s", 53084),
        (NARAYANAN, {"label": "4-way"}, "col_2_4_14_plus_mq", 24864),
        (NARAYANAN, {"label": "8-way"}, "col_2_4_17", 11595),
        (NARAYANAN, {"label": "8-way"}, "col_2_4_17_plus_ingo_s_scheduler", 29726),
        (PIGGIN, {"label": "2.6.0-test8", "table": 1}, "elapsed", 45.20),
        (PIGGIN, {"label": "2.6.0-test8-nick2", "table": 2}, "cpu", 1491.50),
        (PIGGIN, {"label": "2.6.0-test8-nick", "table": 2}, "system", 112.75),
        (LOOPBACK_0413, {"label": "IBM 1.3.0 Windows"}, "results_1", 2182),
        (LOOPBACK_0413, {"label": "IBM 1.3.0 Windows"}, "score", 2260),
        (LOOPBACK_0413, {"label": "Sun 1.3.0 Linux (green threads, nojit)"}, "results_2", 599),
        (NETWORK_0413, {"label": "Sun 1.3.0 Linux (green threads, nojit)"}, "col_1000", 885),
        (NETWORK_0413, {"label": BLACKDOWN_OPENJIT}, "col_6000", 275),
        (LOOPBACK_0529, {"label": "Sun 1.3.1 Solaris (HotSpot Server VM)"}, "score", 817),
        (LOOPBACK_1227, {"label": "Tower TowerJ 3.8.1 Linux"}, "results_3", 2254),
    ],
)
def test_values(name, keys, metric, expected):
    assert values(record(parse(read(name), {}), **keys))[metric] == pytest.approx(expected)


def test_repeats_are_trials():
    result = parse(read(AXBOE), {})
    groups = {g.describe(): g for g in group_records(result.records)}
    vanilla = groups["label=vanilla table=1"]
    assert [values(r)["throughput"] for _, r in vanilla.trials] == [184, 184, 182]
    writeback = groups["label=writeback table=1"]
    assert [values(r)["util"] for _, r in writeback.trials] == [92.32, 92.40, 91.68]
    assert len(groups["label=wb-bdi_thresh table=2"].trials) == 3
    assert all(r.trial is None for r in result.records)


def test_blank_and_dotted_cells_are_missing():
    result = parse(read(NETWORK_0413), {})
    rec = record(result, label="Appeal JRockit 2.0.4 Linux")
    assert values(rec) == {"col_1000": 1761, "col_2000": 917}
    assert len(result.records) == 10  # three rows are all '....'
    assert any("line 4" in w and "IBM 1.3.0 Linux" in w for w in result.warnings)


def test_text_cells_and_note_rows():
    result = parse(read(MORTON_2538), {})
    rec = record(result, label="2.5.38mm3", table=1)
    assert values(rec) == {"msg_per_s": 44950, "cpu_pct": 99.8, "pct_sys_per_pct_user": 1.52}
    assert any("line 61" in w and "did not collect" in w for w in result.warnings)
    assert any("line 67" in w and "system hard hangs" in w for w in result.warnings)
    labels = [r.keys["label"] for r in result.records if r.keys["table"] == 1]
    assert labels == [
        "2.5.38",
        "2.5.38mm3",
        "2.4.19rmap",
        "2.5.26",
        "2.5.26rmap",
        "2.5.35",
        "2.5.35mm1",
    ]


def test_every_value_is_reachable():
    result = parse(read(PIGGIN), {})
    assert len(result.records) == 6
    assert len(result.values()) == 24
    assert result.metadata["title_2"] == "Kernbench: (make -j vmlinux, maximal tasks)"


def test_options_columns_better_table_and_keys():
    options = {
        "table": 2,
        "columns": {
            "msg/s": {"metric": "throughput", "unit": "msg/s", "better": "higher"},
            "%sys/%user": False,
        },
    }
    result = parse(read(HARTNER), options)
    assert [r.keys["label"] for r in result.records] == ["2.5.26", "2.5.35", "2.5.35mm1"]
    rec = result.records[0]
    assert units(rec)["throughput"] == ("msg/s", "higher")
    assert "pct_sys_per_pct_user" not in values(rec)
    result = parse(read(PIGGIN), {"header_line": 54, "better": "lower"})
    assert [dict(r.keys) for r in result.records][0] == {"label": "2.6.0-test8"}
    assert units(result.records[0])["elapsed"] == ("", "lower")


def test_wrapped_row_is_joined():
    # Derived from HARTNER: the mail client wraps the 2.5.35mm1 row before its last 'KB ...'.
    text = read(HARTNER).replace("*6,154,512 KB *8,875,112 KB", "*6,154,512\nKB *8,875,112 KB")
    rec = record(parse(text, {}), label="2.5.35mm1", table=1)
    assert values(rec)["total_swpout"] == 6154512
    assert values(rec)["total_swapio"] == 8875112


@pytest.mark.parametrize(
    ("old", "new", "fragment", "line"),
    [
        # broken cells are tested in test_table_cells.py
        # derived from HARTNER: an extra number at the end of the 2.5.35 row
        ("7,375,388 KB\n", "7,375,388 KB 12\n", "row has 8 cells where the header has 7", 64),
    ],
)
def test_broken_variants_are_rejected(old, new, fragment, line):
    text = read(HARTNER)
    assert old in text
    with pytest.raises(ParseError) as err:
        parse(text.replace(old, new, 1), {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_no_table():
    with pytest.raises(ParseError, match="no table found"):
        parse("Thanks Martin.\n\nI'll see if I can reproduce this.\n", {})


def test_units_line_under_the_header():
    # Derived from PIGGIN: a units line typed under the first header (one per value column).
    header = ">                              Elapsed      System        User         CPU\n"
    text = read(PIGGIN).replace(header, header + ">  (s)  (s)  (s)  (%)\n", 1)
    rec = record(parse(text, {}), label="2.6.0-test8", table=1)
    assert units(rec)["elapsed"] == ("s", "none")
    assert units(rec)["cpu"] == ("%", "none")
    assert values(rec)["user"] == 566.65


def test_two_line_header_names_repeated_columns_from_the_line_above():
    # Andrew Morton quoting Randy Hron (LKML 2003, tests/ingest/corpus): "fork execve /bin/sh"
    # over "kernel process process process", all over one dashed rule.
    path = Path(__file__).parents[1] / "corpus" / "files"
    text = (path / "lkml-2003-04-25-morton-quoting-whron-lmbench-fork-table.txt").read_text()
    rec = record(parse(text, {}), label="2.5.68-mm2")
    assert values(rec)["fork_process"] == 502
    assert values(rec)["execve_process"] == 1715
    # derived: without the line above, three columns named "process" are refused
    broken = text.replace(">                    fork    execve  /bin/sh\n", "")
    with pytest.raises(ParseError, match="two columns give metric"):
        parse(broken, {})
