from pathlib import Path
from statistics import mean

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


def test_repeated_runs_of_one_kernel_are_averaged():
    result = parse(read("lmbench2-summary-two-runs.txt"), {})
    values = measured(result)
    assert values["lat_proc_fork"] == pytest.approx(mean([555, 561]))  # "555." and "561."
    assert values["lat_mmap"] == pytest.approx(mean([13_000, 14_000]))  # "13.K", "14.K"
    assert values["bw_tcp"] == pytest.approx(mean([115, 117]))
    assert values["lat_pagefault"] == 3.0  # the column under the tabbed "Page" header
    assert values["lat_tcp_connect"] == pytest.approx(mean([130, 129]))
    assert "lat_rpc_udp" not in values  # empty cells stay empty
    assert result.warnings == ("averaged 2 rows of elm3b96 / Linux 2.4.20",)
    assert result.metadata["lmbench_version"] == "2.0"


def test_same_quantity_same_name_in_both_layouts():
    summary = {m.metric for m in parse(read("lmbench2-summary-two-runs.txt"), {}).measurements}
    raw = {m.metric for m in parse(read("lmbench3-raw-2.4.20.txt"), {}).measurements}
    shared = {"lat_syscall_null", "lat_pipe", "lat_proc_fork", "lat_tcp", "bw_pipe"}
    assert shared <= summary & raw


@pytest.mark.parametrize(
    ("options", "expected", "rows"),
    [({"row": 1}, [3.01], 1), ({"row": 3}, [1.90], 1), ({"os": "Linux 2.5.33x"}, [1.87, 1.90], 2)],
)
def test_choosing_rows(options, expected, rows):
    result = parse(read("lmbench2-summary-two-kernels.txt"), options)
    assert measured(result)["lat_ctx_2p_0k"] == pytest.approx(mean(expected))
    assert (len(result.warnings) == 1) == (rows > 1)


def test_several_kernels_without_option_are_refused():
    with pytest.raises(ParseError, match=r'2 different host/OS rows .*"row": N'):
        parse(read("lmbench2-summary-two-kernels.txt"), {})


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"row": 4}, "out of range"),
        ({"row": 0}, "out of range"),
        ({"os": "Linux 2.6"}, "matches no row"),
    ],
)
def test_bad_row_options(options, fragment):
    with pytest.raises(ParseError, match=fragment):
        parse(read("lmbench2-summary-two-kernels.txt"), options)


def test_virtualclient_lmbench3_summary():
    result = parse(read("virtualclient-lmbench_example_results_1.txt"), {})
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
    assert result.metadata["os"] == "Linux 4.18.0-"
    assert result.metadata["cache_line_bytes"] == 128
    values = measured(result)
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
    text = read("lmbench2-summary-two-runs.txt").replace("0.71 1.25", "0,71 1.25")
    with pytest.raises(ParseError, match="decimal comma") as error:
        parse(text, {})
    assert error.value.line == 12


@pytest.mark.parametrize("text", ["", "gcc -O -o bw_mem bw_mem.c\nwarning: foo\n"])
def test_no_result(text):
    with pytest.raises(ParseError, match="no lmbench result found"):
        parse(text, {})


def test_remote_latency_names():
    values = measured(parse("UDP latency using elm3b97: 120.5 microseconds\n", {}))
    assert values == {"lat_udp_remote": 120.5}
