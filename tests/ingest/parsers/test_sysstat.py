"""sysstat: each tool's parser picks the text or JSON reader (ingest/parsers/sysstat.py).

The readers' values are tested in test_sysstat_text.py and test_sysstat_json.py.
"""

from pathlib import Path

import pytest

from ingest.parsers import ParseError, get_parser

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "formats" / "sysstat"


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_sar_and_sadf_are_one_parser():
    assert get_parser("sadf") is get_parser("sar")


@pytest.mark.parametrize(
    ("parser", "name"),
    [
        ("sar", "sar-u.txt"),
        ("sar", "sadf-j-u-q.json"),
        ("mpstat", "mpstat-p-all.txt"),
        ("iostat", "iostat-d.txt"),
    ],
)
def test_each_tool_names_the_source_of_its_series(parser, name):
    result = get_parser(parser)(read(name), {})
    assert {c.source for r in result.records for c in r.columns} == {parser}
    assert {m.metric.split("_")[0] for r in result.records for m in r.measurements} <= {parser}


def test_not_sysstat():
    with pytest.raises(ParseError):
        get_parser("sar")("hello\n", {})
    with pytest.raises(ParseError, match="sadf -j"):
        get_parser("sar")('{"x": 1}', {})
