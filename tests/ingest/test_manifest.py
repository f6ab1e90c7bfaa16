import json
import math
import re
from pathlib import Path

import pytest

from ingest.manifest import (
    MAX_RUNS,
    FileSpec,
    HardwareSpec,
    ManifestError,
    MetricSpec,
    parse_manifest,
)
from ingest.manifest import fields as mf
from ingest.parsers import base, parser_names
from perfdb.kernels import KernelVersionError, parse_kernel, patch_tree_split
from tests.bundles import manifest_toml, volano_run

DOC = Path(__file__).resolve().parents[2] / "docs" / "bundle-format.md"
PARSER = "test-manifest-parser"  # registered only for these tests, see the fixture
FILES = {"volano/trial1.log", "volano/trial2.log", "prestat.txt"}


@pytest.fixture(autouse=True)
def throwaway_parser(monkeypatch):
    """A parser name that surely exists, whatever parser modules are in the tree today."""
    monkeypatch.setitem(base._REGISTRY, PARSER, lambda text, options: base.ParseResult())


def to_toml(data: dict) -> str:
    """Just enough TOML for these tests: top-level keys, every table written inline."""

    def value(item):
        if isinstance(item, bool):
            return "true" if item else "false"
        if isinstance(item, float) and not math.isfinite(item):
            return "nan" if math.isnan(item) else ("inf" if item > 0 else "-inf")
        if isinstance(item, int | float):
            return repr(item)
        if isinstance(item, str):
            return json.dumps(item)
        if isinstance(item, list):
            return "[" + ", ".join(value(x) for x in item) + "]"
        return "{" + ", ".join(f"{json.dumps(k)} = {value(v)}" for k, v in item.items()) + "}"

    return "\n".join(f"{json.dumps(key)} = {value(item)}" for key, item in data.items()) + "\n"


def good_run(**changes) -> dict:
    run = {
        "workload": "VolanoMark",
        "workload_version": "2.5.25",
        "kernel": "2.5.25",
        "patches": ["pri_preempt"],
        "hardware": "C",
        "mode": "UP",
        "label": "Base1",
        "params": {"rooms": 10, "transport": "loopback", "ratio": 0.5, "preempt": True},
        "discard_first_trial": True,
        "files": [
            {"path": "volano/trial1.log", "parser": PARSER, "trial": 1},
            {"path": "./volano/trial2.log", "parser": PARSER, "trial": 2},
        ],
        "metrics": {"cpu_usage_pct": [95, 96.5]},
        "notes": "Table 2 of 001",
    }
    run.update(changes)
    return run


def good_manifest() -> dict:
    return {
        "format": 1,
        "hardware": {"C": {"cpus": 8, "cpu": "Pentium III", "mhz": 900, "tiers": ["AS"]}},
        "metric": {"cpu_usage_pct": {"unit": "%", "better": "none"}},
        "run": [good_run()],
    }


def parse(data: dict, fmt: str, files=FILES):
    text = json.dumps(data) if fmt == "json" else to_toml(data)
    return parse_manifest(text, filename=f"manifest.{fmt}", available_files=files)


FORMATS = pytest.mark.parametrize("fmt", ["toml", "json"])


# --- good manifests ---------------------------------------------------------------------------


@FORMATS
def test_good_manifest_is_read_into_specs(fmt):
    manifest = parse(good_manifest(), fmt)
    assert manifest.format == 1
    assert manifest.hardware == {
        "C": HardwareSpec("C", 8, "Pentium III", 900, None, None, ("AS",), "")
    }
    assert manifest.metrics == {"cpu_usage_pct": MetricSpec("cpu_usage_pct", "%", "none", "")}
    (run,) = manifest.runs
    assert (run.index, run.workload, run.kernel, run.patches) == (
        1,
        "VolanoMark",
        "2.5.25",
        ("pri_preempt",),
    )
    assert (run.hardware, run.mode, run.label, run.discard_first_trial) == (
        "C",
        "UP",
        "Base1",
        True,
    )
    assert run.params == {"rooms": 10, "transport": "loopback", "ratio": 0.5, "preempt": True}
    assert run.files == (
        FileSpec("volano/trial1.log", PARSER, 1, {}),
        FileSpec("volano/trial2.log", PARSER, 2, {}),  # "./" is dropped
    )
    assert run.metrics == {"cpu_usage_pct": (95.0, 96.5)}
    assert run.undeclared_metrics == ()


