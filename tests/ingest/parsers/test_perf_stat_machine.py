"""ingest/parsers/perf_stat_machine.py: perf stat -x, CSV and -j JSON, values read by hand."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.perf_stat_machine import sniff_machine
from ingest.parsers.text import numbered_lines

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "perf-stat"
parse = get_parser("perf-stat")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("stat-csv.txt", "csv"),
        ("stat-csv-per-cpu.txt", "csv"),
        ("stat-csv-interval.txt", "csv"),
        ("stat-json.txt", "json"),
        ("stat-json-interval.txt", "json"),
        ("stat-true.txt", None),  # the human layout
        ("stat-interval.txt", None),
    ],
)
def test_sniff_machine_tells_the_layout_from_the_first_data_line(name, kind):
    assert sniff_machine(numbered_lines(read(name))) == kind


@pytest.mark.parametrize(
    ("name", "metric", "expected"),
    [
        ("stat-csv.txt", "task_clock_msec", 1.02),
        ("stat-csv.txt", "page_faults", 75),
        ("stat-csv.txt", "page_faults_running_pct", 100.0),
        ("stat-r3-csv.txt", "task_clock_msec_stddev_pct", 2.66),
        ("stat-r3-csv.txt", "context_switches", 1),
        ("stat-json.txt", "task_clock_msec", 1.044956),
        ("stat-json.txt", "page_faults", 76),
        ("stat-json-r3.txt", "task_clock_msec_stddev_pct", 2.57),
        ("stat-json-r3.txt", "page_faults_stddev_pct", 1.19),
    ],
)
def test_csv_and_json(name, metric, expected):
    values = {m.metric: m.value for m in parse(read(name), {}).measurements}
    assert values[metric] == expected


def test_rejects_csv_row_without_event():
    # derived from stat-csv.txt, cut inside the fourth row
    text = read("stat-csv.txt").split("\n")
    text[5] = "0,"
    with pytest.raises(ParseError) as err:
        parse("\n".join(text), {})
    assert err.value.line == 6


def test_rejects_broken_json_line():
    text = read("stat-json.txt").split("\n")
    text[3] = text[3][:40]  # derived: the second JSON line truncated
    with pytest.raises(ParseError, match="not JSON") as err:
        parse("\n".join(text), {})
    assert err.value.line == 4
