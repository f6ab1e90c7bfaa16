"""perf bench: values read by hand from tests/fixtures/formats/perf-bench."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "perf-bench"
parse = get_parser("perf-bench")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def flat(result) -> dict[tuple, dict[str, float]]:
    return {
        tuple(sorted(r.keys.items())): {m.metric: m.value for m in r.measurements}
        for r in result.records
    }


def test_messaging():
    assert flat(parse(read("bench-messaging.txt"), {})) == {
        (("benchmark", "sched/messaging"), ("groups", 10), ("mode", "processes")): {
            "total_time_s": 1.045
        }
    }
    threads = parse(read("bench-messaging-threads.txt"), {})
    assert threads.records[0].keys == {
        "benchmark": "sched/messaging",
        "groups": 5,
        "mode": "threads",
    }
    assert threads.measurements[0].value == 0.185


def test_pipe():
    result = parse(read("bench-pipe.txt"), {})
    assert result.records[0].keys == {"benchmark": "sched/pipe", "loops": 10000}
    values = {m.metric: m for m in result.measurements}
    assert values["total_time_s"].value == 0.358
    assert values["usecs_per_op"].value == 35.8362
    assert values["ops_per_sec"].value == 27904
    assert values["ops_per_sec"].better == "higher"
    assert values["usecs_per_op"].better == "lower"


def test_sched_all_gives_both_benchmarks():
    found = flat(parse(read("bench-sched-all.txt"), {}))
    assert found[(("benchmark", "sched/pipe"), ("loops", 1000000))] == {
        "total_time_s": 9.324,
        "usecs_per_op": 9.324717,
        "ops_per_sec": 107241,
    }
    messaging = (("benchmark", "sched/messaging"), ("groups", 10), ("mode", "processes"))
    assert found[messaging] == {"total_time_s": 0.846}


@pytest.mark.parametrize(
    ("name", "function", "expected"),
    [
        ("bench-memcpy.txt", "default", 32.552083),
        ("bench-memcpy.txt", "x86-64-movsb", 42.459239),
        ("bench-memset.txt", "x86-64-unrolled", 54.253472),
        ("bench-memset.txt", "x86-64-stosb", 88.778409),
        ("bench-memcpy-default.txt", "default", 30.517578),
    ],
)
def test_mem_functions(name, function, expected):
    result = parse(read(name), {})
    match = [r for r in result.records if r.keys["function"] == function]
    assert match[0].keys["size"] == "1MB"
    assert match[0].measurements[0].metric == "throughput_gb_per_sec"
    assert match[0].measurements[0].value == expected


@pytest.mark.parametrize(
    ("name", "fragment", "line"),
    [
        ("bench-memcpy-cycles.txt", "Failed to open cycles counter", 2),
        ("bench-pipe-simple.txt", "--format=simple", None),
        ("bench-memset-simple.txt", "--format=simple", None),
    ],
)
def test_rejects(name, fragment, line):
    with pytest.raises(ParseError) as err:
        parse(read(name), {})
    assert fragment in err.value.message
    assert err.value.line == line


def test_rejects_truncated_and_corrupted():
    # derived from bench-pipe.txt: cut before the results
    cut = "\n".join(read("bench-pipe.txt").split("\n")[:3])
    with pytest.raises(ParseError, match="printed no result") as err:
        parse(cut, {})
    assert err.value.line == 1
    # derived from bench-messaging.txt: the time corrupted to a decimal comma
    bad = read("bench-messaging.txt").replace("1.045", "1,045")
    with pytest.raises(ParseError, match="decimal comma") as err:
        parse(bad, {})
    assert err.value.line == 5
