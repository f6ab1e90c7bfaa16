"""ingest/parsers/lmbench_summary.py: lmbench's `make see` summary tables, values read by hand."""

from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser
from ingest.parsers.base import group_records
from ingest.parsers.lmbench_summary import (
    descriptions,
    parse_summary,
    summary_records,
    table_kind,
)
from ingest.parsers.text import numbered_lines

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "lmbench"
parse = get_parser("lmbench")

MARATHE = "lkml-2003-03-07-marathe-2.5.64-five-runs.txt"
MAYLAND = "lkml-2001-10-09-mayland-2.4.10-four-hosts.txt"
REDDY = "lkml-2002-10-16-reddy-2.5.42-2.5.43-wrapped.txt"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def measured(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


@pytest.mark.parametrize(
    ("title", "kind"),
    [
        ("Basic system parameters", "params"),
        ("Processor, Processes - times in microseconds - smaller is better", "processor"),
        ("Context switching - times in microseconds - smaller is better", "ctx"),
        ("File & VM system latencies in microseconds - smaller is better", "filevm"),
        ("*Local* Communication bandwidths in MB/s - bigger is better", "bandwidth"),
        ("Memory latencies in nanoseconds - smaller is better", "memory"),
        ("Basic integer operations - times in nanoseconds", "ops"),
        ("Dear all,", None),
    ],
)
def test_table_kind(title, kind):
    assert table_kind(title) == kind


def test_a_summary_read_directly_gives_a_record_per_row_and_run():
    summary = parse_summary(numbered_lines(read(MARATHE)))
    assert summary.version == "2.0"
    assert descriptions(summary) == {"i686-pc-linux-gnu"}
    assert summary.warnings == []
    records = summary_records(summary)
    assert [(r.keys, r.trial, r.line) for r in records] == [
        ({"host": "benchtest", "label": "Linux 2.5.64"}, n, 37 + n) for n in range(1, 6)
    ]
    first = {m.metric: (m.value, m.unit, m.better) for m in records[0].measurements}
    assert first["cpu_mhz"] == (790, "MHz", "none")
    assert first["lat_proc_fork"] == (276, "us", "lower")
    assert first["lat_mem_l1"] == (3.798, "ns", "lower")
    assert first["bw_mem_wr"] == (170, "MB/s", "higher")


def test_text_without_a_summary_has_no_rows():
    summary = parse_summary(numbered_lines("Simple syscall: 0.71 microseconds\n"))
    assert summary.rows == {}
    assert summary_records(summary) == []


def by_trial(result, label: str) -> dict[int, dict[str, float]]:
    return {r.trial: measured(r) for r in result.records if r.keys["label"] == label}


def test_five_runs_of_one_kernel_are_five_trials_never_averaged():
    # LKML, Marathe 2003-03-07: five rows of benchtest / Linux 2.5.64 in every table.
    result = parse(read(MARATHE), {})
    assert [(r.keys, r.trial, r.line) for r in result.records] == [
        ({"host": "benchtest", "label": "Linux 2.5.64"}, n, 37 + n) for n in range(1, 6)
    ]
    runs = by_trial(result, "Linux 2.5.64")
    assert [runs[n]["lat_proc_fork"] for n in range(1, 6)] == [276, 285, 314, 320, 299]
    assert runs[3]["lat_mem_l2"] == 55  # "    55" in the L2 $ column, not Main mem
    assert runs[3]["lat_mem_main"] == 176
    assert runs[5]["lat_ctx_8p_16k"] == 8.92  # "8.9200"
    assert runs[1]["lat_tcp_connect"] == 3_100_000  # "3.1M"
    assert runs[2]["lat_pagefault"] == 4.0  # under the tabbed "Page" header
    assert runs[4]["bw_unix"] == 602
    assert runs[1]["cpu_mhz"] == 790
    assert result.metadata == {"lmbench_version": "2.0", "description": "i686-pc-linux-gnu"}
    assert result.warnings == ()
    units = {m.metric: (m.unit, m.better) for m in result.records[0].measurements}
    assert units["lat_mem_l1"] == ("ns", "lower")
    assert units["bw_mem_wr"] == ("MB/s", "higher")
    assert units["cpu_mhz"] == ("MHz", "none")
    groups = group_records(result.records)
    assert len(groups) == 1 and [n for n, _ in groups[0].trials] == [1, 2, 3, 4, 5]


def test_four_hosts_are_four_records_with_truncated_os_as_printed():
    # LKML, Mayland 2001-10-09: Athlon-1/2 and i686-1/2, OS cell truncated to "Linux 2.4.10-".
    result = parse(read(MAYLAND), {})
    assert [r.keys["host"] for r in result.records] == ["Athlon-1", "Athlon-2", "i686-1", "i686-2"]
    assert {r.keys["label"] for r in result.records} == {"Linux 2.4.10-"}
    values = {r.keys["host"]: measured(r) for r in result.records}
    assert values["Athlon-1"]["lat_proc_fork"] == 142  # "142."
    assert values["i686-1"]["lat_tcp_connect"] == 599_000  # "599K"
    assert values["i686-2"]["lat_tcp_connect"] == 18_000_000  # "18.M"
    assert values["i686-2"]["bw_unix"] == 318
    assert values["Athlon-2"]["lat_mem_main"] == 155.4
    assert len(group_records(result.records)) == 4


def test_two_mail_wrapped_summaries_in_one_file():
    # LKML, Reddy 2002-10-16: a 2.5.42 and a 2.5.43 summary, Outlook-wrapped at 76 columns
    # (header words, a rule cut mid-dash, every Processor / 2.5.43 bandwidth row's last cell).
    result = parse(read(REDDY), {})
    assert len(result.records) == 10
    old, new = by_trial(result, "Linux 2.5.42"), by_trial(result, "Linux 2.5.43")
    assert sorted(old) == sorted(new) == [1, 2, 3, 4, 5]
    assert [old[n]["lat_proc_shell"] for n in range(1, 6)] == [8041, 7276, 7298, 7284, 7267]
    assert old[1]["lat_proc_exec"] == 1823
    assert [new[n]["bw_mem_wr"] for n in range(1, 6)] == [138.5, 141.7, 137.8, 138.4, 138.6]
    assert new[1]["bw_mem_rd"] == 346
    assert "lat_select_100tcp" not in new[1] and new[3]["lat_select_100tcp"] == 35.8
    assert new[5]["lat_mem_l2"] == 59.8
    assert any("mail-wrapped row tail" in w for w in result.warnings)


def test_the_same_summary_twice_continues_the_trial_numbers():
    # Derived from the real Marathe mail pasted twice: runs 6-10, not a second run 1.
    text = read(MARATHE)
    result = parse(text + "\n" + text, {})
    assert [r.trial for r in result.records] == list(range(1, 11))


def test_rows_that_do_not_line_up_across_tables_are_refused():
    # Derived from the real Marathe mail: run 2's 2p/0K ctxsw differs between two tables.
    text = read(MARATHE).replace(
        "benchtest  Linux 2.5.64 1.400 8.260", "benchtest  Linux 2.5.64 1.900 8.260"
    )
    with pytest.raises(ParseError, match="do not line up") as error:
        parse(text, {})
    assert error.value.line == 72


def test_a_stray_line_in_a_table_is_refused_with_its_line():
    # Derived from the real Mayland mail: an indented note inside the Processor table.
    text = read(MAYLAND).replace(
        "i686-1    Linux 2.4.10- 1333 0.21", "   note 1\ni686-1    Linux 2.4.10- 1333 0.21"
    )
    with pytest.raises(ParseError, match="without a Host/OS cell") as error:
        parse(text, {})
    assert error.value.line == 51


def test_virtualclient_lmbench3_summary():
    result = parse(read("virtualclient-lmbench_example_results_1.txt"), {})
    assert [r.keys for r in result.records] == [{"host": "X64-Linux", "label": "Linux 5.8.0-1"}]
    values = measured(result)
    assert values["lat_mmap"] == pytest.approx(111_500)
    assert values["bw_mmap_reread"] == pytest.approx(10_200)
    assert values["bw_mem_wr"] == 7359
    assert values["lat_mem_rand"] == pytest.approx(142.8)
    assert values["lat_tcp_connect"] == 71
    assert "lat_pipe" not in values and "lat_prot_fault" not in values
    assert {m.unit for m in result.measurements if m.metric.startswith("lat_mem")} == {"ns"}


def test_virtualclient_rhel_parameters_and_empty_rows():
    result = parse(read("virtualclient-lmbench_example_results_rhel_1.txt"), {})
    assert [r.keys["label"] for r in result.records] == ["Linux 4.18.0-"]
    values = measured(result)
    assert values["cache_line_bytes"] == 128 and values["tlb_pages"] == 31
    assert values["mem_par"] == 7.93
    assert values["lat_mem_main"] == pytest.approx(38.4)
    assert not any(name.startswith("op_") for name in values)  # those tables are empty


def test_broken_summary_cell_names_line():
    # Derived from the real Marathe mail: a decimal comma in run 3's null call.
    text = read(MARATHE).replace("790 0.44 0.84 7.39", "790 0,44 0.84 7.39")
    with pytest.raises(ParseError, match="decimal comma") as error:
        parse(text, {})
    assert error.value.line == 51
