"""Regression checks on ingested data: alerts, baselines, idempotency, recovery."""

from __future__ import annotations

import pytest

from ingest.services import upload_create, upload_ingest
from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, Metric, PinnedBaseline, Run
from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

pytestmark = pytest.mark.django_db


def ingest_runs(tmp_path, name: str, runs: list[tuple[str, str, tuple[int, ...]]]):
    """Ingest VolanoMark runs [(kernel, patches_toml, throughputs)]; returns the upload."""
    files: dict[str, str | bytes] = {}
    blocks = []
    for r, (kernel, patches, values) in enumerate(runs):
        entries = []
        for t, value in enumerate(values, start=1):
            path = f"r{r}/t{t}.log"
            files[path] = volano_log(value)
            entries.append(f'{{ path = "{path}", parser = "volanomark", trial = {t} }}')
        blocks.append(volano_run(kernel, patches=patches, files=", ".join(entries)))
    files["manifest.toml"] = manifest_toml(*blocks)
    path = make_bundle(tmp_path / name, files)
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=name)
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    return upload


def check(upload) -> int:
    runs = Run.objects.filter(upload=upload)
    series = {
        (run.setup_id, metric_id)
        for run in runs
        for metric_id in run.results.values_list("metric_id", flat=True)
    }
    return regressions_check_upload(upload_id=upload.pk, series=series)


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
    PinnedBaseline.objects.create(setup=pinned.setup, metric=throughput, run=pinned)
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
