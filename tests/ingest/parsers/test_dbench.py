"""dbench/tbench: every Throughput line is a record; repeats are trials, never a mean.

Expected values are read by hand from the fixture files (see their SOURCES.md).
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats"


def read(tool: str, name: str) -> str:
    return (FIXTURES / tool / name).read_text()


def throughputs(records) -> list[float]:
    return [next(m.value for m in r.measurements if m.metric == "throughput") for r in records]


def groups(result) -> dict[tuple, list[float]]:
    """(label, clients) -> the trials' throughputs, in trial order."""
    out = {}
    for group in group_records(result.records):
        key = (group.keys.get("label"), group.keys.get("clients"))
        out[key] = throughputs(record for _, record in group.trials)
    return out


def test_three_kernels_four_runs_each_are_labelled_trials():
    # "2.4.0-prerelease-ac4: average 11.4729 MB/sec" labels the four runs below it; the
    # hand-computed average is not a measurement and is not stored.
    result = get_parser("dbench")(read("dbench", "lkml-cole-2.4.0-prerelease-ac4-ac5.txt"), {})
    assert len(result.records) == 12
    assert groups(result) == {
        ("2.4.0-prerelease", 48): [11.1771, 10.7172, 10.8443, 11.0758],
        ("2.4.0-prerelease-ac4", 48): [11.4646, 13.3765, 9.81891, 11.2315],
        ("2.4.0-prerelease-ac5", 48): [9.18921, 9.06864, 7.69499, 10.9196],
    }
    assert 10.9536 not in result.values()
    assert result.warnings[0] == (
        "line 34: text after the label '2.4.0-prerelease' ignored: 'average 10.9536 MB/sec'"
    )
    assert result.records[4].line == 44
    nb = [m for m in result.records[0].measurements if m.metric == "nb_throughput"]
    assert nb[0].value == 13.9714 and nb[0].unit == "MB/s"


def test_fourteen_runs_over_seven_client_counts_are_not_averaged():
    # The bug: this log was stored as one mean. Now 14 records, a pair per client count
    # (the mail says "first lines for 2.4.7-ac3, then 2.4.7-ac9", in prose only).
    result = get_parser("dbench")(read("dbench", "lkml-nuetzel-2.4.7-ac3-ac9.txt"), {})
    assert len(result.records) == 14
    found = groups(result)
    assert list(found) == [(None, n) for n in (48, 32, 16, 8, 4, 2, 1)]
    assert found[(None, 48)] == [27.3983, 18.4711]
    assert found[(None, 16)] == [37.7379, 30.0396]
    assert found[(None, 1)] == [33.3689, 30.8583]
    assert "no kernel label" in result.warnings[-1]
    assert "clients=48 (lines 48, 51)" in result.warnings[-1]
    assert "clients" not in result.metadata


def test_clients_option_filters_records():
    text = read("dbench", "lkml-nuetzel-2.4.7-ac3-ac9.txt")
    result = get_parser("dbench")(text, {"clients": 8})
    assert throughputs(result.records) == [40.9394, 28.174]
    assert result.metadata["clients"] == 8


def test_label_in_a_quoted_paragraph_does_not_reach_the_reply():
    # ">>2.5.3-pre1-preempt:     32.341 MB/s" is quoted twice; Andrew Morton's two runs below
    # it (quoted once) are his own, on no stated kernel.
    result = get_parser("dbench")(read("dbench", "lkml-morton-16-clients-twice.txt"), {})
    assert [dict(r.keys) for r in result.records] == [{"clients": 16}, {"clients": 16}]
    assert throughputs(result.records) == [6.48209, 7.76901]


def test_dbench4_runs_with_progress_samples():
    result = get_parser("dbench")(read("dbench", "debian-dbench-4.0-t3-2-then-4.txt"), {})
    first, second = result.records
    assert dict(first.keys) == {"clients": 2} and dict(second.keys) == {"clients": 4}
    assert [(m.metric, m.value, m.unit, m.better) for m in first.measurements] == [
        ("throughput", 673.555, "MB/s", "higher"),
        ("max_latency_ms", 5.149, "ms", "lower"),
    ]
    assert throughputs([second]) == [678.869]
    rates = [s.value for s in second.samples if s.column == "mb_per_s"]
    assert rates == [768.40, 678.87]  # lines 41-42, the samples before its Throughput line
    assert first.line == 9
    assert result.metadata["version"] == "4.00"


