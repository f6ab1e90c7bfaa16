from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import ParseError
from ingest.parsers.spec_summary import metric_for

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "spec"
parse = get_parser("spec-summary")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def triples(result) -> list[tuple[str, float, str, str]]:
    return [(m.metric, m.value, m.unit, m.better) for m in result.measurements]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        (
            "specjappserver2002-summary.txt",
            [
                ("tops", 68.72, "TOPS", "higher"),
                ("injection_rate", 40, "IR", "none"),
                ("cpu_pct", 91.5, "%", "none"),
            ],
        ),
        (
            "specweb99-summary.txt",
            [
                ("conforming_connections", 2150, "connections", "higher"),
                ("pages_per_s", 6354.1, "pages/s", "higher"),
                ("cpu_pct", 97.9, "%", "none"),
            ],
        ),
        ("specjbb2000-summary.txt", [("bops", 38212, "ops/s", "higher")]),
        (
            "virtualclient-specjbb2015-C-20220301-00002.raw.excerpt.txt",
            [("max_jops", 4103, "jOPS", "higher"), ("critical_jops", 1628, "jOPS", "higher")],
        ),
        (
            "spec-summary.csv",
            [("tops", 68.72, "TOPS", "higher"), ("injection_rate", 40, "IR", "none")],
        ),
    ],
)
def test_metrics(name, expected):
    assert triples(parse(read(name), {})) == expected


def test_other_keys_are_metadata():
    result = parse(read("specjappserver2002-summary.txt"), {})
    assert result.metadata == {
        "Benchmark": "SPECjAppServer2002",
        "Kernel": "2.5.59",
        "$/TOPS": "n/a",
        "tops_category": "MultipleNode",
        "Result status": "not a compliant run",
    }


def test_properties_metadata_keeps_the_full_key():
    result = parse(read("virtualclient-specjbb2015-C-20220301-00002.raw.excerpt.txt"), {})
    assert result.metadata["jbb2015.result.SLA-10000-jOPS"] == "868"
    assert result.metadata["jbb2015.benchmark.version"] == "1.03"


@pytest.mark.parametrize(
    ("key", "metric"),
    [
        ("Injection_Rate", "injection_rate"),
        ("injection.rate", "injection_rate"),
        ("CPU %", "cpu_pct"),
        ("Pages/sec", "pages_per_s"),
        ("jbb2015.result.metric.max-jOPS", "max_jops"),
        ("$/TOPS", None),
        ("jbb2015.result.SLA-10000-jOPS", None),
    ],
)
def test_key_spellings(key, metric):
    assert metric_for(key) == metric


def test_thousands_only_on_request():
    text = "SPECjbb2000 = 38,212 ops/s\n"
    with pytest.raises(ParseError, match="decimal comma"):
        parse(text, {})
    assert triples(parse(text, {"thousands": True})) == [("bops", 38212, "ops/s", "higher")]


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("spec-duplicate.txt", "second value for tops (first at line 1)", 2),
        ("spec-decimal-comma.txt", "decimal comma", 2),
        ("# notes\n\nKernel: 2.5.59\n", "no SPEC metric found", 3),
        ("TOPS = NaN\n", "not a number", 1),
    ],
)
def test_rejects(text, fragment, line):
    if text.endswith(".txt"):
        text = read(text)
    with pytest.raises(ParseError) as err:
        parse(text, {})
    assert fragment in err.value.message
    assert err.value.line == line
