"""Stored numbers are finite in the database itself (``checks.finite`` in the models' CHECK
constraints, migration 0016): whatever writes a result, a profile entry, a time series or a
metric's resolution, PostgreSQL refuses NaN and the infinities. And an upload whose file
holds such a number fails naming it, storing nothing: no write path stores a NaN."""

from __future__ import annotations

import math

import pytest
from django.db import IntegrityError, transaction

from ingest.services import upload_create, upload_ingest
from perfdb.models import Metric, ProfileEntry, Result, Run
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run
from tests.factories import MetricFactory, ProfileEntryFactory, ResultFactory, SampleFactory

NOT_FINITE = (math.nan, math.inf, -math.inf)


@pytest.fixture
def run(db) -> Run:
    """A run with one stored result (the constraints are the database's: no ingest needed)."""
    return ResultFactory(value=13000.0).run


def _refused(write) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        write()


@pytest.mark.django_db
@pytest.mark.parametrize("value", NOT_FINITE)
def test_a_result_that_is_not_finite_is_refused(run, value):
    result = run.results.first()
    _refused(lambda: Result.objects.filter(pk=result.pk).update(value=value))
    fresh = Result(run=run, setup=run.setup, metric=result.metric, trial=99, value=value)
    _refused(fresh.save)
    assert Result.objects.get(pk=result.pk).value == result.value


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["ticks", "load", "share_pct"])
def test_a_profile_entry_that_is_not_finite_is_refused(run, field):
    entry = ProfileEntryFactory(run=run, function="schedule", ticks=10, load=0.5)
    _refused(lambda: ProfileEntry.objects.filter(pk=entry.pk).update(**{field: math.nan}))
    ProfileEntry.objects.filter(pk=entry.pk).update(share_pct=None)  # NULL stays allowed


@pytest.mark.django_db
@pytest.mark.parametrize("field", ["values", "preview"])
@pytest.mark.parametrize("value", NOT_FINITE)
def test_a_time_series_with_a_value_that_is_not_finite_is_refused(run, field, value):
    values = {"values": [1.0, 2.0, 3.0], "preview": [1.0, 3.0]}
    values[field] = [1.0, value, 3.0]
    _refused(lambda: SampleFactory(run=run, source="vmstat", column="cs", **values))
    SampleFactory(run=run, source="vmstat", column="cs", values=[1.0], preview=[1.0])


@pytest.mark.django_db
@pytest.mark.parametrize("resolution", [0.0, -0.01, math.nan, math.inf])
def test_a_metric_resolution_must_be_positive_and_finite(resolution):
    metric = MetricFactory(name="elapsed_s", unit="s", better="lower", resolution=0.01)
    _refused(lambda: Metric.objects.filter(pk=metric.pk).update(resolution=resolution))
    Metric.objects.filter(pk=metric.pk).update(resolution=None)


@pytest.mark.django_db
@pytest.mark.parametrize("token", ["9" * 400, "1e999"])
def test_an_upload_with_a_number_too_large_for_a_double_fails_naming_it(tmp_path, token):
    csv = f"metric,value,unit,better\nthroughput,{token},msg/s,higher\n"
    files = '{ path = "a.csv", parser = "csv" }'
    bundle = make_bundle(
        tmp_path / "big.tar.gz",
        {
            "manifest.toml": manifest_toml(volano_run("2.5.25", files=files)),
            "a.csv": csv,
            "volano.log": volano_log(13000),
        },
    )
    upload = ingest_bundle(bundle)
    assert upload.status == "failed"
    assert "file 'a.csv' (csv): line 2:" in upload.error
    assert "finite" in upload.error
    assert not Run.objects.exists()


@pytest.mark.django_db
def test_ingest_refuses_a_nan_result(tmp_path):
    for name, metrics in (
        ("m.tar.gz", "metrics = { tops = [1.0, nan] }"),
        ("i.tar.gz", "metrics = { tops = inf }"),
    ):
        files = {
            "manifest.toml": manifest_toml(volano_run("2.5.1", extra=metrics))
            + '\n[metric.tops]\nunit = "ops"\nbetter = "higher"\n'
        }
        path = make_bundle(tmp_path / name, files)
        with open(path, "rb") as stream:
            made, _ = upload_create(stream=stream, filename=name)
        upload_ingest(upload_id=made.pk)
        made.refresh_from_db()
        assert made.status == "failed" and "finite" in made.error
    assert not Result.objects.exists()
