"""What a regression check reads, loaded for all of an upload's series at once
(perfdb/alerting/check_data.py).

Checking an upload's series together must write exactly what checking each series alone
writes. The same four uploads go to two families of setups (same values, other hardware):
one family's uploads are checked series by series, the other's in one call per upload, and
the alerts, their states and their history must come out the same. The uploads walk every
state: a patched build's regression, a stock regression confirmed with its upload that
recovers, and, one trial a kernel, pending changes at the newest kernel, one confirmed by the
next kernel and one cleared.

The lean reads give what the plain ones give: ``load_points`` reads each series as two
arrays; here it is held against ``builds.series_points`` (one row per trial, grouped in
Python), the reference kept for it, and its kernel order against ``detector.ordered``.
``detector_settings`` gives the detector the workload's threshold and prior and the metric's
resolution (the threshold rows themselves: test_thresholds.py).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext

from ingest.services import upload_create, upload_ingest
from perfdb import detector
from perfdb.alerting import check_data
from perfdb.alerting.regressions import detection_run, regressions_check_upload
from perfdb.models import Alert, AlertEvent, Metric, Result, Run, Upload
from tests.bundles import make_bundle, manifest_toml, volano_run
from tests.factories import ThresholdFactory
from tests.perfdb.alerting import builds
from tests.perfdb.alerting.batch_uploads import UPLOADS, ingest, touched
from tests.perfdb.detector.long_series import long_series


def outcome(family: str, uploads: list[Upload]) -> list[tuple[object, ...]]:
    """The family's alerts and their history, with ids replaced by what they stand for."""
    index = {u.pk: n for n, u in enumerate(uploads)}

    def words(text: str) -> str:
        for u, n in index.items():
            text = text.replace(f"upload {u}", f"upload #{n}")
        return text

    alerts = Alert.objects.filter(setup__hardware__name__startswith=family)
    return sorted(
        (
            a.setup.hardware.name.removeprefix(family),
            a.metric.name,
            a.candidate_run.kernel.version,
            a.candidate_run.patch_set.name,
            a.method,
            a.direction,
            a.status,
            round(a.change_pct, 9),
            a.recovered,
            a.confirmed_at is None,
            index.get(a.upload_id or 0),
            index.get(a.notify_upload_id or 0),
            tuple(sorted(r.kernel.version for r in a.baseline_runs.all())),
            tuple(
                (e.field, e.old, words(e.new))
                for e in AlertEvent.objects.filter(alert=a).order_by("pk")
            ),
        )
        for a in alerts.select_related("setup__hardware", "metric", "candidate_run__kernel")
    )


@pytest.mark.django_db
def test_checking_an_uploads_series_together_writes_what_checking_each_alone_writes(tmp_path):
    alone, together = [], []
    for n, runs in enumerate(UPLOADS):
        upload = ingest(tmp_path, "alone", n, runs)
        alone.append(upload)
        for key in touched(upload):
            regressions_check_upload(upload_id=upload.pk, series=[key])
        upload = ingest(tmp_path, "together", n, runs)
        together.append(upload)
        assert len(touched(upload)) > 2  # several setups and metrics in one check
        regressions_check_upload(upload_id=upload.pk, series=touched(upload))

    expected = outcome("alone", alone)
    assert outcome("together", together) == expected
    # the uploads went through every state, so each path of the check was compared
    events = {words for a in expected for (_, _, words) in a[-1]}
    assert any(a[3] == "O(1)" and a[4] == "t-test" for a in expected)  # a patched build's
    assert any(a[6] == "cleared" for a in expected)  # pending, then cleared
    assert any(e.startswith("untriaged (confirmed by the next kernel") for e in events)
    assert any(a[8] for a in expected)  # confirmed, then recovered


@pytest.mark.django_db
def test_the_task_checks_an_uploads_series_in_batches_and_writes_the_same(tmp_path, settings):
    """``detection_run`` (what the task runs) commits a batch of series per transaction: in
    batches of 64 or of 3 it writes what it writes one series per transaction, reading each
    batch's data once (a fraction of the queries)."""
    families: dict[str, list[Upload]] = {"one": [], "three": [], "all": []}
    queries: dict[str, int] = dict.fromkeys(families, 0)
    for n, runs in enumerate(UPLOADS):
        for family, size in (("one", 1), ("three", 3), ("all", 64)):
            upload = ingest(tmp_path, family, n, runs)
            families[family].append(upload)
            settings.DETECTION_SERIES_PER_TRANSACTION = size
            with CaptureQueriesContext(connection) as captured:
                detection_run(upload_id=upload.pk, series=touched(upload))
            queries[family] += len(captured.captured_queries)
            upload.refresh_from_db()
            assert upload.detection_due_at is None
    expected = outcome("one", families["one"])
    assert expected and outcome("three", families["three"]) == expected
    assert outcome("all", families["all"]) == expected
    assert queries["all"] < queries["three"] < queries["one"]
    assert queries["all"] * 3 < queries["one"]


