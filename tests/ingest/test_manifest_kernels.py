"""``[kernel."…"]`` tables: read from a manifest, and stored with the runs of an upload.

The bundle is the kernel test robot's 2025 will-it-scale poll2 report
(tests/fixtures/formats/lkp/will-it-scale-poll2-2025-regression.txt): base commit d000e073ca
("convert do_select()") at 263173 per_process_ops, the tested commit 8935989798
("do_pollfd(): convert to CLASS(fd)", linus/master) at 232411.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ingest.manifest import ManifestError, parse_manifest
from perfdb.kernels import KernelFacts
from perfdb.models import Kernel, Run
from tests.bundles import ingest_bundle, make_bundle
from tests.factories import KernelFactory

HEAD = """format = 1
[hardware.lkp-skl-fpga01]
cpus = 104

[metric."will-it-scale.per_process_ops"]
unit = "ops"
better = "higher"
"""


def run(kernel: str, value: int) -> str:
    return f"""
[[run]]
workload = "will-it-scale"
kernel = "{kernel}"
hardware = "lkp-skl-fpga01"
mode = "SMP"
params = {{ test = "poll2", mode = "process", nr_task = "100%" }}
metrics = {{ "will-it-scale.per_process_ops" = {value} }}
"""


ROBOT = (
    HEAD
    + run("d000e073ca", 263173)
    + run("8935989798", 232411)
    + """
[kernel.d000e073ca]
subject = "convert do_select()"

[kernel."linus/master@8935989798"]
base = "d000e073ca"
subject = "do_pollfd(): convert to CLASS(fd)"
"""
)


def parse(text: str):
    return parse_manifest(text, filename="manifest.toml", available_files=[])


def test_kernel_tables_are_read_by_the_kernels_text():
    manifest = parse(ROBOT)
    assert [r.kernel for r in manifest.runs] == ["d000e073ca", "8935989798"]
    assert manifest.kernels == {
        "d000e073ca": KernelFacts(subject="convert do_select()"),
        "8935989798": KernelFacts(
            tree="linus/master",
            base="d000e073ca",
            subject="do_pollfd(): convert to CLASS(fd)",
        ),
    }


def test_a_commit_time_is_a_toml_date_time_or_text_as_git_prints_it():
    """(The times are the test's, not the report's: it states none.)"""
    toml = parse(ROBOT + "committed_at = 2024-11-03T01:28:06-04:00\n")
    assert toml.kernels["8935989798"].committed_at == datetime(
        2024, 11, 3, 1, 28, 6, tzinfo=timezone(timedelta(hours=-4))
    )
    text = (
        '{"format": 1, "run": [{"workload": "w", "kernel": "8935989798", "hardware": "h", '
        '"mode": "SMP", "metrics": {"x": 1}}], "kernel": {"8935989798": '
        '{"committed_at": "2024-11-03T05:28:06Z"}}}'
    )
    manifest = parse_manifest(text, filename="manifest.json", available_files=[])
    assert manifest.kernels["8935989798"].committed_at == datetime(
        2024, 11, 3, 5, 28, 6, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('[kernel."6.8.0"]\ndescribe = "v6.8"', "kernel '6.8.0': 6.8.0 is a version"),
        ("[kernel.d000e073ca]\ncommitted_at = 2024-11-03T01:28:06", "has no UTC offset"),
        ('[kernel.d000e073ca]\ncommitted_at = "yesterday"', "with its UTC offset"),
        ('[kernel.d000e073ca]\nparent = "6.12.0"', "unknown field 'parent'"),
        ('[kernel.d000e073ca]\nbase = "2.6.0-mm1"', 'write kernel = "2.6.0", patches = ["mm1"]'),
        ('[kernel.d000e073ca]\ndescribe = "v6.12-3-g0123456789"', "names commit 0123456789"),
        (
            '[kernel.d000e073ca]\ntree = "a"\n[kernel."b@d000e073ca"]\ntree = "b"',
            "d000e073ca has another table already",
        ),
    ],
)
def test_a_wrong_kernel_table_is_refused_with_the_others(table, problem):
    with pytest.raises(ManifestError) as caught:
        parse(HEAD + run("d000e073ca", 263173) + table)
    assert problem in str(caught.value)


def test_a_tree_in_a_runs_kernel_goes_in_its_table():
    with pytest.raises(ManifestError) as caught:
        parse(HEAD + run("linus/master@8935989798", 232411))
    assert (
        "field 'kernel': write kernel = \"8935989798\" and its tree in the bundle's "
        '[kernel."8935989798"] table: tree = "linus/master"'
    ) in str(caught.value)


@pytest.mark.django_db
def test_an_upload_stores_what_it_states_and_orders_its_runs(tmp_path):
    KernelFactory(version="6.12.0")
    upload = ingest_bundle(make_bundle(tmp_path / "robot.tar.gz", {"manifest.toml": ROBOT}))
    assert upload.status == "done", upload.error
    tested = Kernel.objects.get(version="8935989798")
    assert (tested.base.version, tested.tree) == ("d000e073ca", "linus/master")
    assert tested.display == '8935989798 ("do_pollfd(): convert to CLASS(fd)")'
    runs = Run.objects.filter(pk__in=upload.run_ids).order_by("kernel__sort_key")
    assert [r.kernel.version for r in runs] == ["d000e073ca", "8935989798"]
    # A later upload states the base's describe: both move among the versions.
    later = HEAD + run("d000e073ca", 263173) + '[kernel.d000e073ca]\ndescribe = "v6.12"\n'
    again = ingest_bundle(make_bundle(tmp_path / "later.tar.gz", {"manifest.toml": later}))
    assert again.status == "done", again.error
    KernelFactory(version="6.13.0-rc1")
    order = Kernel.objects.order_by("sort_key", "version").values_list("version", flat=True)
    assert list(order) == ["6.12.0", "d000e073ca", "8935989798", "6.13.0-rc1"]


@pytest.mark.django_db
def test_an_upload_contradicting_a_stored_fact_fails_whole(tmp_path):
    first = ingest_bundle(make_bundle(tmp_path / "a.tar.gz", {"manifest.toml": ROBOT}))
    assert first.status == "done", first.error
    wrong = HEAD + run("8935989798", 232411) + '[kernel.8935989798]\nsubject = "another"\n'
    upload = ingest_bundle(make_bundle(tmp_path / "b.tar.gz", {"manifest.toml": wrong}))
    assert upload.status == "failed"
    assert "kernel 8935989798: stated subject 'another'" in upload.error
    assert Run.objects.count() == 2
