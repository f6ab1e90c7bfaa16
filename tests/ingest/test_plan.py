"""Records to runs (ingest/plan.py): pure, no database; the last section uploads bundles whose
files of one trial clash, to show what the refusal looks like to the uploader."""

# ruff: noqa: E501  (manifests are quoted as users write them, one line per entry)

from __future__ import annotations

import pytest

from ingest.manifest import parse_manifest
from ingest.parsers.base import Measurement, ParseError, ParseResult, Record, group_records
from ingest.plan import PlanError, file_key, plan_runs
from perfdb.models import Run, Sample
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run


def rec(line: int, value: float, trial: int | None = None, **keys: object) -> Record:
    return Record(
        keys=keys,  # type: ignore[arg-type]
        trial=trial,
        line=line,
        measurements=(Measurement("throughput", value, "MB/s", "higher"),),
    )


# A dbench log as posted: 2 kernels x 2 client counts, one of them run twice.
DBENCH = ParseResult(
    records=(
        rec(3, 101.5, label="2.6.0-test9", clients=1),
        rec(9, 180.25, label="2.6.0-test9", clients=4),
        rec(15, 99.0, label="2.6.0-test9-mm2", clients=1),
        rec(21, 171.0, label="2.6.0-test9-mm2", clients=4),
        rec(27, 172.5, label="2.6.0-test9-mm2", clients=4),
    )
)


def manifest(toml: str, files: tuple[str, ...] = ("dbench.log",)):
    return parse_manifest(toml, filename="manifest.toml", available_files=files)


RUNS_FROM = """
format = 2
[[runs_from]]
path = "dbench.log"
parser = "dbench"
workload = "dbench"
hardware = "box"
mode = "SMP"
params = { fs = "ext3" }
labels = { "2.6.0-test9" = { kernel = "2.6.0-test9" }, "2.6.0-test9-mm2" = { kernel = "2.6.0-test9", patches = ["mm2"] } }
"""


def parsed_for(m, result: ParseResult) -> dict[str, ParseResult]:
    keys = [file_key(f.path, f.parser, f.options) for r in m.runs for f in r.files]
    keys += [file_key(b.path, b.parser, b.options) for b in m.runs_from]
    return dict.fromkeys(keys, result)


def test_runs_from_makes_a_run_per_record_group_with_repeats_as_trials():
    m = manifest(RUNS_FROM)
    plan = plan_runs(m, parsed_for(m, DBENCH))
    shown = [
        (
            p.spec.kernel,
            p.spec.patches,
            dict(p.spec.params),
            [(t, r.line) for t, r in p.parts[0].trials],
        )
        for p in plan
    ]
    assert shown == [
        ("2.6.0-test9", (), {"fs": "ext3", "clients": 1}, [(0, 3)]),
        ("2.6.0-test9", (), {"fs": "ext3", "clients": 4}, [(0, 9)]),
        ("2.6.0-test9", ("mm2",), {"fs": "ext3", "clients": 1}, [(0, 15)]),
        ("2.6.0-test9", ("mm2",), {"fs": "ext3", "clients": 4}, [(1, 21), (2, 27)]),
    ]
    # Each value is kept as printed: never a mean of the two mm2 runs at 4 clients.
    last = plan[-1].parts[0].trials
    assert [r.measurements[0].value for _, r in last] == [171.0, 172.5]


def test_an_unmapped_label_is_an_error_that_says_what_to_write():
    m = manifest(
        RUNS_FROM.replace(', "2.6.0-test9-mm2" = { kernel = "2.6.0-test9", patches = ["mm2"] }', "")
    )
    with pytest.raises(PlanError) as caught:
        plan_runs(m, parsed_for(m, DBENCH))
    message = str(caught.value)
    assert "label '2.6.0-test9-mm2' (line 15) is not mapped to a kernel" in message
    # A label of a patch tree gets the canonical spelling (docs/kernels.md) to copy.
    assert (
        'labels = { "2.6.0-test9-mm2" = { kernel = "2.6.0-test9", patches = ["mm2"] } }' in message
    )


