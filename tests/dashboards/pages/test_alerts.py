"""Alert pages: the list and its filters, the detail, bulk triage (staff only), the alerts API,
an upload's alerts and the daily digest. The triage and subscription forms are
test_alert_forms.py."""

from __future__ import annotations

import json
from html import unescape

import pytest

from perfdb.models import Alert
from tests.factories import AlertFactory, CommitKernelFactory, SubscriptionFactory, UploadFactory

pytestmark = pytest.mark.django_db


def test_list_filters(client, alert):
    page = client.get("/alerts/?status=open&workload=VolanoMark").content.decode()
    assert f"/alerts/{alert.pk}/" in page and "O(1)" in page
    assert f"/alerts/{alert.pk}/" not in client.get("/alerts/?status=fixed").content.decode()
    assert f"/alerts/{alert.pk}/" in client.get("/alerts/?patch=O(1)").content.decode()


@pytest.mark.parametrize("query", ["status=broken", "direction=sideways"])
def test_bad_filters_are_a_400_naming_them(client, query):
    response = client.get(f"/alerts/?{query}")
    assert response.status_code == 400
    assert query.split("=")[0] in response.content.decode()


def test_detail_shows_the_series_with_both_runs_marked(client, alert):
    page = client.get(f"/alerts/{alert.pk}/").content.decode()
    base = alert.baseline_runs.get().pk
    assert f"/compare/?base={base}&amp;new={alert.candidate_run_id}" in page
    start = page.index('id="alert-figure"')
    figure = json.loads(page[page.index(">", start) + 1 : page.index("</script>", start)])
    names = [trace["name"] for trace in figure["data"]]
    assert f"candidate: run #{alert.candidate_run_id}" in names
    assert any(name.startswith("baseline: run #") for name in names)


def test_a_tiny_p_value_reads_as_a_bound_on_the_list_and_the_detail(client, alert):
    """Printed to four places, p = 1e-7 read "p = 0.0000", which no test can give."""
    Alert.objects.filter(pk=alert.pk).update(p_value=1e-7)
    for url in ("/alerts/", f"/alerts/{alert.pk}/"):
        page = client.get(url).content.decode()
        assert "p &lt; 0.0001" in page and "p = 0.0000" not in page
    Alert.objects.filter(pk=alert.pk).update(p_value=0.00312)
    assert "p = 0.00312" in client.get("/alerts/").content.decode()


def test_non_staff_cannot_triage(client, user, alert):
    client.force_login(user)
    response = client.post(f"/alerts/{alert.pk}/", {"status": "invalid"})
    assert response.status_code == 403
    alert.refresh_from_db()
    assert alert.status == "untriaged"


def test_bulk_triage(client, staff, alert):
    others = list(Alert.objects.exclude(pk=alert.pk).values_list("pk", flat=True))
    client.force_login(staff)
    client.post("/alerts/", {"alert": [alert.pk, *others], "status": "investigating"})
    assert set(Alert.objects.values_list("status", flat=True)) == {"investigating"}


def test_alerts_api(client, alert):
    body = client.get("/api/alerts/?status=open").json()
    row = next(r for r in body["results"] if r["id"] == alert.pk)
    assert row["candidate_run"] == alert.candidate_run_id
    assert row["baseline_run"] == [alert.baseline_runs.get().pk]
    assert row["direction"] == "regression" and row["status"] == "untriaged"
    assert row["change_pct"] == pytest.approx(alert.change_pct)
    assert row["series"]["metric"] == "throughput" and row["series"]["better"] == "higher"
    assert client.get("/api/alerts/?status=nope").status_code == 400


def test_the_upload_page_sums_up_its_alerts(client, alert):
    page = client.get(f"/uploads/{alert.upload_id}/").content.decode()
    assert "regression" in page and f"/alerts/{alert.pk}/" in page


def test_daily_digest_collects_the_days_regressions(alert, user, smtp_server, settings):
    from django.utils import timezone

    from perfdb.alerting.notify import outbox_fill_digests, outbox_send

    controller, handler = smtp_server
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", controller.port
    handler.messages.clear()
    SubscriptionFactory(user=user, email="digest@lab.example", delivery="digest")
    SubscriptionFactory(user=user, email="now@lab.example", delivery="immediate")
    today = timezone.now().date()
    (message_id,) = outbox_fill_digests(day=today)
    assert outbox_fill_digests(day=today) == []  # one digest a day
    assert outbox_send(message_id=message_id) == "sent"
    (received,) = handler.messages
    assert received["To"] == "digest@lab.example"


def test_a_commit_is_named_with_its_subject_where_people_read_it(client):
    """A kernel test robot's culprit is a commit: its pages, the alert list, the overview
    and the upload page name it by hash and subject, as the robot's mail does."""
    commit = CommitKernelFactory(
        version="893598979838", subject="do_pollfd(): convert to CLASS(fd)"
    )
    upload = UploadFactory(status="done")
    alert = AlertFactory(upload=upload, candidate_run__kernel=commit, candidate_run__upload=upload)
    named = '893598979838 ("do_pollfd(): convert to CLASS(fd)")'
    for url in (
        f"/alerts/{alert.pk}/",
        f"/runs/{alert.candidate_run_id}/",
        "/alerts/",
        f"/uploads/{upload.pk}/",
    ):
        assert named in unescape(client.get(url).content.decode()), url
    overview = unescape(client.get("/").content.decode())
    assert '("do_pollfd(): convert to CLASS(fd)")' in overview
