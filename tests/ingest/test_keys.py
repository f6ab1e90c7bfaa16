"""A bundle's keys as rows (ingest/keys.py): metric rows as bundles name them (two tools
naming one metric with different directions, at ingest and at preview alike), and the
stored keys read in plain SQL, in one round trip, as the ORM reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.keys import stored_rows
from ingest.preview import bundle_preview
from perfdb.models import Hardware, Kernel, Metric, Run, Setup
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_bundle
from tests.factories import MetricFactory

pytestmark = pytest.mark.django_db

FORMATS = Path(__file__).resolve().parents[1] / "fixtures" / "formats"


def bundle(tmp_path: Path, name: str, parser: str, fixture: str, select: str = "") -> Path:
    picked = f", select = {{ {select} }}" if select else ""
    run = f"""
[[run]]
workload = "{name}"
kernel = "6.1.0"
hardware = "P8"
mode = "SMP"
files = [{{ path = "out.txt", parser = "{parser}"{picked} }}]
"""
    manifest = manifest_toml(run).replace("format = 1", "format = 2")  # select needs format 2
    files = {"manifest.toml": manifest, "out.txt": (FORMATS / fixture).read_text()}
    return make_bundle(tmp_path / f"{name}.tar.gz", files)


def test_a_direction_where_the_stored_metric_has_none_is_stored_with_a_warning(tmp_path):
    """sysbench's total_time_s is a fixed run length (no direction); perf bench's is the
    result (lower is better). The second upload used to fail after its preview passed."""
    sysbench = bundle(tmp_path, "sysbench-cpu", "sysbench", "sysbench/sysbench-1.0.20-cpu.txt")
    assert ingest_bundle(sysbench).status == "done"
    perf = bundle(
        tmp_path,
        "perf-bench",
        "perf-bench",
        "perf-bench/bench-sched-all.txt",
        select='benchmark = "sched/pipe"',
    )
    with open(perf, "rb") as stream:
        preview = bundle_preview(stream=stream)
    assert preview.problems == []
    assert any("'total_time_s' (s) is 'lower'-is-better here" in w for w in preview.warnings)
    upload = ingest_bundle(perf)
    assert upload.status == "done", upload.error
    assert any("no direction in the stored data" in w for w in upload.warnings)
    assert Metric.objects.get(name="total_time_s", unit="s").better == "none"  # kept


def test_opposite_directions_are_refused_by_the_preview_as_by_the_ingest(tmp_path):
    perf = bundle(
        tmp_path,
        "perf-bench",
        "perf-bench",
        "perf-bench/bench-sched-all.txt",
        select='benchmark = "sched/pipe"',
    )
    MetricFactory(name="total_time_s", unit="s", better="higher")
    with open(perf, "rb") as stream:
        preview = bundle_preview(stream=stream)
    (problem,) = preview.problems
    assert "'total_time_s' (s) is 'lower'-is-better here but 'higher' in the stored data" in problem
    upload = ingest_bundle(perf)
    assert upload.status == "failed" and "'higher' in the stored data" in upload.error


def test_stored_rows_are_the_rows_the_orm_reads(tmp_path):
    ingest_bundle(volano_bundle(tmp_path / "a.tar.gz"))
    for model, where, params, orm in [
        (Hardware, "name = ANY(%s)", [["P8", "nowhere"]], {"name__in": ["P8", "nowhere"]}),
        (Kernel, "version = ANY(%s)", [["2.5.25"]], {"version__in": ["2.5.25"]}),
        (Metric, "name = ANY(%s)", [["throughput", "x"]], {"name__in": ["throughput", "x"]}),
    ]:
        fields = [f.attname for f in model._meta.concrete_fields]  # id first
        read = sorted(
            [getattr(row, f) for f in fields] for row in stored_rows(model, where, params)
        )
        expected = model.objects.filter(**orm).order_by("pk").values_list(*fields)
        assert read and read == [list(r) for r in expected]

    (setup,) = stored_rows(Setup, "mode = %s", ["UP"], skip=["params"])
    orm = Setup.objects.get()
    assert (setup.pk, setup.workload_id, setup.hardware_id, setup.mode, setup.params_digest) == (
        orm.pk,
        orm.workload_id,
        orm.hardware_id,
        orm.mode,
        orm.params_digest,
    )
    assert setup.get_deferred_fields() == {"params"}
    assert setup.params == orm.params == {"rooms": 10, "messages": 1000}  # read when asked


def test_stored_keys_reads_in_one_round_trip_what_the_writer_looks_up(tmp_path):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingest.bundle import bundle_parse, read_bundle
    from ingest.keys import setup_key, stored_keys
    from ingest.writer import FileDigests, run_fingerprint
    from perfdb.models import Claim

    path = volano_bundle(tmp_path / "a.tar.gz")
    (run,) = Run.objects.filter(pk__in=ingest_bundle(path).run_ids)
    bundle = read_bundle(path)
    manifest, plan, _ = bundle_parse(bundle)
    (spec,) = [p.spec for p in plan]
    fingerprint = run_fingerprint(spec, FileDigests(bundle.files))

    def read():
        with CaptureQueriesContext(connection) as queries:
            found = stored_keys(manifest, [spec], [fingerprint], ["throughput", "x"])
        assert len(queries.captured_queries) == 1
        return found

    found = read()
    assert [hw.pk for hw in found.hardware] == [run.setup.hardware_id]
    assert [k.pk for k in found.kernels] == [run.kernel_id]
    assert [m.name for m in found.metrics] == ["throughput"]
    assert found.fingerprints == {fingerprint: run.pk}
    assert {k: s.pk for k, s in found.setups.items()} == {setup_key(spec): run.setup_id}
    assert {k: p.pk for k, p in found.patch_sets.items()} == {(): run.patch_set_id}
    assert found.claims is False
    Claim.objects.create(
        fingerprint="c" * 64,
        setup_id=run.setup_id,
        setup_text="",
        metric_name="throughput",
        baseline="2.5.25",
        candidate="2.5.25",
        stated_change_pct=0.0,
        tolerance_pct=0.5,
        source="",
    )
    assert read().claims is True
    empty = stored_keys(manifest, [], [], [])  # no runs: nothing asked of the setups
    assert not empty.setups and not empty.fingerprints and empty.claims is False


def test_stored_keys_leaves_a_setup_newer_than_its_hardware_read_to_the_writer(
    tmp_path, monkeypatch
):
    """Each statement of the round trip has its own snapshot: an upload committing between
    the hardware read and the setup read shows a setup whose hardware was not read. That
    setup is not a key the writer can use (it was a KeyError, failing one of ten concurrent
    uploads of a new machine); the writer looks it up itself and the upload succeeds."""
    from ingest import keys
    from ingest.bundle import bundle_parse, read_bundle
    from ingest.writer import FileDigests, run_fingerprint

    path = volano_bundle(tmp_path / "a.tar.gz")
    ingest_bundle(path)
    read_all = keys.stored_rows_at_once

    def hardware_not_yet_seen(queries):
        rows = read_all(queries)
        return [[], *rows[1:]]  # the hardware statement ran before the other upload's commit

    monkeypatch.setattr(keys, "stored_rows_at_once", hardware_not_yet_seen)
    bundle = read_bundle(path)
    manifest, plan, _ = bundle_parse(bundle)
    (spec,) = [p.spec for p in plan]
    fingerprint = run_fingerprint(spec, FileDigests(bundle.files))
    found = keys.stored_keys(manifest, [spec], [fingerprint], ["throughput"])
    assert found.setups == {} and found.hardware == []
    again = ingest_bundle(volano_bundle(tmp_path / "b.tar.gz", kernel="2.5.26"))
    assert again.status == "done" and len(again.run_ids) == 1
    assert Setup.objects.count() == 1 and Hardware.objects.count() == 1


def test_stored_keys_one_statement_at_a_time_without_client_side_binding(tmp_path, monkeypatch):
    """A connection that binds on the server cannot send several statements in one message:
    the same rows, read one statement at a time."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from ingest import keys

    ingest_bundle(volano_bundle(tmp_path / "a.tar.gz"))
    queries = [
        (Hardware, "name = ANY(%s)", [["P8"]], ()),
        (Kernel, "version = ANY(%s)", [["2.5.25", "9.9"]], ()),
        (Setup, "mode = %s", ["UP"], ["params"]),
    ]
    together = keys.stored_rows_at_once(queries)
    monkeypatch.setattr(keys.psycopg, "ClientCursor", type("NotThisCursor", (), {}))
    with CaptureQueriesContext(connection) as sent:
        apart = keys.stored_rows_at_once(queries)
    assert len(sent.captured_queries) == 3
    assert [[r.pk for r in rows] for rows in apart] == [[r.pk for r in rows] for rows in together]
    assert all(len(rows) == 1 for rows in together)