def test_lkp_dbench_samples_skip_warmup():
    result = get_parser("dbench")(read("dbench", "lkp-fixture-dbench-01.txt"), {})
    assert throughputs(result.records) == [13563.9]
    rates = [s for s in result.samples if s.column == "mb_per_s"]
    assert len(rates) == 5
    assert rates[0].value == 13565.79
    assert rates[-1].timestamp == "599 sec"
    assert result.metadata["clients"] == 128


@pytest.mark.parametrize(
    ("name", "expected", "latencies"),
    [
        ("lkp-fixture-tbench-01.txt", [23775.4, 20853], [8.632, 8.158]),
        ("debian-tbench-4.0-t3-2-twice.txt", [600.246, 464.747], [4.972, 8.503]),
    ],
)
def test_tbench_iterations_are_trials(name, expected, latencies):
    result = get_parser("tbench")(read("tbench", name), {})
    (group,) = group_records(result.records)
    assert [n for n, _ in group.trials] == [1, 2]
    assert throughputs(r for _, r in group.trials) == expected
    found = [m.value for r in result.records for m in r.measurements if m.metric != "throughput"]
    assert found == latencies
    assert not any("mean" in w for w in result.warnings)


def test_clients_from_time_commands_in_a_quoted_mail():
    result = get_parser("dbench")(read("time", "lkml-love-time-dbench-tcsh.txt"), {})
    assert [r.keys["clients"] for r in result.records] == [16, 40, 48, 16, 48]
    assert throughputs(result.records) == [29.3012, 24.664, 24.5409, 30.8602, 22.85]


def test_killed_run_progress_is_dropped_with_a_warning():
    # Derived from the Debian run: the first run's Throughput line (33) is replaced by
    # "Killed", as when the OOM killer ends dbench.
    lines = read("dbench", "debian-dbench-4.0-t3-2-then-4.txt").split("\n")
    lines[32] = "Killed"
    result = get_parser("dbench")("\n".join(lines), {})
    assert throughputs(result.records) == [678.869]
    assert result.warnings[0].startswith("line 33: run killed; its 2 progress lines")


@pytest.mark.parametrize(
    ("change", "fragment", "line"),
    [
        (("11.1771 MB/sec", "11,1771 MB/sec"), "decimal comma", 36),
        (("Throughput 10.7172 MB/sec", "Throughput 10.71x2 MB/sec"), "not a number", 37),
    ],
)
def test_rejects_broken_values(change, fragment, line):
    # Derived from the Cole mail by corrupting one number.
    text = read("dbench", "lkml-cole-2.4.0-prerelease-ac4-ac5.txt").replace(*change)
    with pytest.raises(ParseError) as err:
        get_parser("dbench")(text, {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_rejects_no_result_and_unknown_clients():
    with pytest.raises(ParseError, match="no 'Throughput N MB/sec' line"):
        get_parser("dbench")("16 clients started\n.....+++\n", {})
    text = read("dbench", "lkml-cole-2.4.0-prerelease-ac4-ac5.txt")
    with pytest.raises(ParseError, match="no Throughput line for clients = 5"):
        get_parser("dbench")(text, {"clients": 5})


def test_progress_dots_glued_to_the_result():
    # Derived from the Morton mail: the newline between the last progress dot line (62) and
    # its Throughput line is removed, as dbench 1.x prints them when stdout is not a tty.
    lines = read("dbench", "lkml-morton-16-clients-twice.txt").split("\n")
    lines[61] = lines[61] + lines.pop(62).lstrip(">")
    result = get_parser("dbench")("\n".join(lines), {})
    assert throughputs(result.records) == [6.48209, 7.76901]
    assert result.records[0].line == 62