@pytest.mark.django_db
def test_load_points_reads_what_the_per_trial_query_reads(tmp_path):
    late = [("2.4.16", "[]", (12000, 12100), (12000,), (12010,))]  # an older kernel, uploaded last
    uploads = [ingest(tmp_path, "lean", n, runs) for n, runs in enumerate([*UPLOADS, late])]
    series = sorted({key for upload in uploads for key in touched(upload)})
    # a discarded trial: left out by both (a NaN trial cannot be stored: migration 0016)
    first = Result.objects.filter(setup_id=series[0][0], metric_id=series[0][1]).order_by("pk")
    Result.objects.filter(pk=first[0].pk).update(discarded=True)
    # rows no longer stored in run and trial order: an update writes a row anew at the end
    # of its table, so the database reads these after the rest (the columns come unordered)
    second = Result.objects.filter(setup_id=series[1][0], metric_id=series[1][1])
    Result.objects.filter(pk__in=second.filter(trial=0).values("pk")).update(value=F("value"))
    Result.objects.filter(pk__in=second.order_by("run_id")[:2].values("pk")).update(
        value=F("value")
    )
    loaded, ordered = check_data.load_points(series)
    assert len(series) > 2 and set(loaded) == set(series)
    for setup_id, metric_id in series:
        expected = builds.series_points(setup_id=setup_id, metric_id=metric_id)
        got = loaded[(setup_id, metric_id)]
        assert [(p.run_id, p.kernel, p.patches) for p in got] == [
            (p.run_id, p.kernel, p.patches) for p in expected
        ]
        # the same floats, bit for bit
        assert [repr(p.values) for p in got] == [repr(p.values) for p in expected]
    assert any(len(p.values) > 1 for p in loaded[series[0]])  # trials grouped per run
    assert any(p.patches for points in loaded.values() for p in points)
    # the check's kernel order, from the runs ranked once: what the detector's sort gives
    assert set(ordered) == set(series)  # every series finite: each is ordered by the check
    for key in series:
        assert ordered[key] == detector.ordered(loaded[key])
        assert [p.run_id for p in ordered[key]] != [p.run_id for p in loaded[key]]
    assert check_data.load_points([(series[0][0], 10**9)]) == ({(series[0][0], 10**9): []}, {})


def work_mem() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW work_mem")
        return str(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)  # the check's own transaction, not the test's
def test_the_points_query_memory_lasts_only_for_the_checks_transaction(tmp_path):
    """The room the points query is given to hash its rows is the check's transaction's: the
    next user of the connection has the server's setting again."""
    upload = ingest(tmp_path, "room", 0, UPLOADS[0])
    before = work_mem()
    assert before != check_data.POINTS_WORK_MEM
    with transaction.atomic():
        check_data.load_points(touched(upload))
        assert work_mem() == check_data.POINTS_WORK_MEM
    assert work_mem() == before
    regressions_check_upload(upload_id=upload.pk, series=touched(upload))
    assert work_mem() == before


@pytest.mark.parametrize("seed", range(10))
def test_packed_rows_are_put_in_run_and_trial_order(seed):
    """``check_data.in_run_order``: a series' packed rows, in whatever order the database
    aggregated them, come out by run then trial, each value with its own row."""
    rng = random.Random(seed)
    rows = [
        (run_id, trial, rng.gauss(0, 1e6))
        for run_id in rng.sample(range(1, 10**6), rng.choice([1, 3, 200]))
        for trial in range(rng.choice([1, 1, 2, 5]))
    ]
    shuffled = rng.sample(rows, len(rows))
    packed = np.array(shuffled, dtype=check_data.PACKED_ROW).tobytes()
    assert len(packed) == 18 * len(rows)  # as int8send || int2send || float8send make them
    run_ids, values = check_data.in_run_order(packed)
    expected = sorted(rows)
    assert run_ids.tolist() == [r[0] for r in expected]
    assert values.tolist() == [r[2] for r in expected]


def test_among_finds_the_runs_a_pass_would_find():
    points = [p for p in long_series(4) if p.run_id % 3]  # in run-id order, with gaps
    for wanted in ([], [points[0].run_id], [3, 6, 9], [p.run_id for p in points[::7]], [10**9]):
        assert check_data.among(points, wanted) == {p.run_id for p in points if p.run_id in wanted}


@pytest.mark.django_db
def test_the_detector_gets_the_threshold_prior_and_resolution(tmp_path):
    builds.upload(tmp_path, "a", "2.4.20", (13000, 13100, 12950))
    run = Run.objects.get()
    metric = Metric.objects.get(name="throughput")
    assert builds.settings_for(run.setup_id, metric).prior_noise_pct is None
    ThresholdFactory(
        workload=run.setup.workload, metric=metric, threshold_pct=3.0, typical_noise_pct=1.2
    )
    metric.resolution = 1.0
    settings = builds.settings_for(run.setup_id, metric)
    assert (settings.threshold_pct, settings.prior_noise_pct, settings.resolution) == (
        3.0,
        1.2,
        1.0,
    )


@pytest.mark.django_db
def test_time_metrics_get_the_parsers_resolution(tmp_path):
    files = {
        "t.txt": "real\t1m2.34s\nuser\t0m50.10s\nsys\t0m3.21s\n",
        "manifest.toml": manifest_toml(
            volano_run("2.5.1", files='{ path = "t.txt", parser = "time" }')
        ),
    }
    path = make_bundle(tmp_path / "time.tar.gz", files)
    with open(path, "rb") as stream:
        made, _ = upload_create(stream=stream, filename="time.tar.gz")
    upload_ingest(upload_id=made.pk)
    made.refresh_from_db()
    assert made.status == "done", made.error
    assert Metric.objects.get(name="elapsed_s").resolution == 0.01
