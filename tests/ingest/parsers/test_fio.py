"""fio: the layout is recognised from the file and dispatched (ingest/parsers/fio.py).

Each layout's values are tested in test_fio_json.py, test_fio_terse.py and test_fio_normal.py.
"""

from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.fio import detect

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "fio"
parse = get_parser("fio")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("fio-3.33-randrw-json.json", "json"),
        ("fio-3.33-randrw-jsonplus.json", "json"),
        ("fio-3.33-client-json.json", "json"),
        ("fio-3.33-randrw-terse.txt", "terse"),
        ("fio-3.33-two-jobs-terse.txt", "terse"),
        ("fio-3.33-randrw-normal.txt", "normal"),
        ("fio-3.33-client-normal.txt", "normal"),
    ],
)
def test_each_layout_is_recognised_and_read_by_its_reader(name, layout):
    text = read(name)
    assert detect(text) == layout
    assert parse(text, {}).metadata["format"] == layout


def test_units_are_one_per_metric():
    for name in (
        "fio-3.33-randrw-json.json",
        "fio-3.33-randrw-terse.txt",
        "fio-3.33-randrw-normal.txt",
    ):
        units = {}
        for record in parse(read(name), {}).records:
            for m in record.measurements:
                assert units.setdefault(m.metric, m.unit) == m.unit
        assert units["bw_kib_s"] == "KiB/s" and units["clat_mean_us"] == "us"


def test_rejects_junk():
    with pytest.raises(ParseError, match="not fio output"):
        parse("hello\n", {})
