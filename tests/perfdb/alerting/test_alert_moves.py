"""An open alert re-attributed when a later check places its step on the neighbouring kernel:
the same alert (id, triage, email) on the new kernel, the move recorded and shown, no second
email and no second alert; or left where it is when the step's placement favours its kernel."""

from __future__ import annotations

import random

import pytest

from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import Alert, OutboxMessage, Run, Upload
from tests.perfdb.alerting.builds import (
    check,
    ingest_runs,
    throughput_regression,
    upload,
    upload_all,
)
from tests.perfdb.alerting.step_series import STEP_DOWN, TRIALS

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def step_scan_from_six_kernels(settings):
    """These series were drawn for the step scan: the service reads them with it from six
    kernels (PERFDB_SHORT_KERNELS), not kernel by kernel."""
    settings.PERFDB_SHORT_KERNELS = 6


def test_a_step_placed_anew_moves_its_alert_without_a_second_email(tmp_path, subscriber):
    uploads = upload_all(tmp_path, 11, STEP_DOWN)
    alert = throughput_regression()
    assert alert.candidate_run.kernel.version == "2.5.10" and alert.status == "untriaged"
    confirming = alert.notify_upload_id
    assert confirming in {u.pk for u in uploads}
    assert len(outbox_fill_for_upload(upload_id=confirming)) == 1
    alert.status = Alert.Status.ACKNOWLEDGED  # triaged before the move: kept
    alert.save()
    before = alert.change_pct
    last = upload(tmp_path, "u11", "2.5.12", STEP_DOWN[11])
    moved = throughput_regression()
    assert moved.pk == alert.pk and Alert.objects.filter(metric__name="throughput").count() == 1
    assert moved.candidate_run.kernel.version == "2.5.9"
    assert moved.status == "acknowledged" and moved.notify_upload_id == confirming
    assert moved.change_pct != before
    assert {r.kernel.version for r in moved.baseline_runs.all()} >= {"2.5.7", "2.5.8"}
    (event,) = moved.events.filter(field="kernel")
    assert event.old.startswith("2.5.10 (run ") and f"{before:+.1f} %" in event.old
    assert event.new.startswith("2.5.9 (run ")
    assert f"upload {last.pk}'s check places the step one kernel earlier" in event.new
    # emailed once: the confirming upload's message only
    assert outbox_fill_for_upload(upload_id=last.pk) == []
    assert OutboxMessage.objects.count() == 1
    # checking again moves nothing and records nothing more
    assert check(last) == 0
    assert moved.events.filter(field="kernel").count() == 1


def test_the_move_is_shown_on_the_alert_page_the_list_and_the_api(tmp_path, client):
    upload_all(tmp_path, 12, STEP_DOWN)
    alert = throughput_regression()
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'id="alert-moved"' in page and "was 2.5.10 (run " in page
    listing = client.get("/alerts/").content.decode()
    assert "(first placed on 2.5.10 (run " in listing
    (row,) = [a for a in client.get("/api/alerts/").json()["results"] if a["id"] == alert.pk]
    assert row["kernel"] == "2.5.9"
    (move,) = row["reattributed"]
    assert move["from"].startswith("2.5.10") and move["to"].startswith("2.5.9")


def test_the_alert_stays_where_the_placement_puts_the_step(tmp_path, subscriber):
    """The scan re-places the step at 2.5.9, but 2.5.8 reads nearer the new level: the alert
    (emailed on 2.5.8) stays there, and the re-placed step raises no second alert or email."""
    uploads = upload_all(tmp_path, 10)
    alert = throughput_regression()
    assert alert.candidate_run.kernel.version == "2.5.8"
    assert len(outbox_fill_for_upload(upload_id=uploads[9].pk)) == 1
    last = upload(tmp_path, "u10", "2.5.11", TRIALS[10])
    (kept,) = Alert.objects.filter(metric__name="throughput")
    assert kept.pk == alert.pk and kept.candidate_run.kernel.version == "2.5.8"
    assert not kept.events.filter(field="kernel").exists()
    assert outbox_fill_for_upload(upload_id=last.pk) == []
    assert OutboxMessage.objects.count() == 1
    assert check(last) == 0


def mainline_then_rcs(tmp_path) -> tuple[Alert, object, object]:
    """2.6.0 .. 2.6.19 uploaded one by one, throughput down 10 % from 2.6.10; then 2.6.10-rc1
    .. rc5 uploaded together (a lab hunting the regression between two releases), down from
    rc3. Returns (the alert as the mainline left it, its confirming upload, the -rc upload)."""
    rng = random.Random(10)

    def trials(level: float) -> tuple[int, ...]:
        return tuple(round(level * (1 + rng.gauss(0, 0.005))) for _ in range(3))

    for i in range(20):
        upload(tmp_path, f"u{i}", f"2.6.{i}", trials(13000 if i < 10 else 11700))
    first = throughput_regression()
    confirming = Upload.objects.get(pk=first.notify_upload_id)
    rcs = [(f"2.6.10-rc{j}", "[]", trials(13000 if j < 3 else 11700)) for j in range(1, 6)]
    together = ingest_runs(tmp_path, "rcs.tar.gz", rcs)
    check(together)
    return first, confirming, together


def test_release_candidates_uploaded_since_move_the_alert_into_its_gap(tmp_path, subscriber):
    """Before, the step placed on 2.6.10-rc3, three kernels from the alert on 2.6.10 in
    today's order, was another step: a second alert, emailed again, for one regression."""
    first, confirming, together = mainline_then_rcs(tmp_path)
    assert first.candidate_run.kernel.version == "2.6.10"
    assert len(outbox_fill_for_upload(upload_id=confirming.pk)) == 1
    moved = throughput_regression()  # one regression alert, not two
    assert moved.pk == first.pk and moved.candidate_run.kernel.version == "2.6.10-rc3"
    assert moved.notify_upload_id == confirming.pk
    (event,) = moved.events.filter(field="kernel")
    assert event.old.startswith("2.6.10 (run ")
    assert "places the step on a kernel uploaded since, next to 2.6.10 (earlier)" in event.new
    assert outbox_fill_for_upload(upload_id=together.pk) == []
    assert OutboxMessage.objects.count() == 1
    assert moved.placed_through_run_id == max(Run.objects.values_list("pk", flat=True))
