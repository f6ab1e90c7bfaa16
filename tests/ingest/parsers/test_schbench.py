"""schbench: values read by hand from tests/fixtures/formats/schbench."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "schbench"
parse = get_parser("schbench")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def values(record) -> dict[str, float]:
    return {m.metric: m.value for m in record.measurements}


def test_current_layout_two_reports():
    result = parse(read("lkml-delay-dequeue-two-runs.txt"), {})
    first, second = result.records
    assert first.keys == {"runtime_s": 100, "listing": 1}
    assert second.keys == {"runtime_s": 100, "listing": 2}
    one = values(first)
    assert one["wakeup_lat_p99_us"] == 25
    assert one["wakeup_lat_p99_samples"] == 123032
    assert one["wakeup_lat_p99_9_us"] == 673
    assert one["wakeup_lat_total_samples"] == 1658446
    assert one["wakeup_lat_max_us"] == 8337
    assert one["request_lat_p50_us"] == 14992
    assert one["request_lat_min_us"] == 3529
    assert one["rps_p50"] == 16608
    assert one["rps_p20_samples"] == 37
    assert one["average_rps"] == 16623.81
    two = values(second)
    assert two["wakeup_lat_p99_us"] == 31
    assert two["rps_p90"] == 16736
    assert two["rps_p90_samples"] == 0
    assert two["average_rps"] == 16718.59
    assert len(group_records(result.records)) == 2


def test_units_and_direction():
    record = parse(read("lkml-delay-dequeue-two-runs.txt"), {}).records[0]
    found = {m.metric: (m.unit, m.better) for m in record.measurements}
    assert found["wakeup_lat_p99_us"] == ("us", "lower")
    assert found["rps_p50"] == ("requests/s", "higher")
    assert found["average_rps"] == ("requests/s", "higher")
    assert found["wakeup_lat_p99_samples"] == ("count", "none")


def test_old_and_new_layouts_in_a_quoted_mail():
    result = parse(read("lkml-sis-cache-old-and-new-quoted.txt"), {})
    assert len(result.records) == 6
    old = values(result.records[0])
    assert old["lat_p99_us"] == 2396
    assert old["lat_p99_5_us"] == 6664
    assert old["lat_p75_us"] == 29
    assert old["lat_min_us"] == 0
    assert values(result.records[3])["lat_p95_us"] == 38
    new = result.records[4]
    assert new.keys == {"runtime_s": 30, "listing": 5}
    assert values(new)["request_lat_p99_9_us"] == 18720
    assert values(result.records[5])["average_rps"] == 6981.07


def test_rejects_a_corrupted_percentile():
    # derived from the Chen Yu mail: a latency corrupted to a decimal comma
    text = read("lkml-delay-dequeue-two-runs.txt").replace("99.0th: 25 ", "99.0th: 2,5")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 11


def test_rejects_a_percentile_printed_twice():
    lines = read("lkml-delay-dequeue-two-runs.txt").split("\n")
    text = "\n".join(lines[:10] + [lines[9]] + lines[10:])  # derived: a line duplicated
    with pytest.raises(ParseError, match="second wakeup_lat_p90_us") as err:
        parse(text, {})
    assert err.value.line == 11


def test_rejects_no_block():
    with pytest.raises(ParseError, match="no schbench"):
        parse(read("lkml-delay-dequeue-two-runs.txt").split("Wakeup")[0], {})