def test_every_unmapped_label_is_listed_at_once():
    result = ParseResult(
        records=(
            rec(1, 5.0, label="2.5.59"),
            rec(2, 6.0, label="2.5.59-vanilla"),
            rec(3, 7.0, label="2.5.59-patched"),
            rec(4, 8.0, label="2.5.59-vanilla"),
        )
    )
    m = manifest(RUNS_FROM.split("labels =")[0])
    with pytest.raises(PlanError) as caught:
        plan_runs(m, parsed_for(m, result))
    message = str(caught.value)
    assert "2 labels '2.5.59-vanilla' (line 2), '2.5.59-patched' (line 3) are not mapped" in message
    assert (
        'labels = { "2.5.59-vanilla" = { kernel = "...", patches = [...] }, '
        '"2.5.59-patched" = { kernel = "...", patches = [...] } }'
    ) in message


@pytest.mark.parametrize(
    ("label", "kernel", "patches"),
    [
        ("Linux 6.1.0-18-amd64", "6.1.0-18-amd64", ()),
        ("Linux 2.5.54", "2.5.54", ()),
        ("Linux 6.6.15-rt22", "6.6.15", ("rt22",)),
    ],
)
def test_a_uname_label_is_the_kernel_the_machine_ran(label, kernel, patches):
    """sysstat's banner and lmbench's OS column print `uname -sr`."""
    result = ParseResult(records=(rec(1, 5.0, label=label),))
    m = manifest(RUNS_FROM.split("labels =")[0])
    (planned,) = plan_runs(m, parsed_for(m, result))
    assert (planned.spec.kernel, tuple(planned.spec.patches)) == (kernel, patches)


def test_a_plain_version_label_needs_no_map():
    result = ParseResult(records=(rec(1, 5.0, label="2.5.59"), rec(2, 6.0, label="2.5.65")))
    m = manifest(RUNS_FROM.split("labels =")[0])
    assert [p.spec.kernel for p in plan_runs(m, parsed_for(m, result))] == ["2.5.59", "2.5.65"]


def test_a_file_entry_with_several_record_groups_must_select_one():
    toml = """
format = 2
[[run]]
workload = "dbench"
kernel = "2.6.0-test9"
hardware = "box"
mode = "SMP"
files = [{ path = "dbench.log", parser = "dbench" }]
"""
    m = manifest(toml)
    with pytest.raises(PlanError) as caught:
        plan_runs(m, parsed_for(m, DBENCH))
    message = str(caught.value)
    assert "holds 4 records (line 3: label=2.6.0-test9 clients=1;" in message
    assert 'select = { label = "2.6.0-test9", clients = 1 }' in message
    assert "[[runs_from]]" in message


def test_select_picks_one_group_and_compares_numbers_as_printed():
    toml = """
format = 2
[[run]]
workload = "dbench"
kernel = "2.6.0-test9"
patches = ["mm2"]
hardware = "box"
mode = "SMP"
params = { clients = 4 }
files = [{ path = "dbench.log", parser = "dbench", select = { label = "2.6.0-test9-mm2", clients = 4.0 } }]
"""
    m = manifest(toml)
    (planned,) = plan_runs(m, parsed_for(m, DBENCH))
    assert [(t, r.measurements[0].value) for t, r in planned.parts[0].trials] == [
        (1, 171.0),
        (2, 172.5),
    ]


def test_select_that_matches_nothing_lists_what_the_file_holds():
    toml = """
format = 2
[[run]]
workload = "dbench"
kernel = "2.6.0"
hardware = "box"
mode = "SMP"
files = [{ path = "dbench.log", parser = "dbench", select = { clients = 64 } }]
"""
    m = manifest(toml)
    with pytest.raises(
        PlanError, match=r"no record matches select \{'clients': '64'\}; the file holds line 3"
    ):
        plan_runs(m, parsed_for(m, DBENCH))


