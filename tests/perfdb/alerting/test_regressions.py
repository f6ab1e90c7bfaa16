"""Regression checks on ingested data: alerts, baselines, idempotency, recovery. The check
pauses the garbage collector and leaves it as it found it."""

from __future__ import annotations

import gc

import pytest

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, Metric, Run
from tests.factories import PinnedBaselineFactory
from tests.perfdb.alerting.batch_uploads import UPLOADS, ingest, touched
from tests.perfdb.alerting.builds import check, ingest_runs

pytestmark = pytest.mark.django_db


def throughput_alerts():
    return Alert.objects.filter(metric__name="throughput")


def test_a_patch_that_costs_throughput_is_a_regression(tmp_path):
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950, 13050))]))
    upload = ingest_runs(
        tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11650, 11700, 11600, 11720))]
    )
    assert check(upload) >= 1
    alert = throughput_alerts().get()
    assert alert.direction == "regression" and alert.status == "untriaged"
    assert alert.method == "t-test" and alert.p_value < 0.01  # both runs' trials: the noise
    assert alert.change_pct == pytest.approx((11667.5 - 13025) / 13025 * 100)
    baseline = list(alert.baseline_runs.values_list("kernel__version", "patch_set__name"))
    assert baseline == [("2.4.20", "")]
    # Elapsed (lower is better) went up with the same data: also a regression, not noise.
    assert Alert.objects.filter(metric__name="elapsed", direction="regression").exists()


def test_an_improvement_is_recorded_not_triaged(tmp_path):
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.5.66", "[]", (14600, 14550, 14700))]))
    alert = throughput_alerts().get()
    assert alert.direction == "improvement" and alert.status == "improvement"


def test_noise_makes_no_alert(tmp_path):
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["D7"]', (13050, 12980, 13070))]))
    assert not throughput_alerts().exists()


def test_checking_twice_makes_no_duplicates(tmp_path):
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    upload = ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))])
    first = check(upload)
    assert first >= 1
    assert check(upload) == 0
    assert throughput_alerts().count() == 1


def test_a_pinned_baseline_is_used(tmp_path):
    base = ingest_runs(
        tmp_path,
        "a.tar.gz",
        [("2.4.17", "[]", (15000, 15100, 14950)), ("2.4.20", "[]", (13000, 13100, 12950))],
    )
    check(base)
    pinned = Run.objects.get(kernel__version="2.4.17")
    throughput = Metric.objects.get(name="throughput")
    PinnedBaselineFactory(run=pinned, metric=throughput)
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["D7"]', (13000, 13050, 12990))]))
    alert = throughput_alerts().get(candidate_run__patch_set__name="D7")
    assert list(alert.baseline_runs.all()) == [pinned]


def test_a_series_that_comes_back_marks_its_alert_recovered(tmp_path):
    check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
    check(ingest_runs(tmp_path, "b.tar.gz", [("2.5.59", "[]", (11000, 11100, 11050))]))
    alert = throughput_alerts().get(direction="regression")
    assert alert.status == "untriaged"  # tested on the trials: confirmed with its upload
    check(ingest_runs(tmp_path, "c.tar.gz", [("2.5.60", "[]", (11020, 11080, 10990))]))
    alert.refresh_from_db()
    assert alert.status == "untriaged" and not alert.recovered
    check(ingest_runs(tmp_path, "d.tar.gz", [("2.5.66", "[]", (12900, 13000, 12950))]))
    alert.refresh_from_db()
    assert alert.recovered
    assert alert.events.filter(field="recovered").exists()


def test_the_check_leaves_the_garbage_collector_as_it_found_it(tmp_path):
    upload = ingest(tmp_path, "gc", 0, UPLOADS[0])
    assert gc.isenabled()
    regressions_check_upload(upload_id=upload.pk, series=touched(upload))
    assert gc.isenabled()
    gc.disable()
    try:
        regressions_check_upload(upload_id=upload.pk, series=touched(upload))
        assert not gc.isenabled()
    finally:
        gc.enable()