@FORMATS
@pytest.mark.parametrize(
    ("changes", "attribute", "expected"),
    [
        ({"mode": "smp"}, "mode", "SMP"),
        ({"mode": " Up "}, "mode", "UP"),
        ({"kernel": "2.4.20-stock"}, "kernel", "2.4.20"),
        ({"kernel": "2.3.99-pre3-elsc"}, "kernel", "2.3.99-pre3-elsc"),
        ({"patches": []}, "patches", ()),
        ({"files": []}, "files", ()),  # metrics alone are enough
        ({"metrics": {}}, "metrics", {}),  # files alone are enough
        ({"metrics": {"tops": 52.5}}, "metrics", {"tops": (52.5,)}),
        ({"metrics": {"tops": 7}}, "undeclared_metrics", ("tops",)),
        (
            {"files": [{"path": "prestat.txt", "parser": PARSER, "options": {"cpus": 4}}]},
            "files",
            (FileSpec("prestat.txt", PARSER, None, {"cpus": 4}),),
        ),
    ],
)
def test_good_variations(fmt, changes, attribute, expected):
    data = good_manifest()
    data["run"] = [good_run(**changes)]
    assert getattr(parse(data, fmt).runs[0], attribute) == expected


@FORMATS
def test_optional_fields_take_their_defaults(fmt):
    data = {
        "format": 1,
        "run": [{"workload": "LMBench", "kernel": "2.4.17", "hardware": "A", "mode": "SMP"}],
    }
    data["run"][0]["metrics"] = {"lat_ctx": 4.1}
    manifest = parse(data, fmt)
    run = manifest.runs[0]
    assert (manifest.hardware, manifest.metrics) == ({}, {})
    assert (run.workload_version, run.patches, run.label, run.params) == ("", (), "", {})
    assert (run.discard_first_trial, run.files, run.notes) == (False, (), "")
    assert run.undeclared_metrics == ("lat_ctx",)


@FORMATS
def test_same_trial_may_have_files_from_different_parsers_or_options(fmt, monkeypatch):
    monkeypatch.setitem(base._REGISTRY, "test-other-parser", lambda t, o: base.ParseResult())
    data = good_manifest()
    data["run"] = [
        good_run(
            files=[
                {"path": "volano/trial1.log", "parser": PARSER, "trial": 1},
                {"path": "prestat.txt", "parser": "test-other-parser", "trial": 1},
                {
                    "path": "volano/trial2.log",
                    "parser": "test-other-parser",
                    "trial": 1,
                    "options": {"tier": "DB"},
                },
            ]
        )
    ]
    assert len(parse(data, fmt).runs[0].files) == 3


def test_runs_are_numbered_and_labels_may_be_empty():
    data = good_manifest()
    data["run"] = [good_run(label=""), good_run(label="Base2"), good_run(label="")]
    data["run"][0].pop("label")
    assert [(run.index, run.label) for run in parse(data, "json").runs] == [
        (1, ""),
        (2, "Base2"),
        (3, ""),
    ]


# --- bad manifests ----------------------------------------------------------------------------


def with_run(**changes):
    def change(data):
        data["run"] = [good_run(**changes)]

    return change


def without_run_field(name):
    def change(data):
        del data["run"][0][name]

    return change


def set_top(key, value):
    def change(data):
        data[key] = value

    return change


def del_top(key):
    def change(data):
        del data[key]

    return change


RUN1 = "manifest.{fmt}: run 1 (VolanoMark 2.5.25): "