def test_a_stated_trial_on_a_file_with_several_trials_is_refused():
    toml = """
format = 2
[[run]]
workload = "dbench"
kernel = "2.6.0"
hardware = "box"
mode = "SMP"
files = [{ path = "dbench.log", parser = "dbench", trial = 2, select = { label = "2.6.0-test9-mm2", clients = 4 } }]
"""
    m = manifest(toml)
    with pytest.raises(PlanError, match="holds 2 trials .* remove 'trial = 2'"):
        plan_runs(m, parsed_for(m, DBENCH))


def test_two_labels_for_one_build_are_refused_not_merged():
    result = ParseResult(records=(rec(1, 5.0, label="2.6.0"), rec(4, 6.0, label="Linux 2.6.0")))
    m = manifest(
        RUNS_FROM.split("labels =")[0]
        + 'labels = { "2.6.0" = { kernel = "2.6.0" }, "Linux 2.6.0" = { kernel = "2.6.0" } }\n'
    )
    with pytest.raises(
        PlanError, match="records at lines 1 and 4 give two runs of kernel 2.6.0 stock"
    ):
        plan_runs(m, parsed_for(m, result))


def test_format_1_knows_no_select_or_runs_from():
    with pytest.raises(Exception, match="unknown top-level key 'runs_from'"):
        manifest(RUNS_FROM.replace("format = 2", "format = 1"))


def test_group_records_numbers_repeats_and_keeps_printed_numbers():
    groups = group_records([rec(1, 1.0, clients=2), rec(2, 2.0, clients=2), rec(3, 3.0, clients=4)])
    assert [(dict(g.keys), [t for t, _ in g.trials]) for g in groups] == [
        ({"clients": 2}, [1, 2]),
        ({"clients": 4}, [1]),
    ]
    printed = group_records([rec(1, 1.0, trial=3), rec(2, 2.0, trial=1)])
    assert [(t, r.line) for t, r in printed[0].trials] == [(1, 2), (3, 1)]


def test_group_records_refuses_two_records_of_one_printed_trial():
    with pytest.raises(ParseError, match=r"two records clients=2 for trial 1 \(lines 1 and 5\)"):
        group_records([rec(1, 1.0, trial=1, clients=2), rec(5, 2.0, trial=1, clients=2)])


def test_a_single_record_mirrors_the_top_level_fields():
    result = ParseResult(records=(rec(1, 7.5),))
    assert result.measurements[0].value == 7.5
    top = ParseResult(measurements=(Measurement("x", 1.0, "s", "lower"),))
    assert len(top.records) == 1 and top.values() == [1.0]
    with pytest.raises(ValueError, match="not both"):
        ParseResult(measurements=top.measurements, records=top.records)


def test_paths_make_each_file_one_trial_of_the_same_runs():
    toml = """
format = 2
[[runs_from]]
paths = ["t1.log", "t2.log"]
parser = "dbench"
workload = "dbench"
hardware = "box"
mode = "SMP"
kernel = "2.6.0"
"""
    m = manifest(toml, files=("t1.log", "t2.log"))
    first = ParseResult(records=(rec(5, 100.0, clients=1), rec(9, 150.0, clients=4)))
    second = ParseResult(records=(rec(5, 101.0, clients=1), rec(9, 149.0, clients=4)))
    parsed = {
        file_key("t1.log", "dbench", {}): first,
        file_key("t2.log", "dbench", {}): second,
    }
    plan = plan_runs(m, parsed)
    shown = [
        (
            dict(p.spec.params),
            [
                (part.file.path, [(t, r.measurements[0].value) for t, r in part.trials])
                for part in p.parts
            ],
        )
        for p in plan
    ]
    assert shown == [
        ({"clients": 1}, [("t1.log", [(1, 100.0)]), ("t2.log", [(2, 101.0)])]),
        ({"clients": 4}, [("t1.log", [(1, 150.0)]), ("t2.log", [(2, 149.0)])]),
    ]


def test_paths_refuse_a_file_that_itself_holds_repeats():
    toml = """
format = 2
[[runs_from]]
paths = ["t1.log", "t2.log"]
parser = "dbench"
workload = "dbench"
hardware = "box"
mode = "SMP"
kernel = "2.6.0"
"""
    m = manifest(toml, files=("t1.log", "t2.log"))
    twice = ParseResult(records=(rec(5, 100.0, clients=1), rec(9, 101.0, clients=1)))
    parsed = {file_key(p, "dbench", {}): twice for p in ("t1.log", "t2.log")}
    with pytest.raises(PlanError, match="holds 2 trials of clients=1 .* each file is one trial"):
        plan_runs(m, parsed)


