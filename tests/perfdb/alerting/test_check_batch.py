"""A check loads all of an upload's series at once (perfdb/alerting/check_data.py): checking
them together must write exactly what checking each series alone writes.

The same four uploads go to two families of setups (same values, other hardware): one
family's uploads are checked series by series, the other's in one call per upload, and the
alerts, their states and their history must come out the same. The uploads walk every state:
a patched build's regression, a stock regression confirmed with its upload that recovers,
and, one trial a kernel, pending changes at the newest kernel, one confirmed by the next
kernel and one cleared.
"""

from __future__ import annotations

import pytest

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Alert, AlertEvent, Upload
from tests.perfdb.alerting.batch_uploads import UPLOADS, ingest, touched

pytestmark = pytest.mark.django_db


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
    # the uploads went through every state, so each path of the check was compared
    events = {words for a in expected for (_, _, words) in a[-1]}
    assert any(a[3] == "O(1)" and a[4] == "t-test" for a in expected)  # a patched build's
    assert any(a[6] == "cleared" for a in expected)  # pending, then cleared
    assert any(e.startswith("untriaged (confirmed by the next kernel") for e in events)
    assert any(a[8] for a in expected)  # confirmed, then recovered


def test_the_task_checks_an_uploads_series_in_batches_and_writes_the_same(tmp_path, settings):
    """``detection_run`` (what the task runs) commits a batch of series per transaction: in
    batches of 64 or of 3 it writes what it writes one series per transaction, reading each
    batch's data once (a fraction of the queries)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from perfdb.alerting.regressions import detection_run

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
