"""hackbench: values read by hand from tests/fixtures/formats/hackbench."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "hackbench"
parse = get_parser("hackbench")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "keys", "time"),
    [
        (
            "hackbench-l100.txt",
            {"mode": "process", "groups": 10, "fds": 40, "loops": 100, "message_size": 100},
            0.613,
        ),
        (
            "hackbench-threads.txt",
            {"mode": "threaded", "groups": 4, "fds": 40, "loops": 100, "message_size": 100},
            0.255,
        ),
        (
            "hackbench-pipe.txt",
            {"mode": "process", "groups": 2, "fds": 40, "loops": 100, "message_size": 512},
            0.081,
        ),
    ],
)
def test_rt_tests_hackbench(name, keys, time):
    result = parse(read(name), {})
    (record,) = result.records
    assert record.keys == keys
    assert [(m.metric, m.value, m.unit, m.better) for m in record.measurements] == [
        ("time_s", time, "s", "lower")
    ]


def test_old_hackbench_repeats_are_trials_not_averaged():
    result = parse(read("lkml-old-hackbench-10-runs.txt"), {})
    (group,) = group_records(result.records)
    assert group.keys == {"groups": 10, "fds": 40}
    times = [record.measurements[0].value for _, record in group.trials]
    assert times == [5.484, 4.039, 3.908, 3.955, 4.185, 4.497, 3.980, 4.078, 4.219, 4.026]
    assert [n for n, _ in group.trials] == list(range(1, 11))
    assert 4.2371 not in result.values()  # the mail's own average is not a run


def test_rejects_a_run_cut_short():
    # derived from the mail: the last run's Time line removed
    text = read("lkml-old-hackbench-10-runs.txt").replace("Time: 4.026\n", "")
    with pytest.raises(ParseError, match="no 'Time:' line") as err:
        parse(text, {})
    assert err.value.line == 20


def test_rejects_a_run_without_time_before_the_next():
    text = read("lkml-old-hackbench-10-runs.txt").replace("Time: 4.039\n", "")
    with pytest.raises(ParseError, match="before the next run") as err:
        parse(text, {})
    assert err.value.line == 4


def test_rejects_a_corrupted_time():
    text = read("hackbench-l100.txt").replace("0.613", "0.6x3")
    with pytest.raises(ParseError, match="not a number") as err:
        parse(text, {})
    assert err.value.line == 3


def test_rejects_no_time():
    with pytest.raises(ParseError, match="no hackbench"):
        parse(read("hackbench-l100.txt").split("Time")[0].replace("Running", "Run"), {})
