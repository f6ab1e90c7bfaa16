from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser
from ingest.parsers.base import group_records

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "lmbench"
parse = get_parser("lmbench")

# Seed 004 (Vianney 2003), 2.4.20 column: raw label -> the metric the doc promises.
SEED_004_24 = {
    "lat_syscall_null": 0.71,
    "lat_syscall_read": 1.36,
    "lat_syscall_write": 1.14,
    "lat_syscall_stat": 8.35,
    "lat_syscall_fstat": 1.53,
    "lat_syscall_open_close": 10.55,
    "lat_pipe": 14.36,
    "lat_proc_fork": 555.13,
    "lat_proc_exec": 1957.00,
    "lat_proc_shell": 8859.67,
    "lat_udp": 50.40,
    "lat_tcp": 64.90,
    "lat_rpc_udp": 91.86,
    "lat_rpc_tcp": 116.03,
    "lat_tcp_connect": 129.92,
}


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def measured(result) -> dict[str, float]:
    return {m.metric: m.value for m in result.measurements}


def test_raw_lines_give_all_fifteen_seed_004_latencies():
    result = parse(read("lmbench3-raw-2.4.20.txt"), {})
    values = measured(result)
    for metric, value in SEED_004_24.items():
        assert values[metric] == pytest.approx(value)
    kinds = {m.metric: (m.unit, m.better) for m in result.measurements}
    assert {kinds[m] for m in SEED_004_24} == {("us", "lower")}
    assert kinds["bw_pipe"] == ("MB/s", "higher")
    assert result.metadata["lmbench_version"] == "3.0"


def test_raw_extras():
    values = measured(parse(read("lmbench3-raw-2.4.20.txt"), {}))
    assert values["lat_pagefault"] == 3.0  # "usecs"
    assert values["lat_select_100tcp"] == pytest.approx(46.2107)
    assert values["lat_ctx_4p_16k"] == pytest.approx(11.2)
    assert values["bw_tcp"] == pytest.approx(115.3)


MARATHE = "lkml-2003-03-07-marathe-2.5.64-five-runs.txt"
MAYLAND = "lkml-2001-10-09-mayland-2.4.10-four-hosts.txt"
REDDY = "lkml-2002-10-16-reddy-2.5.42-2.5.43-wrapped.txt"


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


def test_same_quantity_same_name_in_both_layouts():
    summary = {m.metric for r in parse(read(MARATHE), {}).records for m in r.measurements}
    raw = {m.metric for m in parse(read("lmbench3-raw-2.4.20.txt"), {}).measurements}
    shared = {"lat_syscall_null", "lat_pipe", "lat_proc_fork", "lat_tcp", "bw_pipe"}
    assert shared <= summary & raw


@pytest.mark.parametrize(
    ("options", "hosts"),
    [
        ({"row": 1}, ["Athlon-1"]),
        ({"row": 3}, ["i686-1"]),
        ({"os": "Linux 2.4.10-"}, ["Athlon-1", "Athlon-2", "i686-1", "i686-2"]),
    ],
)
def test_row_and_os_options_filter(options, hosts):
    result = parse(read(MAYLAND), options)
    assert [r.keys["host"] for r in result.records] == hosts


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"row": 5}, "out of range"),
        ({"row": 0}, "out of range"),
        ({"os": "Linux 2.6"}, "matches no row"),
    ],
)
def test_bad_row_options(options, fragment):
    with pytest.raises(ParseError, match=fragment):
        parse(read(MAYLAND), options)


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


def test_lkp_bw_mem_line_in_build_noise():
    assert measured(parse(read("lkp-fixture-lmbench3-01.txt"), {})) == {"bw_mem_rd": 13805.57}


