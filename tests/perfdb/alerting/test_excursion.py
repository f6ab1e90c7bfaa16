"""A level that comes back within three kernels is an excursion, not two steps.

A bimodal benchmark's visit to its other mode for two or three kernels used to be read as a
step away and a step back: two alerts, and when the visit was to the better mode, the way
back was emailed as a regression on a kernel where the series had always been
(``stats.came_back``, docs/detector.md "Excursions")."""

from __future__ import annotations

import random

import pytest

from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import Alert
from tests.perfdb.alerting.builds import upload

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("step_scan_from_six_kernels")]


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


@pytest.mark.parametrize("length", [2, 3])
def test_a_visit_to_a_better_level_and_back_emails_no_regression(tmp_path, subscriber, length):
    uploads = _series(tmp_path, range(8, 8 + length), 0.06)
    assert _confirmed() == [("2.6.8", "improvement")]  # the way back raised nothing
    assert all(outbox_fill_for_upload(upload_id=u.pk) == [] for u in uploads)


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


def test_a_visit_to_a_worse_level_is_emailed_once_and_marked_recovered(tmp_path, subscriber):
    uploads = _series(tmp_path, range(8, 10), -0.06)
    assert _confirmed() == [("2.6.8", "regression")]  # no improvement raised on the way back
    regression = Alert.objects.get(metric__name="throughput", direction="regression")
    assert regression.recovered
    emailed = [u for u in uploads if outbox_fill_for_upload(upload_id=u.pk)]
    assert emailed == [uploads[9]]  # confirmed by 2.6.9, once


def test_a_level_that_lasts_four_kernels_is_two_steps(tmp_path, user):
    _series(tmp_path, range(8, 12), 0.06)
    assert _confirmed() == [("2.6.12", "regression"), ("2.6.8", "improvement")]