BAD = [
    (del_top("format"), "manifest.{fmt}: field 'format' is missing; supported: 1, 2"),
    (set_top("format", 3), "manifest.{fmt}: manifest format 3 is not supported; supported: 1, 2"),
    (set_top("format", "1"), 'manifest format "1" is not supported; supported: 1, 2'),
    (set_top("format", 1.0), "manifest format 1.0 is not supported; supported: 1, 2"),
    (set_top("runs", []), "unknown top-level key 'runs' (did you mean 'run'?)"),
    (del_top("run"), "field 'run': expected at least one [[run]] table, got nothing"),
    (set_top("run", []), "field 'run': expected at least one [[run]] table, got []"),
    (
        set_top("hardware", {"C": {"cpus": 0}}),
        "hardware 'C': field 'cpus': expected an integer ≥ 1, got 0",
    ),
    (
        set_top("hardware", {"C": {"mhz": 8.5}}),
        "hardware 'C': field 'mhz': expected an integer ≥ 1, got 8.5",
    ),
    (set_top("hardware", {"C": {"cpus": True}}), "field 'cpus': expected an integer ≥ 1, got true"),
    (set_top("hardware", {"C": {"cache": 512}}), "hardware 'C': unknown field 'cache'"),
    (set_top("hardware", {"C": {"tiers": ["AS", "AS"]}}), "field 'tiers': 'AS' is listed twice"),
    (set_top("hardware", {"C": "8-way"}), "hardware 'C': expected a table, got \"8-way\""),
    (set_top("metric", {"m": {"better": "higher"}}), "metric 'm': field 'unit' is missing"),
    (
        set_top("metric", {"m": {"unit": "s", "better": "faster"}}),
        'metric \'m\': field \'better\': expected "higher", "lower" or "none", got "faster"',
    ),
    (with_run(mode="smp2"), RUN1 + 'field \'mode\': expected "UP" or "SMP", got "smp2"'),
    (with_run(mode=2), RUN1 + 'field \'mode\': expected "UP" or "SMP", got 2'),
    (without_run_field("mode"), RUN1 + "field 'mode' is missing"),
    (without_run_field("hardware"), RUN1 + "field 'hardware' is missing"),
    (without_run_field("workload"), "run 1 (2.5.25): field 'workload' is missing"),
    (with_run(workload="  "), "run 1 (2.5.25): field 'workload': must not be empty"),
    (
        with_run(kernel="linux"),
        "run 1 (VolanoMark): field 'kernel': 'linux' is not a kernel version",
    ),
    (with_run(kernel=2.4), "field 'kernel': kernel version must be a string, got float"),
    (with_run(kernal="2.5.25"), RUN1 + "unknown field 'kernal' (did you mean 'kernel'?)"),
    (with_run(patches="pri_preempt"), RUN1 + "field 'patches': expected a list of strings"),
    (with_run(patches=["a", ""]), RUN1 + "field 'patches': expected non-empty strings, got \"\""),
    (with_run(patches=["a", "b", "a"]), RUN1 + "field 'patches': 'a' is listed twice"),
    (with_run(label=5), RUN1 + "field 'label': expected a string, got 5"),
    (with_run(notes=["a"]), RUN1 + "field 'notes': expected a string, got [\"a\"]"),
    (with_run(discard_first_trial="yes"), "field 'discard_first_trial': expected true or false"),
    (
        with_run(params={"rooms": [10, 20]}),
        RUN1 + "field 'params.rooms': expected a string, integer",
    ),
    (with_run(params={"x": {"y": 1}}), RUN1 + "field 'params.x': expected a string, integer"),
    (with_run(params={"x": float("nan")}), RUN1 + "field 'params.x': expected a finite number"),
    (with_run(params=3), RUN1 + "field 'params': expected a table, got 3"),
    (with_run(files=[], metrics={}), RUN1 + "a run needs at least one file or one metric"),
    (with_run(files={"path": "x"}), RUN1 + "field 'files': expected a list of tables"),
    (
        with_run(files=[{"path": "volano/trial3.log", "parser": PARSER}]),
        RUN1 + "file 'volano/trial3.log' is not in the bundle",
    ),
    (
        with_run(files=[{"path": "../prestat.txt", "parser": PARSER}]),
        RUN1 + "file '../prestat.txt': field 'path': expected a relative path inside the bundle",
    ),
    (
        with_run(files=[{"path": "/prestat.txt", "parser": PARSER}]),
        "field 'path': expected a relative path inside the bundle, got \"/prestat.txt\"",
    ),
    (with_run(files=[{"parser": PARSER}]), RUN1 + "file 'files[1]': field 'path' is missing"),
    (
        with_run(files=[{"path": "prestat.txt", "parser": "no-such-parser"}]),
        RUN1
        + "file 'prestat.txt': field 'parser': unknown parser 'no-such-parser'; known parsers:",
    ),
    (with_run(files=[{"path": "prestat.txt"}]), "file 'prestat.txt': field 'parser' is missing"),
    (
        with_run(files=[{"path": "prestat.txt", "parser": PARSER, "trial": 0}]),
        RUN1 + "file 'prestat.txt': field 'trial': expected an integer ≥ 1, got 0",
    ),
    (
        with_run(files=[{"path": "prestat.txt", "parser": PARSER, "trail": 1}]),
        RUN1 + "file 'prestat.txt': unknown field 'trail' (did you mean 'trial'?)",
    ),
    (
        with_run(files=[{"path": "prestat.txt", "parser": PARSER, "options": "fast"}]),
        "file 'prestat.txt': field 'options': expected a table, got \"fast\"",
    ),
    (
        with_run(
            files=[
                {"path": "prestat.txt", "parser": PARSER},
                {"path": "./prestat.txt", "parser": PARSER, "trial": 2},
            ]
        ),
        RUN1 + "file 'prestat.txt' is listed twice",
    ),
    (
        with_run(metrics={"tops": "52"}),
        RUN1 + "field 'metrics.tops': expected a number, got \"52\"",
    ),
    (with_run(metrics={"tops": True}), RUN1 + "field 'metrics.tops': expected a number, got true"),
    (
        with_run(metrics={"tops": []}),
        RUN1 + "field 'metrics.tops': expected a number or a non-empty",
    ),
    (with_run(metrics={"tops": [1, "2"]}), "field 'metrics.tops': expected a number, got \"2\""),
    (with_run(metrics={"tops": float("inf")}), "field 'metrics.tops': expected a finite number"),
    (with_run(metrics={"tops": [1.0, float("nan")]}), "field 'metrics.tops': expected a finite"),
    (with_run(metrics=[1, 2]), RUN1 + "field 'metrics': expected a table, got [1, 2]"),
]


