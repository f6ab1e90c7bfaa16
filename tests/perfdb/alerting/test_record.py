"""How a check's changes become stored alerts (perfdb/alerting/record.py): the detector's
pending / confirmed / cleared states as alerts, and their email.

A change tested on trials is confirmed with its upload and emailed. An unconfirmed change
(one value a kernel: the newest kernel moved) is a pending alert, never emailed; the next
kernel confirms it (emailed once, with the confirming upload) or clears it (a spike).

A bad run on a series' second kernel is a spike, not the old level of a step. Twice it was
read as one: the short series' check judged the third kernel against it (a move, confirmed
by the fourth: ``short_scan.short_scan``), and once the series was long enough for the step
scan, it stayed in the baseline of the first starts, where no kernel before it could make it
pending (``step_scan.baseline_holds``). A bad *first* run cannot be told from a step at the
second kernel when it arrives (an A/B of two kernels is judged then), and is alerted as one:
an improvement, never emailed, and the way back raises no regression.

A level that comes back within three kernels is an excursion, not two steps. A bimodal
benchmark's visit to its other mode for two or three kernels used to be read as a step away
and a step back: two alerts, and when the visit was to the better mode, the way back was
emailed as a regression on a kernel where the series had always been (``step_scan.came_back``,
docs/detector.md "Excursions").
"""

from __future__ import annotations

import random

import pytest

from perfdb.alerting.notify import outbox_fill_digests, outbox_fill_for_upload
from perfdb.alerting.queries import alerts_filtered
from perfdb.models import Alert, OutboxMessage
from tests.perfdb.alerting.builds import (
    check,
    ingest_runs,
    throughput_regression,
    upload,
)

pytestmark = pytest.mark.django_db


def test_an_ab_of_two_stock_kernels_with_trials_is_emailed_with_the_second(tmp_path, subscriber):
    """The new user's case: two kernels of three trials, the second 15 % slower. The test on
    the trials confirms it with the upload that brings the second kernel."""
    upload(tmp_path, "a", "2.4.20", (13000, 13100, 12950))
    b = upload(tmp_path, "b", "2.5.59", (11000, 11100, 11050))
    alert = throughput_regression()
    assert alert.status == "untriaged" and alert.confirmed_at is not None
    assert alert.notify_upload_id == b.pk and alert.method == "t-test"
    assert alert.state_note == ""  # confirmed: nothing pending to explain
    (message_id,) = outbox_fill_for_upload(upload_id=b.pk)
    assert alert in OutboxMessage.objects.get(pk=message_id).alerts.all()
    # a worse kernel after it does not clear it; nothing is emailed twice
    c = upload(tmp_path, "c", "2.5.60", (9000, 9100, 9050))
    alert.refresh_from_db()
    assert alert.status == "untriaged"
    assert all(
        alert.pk not in OutboxMessage.objects.get(pk=m).alerts.values_list("pk", flat=True)
        for m in outbox_fill_for_upload(upload_id=c.pk)
    )


def test_one_value_a_kernel_is_pending_and_not_emailed(tmp_path, subscriber, client):
    upload(tmp_path, "a", "2.4.20", (13000,))
    b = upload(tmp_path, "b", "2.5.59", (11000,))
    alert = throughput_regression()
    assert alert.status == "pending" and alert.confirmed_at is None
    # the page and the API say what pending means and what would test it
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert "run at least 3 trials on each side" in page and 'id="alert-state-note"' in page
    rows = client.get("/api/alerts/?status=pending").json()["results"]
    (row,) = [a for a in rows if a["id"] == alert.pk]
    assert row["state_note"].startswith("pending: one value a side")
    assert alert.notify_upload_id is None
    assert outbox_fill_for_upload(upload_id=b.pk) == []
    assert not OutboxMessage.objects.exists()
    assert alert in alerts_filtered(status="pending")
    assert alert not in alerts_filtered(status="open")


def test_the_next_kernel_confirms_it_and_its_upload_emails_it_once(tmp_path, subscriber):
    """One value a kernel: three kernels make a level whose spread is the noise, the move
    from it is pending, and the next kernel at the new level confirms it."""
    upload(tmp_path, "a1", "2.4.18", (12950,))
    upload(tmp_path, "a0", "2.4.19", (13040,))
    upload(tmp_path, "a", "2.4.20", (13000,))
    b = upload(tmp_path, "b", "2.5.59", (11000,))
    c = upload(tmp_path, "c", "2.5.60", (11020,))
    alert = throughput_regression()
    # the alert stays on 2.5.59's run (upload b) but is emailed with upload c
    assert alert.candidate_run.kernel.version == "2.5.59" and alert.upload_id == b.pk
    assert alert.status == "untriaged" and alert.confirmed_at is not None
    assert alert.notify_upload_id == c.pk
    assert alert.events.filter(field="status", old="pending").exists()
    assert outbox_fill_for_upload(upload_id=b.pk) == []
    (message_id,) = outbox_fill_for_upload(upload_id=c.pk)
    message = OutboxMessage.objects.get(pk=message_id)
    assert alert in message.alerts.all() and "2.5.59" in message.subject
    # checking again or filling again: picked up exactly once
    assert check(c) == 0
    assert outbox_fill_for_upload(upload_id=c.pk) == []
    d = upload(tmp_path, "d", "2.5.61", (11010,))
    assert outbox_fill_for_upload(upload_id=d.pk) == []
    assert OutboxMessage.objects.count() == 1
    assert Alert.objects.filter(metric__name="throughput").count() == 1


