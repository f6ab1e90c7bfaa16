"""Triage (perfdb/alerting/triage.py): staff change an alert's status, assignee and notes,
each change recorded with who made it; users manage their own subscriptions, staff
everyone's. The views' side is tests/dashboards/pages/test_alerts.py."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from perfdb.alerting.triage import (
    alert_triage,
    alerts_bulk_triage,
    subscription_delete,
    subscription_save,
)
from perfdb.models import Alert, AlertEvent, Subscription
from tests.factories import AlertFactory, SubscriptionFactory, UserFactory

pytestmark = pytest.mark.django_db


def events(alert: Alert) -> list[tuple[str, str, str, str]]:
    return [
        (e.field, e.old, e.new, e.user.username if e.user else "")
        for e in AlertEvent.objects.filter(alert=alert).order_by("id")
    ]


def test_each_changed_field_is_one_event_naming_who(staff):
    alert = AlertFactory()
    engineer = UserFactory(username="ingo")
    alert_triage(
        alert_id=alert.pk, user=staff, status="investigating", assignee=engineer, notes="bisecting"
    )
    alert.refresh_from_db()
    assert (alert.status, alert.assignee, alert.notes) == ("investigating", engineer, "bisecting")
    assert events(alert) == [
        ("status", "untriaged", "investigating", "boss"),
        ("assignee", "", "ingo", "boss"),
        ("notes", "", "bisecting", "boss"),
    ]


def test_what_is_unchanged_records_nothing_and_none_unassigns(staff):
    alert = AlertFactory(status="acknowledged", notes="seen")
    alert_triage(alert_id=alert.pk, user=staff, status="acknowledged", notes="seen")
    assert events(alert) == []  # the same values: no event
    alert_triage(alert_id=alert.pk, user=staff, assignee=staff)
    alert_triage(alert_id=alert.pk, user=staff, assignee=None)  # "unchanged" is the default
    assert events(alert) == [("assignee", "", "boss", "boss"), ("assignee", "boss", "", "boss")]


def test_only_staff_triage_and_a_refused_change_leaves_the_alert(user):
    alert = AlertFactory()
    with pytest.raises(PermissionDenied):
        alert_triage(alert_id=alert.pk, user=user, status="invalid")
    alert.refresh_from_db()
    assert alert.status == "untriaged" and events(alert) == []


def test_an_unknown_status_is_refused_naming_the_known_ones(staff):
    alert = AlertFactory()
    with pytest.raises(ValidationError, match="'broken' is not one of untriaged, acknowledged"):
        alert_triage(alert_id=alert.pk, user=staff, status="broken")
    assert events(alert) == []


def test_bulk_triage_counts_each_alert_once(staff, user):
    alerts = [AlertFactory(), AlertFactory(), AlertFactory()]
    ids = [a.pk for a in alerts] + [alerts[0].pk]  # a repeated id is one alert
    assert alerts_bulk_triage(alert_ids=ids, user=staff, status="fixed") == 3
    assert set(Alert.objects.values_list("status", flat=True)) == {"fixed"}
    with pytest.raises(PermissionDenied):
        alerts_bulk_triage(alert_ids=ids, user=user, status="wontfix")


def test_users_keep_their_own_subscriptions_and_staff_everyones(user, staff):
    mine = subscription_save(user=user, subscription=Subscription(email="lab@lab.example"))
    assert mine.user == user  # a new subscription is its maker's
    theirs = SubscriptionFactory(user=staff)
    theirs.metric_pattern = "thr*"
    with pytest.raises(PermissionDenied):
        subscription_save(user=user, subscription=theirs)
    with pytest.raises(PermissionDenied):
        subscription_delete(user=user, subscription=theirs)
    mine.min_change_pct = 5
    assert subscription_save(user=staff, subscription=mine).min_change_pct == 5
    subscription_delete(user=staff, subscription=mine)
    assert list(Subscription.objects.all()) == [theirs]


def test_a_subscription_is_validated_before_it_is_stored(user):
    with pytest.raises(ValidationError, match="email"):
        subscription_save(user=user, subscription=Subscription(email="not an address"))
    assert not Subscription.objects.exists()
