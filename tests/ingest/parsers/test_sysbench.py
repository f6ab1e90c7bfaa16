from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "sysbench"
parse = get_parser("sysbench")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def only(result) -> dict[str, float]:
    (record,) = result.records
    return {m.metric: m.value for m in record.measurements}


@pytest.mark.parametrize(
    ("name", "keys", "metric", "expected"),
    [
        ("sysbench-1.0.20-cpu.txt", {"test": "cpu", "threads": 1}, "events_per_s", 4397.04),
        ("sysbench-1.0.20-cpu.txt", {"test": "cpu", "threads": 1}, "latency_p95_ms", 0.25),
        ("sysbench-1.0.20-cpu-t2.txt", {"test": "cpu", "threads": 2}, "latency_max_ms", 12.64),
        (
            "sysbench-1.0.20-cpu-t2.txt",
            {"test": "cpu", "threads": 2},
            "fairness_events_stddev",
            75.50,
        ),
        ("sysbench-1.0.20-memory.txt", {"test": "memory", "threads": 1}, "transfer_mib_s", 6635.27),
        (
            "sysbench-1.0.20-memory.txt",
            {"test": "memory", "threads": 1},
            "operations_per_s",
            6794511.42,
        ),
        ("sysbench-1.0.20-fileio.txt", {"test": "fileio", "threads": 1}, "reads_per_s", 6598.86),
        ("sysbench-1.0.20-fileio.txt", {"test": "fileio", "threads": 1}, "written_mib_s", 68.74),
        ("sysbench-1.0.20-fileio.txt", {"test": "fileio", "threads": 1}, "total_time_s", 2.0087),
        ("sysbench-1.0.20-mutex.txt", {"threads": 1}, "latency_avg_ms", 257.83),
        ("sysbench-1.0.20-threads.txt", {"threads": 1}, "events", 3725),
    ],
)
def test_values(name, keys, metric, expected):
    result = parse(read(name), {})
    assert dict(result.records[0].keys) == keys
    assert only(result)[metric] == expected


def test_test_option_names_threads_and_mutex():
    result = parse(read("sysbench-1.0.20-mutex.txt"), {"test": "mutex"})
    assert dict(result.records[0].keys) == {"test": "mutex", "threads": 1}
    assert any(
        "does not say which test" in w
        for w in parse(read("sysbench-1.0.20-mutex.txt"), {}).warnings
    )


def test_several_runs_in_one_file():
    text = (
        read("sysbench-1.0.20-cpu.txt")
        + read("sysbench-1.0.20-cpu-t2.txt")
        + read("sysbench-1.0.20-memory.txt")
    )
    result = parse(text, {})
    assert [dict(r.keys) for r in result.records] == [
        {"test": "cpu", "threads": 1},
        {"test": "cpu", "threads": 2},
        {"test": "memory", "threads": 1},
    ]


def test_units():
    found = {
        m.metric: (m.unit, m.better)
        for m in parse(read("sysbench-1.0.20-fileio.txt"), {}).measurements
    }
    assert found["latency_avg_ms"] == ("ms", "lower")
    assert found["read_mib_s"] == ("MiB/s", "higher")


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        # derived from the real cpu output: a corrupted value and a duplicated line
        (lambda t: t.replace("4397.04", "4397,04"), "decimal comma", 15),
        (lambda t: t.replace("    sum:", "    min:"), "second latency_min_ms", 26),
        (lambda t: t.replace("2.0003s", "2.0003"), "no 's' unit", 18),
        (lambda t: "Test execution summary:\n", "0.4", None),
    ],
)
def test_rejects(text, fragment, line):
    with pytest.raises(ParseError) as err:
        parse(text(read("sysbench-1.0.20-cpu.txt")), {})
    assert fragment in err.value.message
    assert err.value.line == line
