import json
from pathlib import Path

import pytest

from ingest.parsers import get_parser
from ingest.parsers.base import Measurement, ParseError, ProfileEntry, Sample

FIXTURES = Path(__file__).parents[2] / "fixtures" / "formats" / "generic"
parse_csv = get_parser("csv")
parse_json = get_parser("json")


def read(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_csv_measurements():
    result = parse_csv(read("measurements.csv"), {})
    assert result.measurements == (
        Measurement("throughput", 13183, "msg/s", "higher"),
        Measurement("elapsed_s", 170.73, "s", "lower"),
        Measurement("context_switches", 1.0e7, "count", "none"),
    )


@pytest.mark.parametrize(("trial", "throughput"), [(1, 13183), (2, 13411)])
def test_csv_trial_option_selects_rows(trial, throughput):
    result = parse_csv(read("trials.csv"), {"trial": trial})
    assert [m.value for m in result.measurements if m.metric == "throughput"] == [throughput]
    assert len(result.measurements) == 2


def test_csv_series_layout():
    result = parse_csv(read("series.csv"), {})
    assert result.samples[1] == Sample("vmstat", "cs", 1, 45210)
    assert [s.column for s in result.samples] == ["cs", "cs", "us", "us"]
    assert result.measurements == ()


@pytest.mark.parametrize(
    ("text", "options", "fragment", "line"),
    [
        ("thousands.csv", {}, "decimal comma", 2),
        ("duplicate.csv", {}, "line 3: metric 'throughput' given twice (first at line 2)", 3),
        ("trials.csv", {}, "the file holds trials [1, 2]", None),
        ("trials.csv", {"trial": 3}, "no rows for trial 3", None),
        ("measurements.csv", {"trial": 1}, "the file has no trial column", None),
        ("metric,value,unit,better\nthroughput,13,183,msg/s,higher\n", {}, "row has 5 fields", 2),
        ("metric,value,unit,better\nthroughput,NaN,msg/s,higher\n", {}, "not a number", 2),
        ("metric,value,unit,better\nthroughput,12,msg/s,up\n", {}, "better must be one of", 2),
        ("metric,value,unit,better\nThroughput,12,msg/s,higher\n", {}, "not snake_case", 2),
        ("metric,value,unit,better\nthroughput,12,,higher\n", {}, "has no unit", 2),
        ("metric,value,unit,better,trial\nx,1,s,lower,1.5\n", {}, "trial must be an integer", 2),
        ("name,value\nx,1\n", {}, "header must be metric,value,unit,better", 1),
        ("# nothing\n\n", {}, "empty CSV", None),
        ("metric,value,unit,better\n", {}, "no data rows", 1),
        ("series,column,index,value\nvmstat,cs,-1,5\n", {}, "index must be an integer", 2),
        (
            "series,column,index,value\nvmstat,cs,0,5\nvmstat,cs,0,6\n",
            {},
            "vmstat/cs index 0 given twice (first at line 2)",
            3,
        ),
    ],
)
def test_csv_rejects(text, options, fragment, line):
    if text.endswith(".csv"):
        text = read(text)
    with pytest.raises(ParseError) as err:
        parse_csv(text, options)
    assert fragment in str(err.value)
    assert err.value.line == line


def test_json_document():
    result = parse_json(read("result.json"), {})
    assert result.measurements[0] == Measurement("throughput", 13183, "msg/s", "higher")
    assert result.samples[0] == Sample("vmstat", "cs", 0, 1203, since_boot=True)
    assert result.profile == (
        ProfileEntry("schedule", 4211, load=1.2031),
        ProfileEntry("default_idle", 90210),
    )
    assert result.metadata == {"kernel": "2.5.35", "clients": 16}


def measurement_doc(value) -> str:
    ok = {"metric": "a", "value": 1, "unit": "s", "better": "lower"}
    items = [ok, ok | {"metric": "b"}, ok | {"metric": "c"}, ok | {"metric": "d", "value": value}]
    return json.dumps({"measurements": items})


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        (measurement_doc(float("nan")), "measurements[3].value is NaN"),
        (measurement_doc(float("inf")), "measurements[3].value is Infinity"),
        (measurement_doc(True), "measurements[3].value is a boolean"),
        (measurement_doc("42"), "measurements[3].value is a string ('42')"),
        (measurement_doc(None), "measurements[3].value must be a number"),
        (
            '{"measurements": [{"metric": "a", "value": 1e999, "unit": "s", "better": "lower"}]}',
            "measurements[0].value is not a finite number",
        ),
        (
            '{"measurements": [{"metric": "a", "vaule": 1, "unit": "s", "better": "lower"}]}',
            "measurements[0] lacks value",
        ),
        ('{"measurements": [], "extra": 1}', "top level has unknown key(s) extra"),
        ('{"profile": [{"function": "f", "ticks": false}]}', "profile[0].ticks is a boolean"),
        (
            '{"samples": [{"series": "s", "column": "c", "index": 1.5, "value": 1}]}',
            "samples[0].index must be an integer",
        ),
        ("[1, 2]", "the top level must be an object"),
        ("{}", "no measurements, samples or profile entries"),
        (
            '{"metadata": {"k": true}, "profile": [{"function": "f", "ticks": 1}]}',
            "metadata.k must be a string or a number",
        ),
    ],
)
def test_json_rejects_naming_the_path(text, fragment):
    with pytest.raises(ParseError) as err:
        parse_json(text, {})
    assert fragment in err.value.message


def test_json_syntax_error_names_the_line():
    with pytest.raises(ParseError) as err:
        parse_json('{\n  "measurements": [\n    {"metric": "a",}\n  ]\n}', {})
    assert err.value.line == 3
    assert "invalid JSON" in err.value.message


def test_json_duplicate_metric_and_trials():
    ok = {"metric": "a", "value": 1, "unit": "s", "better": "lower"}
    with pytest.raises(ParseError, match=r"measurements\[1\]: metric 'a' given twice"):
        parse_json(json.dumps({"measurements": [ok, ok]}), {})
    doc = json.dumps({"measurements": [ok | {"trial": 1}, ok | {"trial": 2, "value": 2}]})
    assert parse_json(doc, {"trial": 2}).measurements == (Measurement("a", 2, "s", "lower"),)
