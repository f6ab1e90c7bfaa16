"""lmbench: raw per-test lines and the choice of layout (ingest/parsers/lmbench.py).

The summary tables are tested in test_lmbench_summary.py.
"""

from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser

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
