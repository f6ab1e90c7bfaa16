"""perf stat: the human layout and the records of every layout (ingest/parsers/perf_stat.py).

Values are read by hand from the fixtures (tests/fixtures/formats/perf-stat); the CSV and JSON
readers' own tests are in test_perf_stat_machine.py.
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "perf-stat"
parse = get_parser("perf-stat")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def by_keys(result) -> dict[tuple, dict[str, float]]:
    return {
        tuple(sorted(r.keys.items())): {m.metric: m.value for m in r.measurements}
        for r in result.records
    }


def test_default_output_with_not_supported_counters():
    result = parse(read("stat-true.txt"), {})
    (record,) = result.records
    assert record.keys == {"target": "true"}
    values = {m.metric: m for m in record.measurements}
    assert values["task_clock_msec"].value == 0.72
    assert values["task_clock_msec"].unit == "ms"
    assert values["page_faults"].value == 50
    assert values["elapsed_s"].value == 0.001528111
    assert values["elapsed_s"].better == "lower"
    assert values["user_s"].value == 0.001687
    assert values["sys_s"].value == 0.0
    assert "cycles" not in values
    assert "line 10: cycles is <not supported>; no measurement" in result.warnings


def test_repeats_keep_perf_mean_and_spread():
    result = parse(read("stat-r3-sleep.txt"), {})
    values = {m.metric: m.value for m in result.measurements}
    assert values["task_clock_msec"] == 1.06
    assert values["task_clock_msec_stddev_pct"] == 0.48
    assert values["page_faults_stddev_pct"] == 0.88
    assert "context_switches_stddev_pct" not in values  # perf printed no spread there
    assert values["elapsed_s"] == 0.0119313
    assert values["elapsed_s_stddev"] == 0.0000634
    assert values["elapsed_s_stddev_pct"] == 0.53
    assert result.metadata["runs"] == 3


def test_mail_blocks_without_header_are_listings():
    result = parse(read("lkml-run-to-parity-two-blocks.txt"), {})
    assert by_keys(result) == {
        (("listing", 1),): {
            "context_switches": 3723554,
            "context_switches_stddev_pct": 0.56,
            "elapsed_s": 9.5136,
            "elapsed_s_stddev": 0.0394,
            "elapsed_s_stddev_pct": 0.41,
        },
        (("listing", 2),): {
            "context_switches": 2556535,
            "context_switches_stddev_pct": 0.51,
            "elapsed_s": 9.2427,
            "elapsed_s_stddev": 0.0302,
            "elapsed_s_stddev_pct": 0.33,
        },
    }


@pytest.mark.parametrize(
    "name", ["stat-per-cpu.txt", "stat-csv-per-cpu.txt", "stat-json-per-cpu.txt"]
)
def test_per_cpu_gives_a_record_per_cpu(name):
    result = parse(read(name), {})
    cpus = {
        r.keys.get("cpu")
        for r in result.records
        if "context_switches" in {m.metric for m in r.measurements}
    }
    assert cpus == {0, 1}


def test_per_cpu_values():
    found = by_keys(parse(read("stat-per-cpu.txt"), {}))
    target = ("target", "system wide")
    assert found[(("cpu", 0), target)]["context_switches"] == 32
    assert found[(("cpu", 1), target)]["cpu_clock_msec"] == 102.26
    assert found[(target,)] == {"elapsed_s": 0.102240156}
    json_found = by_keys(parse(read("stat-json-per-cpu.txt"), {}))
    assert json_found[(("cpu", 1),)]["page_faults"] == 83


@pytest.mark.parametrize(
    ("name", "stamps", "values"),
    [
        ("stat-interval.txt", ["0.100232019", "0.351829396"], [0.87, 0.09]),
        ("stat-csv-interval.txt", ["0.100142646", "0.254455763"], [0.85, 0.09]),
        ("stat-json-interval.txt", ["0.100172360", "0.251684006"], [0.831431, 0.059558]),
    ],
)
def test_interval_mode_is_a_series_with_gaps_for_not_counted(name, stamps, values):
    result = parse(read(name), {})
    (record,) = result.records
    task = [s for s in record.samples if s.column == "task_clock_msec"]
    assert [s.timestamp for s in task] == stamps
    assert [s.value for s in task] == values
    assert [s.index for s in task] == [0, 2 if name != "stat-interval.txt" else 3]
    assert any("<not counted>" in w for w in result.warnings)


def test_interval_per_cpu():
    result = parse(read("stat-interval-per-cpu.txt"), {})
    cpu1 = next(r for r in result.records if r.keys.get("cpu") == 1)
    switches = [s.value for s in cpu1.samples if s.column == "context_switches"]
    assert switches[0] == 132


def test_every_repeat_group_is_distinct():
    for name in ("stat-per-cpu.txt", "lkml-run-to-parity-two-blocks.txt"):
        groups = group_records(parse(read(name), {}).records)
        assert all(len(g.trials) == 1 for g in groups)


def test_rejects_a_corrupted_count():
    # derived from the real stat-true.txt: "50" page faults corrupted to "5,0"
    text = read("stat-true.txt").replace(
        "                50      page-faults", "               5,0      page-faults"
    )
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 9


def test_rejects_an_event_printed_twice():
    # derived from stat-true.txt: the page-faults line repeated, as in `-e ref-cycles,ref-cycles`
    lines = read("stat-true.txt").split("\n")
    text = "\n".join(lines[:9] + [lines[8]] + lines[9:])
    with pytest.raises(ParseError, match="page_faults printed twice") as err:
        parse(text, {})
    assert err.value.line == 10


def test_rejects_nothing_measured():
    with pytest.raises(ParseError, match="no perf stat counters"):
        parse("# started on Tue Nov 24 15:34:12 2026\n", {})
