"""Rough edges a new user hit (issue 15, part 3), on the ingest side."""

from __future__ import annotations

import pytest

from ingest import manifest_fields as mf
from ingest.manifest import ManifestError, parse_manifest
from perfdb.kernels import patch_tree_split
from perfdb.models import Run, Sample
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run

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


# --- one parser, two files of one trial --------------------------------------------------------

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


@pytest.mark.parametrize(
    "release, kernel, patches",
    [
        ("6.6.15-rt22", "6.6.15", ["rt22"]),
        ("2.6.23-rc2-mm2-mem-v6", "2.6.23-rc2", ["mm2", "mem-v6"]),
        ("6.1.0-18-amd64", "6.1.0-18-amd64", []),
        ("6.1.0-18-rt-amd64", "6.1.0-18-rt-amd64", []),
    ],
)
def test_perfdb_upload_run_records_uname_in_the_canonical_form(release, kernel, patches):
    from tests.ingest.upload_script import load_script

    assert load_script().kernel_and_tree(release) == (kernel, patches)
    if patches:  # the server agrees with the script on what a tree is
        assert patch_tree_split(release) == (kernel, tuple(patches))
