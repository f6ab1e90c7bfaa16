"""ingest/parsers/fio_terse.py: fio's terse lines, values read by hand from the fixtures."""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from tests.ingest.parsers.records import values_of as values

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "fio"
parse = get_parser("fio")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "keys", "metric", "expected"),
    [
        # terse v3: clat in us, 99.900000%=577
        ("fio-3.33-randrw-terse.txt", {"job": "randrw", "direction": "read"}, "bw_kib_s", 50143),
        (
            "fio-3.33-randrw-terse.txt",
            {"job": "randrw", "direction": "read"},
            "clat_mean_us",
            66.001296,
        ),
        ("fio-3.33-randrw-terse.txt", {"job": "randrw", "direction": "read"}, "clat_p99_9_us", 577),
        (
            "fio-3.33-randrw-terse.txt",
            {"job": "randrw", "direction": "write"},
            "lat_mean_us",
            5.025283,
        ),
        ("fio-3.33-randrw-terse.txt", {"job": "randrw", "disk": "vda"}, "disk_util_pct", 70.14),
        ("fio-3.33-two-jobs-terse.txt", {"job": "randwrite", "direction": "write"}, "iops", 116111),
    ],
)
def test_values(name, keys, metric, expected):
    result = parse(read(name), {})
    assert values(result, **keys)[metric] == pytest.approx(expected, rel=1e-12)


def test_rejects_truncated_terse_line():
    line = read("fio-3.33-randrw-terse.txt").split(";")
    broken = ";".join(line[:60])  # derived from the real file: cut after the write header
    with pytest.raises(ParseError) as err:
        parse(broken, {})
    assert err.value.line == 1
