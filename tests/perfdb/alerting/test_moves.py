"""Alert moves (perfdb/alerting/moves.py): an open alert re-attributed when a later check places
its step on the neighbouring kernel: the same alert (id, triage, email) on the new kernel, the
move recorded and shown, no second email and no second alert; or left where it is when the
step's placement favours its kernel. A pending or cleared alert already on the new kernel is
merged into the moving one."""

from __future__ import annotations

import random

import pytest
from django.test import Client

from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import Alert, AlertEvent, OutboxMessage, Run, Upload
from tests.factories import AlertEventFactory, AlertFactory, SubscriptionFactory
from tests.perfdb.alerting.builds import (
    check,
    ingest_runs,
    throughput_regression,
    upload,
    upload_all,
)
from tests.perfdb.alerting.latency import kernel, latency_alerts, upload_kernels
from tests.perfdb.alerting.step_series import STEP_DOWN, TRIALS

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("step_scan_from_six_kernels")]


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


# --- a move onto a kernel that holds a pending or cleared alert -----------------------------
#
# A confirmed step placed anew on a kernel that already holds a pending or cleared alert of
# its direction: one alert (the confirmed one, moved), emailed once, the other's history kept;
# and a step the scan re-places against its placement's evidence, whose alert stays.
#
# The latency series is the accuracy bench's (``detector_suite.make_series``, seed 1058, a
# 5-trial step, values rounded): 2.6.191 jumps, 2.6.192 sits a little lower. Uploaded as the
# lab would (2.6.172-191 together, then 192, 193, 194-199 together, then 200), the checks go:
#
# - 2.6.191 newest: a pending alert there; 2.6.192 newest: a second pending alert there;
# - 2.6.193 confirms the step at 2.6.191 (emailed with that upload) and clears 2.6.192's;
# - 2.6.200: the step scan now places the step at 2.6.192, where the cleared alert sits, but
#   the step's placement gives 2.6.191 the larger share: the alert stays
#   (``moves_rule.placed_anew``).
#
# Before, that confirmed the cleared alert and emailed the same step a second time, leaving
# the first alert on 2.6.191: two open alerts and two emails for one regression; then the
# alert moved onto 2.6.192 and absorbed the cleared one. The merge itself is tested below on
# STEP_DOWN, whose move the placement agrees with, with an unconfirmed alert put on the new
# kernel as such a check leaves it.


@pytest.fixture
def subscriber_to_all(user):
    """Every alert, latency's too (the conftest's ``subscriber`` takes throughput only)."""
    return SubscriptionFactory(user=user, email="lab@lab.example", metric_pattern="*")


def replay_to_the_cleared_alert(tmp_path):
    """The series up to 2.6.199: the step confirmed at 2.6.191 (and emailed), a cleared
    alert at 2.6.192. Returns (confirming upload, confirmed alert, cleared alert)."""
    upload_kernels(tmp_path, 0, 20)
    upload_kernels(tmp_path, 20, 21)
    confirming = upload_kernels(tmp_path, 21, 22)
    upload_kernels(tmp_path, 22, 28)
    first = latency_alerts().get(candidate_run__kernel__version=kernel(19))
    other = latency_alerts().get(candidate_run__kernel__version=kernel(20))
    assert first.status == "untriaged" and first.notify_upload_id == confirming.pk
    assert other.status == "cleared" and other.confirmed_at is None
    assert other.notify_upload_id is None
    return confirming, first, other


def test_the_confirmed_alert_stays_beside_the_cleared_one_and_is_emailed_once(
    tmp_path, subscriber_to_all
):
    """At 2.6.200 the scan re-places the step at 2.6.192, where the cleared alert sits, but
    the step's placement favours 2.6.191 (it jumped the whole way, 2.6.192 a little less):
    the emailed alert stays, the cleared one stays cleared, nothing is emailed again."""
    confirming, first, other = replay_to_the_cleared_alert(tmp_path)
    assert len(outbox_fill_for_upload(upload_id=confirming.pk)) == 1
    last = upload_kernels(tmp_path, 28, 29)
    alerts = {a.pk: a for a in latency_alerts()}
    assert set(alerts) == {first.pk, other.pk}
    assert alerts[first.pk].candidate_run.kernel.version == kernel(19)
    assert alerts[first.pk].status == "untriaged"
    assert alerts[other.pk].status == "cleared" and alerts[other.pk].confirmed_at is None
    assert not AlertEvent.objects.filter(field__in=["kernel", "merged"]).exists()
    assert outbox_fill_for_upload(upload_id=last.pk) == []
    assert OutboxMessage.objects.count() == 1
    assert check(last) == 0


