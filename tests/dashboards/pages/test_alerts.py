"""Alert pages, triage (staff only, with history), the alerts API, subscriptions."""

from __future__ import annotations

import json

import pytest

from perfdb.models import Alert, AlertEvent, Subscription
from tests.factories import SubscriptionFactory

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


def test_staff_triage_records_history(client, staff, alert):
    client.force_login(staff)
    response = client.post(
        f"/alerts/{alert.pk}/",
        {"status": "acknowledged", "assignee": staff.pk, "notes": "O(1) load balance"},
    )
    assert response.status_code == 302
    alert.refresh_from_db()
    assert (alert.status, alert.assignee, alert.notes) == (
        "acknowledged",
        staff,
        "O(1) load balance",
    )
    events = list(AlertEvent.objects.filter(alert=alert).values_list("field", "old", "new"))
    assert ("status", "untriaged", "acknowledged") in events
    assert ("assignee", "", "boss") in events


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


def test_users_manage_their_own_subscriptions(client, user, staff):
    user.email = "lab@example.org"  # only the account's own address can be subscribed
    user.save()
    client.force_login(user)
    client.post(
        "/subscriptions/",
        {
            "email": "lab@example.org",
            "workload_pattern": "SPECjAppServer*",
            "hardware_pattern": "*",
            "metric_pattern": "*",
            "min_change_pct": "2",
            "delivery": "immediate",
            "active": "on",
        },
    )
    sub = Subscription.objects.get()
    assert (sub.user, sub.workload_pattern) == (user, "SPECjAppServer*")
    theirs = SubscriptionFactory(user=staff, email="boss@example.org")
    assert "boss@example.org" not in client.get("/subscriptions/").content.decode()
    assert client.post("/subscriptions/", {"delete": theirs.pk}).status_code == 403
    client.force_login(staff)
    assert "lab@example.org" in client.get("/subscriptions/").content.decode()


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