@FORMATS
@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_manifest_names_the_problem(fmt, change, message):
    data = good_manifest()
    change(data)
    if fmt == "json" and re.search(r"\bNaN\b|Infinity", json.dumps(data)):
        pytest.skip("JSON has no NaN/Infinity; those constants are refused when parsing")
    with pytest.raises(ManifestError) as caught:
        parse(data, fmt)
    assert message.format(fmt=fmt) in str(caught.value)
    assert len(caught.value.problems) == 1, str(caught.value)


def test_duplicate_labels_name_both_runs():
    data = good_manifest()
    data["run"] = [good_run(), good_run(kernel="2.5.26"), good_run(kernel="2.5.27")]
    with pytest.raises(ManifestError) as caught:
        parse(data, "toml")
    assert caught.value.problems == (
        "manifest.toml: run 2 (VolanoMark 2.5.26): field 'label': 'Base1' is already used by run 1",
        "manifest.toml: run 3 (VolanoMark 2.5.27): field 'label': 'Base1' is already used by run 1",
    )


def test_all_problems_are_listed_one_per_line():
    data = good_manifest()
    data["spare"] = 1
    data["run"] = [
        good_run(mode="smp2"),
        good_run(
            label="B2", kernel="linux", files=[{"path": "volano/trial3.log", "parser": PARSER}]
        ),
    ]
    with pytest.raises(ManifestError) as caught:
        parse(data, "json")
    with pytest.raises(KernelVersionError) as kernel_error:
        parse_kernel("linux")
    assert str(caught.value).splitlines() == [
        "manifest.json: unknown top-level key 'spare'; known: format, hardware, metric, kernel, "
        "run, claim",
        "manifest.json: run 1 (VolanoMark 2.5.25): field 'mode': "
        'expected "UP" or "SMP", got "smp2"',
        f"manifest.json: run 2 (VolanoMark): field 'kernel': {kernel_error.value}",
        "manifest.json: run 2 (VolanoMark): file 'volano/trial3.log' is not in the bundle",
    ]


def test_a_run_that_is_not_a_table_is_reported():
    data = good_manifest()
    data["run"] = [good_run(), "VolanoMark"]
    with pytest.raises(ManifestError, match=r'run 2: expected a table, got "VolanoMark"'):
        parse(data, "json")


def test_too_many_runs():
    data = good_manifest()
    data["run"] = [good_run(label="")] * (MAX_RUNS + 1)
    with pytest.raises(
        ManifestError, match=f"field 'run': {MAX_RUNS + 1} runs; at most {MAX_RUNS}"
    ):
        parse(data, "json")


def test_unsupported_format_stops_before_the_other_fields():
    data = good_manifest()
    data["format"] = 3
    data["run"] = [good_run(mode="smp2")]
    with pytest.raises(ManifestError) as caught:
        parse(data, "toml")
    assert caught.value.problems == (
        "manifest.toml: manifest format 3 is not supported; supported: 1, 2",
    )


@pytest.mark.parametrize(
    ("filename", "text", "message"),
    [
        ("manifest.json", '{"format": 1, "run": [{"metrics": {"x": NaN}}]}', "NaN is not a number"),
        ("manifest.json", '{"format": 1, "x": -Infinity}', "-Infinity is not a number"),
        ("manifest.json", '{"format": 1, "format": 2}', "key 'format' appears twice"),
        ("manifest.json", '{"format": 1,', "manifest.json: not valid JSON"),
        ("manifest.json", "[1, 2]", "manifest.json: expected a table at the top, got [1, 2]"),
        ("manifest.toml", "format = 1\nformat = 2\n", "manifest.toml: not valid TOML"),
        ("manifest.toml", "format = \n", "manifest.toml: not valid TOML"),
        ("manifest.yaml", "format: 1\n", "a manifest must be manifest.toml or manifest.json"),
    ],
)
def test_unreadable_manifest_text(filename, text, message):
    with pytest.raises(ManifestError, match=re.escape(message)):
        parse_manifest(text, filename=filename, available_files=FILES)


