"""The alert pages' forms: an alert's triage (posted on its page, kept in its history) and a
subscription, only ever to the account's own address."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from dashboards.pages.alert_forms import SubscriptionForm, TriageForm, own_address
from perfdb.models import AlertEvent, Subscription
from tests.factories import SubscriptionFactory, UserFactory

pytestmark = pytest.mark.django_db

SUBSCRIPTION = {
    "email": "lab@example.org",
    "workload_pattern": "SPECjAppServer*",
    "hardware_pattern": "*",
    "metric_pattern": "*",
    "min_change_pct": "2",
    "delivery": "immediate",
    "active": "on",
}


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


def test_triage_takes_only_an_alert_status_and_an_active_assignee(staff):
    gone = UserFactory(username="gone", is_active=False)
    assert TriageForm({"status": "acknowledged", "assignee": staff.pk}).is_valid()
    form = TriageForm({"status": "sideways", "assignee": gone.pk})
    assert not form.is_valid()
    assert set(form.errors) == {"status", "assignee"}


def test_users_manage_their_own_subscriptions(client, user, staff):
    user.email = "lab@example.org"  # only the account's own address can be subscribed
    user.save()
    client.force_login(user)
    client.post("/subscriptions/", SUBSCRIPTION)
    sub = Subscription.objects.get()
    assert (sub.user, sub.workload_pattern) == (user, "SPECjAppServer*")
    theirs = SubscriptionFactory(user=staff, email="boss@example.org")
    assert "boss@example.org" not in client.get("/subscriptions/").content.decode()
    assert client.post("/subscriptions/", {"delete": theirs.pk}).status_code == 403
    client.force_login(staff)
    assert "lab@example.org" in client.get("/subscriptions/").content.decode()


def test_a_subscription_to_another_address_is_refused(user):
    user.email = "lab@example.org"
    form = SubscriptionForm({**SUBSCRIPTION, "email": "boss@example.org"}, user=user)
    assert not form.is_valid()
    assert form.errors["email"] == ["you can only subscribe your own address, lab@example.org"]
    assert SubscriptionForm({**SUBSCRIPTION, "email": "LAB@example.org "}, user=user).is_valid()


def test_own_address_is_the_accounts_whatever_its_case(user):
    user.email = " Lab@Example.org "
    assert own_address(user, "lab@example.ORG") == "Lab@Example.org"
    user.email = ""
    with pytest.raises(ValidationError, match="has no email address"):
        own_address(user, "lab@example.org")
