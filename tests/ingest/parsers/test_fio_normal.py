"""ingest/parsers/fio_normal.py: fio's normal text output, values read by hand from the fixtures."""

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
        # normal: BW=42.6MiB/s -> 43622.4 KiB/s; IOPS=10.9k; clat (nsec) percentiles -> us
        ("fio-3.33-randrw-normal.txt", {"job": "randrw", "direction": "read"}, "bw_kib_s", 43622.4),
        ("fio-3.33-randrw-normal.txt", {"job": "randrw", "direction": "read"}, "iops", 10900),
        (
            "fio-3.33-randrw-normal.txt",
            {"job": "randrw", "direction": "read"},
            "clat_mean_us",
            77.79,
        ),
        (
            "fio-3.33-randrw-normal.txt",
            {"job": "randrw", "direction": "write"},
            "clat_p99_99_us",
            70.144,
        ),
        (
            "fio-3.33-randrw-normal.txt",
            {"job": "randrw", "direction": "write"},
            "bw_mean_kib_s",
            42945.33,
        ),
        ("fio-3.33-randrw-normal.txt", {"job": "randrw"}, "ctx_switches", 21904),
        # (nsec) line with a num2str suffix: max=5317.1k ns = 5317.1 us
        (
            "fio-3.33-two-jobs-normal.txt",
            {"job": "seqread", "direction": "read"},
            "clat_max_us",
            5317.1,
        ),
        (
            "fio-3.33-two-jobs-normal.txt",
            {"job": "seqread", "direction": "read"},
            "clat_min_us",
            0.53,
        ),
        (
            "fio-3.33-two-jobs-normal.txt",
            {"job": "randwrite", "direction": "write"},
            "bw_kib_s",
            548 * 1024,
        ),
        ("fio-3.33-client-normal.txt", {"job": "randread", "direction": "read"}, "iops", 14300),
    ],
)
def test_values(name, keys, metric, expected):
    result = parse(read(name), {})
    assert values(result, **keys)[metric] == pytest.approx(expected, rel=1e-12)


def test_rejects_corrupt_normal_value():
    text = read("fio-3.33-randrw-normal.txt").replace("avg=77.79", "avg=77,79")
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert err.value.line == 7 and "decimal comma" in err.value.message


def test_rejects_fio2_normal_output():
    with pytest.raises(ParseError, match="2.x normal output") as err:
        parse("job: (groupid=0, jobs=1): err= 0: pid=1\n  read : io=1024.0MB, bw=20480KB/s\n", {})
    assert err.value.line == 2