def step_down_before_the_move(tmp_path, status: str, method: str):
    """STEP_DOWN up to its 11th kernel (the step confirmed one kernel late, at 2.5.10, and
    emailed) with an unconfirmed alert of the same step on 2.5.9, as a check that flagged it
    there while it was the newest would have left it. Returns (alert, the other, upload)."""
    uploads = upload_all(tmp_path, 11, STEP_DOWN)
    first = throughput_regression()
    assert first.candidate_run.kernel.version == "2.5.10" and first.confirmed_at is not None
    run = Run.objects.get(kernel__version="2.5.9")
    other = AlertFactory(
        metric=first.metric,
        candidate_run=run,
        change_pct=first.change_pct,
        method=method,
        status=status,
        notes="seen",
    )
    AlertEventFactory(alert=other, old="pending", new=status)
    confirming = next(u for u in uploads if u.pk == first.notify_upload_id)
    assert len(outbox_fill_for_upload(upload_id=confirming.pk)) == 1
    return first, other, confirming


def test_the_moving_alert_absorbs_a_cleared_one_on_its_new_kernel_and_is_emailed_once(
    tmp_path, subscriber_to_all
):
    first, other, confirming = step_down_before_the_move(tmp_path, "cleared", "changepoint")
    first.status = Alert.Status.ACKNOWLEDGED  # triaged before the move: kept
    first.save()
    other_history = set(other.events.values_list("pk", flat=True))
    last = upload(tmp_path, "u11", "2.5.12", STEP_DOWN[11])
    (alert,) = Alert.objects.filter(metric__name="throughput", direction="regression")
    assert alert.pk == first.pk and alert.candidate_run.kernel.version == "2.5.9"
    assert alert.status == "acknowledged" and alert.notify_upload_id == confirming.pk
    assert not Alert.objects.filter(pk=other.pk).exists()
    assert outbox_fill_for_upload(upload_id=last.pk) == []
    assert OutboxMessage.objects.count() == 1
    (move,) = alert.events.filter(field="kernel")
    assert move.old.startswith("2.5.10 (run ") and move.new.startswith("2.5.9 (")
    (merge,) = alert.events.filter(field="merged")
    assert merge.old.startswith(f"alert {other.pk}: cleared, on 2.5.9 (run ")
    assert f"upload {last.pk}'s check" in merge.new and "not emailed" in merge.new
    assert other_history <= set(alert.events.values_list("pk", flat=True))
    assert "seen" in alert.notes
    # the merged alert's page leads to the alert that absorbed it
    gone = Client().get(f"/alerts/{other.pk}/")
    assert gone.status_code == 302 and gone["Location"] == f"/alerts/{alert.pk}/"
    assert Client().get(f"/alerts/{alert.pk + other.pk + 1000}/").status_code == 404
    # checking again changes nothing
    assert check(last) == 0
    assert alert.events.filter(field="merged").count() == 1


def test_a_pending_alert_on_the_new_kernel_is_merged_too(tmp_path, subscriber_to_all):
    """The same with the other alert still pending (a pairwise one): merged, never emailed."""
    first, other, confirming = step_down_before_the_move(tmp_path, "pending", "welch")
    last = upload(tmp_path, "u11", "2.5.12", STEP_DOWN[11])
    (alert,) = Alert.objects.filter(metric__name="throughput", direction="regression")
    assert alert.pk == first.pk and alert.candidate_run.kernel.version == "2.5.9"
    assert alert.status == "untriaged" and alert.notify_upload_id == confirming.pk
    assert "seen" in alert.notes
    assert alert.events.get(field="merged").old.startswith(f"alert {other.pk}: pending, ")
    assert outbox_fill_for_upload(upload_id=last.pk) == []