def test_lkp_xgraph_sections_become_curves():
    result = parse(read("lkp-fixture-lmbench3-02.txt"), {})
    curves = {c.name: c.points for c in result.curves}
    assert set(curves) == {"mappings", "Mmap read bandwidth", "Mmap read open2close bandwidth"}
    assert curves["mappings"][0] == (0.524288, 7.342)
    assert len(curves["Mmap read bandwidth"]) == 22


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("Simple syscall: 0,3226 microseconds\n", "decimal comma", 1),
        ("Simple syscall: NaN microseconds\n", "is not a number", 1),
        ("Pipe latency: 14 MB/sec\n", "expected us", 1),
    ],
)
def test_broken_raw(text, fragment, line):
    with pytest.raises(ParseError, match=fragment) as error:
        parse(text, {})
    assert error.value.line == line


def test_broken_summary_cell_names_line():
    # Derived from the real Marathe mail: a decimal comma in run 3's null call.
    text = read(MARATHE).replace("790 0.44 0.84 7.39", "790 0,44 0.84 7.39")
    with pytest.raises(ParseError, match="decimal comma") as error:
        parse(text, {})
    assert error.value.line == 51


@pytest.mark.parametrize("text", ["", "gcc -O -o bw_mem bw_mem.c\nwarning: foo\n"])
def test_no_result(text):
    with pytest.raises(ParseError, match="no lmbench result found"):
        parse(text, {})


def test_remote_latency_names():
    values = measured(parse("UDP latency using elm3b97: 120.5 microseconds\n", {}))
    assert values == {"lat_udp_remote": 120.5}


def test_raw_runs_split_at_results_headers():
    # Derived from the hand-written raw file: two result files concatenated (cat host.0 host.1).
    text = read("lmbench3-raw-2.4.20.txt")
    result = parse(text + text.replace("elm3b96", "elm3b97"), {})
    assert [r.keys["host"] for r in result.records] == ["elm3b96", "elm3b97"]
    assert all(measured(r)["lat_syscall_null"] == 0.71 for r in result.records)


def test_raw_repeats_without_header_are_runs_not_a_mean():
    text = "Simple syscall: 0.71 microseconds\nSimple syscall: 0.69 microseconds\n"
    result = parse(text, {})
    assert [(r.trial, measured(r)) for r in result.records] == [
        (1, {"lat_syscall_null": 0.71}),
        (2, {"lat_syscall_null": 0.69}),
    ]
    assert any("never averaged" in w for w in result.warnings)


def test_raw_lmbench2_output_in_a_mail_is_read_whole():
    # every value the 2001 mail prints: syscalls, lat_fs rows, FIFO/fcntl, ctx overheads
    result = parse(read("lkml-2001-10-09-safemode-2.4.10-ac10-preempt-raw.txt"), {})
    (record,) = result.records
    got = {m.metric: (m.value, m.unit) for m in record.measurements}
    assert len(got) == 28
    assert got["lat_fifo"] == (8.0457, "us")
    assert got["lat_fcntl"] == (7.3516, "us")
    assert got["lat_select_200tcp"] == (62.7955, "us")
    assert got["lat_pagefault"] == (13098, "us")  # "13098 usecs"
    assert got["fs_create_10k"] == (9124, "files/s")  # "10k 1000 9124 51972"
    assert got["fs_delete_0k"] == (123993, "files/s")
    assert got["lat_ctx_overhead_1024k"] == (301.96, "us")  # '"size=1024k ovr=301.96'
    assert record.line == 13


def test_raw_lines_after_shell_prompts_and_an_unnamed_test():
    text = read("lkml-molnar-lat-syscall-prompts.txt")
    (record,) = parse(text, {}).records
    assert {m.metric: m.value for m in record.measurements} == {
        "lat_syscall_open_close": 7.5756,
        "lat_syscall_stat": 5.4864,
        "lat_syscall_write": 0.9614,
        "lat_syscall_read": 1.142,
        "lat_syscall_null": 0.6349,
    }
    # a test this parser has no name for is read under its own label, never dropped
    (record,) = parse(text + "\nMmap read latency: 2.5 microseconds\n", {}).records
    assert {m.metric: m.value for m in record.measurements}["lat_mmap_read_latency"] == 2.5


def test_a_file_with_no_lmbench_line_is_refused_at_its_first_line():
    with pytest.raises(ParseError) as error:
        parse("\nnothing measured here\n", {})
    assert error.value.line == 2
