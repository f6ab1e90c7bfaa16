"""ingest/parsers/perf_stat_common.py: event names, blocks and counters of every layout."""

import pytest

from ingest.parsers.base import Measurement, ParseError, Sample
from ingest.parsers.perf_stat_common import (
    Block,
    Reading,
    cpu_number,
    event_metric,
    snake,
    store_counter,
)


@pytest.mark.parametrize(
    ("event", "name"),
    [
        ("context-switches", "context_switches"),
        ("cpu_core/cycles:u/", "cpu_core_cycles_u"),
        ("L1-dcache-load-misses", "l1_dcache_load_misses"),
    ],
)
def test_snake(event, name):
    assert snake(event) == name


def test_event_metric_names_the_unit():
    assert event_metric("task-clock", "msec") == ("task_clock_msec", "ms")
    assert event_metric("page-faults", "") == ("page_faults", "count")
    assert event_metric("power/energy-pkg/", "Joules") == ("power_energy_pkg_joules", "Joules")


def test_cpu_number():
    assert [cpu_number(token, 5) for token in ("CPU3", "12", None, "")] == [3, 12, None, None]
    with pytest.raises(ParseError, match="CPU 'CPUx' is not CPU<n>") as err:
        cpu_number("CPUx", 5)
    assert err.value.line == 5


def test_a_reading_starts_a_block_after_a_finished_one():
    reading = Reading()
    first = reading.current(3)
    assert reading.current(4) is first and first.line == 3
    first.finished = True  # an elapsed line was read
    second = reading.current(9)
    assert second is not first and second.line == 9
    assert reading.blocks == [first, second]


def test_interval_index_numbers_each_printed_time_once():
    reading = Reading()
    assert [reading.interval_index(t) for t in ("0.100", "0.200", "0.100")] == [0, 1, 0]


def test_a_counter_with_its_spread_and_running_share():
    reading = Reading()
    block = reading.current(8)
    parts = {"event": "page-faults", "unit": "", "value": "1,234", "spread": "0.88"}
    store_counter(reading, block, {**parts, "running": "50.00"}, 8)
    assert [m for m, _ in block.values.values()] == [
        Measurement("page_faults", 1234.0, "count", "none"),
        Measurement("page_faults_stddev_pct", 0.88, "%", "none"),
        Measurement("page_faults_running_pct", 50.0, "%", "none"),
    ]
    assert {line for _, line in block.values.values()} == {8}


def test_a_counter_not_measured_is_a_warning_only():
    reading = Reading()
    block = reading.current(9)
    parts = {"event": "cycles", "unit": "", "value": "<not supported>", "cpu": "CPU1"}
    store_counter(reading, block, parts, 9)
    assert block.values == {}
    assert reading.warnings == ["line 9: cycles on CPU1 is <not supported>; no measurement"]


def test_an_interval_counter_is_a_sample_per_cpu():
    reading = Reading()
    block = reading.current(10)
    parts = {"event": "task-clock", "unit": "msec", "value": "0.87", "cpu": "CPU0"}
    store_counter(reading, block, {**parts, "time": "0.100232019"}, 10)
    assert block.values == {}
    assert block.series == {
        (0, "task_clock_msec"): [
            Sample("perf-stat", "task_clock_msec", 0, 0.87, timestamp="0.100232019")
        ]
    }


def test_a_bad_count_and_a_repeated_event_are_refused_naming_the_line():
    reading = Reading()
    block = reading.current(8)
    store_counter(reading, block, {"event": "page-faults", "unit": "", "value": "12"}, 8)
    with pytest.raises(ParseError, match="'5,0' has a decimal comma") as err:
        store_counter(reading, block, {"event": "minor-faults", "unit": "", "value": "5,0"}, 11)
    assert err.value.line == 11
    with pytest.raises(ParseError, match=r"printed twice .* \(first at line 8\)") as err:
        store_counter(reading, block, {"event": "page-faults", "unit": "", "value": "13"}, 12)
    assert err.value.line == 12


def test_block_add_refuses_a_metric_twice_for_one_cpu_only():
    block = Block(1, {"target": "true"})
    block.add(0, Measurement("cycles", 10.0, "count", "none"), 2)
    block.add(1, Measurement("cycles", 11.0, "count", "none"), 3)
    with pytest.raises(ParseError, match="first at line 3") as err:
        block.add(1, Measurement("cycles", 12.0, "count", "none"), 4)
    assert err.value.line == 4