def test_toml_dates_are_not_strings():
    text = to_toml(good_manifest()) + "\n"
    text = text.replace('"notes" = "Table 2 of 001"', '"notes" = 2002-10-01')
    assert "2002-10-01" in text
    with pytest.raises(ManifestError, match=r"field 'notes': expected a string, got "):
        parse_manifest(text, filename="manifest.toml", available_files=FILES)


# --- the spec's own example -------------------------------------------------------------------


def test_complete_example_in_the_spec_parses(monkeypatch):
    match = re.search(r"## Complete example\s+```toml\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert match, "docs/bundle-format.md lost its complete example"
    for name in ("volanomark", "wakeup-counters"):
        if name not in parser_names():
            monkeypatch.setitem(base._REGISTRY, name, lambda text, options: base.ParseResult())
    manifest = parse_manifest(
        match.group(1),
        filename="manifest.toml",
        available_files={"volano/trial1.log", "volano/trial2.log", "prestat.txt"},
    )
    assert set(manifest.hardware) == {"C"}
    assert manifest.hardware["C"].tiers == ("AS",)
    assert manifest.metrics["tops_rel_base1"].better == "higher"
    (run,) = manifest.runs
    assert (run.kernel, run.mode, run.label, run.patches) == (
        "2.5.25",
        "UP",
        "Base1",
        ("pri_preempt",),
    )
    assert [(f.path, f.parser, f.trial) for f in run.files] == [
        ("volano/trial1.log", "volanomark", 1),
        ("volano/trial2.log", "volanomark", 2),
        ("prestat.txt", "wakeup-counters", None),
    ]
    assert run.params["client_nice"] == -19
    assert run.metrics == {"cpu_usage_pct": (95.0,)}
    assert run.undeclared_metrics == ()  # the example declares it under [metric.cpu_usage_pct]


# --- kernel or patch: one canonical form -----------------------------------------------------


@pytest.mark.parametrize(
    "written, base, patches",
    [
        ("2.6.0-mm1", "2.6.0", ("mm1",)),
        ("2.4.6-ac2", "2.4.6", ("ac2",)),
        ("2.6.0-test9-mm2", "2.6.0-test9", ("mm2",)),
        ("2.6.23-rc2-mm2-mem-v6", "2.6.23-rc2", ("mm2", "mem-v6")),
        ("6.6.15-rt22", "6.6.15", ("rt22",)),
    ],
)
def test_a_patch_tree_in_the_kernel_is_refused_with_what_to_write(written, base, patches):
    assert patch_tree_split(written) == (base, patches)
    with pytest.raises(mf.Invalid) as caught:
        mf.kernel(written)
    listed = ", ".join(f'"{p}"' for p in patches)
    assert f'write kernel = "{base}", patches = [{listed}]' in str(caught.value)


@pytest.mark.parametrize(
    "kernel",
    # Distribution builds and named trees released as a whole stay kernels; -rc is a stage.
    ["2.2.12-20", "2.4-distro", "2.3.99-pre3-elsc", "6.8.0-rc3", "6.1.0-18-rt-amd64", "2.5.59"],
)
def test_distribution_builds_and_release_stages_stay_kernels(kernel):
    assert patch_tree_split(kernel) is None
    assert mf.kernel(kernel) == kernel


def test_the_manifest_refuses_the_patch_tree_spelling_naming_the_run():
    toml = manifest_toml(volano_run("2.6.0-mm1", files='{ path = "t.log", parser = "volanomark" }'))
    with pytest.raises(ManifestError) as caught:
        parse_manifest(toml, filename="manifest.toml", available_files=["t.log"])
    (problem,) = caught.value.problems
    assert "run 1 (VolanoMark 2.6.0-mm1): field 'kernel'" in problem
    assert 'write kernel = "2.6.0", patches = ["mm1"]' in problem
    # ... and the canonical spelling is accepted.
    toml = manifest_toml(
        volano_run("2.6.0", '["mm1"]', files='{ path = "t.log", parser = "volanomark" }')
    )
    run = parse_manifest(toml, filename="manifest.toml", available_files=["t.log"]).runs[0]
    assert (run.kernel, run.patches) == ("2.6.0", ("mm1",))
