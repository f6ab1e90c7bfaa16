"""A step alert says how sure it is of its kernel (Change.location_share, perfdb/placement.py):
stored when the alert is confirmed and when it moves, written in its email, on its page and in
the API."""

from __future__ import annotations

import pytest

from perfdb import detection
from perfdb.alerting import location
from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import OutboxMessage, Subscription
from tests.perfdb.alerting.test_alert_moves import upload_all
from tests.perfdb.alerting.test_pending_alerts import throughput_regression, upload
from tests.perfdb.test_alert_moves import POINTS, TRIALS

pytestmark = pytest.mark.django_db


@pytest.fixture
def subscriber(user):
    return Subscription.objects.create(user=user, email="lab@lab.example", metric_pattern="thr*")


def test_the_confirmed_alert_stores_the_detector_s_placement_and_its_email_says_it(
    tmp_path, subscriber
):
    uploads = upload_all(tmp_path, 10)
    alert = throughput_regression()
    (step,) = detection.change_points(POINTS[:10], better="higher")  # what the check saw
    assert alert.candidate_run.kernel.version == "2.5.8"
    assert alert.location_share == pytest.approx(step.location_share)
    runner_up_kernel = f"2.5.{step.runner_up[0]}"
    assert alert.runner_up_run.kernel.version == runner_up_kernel
    assert alert.runner_up_share == pytest.approx(step.runner_up[1])
    (message_id,) = outbox_fill_for_upload(upload_id=uploads[9].pk)
    text = OutboxMessage.objects.get(pk=message_id).text
    said = f"step starts at 2.5.8 ({alert.location_share * 100:.0f} %)"
    assert said in text and said in OutboxMessage.objects.get(pk=message_id).html
    if alert.location_share < location.SURE:
        assert f"or {runner_up_kernel} (" in text and "rerun both to tell" in text


def test_a_moved_alert_takes_the_new_placement_shown_on_its_page_and_in_the_api(tmp_path, client):
    upload_all(tmp_path, 10)
    upload(tmp_path, "u10", "2.5.11", TRIALS[10])
    alert = throughput_regression()
    (step,) = detection.change_points(POINTS, better="higher")
    assert alert.candidate_run.kernel.version == "2.5.9"  # moved (test_alert_moves.py)
    assert alert.location_share == pytest.approx(step.location_share)
    assert alert.runner_up_run.kernel.version == "2.5.8"  # the kernel between the levels
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'id="alert-placed"' in page and "2.5.9 (" in page and "or 2.5.8 (" in page
    listing = client.get("/alerts/").content.decode()  # the list names the other kernel too
    assert f'class="muted alert-doubt">(or 2.5.8 ({step.runner_up[1] * 100:.0f} %))' in listing
    (row,) = [a for a in client.get("/api/alerts/").json()["results"] if a["id"] == alert.pk]
    assert row["location_share"] == pytest.approx(step.location_share)
    assert row["runner_up"] == {
        "run": alert.runner_up_run_id,
        "kernel": "2.5.8",
        "share": pytest.approx(step.runner_up[1]),
    }
    detail = client.get(f"/api/alerts/{alert.pk}/").json()
    assert detail["runner_up"]["kernel"] == "2.5.8"


def test_a_pairwise_alert_states_no_placement(tmp_path, client):
    upload(tmp_path, "a", "2.4.20", (13000, 13100, 12950))
    upload(tmp_path, "b", "2.5.59", (11000, 11100, 11050))  # two kernels: pairwise, pending
    alert = throughput_regression()
    assert alert.method != "changepoint"
    assert alert.location_share is None and alert.runner_up_run is None
    assert location.text(alert) == ""
    assert 'id="alert-placed"' not in client.get(f"/alerts/{alert.pk}/").content.decode()
    rows = client.get("/api/alerts/?status=pending").json()["results"]
    (row,) = [a for a in rows if a["id"] == alert.pk]
    assert row["location_share"] is None and row["runner_up"] is None
