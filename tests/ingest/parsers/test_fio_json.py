"""ingest/parsers/fio_json.py: fio JSON and JSON+ output, values read by hand from the fixtures."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError, group_records
from tests.ingest.parsers.records import values_of as values

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "fio"
parse = get_parser("fio")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "keys", "metric", "expected"),
    [
        # JSON: bw is KiB/s, clat_ns mean 83205.880149 ns -> us
        ("fio-3.33-randrw-json.json", {"job": "randrw", "direction": "read"}, "bw_kib_s", 38471),
        ("fio-3.33-randrw-json.json", {"job": "randrw", "direction": "read"}, "iops", 9617.764471),
        (
            "fio-3.33-randrw-json.json",
            {"job": "randrw", "direction": "read"},
            "clat_mean_us",
            83.205880149,
        ),
        (
            "fio-3.33-randrw-json.json",
            {"job": "randrw", "direction": "write"},
            "clat_p99_99_us",
            4014.080,
        ),
        (
            "fio-3.33-randrw-json.json",
            {"job": "randrw", "direction": "write"},
            "lat_max_us",
            6896.220,
        ),
        ("fio-3.33-randrw-json.json", {"job": "randrw"}, "cpu_sys_pct", 33.749376),
        ("fio-3.33-randrw-json.json", {"disk": "vda"}, "disk_util_pct", 50.332481),
        (
            "fio-3.33-randrw-jsonplus.json",
            {"job": "randrw", "direction": "read"},
            "clat_p99_9_us",
            3555.328,
        ),
        (
            "fio-3.33-two-jobs-json.json",
            {"job": "seqread", "direction": "read"},
            "bw_kib_s",
            654707,
        ),
        (
            "fio-3.33-client-json.json",
            {"job": "randread", "host": "127.0.0.1", "direction": "read"},
            "bw_kib_s",
            68301,
        ),
        ("fio-analyzer-fio-3.40-readwrite.json", None, "iops", 10084.191581),
    ],
)
def test_values(name, keys, metric, expected):
    result = parse(read(name), {})
    if keys is None:
        keys = dict(next(r.keys for r in result.records if r.keys.get("direction") == "read"))
    assert values(result, **keys)[metric] == pytest.approx(expected, rel=1e-12)


def test_directions_without_io_and_unmeasured_slat_are_left_out():
    result = parse(read("fio-3.33-two-jobs-json.json"), {})
    keys = [dict(r.keys) for r in result.records]
    assert {"job": "seqread", "direction": "write"} not in keys
    assert "slat_mean_us" not in values(result, job="seqread", direction="read")  # N = 0


def test_json_plus_bins_are_a_histogram():
    result = parse(read("fio-3.33-randrw-jsonplus.json"), {})
    record = next(r for r in result.records if r.keys.get("direction") == "read")
    bins = dict(record.histograms[0].bins)
    assert record.histograms[0].name == "clat_ns_bins"
    assert bins[1080] == 1 and bins[1176] == 2


def test_metadata_and_groups():
    result = parse(read("fio-3.33-two-jobs-json.json"), {})
    assert result.metadata["option.bs"] == "4k"
    assert result.metadata["fio_version"] == "fio-3.33"
    assert all(len(g.trials) == 1 for g in group_records(result.records))


def test_rejects_truncated_json():
    text = "\n".join(read("fio-3.33-randrw-json.json").splitlines()[:50])
    with pytest.raises(ParseError, match="malformed"):
        parse(text, {})
