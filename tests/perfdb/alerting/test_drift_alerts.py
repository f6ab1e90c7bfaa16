"""A drift as the service records and tells it: a VolanoMark series a little slower kernel
after kernel, one kernel an upload, gets one drift alert, emailed with the upload that
showed it and said in words on the email and the alert's page."""

from __future__ import annotations

import pytest

from perfdb.alerting import placement
from perfdb.alerting.notify import outbox_fill_for_upload
from perfdb.models import Alert, OutboxMessage
from tests.perfdb.alerting.builds import upload

pytestmark = pytest.mark.django_db

# throughput of 10 kernels, 6.1.0 to 6.10.0: four level, then each about 2 % slower than the
# one before (a few tenths of a % off, as runs are), three trials 2 % apart
WOBBLE = (0.4, -0.5, 0.1, 0.6, -0.3, -0.2, 0.5, -0.6, 0.2, 0.0)
LEVELS = [13000 * (0.98 ** max(i - 3, 0)) * (1 + WOBBLE[i] / 100) for i in range(10)]
SERIES = [tuple(round(level * (1 + e)) for e in (-0.02, 0.0, 0.02)) for level in LEVELS]


def test_a_drift_is_one_alert_emailed_once_and_said_in_words(tmp_path, subscriber, client):
    uploads = [upload(tmp_path, f"u{i}", f"6.{i + 1}.0", values) for i, values in enumerate(SERIES)]
    (alert,) = Alert.objects.filter(metric__name="throughput")
    assert alert.method == "drift" and alert.direction == "regression"
    assert alert.status == "untriaged" and alert.confirmed_at is not None
    kernel = alert.candidate_run.kernel.version
    found = uploads[int(kernel.split(".")[1]) - 1]
    assert alert.notify_upload_id == alert.upload_id == found.pk  # with the upload it showed in
    text = placement.drift_text(alert)
    (first,) = alert.baseline_runs.all()  # the window's first kernel: 6.1.0 in 10 kernels
    assert first.kernel.version == "6.1.0"
    window = int(kernel.split(".")[1])
    assert text == f"drift: {alert.change_pct:+.0f} % over {window} kernels, 6.1.0 → {kernel}"
    assert alert.change_pct < -4
    (message_id,) = outbox_fill_for_upload(upload_id=found.pk)
    message = OutboxMessage.objects.get(pk=message_id)
    assert text in message.text and text in message.html
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    assert 'id="alert-drift"' in page and text in page
    api = client.get(f"/api/alerts/{alert.pk}/").json()
    assert api["method"] == "drift"
    # the uploads after it are the same drift: nothing more to email
    assert all(outbox_fill_for_upload(upload_id=u.pk) == [] for u in uploads if u != found)


def test_a_step_alert_has_no_drift_text(tmp_path, subscriber):
    upload(tmp_path, "a", "6.1.0", (13000, 13100, 12950))
    upload(tmp_path, "b", "6.2.0", (11000, 11100, 11050))
    alert = Alert.objects.get(metric__name="throughput", direction="regression")
    assert alert.method == "t-test" and placement.drift_text(alert) == ""