def test_a_spike_is_cleared_by_the_next_kernel_and_never_emailed(tmp_path, subscriber, client):
    upload(tmp_path, "a", "2.4.20", (13000,))
    upload(tmp_path, "b", "2.5.59", (11000,))
    c = upload(tmp_path, "c", "2.5.60", (13050,))
    alert = throughput_regression()
    assert alert.status == "cleared" and alert.confirmed_at is None
    assert alert.state_note.startswith("cleared: the next kernel came back")
    assert alert.events.get(field="status").new.startswith("cleared")
    assert outbox_fill_for_upload(upload_id=c.pk) == []
    assert outbox_fill_digests(day=alert.created_at.date()) == []
    assert alert in alerts_filtered(status="cleared")
    assert alert not in alerts_filtered(status="open")
    page = client.get("/alerts/?status=cleared")
    assert page.status_code == 200 and f"/alerts/{alert.pk}/" in page.content.decode()


def test_a_step_in_a_short_series_is_emailed_with_its_own_upload(tmp_path, subscriber):
    """Seven kernels of three trials: the step at 2.5.5 is confirmed by its own upload."""
    levels = [13000, 13040, 12980, 13020, 11800, 11760, 11820]
    uploads = [
        upload(tmp_path, f"u{i}", f"2.5.{i + 1}", (level, level + 60, level - 40))
        for i, level in enumerate(levels)
    ]
    alert = throughput_regression()
    assert alert.candidate_run.kernel.version == "2.5.5"
    assert alert.status == "untriaged" and alert.upload_id == uploads[4].pk
    assert alert.notify_upload_id == uploads[4].pk
    assert len(outbox_fill_for_upload(upload_id=uploads[4].pk)) == 1
    assert outbox_fill_for_upload(upload_id=uploads[5].pk) == []
    assert outbox_fill_for_upload(upload_id=uploads[6].pk) == []


def test_existing_confirmed_alerts_are_left_alone_by_a_pending_change(tmp_path):
    """A patched build is an A/B test: confirmed at once, emailed with its own upload."""
    upload(tmp_path, "a", "2.4.20", (13000, 13100, 12950))
    b = ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))])
    check(b)
    alert = throughput_regression()
    assert alert.status == "untriaged" and alert.notify_upload_id == b.pk


@pytest.mark.parametrize("seed", [0, 1])
def test_a_bad_second_run_raises_no_step_alert(tmp_path, subscriber, seed):
    rng = random.Random(seed)
    uploads = []
    for i in range(12):
        level = 13000 * (1.06 if i == 1 else 1.0)  # one run 6 % high, ~35 sd of a level
        trials = tuple(round(level * (1 + rng.gauss(0, 0.005))) for _ in range(3))
        uploads.append(upload(tmp_path, f"u{i}", f"2.6.{i}", trials))
    emailed = Alert.objects.filter(metric__name="throughput", confirmed_at__isnull=False)
    found = list(emailed.values_list("candidate_run__kernel__version", "direction"))
    assert found in ([], [("2.6.1", "improvement")])
    assert not Alert.objects.filter(metric__name="throughput", direction="regression").exists()
    assert all(outbox_fill_for_upload(upload_id=u.pk) == [] for u in uploads)


def _series(tmp_path, visit: range, offset: float, kernels: int = 16):
    rng = random.Random(5)
    uploads = []
    for i in range(kernels):
        level = 13000 * (1 + offset if i in visit else 1.0)
        trials = tuple(round(level * (1 + rng.gauss(0, 0.005))) for _ in range(3))
        uploads.append(upload(tmp_path, f"u{i}", f"2.6.{i}", trials))
    return uploads


def _confirmed():
    alerts = Alert.objects.filter(metric__name="throughput", confirmed_at__isnull=False)
    return sorted(alerts.values_list("candidate_run__kernel__version", "direction"))


@pytest.mark.usefixtures("step_scan_from_six_kernels")
@pytest.mark.parametrize("length", [2, 3])
def test_a_visit_to_a_better_level_and_back_emails_no_regression(tmp_path, subscriber, length):
    uploads = _series(tmp_path, range(8, 8 + length), 0.06)
    assert _confirmed() == [("2.6.8", "improvement")]  # the way back raised nothing
    assert all(outbox_fill_for_upload(upload_id=u.pk) == [] for u in uploads)


@pytest.mark.usefixtures("step_scan_from_six_kernels")
def test_a_gain_lost_within_the_excursion_window_is_told_on_its_improvement(tmp_path, client):
    # the price of the rule: losing a gain within three kernels raises no regression, so the
    # improvement's alert says the series went back
    _series(tmp_path, range(8, 10), 0.06)
    gain = Alert.objects.get(metric__name="throughput", direction="improvement")
    assert gain.recovered
    event = gain.events.get(field="recovered")
    # marked on the first kernel back
    assert event.new.startswith("True (back to ") and event.new.endswith(" at 2.6.10)")
    assert "(lost)" in client.get("/alerts/?status=improvement").content.decode()
    page = client.get(f"/alerts/{gain.pk}/").content.decode()
    assert "lost (the series went back)" in page


@pytest.mark.usefixtures("step_scan_from_six_kernels")
def test_a_visit_to_a_worse_level_is_emailed_once_and_marked_recovered(tmp_path, subscriber):
    uploads = _series(tmp_path, range(8, 10), -0.06)
    assert _confirmed() == [("2.6.8", "regression")]  # no improvement raised on the way back
    regression = Alert.objects.get(metric__name="throughput", direction="regression")
    assert regression.recovered
    emailed = [u for u in uploads if outbox_fill_for_upload(upload_id=u.pk)]
    assert emailed == [uploads[9]]  # confirmed by 2.6.9, once


@pytest.mark.usefixtures("step_scan_from_six_kernels")
def test_a_level_that_lasts_four_kernels_is_two_steps(tmp_path, user):
    _series(tmp_path, range(8, 12), 0.06)
    assert _confirmed() == [("2.6.12", "regression"), ("2.6.8", "improvement")]