def test_path_and_paths_together_are_refused():
    toml = RUNS_FROM.replace('path = "dbench.log"', 'path = "dbench.log"\npaths = ["dbench.log"]')
    with pytest.raises(Exception, match="give 'path' .* or 'paths' .*not both"):
        manifest(toml)


def test_runs_from_over_records_per_symbol_is_refused():
    """perf report's rows mode keys a record by symbol: one run per kernel function."""
    result = ParseResult(
        records=(
            rec(12, 30.0, label="6.1.0", symbol="clear_page_erms"),
            rec(13, 12.5, label="6.1.0", symbol="native_queued_spin_lock_slowpath"),
        )
    )
    m = manifest(RUNS_FROM.split("labels =")[0])
    with pytest.raises(PlanError, match=r"one per symbol \(line 12: .*perf report with -n"):
        plan_runs(m, parsed_for(m, result))


# --- through an upload: files of one trial that clash (stored, so with the database) ------------

MEASUREMENTS = "metric,value,unit,better\nthroughput,13000,msg/s,higher\n"
SERIES = "series,column,index,value\nload,cpu,0,10\nload,cpu,1,12\nload,cpu,2,11\n"


TWO_CSV_FILES = (
    '{ path = "a.csv", parser = "csv", trial = 1 }, { path = "b.csv", parser = "csv", trial = 1 }'
)


def _csv_bundle(tmp_path, second: str, name: str = "b.tar.gz"):
    files = TWO_CSV_FILES
    return make_bundle(
        tmp_path / name,
        {
            "manifest.toml": manifest_toml(volano_run("2.5.25", files=files)),
            "a.csv": MEASUREMENTS,
            "b.csv": second,
        },
    )


@pytest.mark.django_db
def test_a_measurement_csv_beside_a_time_series_csv_in_one_trial_is_stored(tmp_path):
    upload = ingest_bundle(_csv_bundle(tmp_path, SERIES))
    assert upload.status == "done", upload.error
    (run,) = Run.objects.filter(pk__in=upload.run_ids)
    assert run.results.get(trial=1).value == 13000
    assert Sample.objects.get(run=run, trial=1, source="load", column="cpu").values == [10, 12, 11]


@pytest.mark.django_db
def test_the_same_file_twice_for_one_trial_is_still_refused(tmp_path):
    upload = ingest_bundle(_csv_bundle(tmp_path, MEASUREMENTS))
    assert upload.status == "failed"
    assert "file 'b.csv' holds the same data as 'a.csv'" in upload.error


@pytest.mark.django_db
def test_two_files_giving_one_series_for_one_trial_are_refused(tmp_path):
    files = TWO_CSV_FILES
    bundle = make_bundle(
        tmp_path / "s.tar.gz",
        {
            "manifest.toml": manifest_toml(volano_run("2.5.25", files=files)),
            "a.csv": SERIES,
            "b.csv": SERIES.replace(",10\n", ",99\n"),
        },
    )
    upload = ingest_bundle(bundle)
    assert upload.status == "failed"
    assert "files 'a.csv' and 'b.csv' both give series 'load.cpu' for trial 1" in upload.error


@pytest.mark.django_db
def test_two_volanomark_logs_of_one_trial_still_clash(tmp_path):
    files = (
        '{ path = "a.log", parser = "volanomark", trial = 1 }, '
        '{ path = "b.log", parser = "volanomark", trial = 1 }'
    )
    bundle = make_bundle(
        tmp_path / "v.tar.gz",
        {
            "manifest.toml": manifest_toml(volano_run("2.5.25", files=files)),
            "a.log": volano_log(13000),
            "b.log": volano_log(14000),
        },
    )
    upload = ingest_bundle(bundle)
    assert upload.status == "failed"
    assert "throughput" in upload.error
