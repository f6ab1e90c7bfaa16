"""Triage of alerts and management of subscriptions: every change is recorded with who."""

from __future__ import annotations

from collections.abc import Iterable

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from perfdb.models import Alert, AlertEvent, Subscription

TRIAGE_FIELDS = ("status", "assignee", "notes")


def _require_staff(user: User) -> None:
    if not (user and user.is_authenticated and user.is_staff):
        raise PermissionDenied("only staff can triage alerts")


@transaction.atomic
def alert_triage(
    *,
    alert_id: int,
    user: User,
    status: str | None = None,
    assignee: User | None | str = "unchanged",
    notes: str | None = None,
) -> Alert:
    """Change an alert's status, assignee or notes; each change becomes an AlertEvent."""
    _require_staff(user)
    if status is not None and status not in Alert.Status.values:
        raise ValidationError(f"status {status!r} is not one of {', '.join(Alert.Status.values)}")
    alert = Alert.objects.select_for_update().get(pk=alert_id)
    changes: list[tuple[str, str, str]] = []
    if status is not None and status != alert.status:
        changes.append(("status", alert.status, status))
        alert.status = status
    if not isinstance(assignee, str) and assignee != alert.assignee:
        old = alert.assignee.username if alert.assignee else ""
        changes.append(("assignee", old, assignee.username if assignee else ""))
        alert.assignee = assignee
    if notes is not None and notes != alert.notes:
        changes.append(("notes", alert.notes, notes))
        alert.notes = notes
    if changes:
        alert.save(update_fields=list(TRIAGE_FIELDS))
        AlertEvent.objects.bulk_create(
            AlertEvent(alert=alert, user=user, field=f, old=o, new=n) for f, o, n in changes
        )
    return alert


@transaction.atomic
def alerts_bulk_triage(*, alert_ids: Iterable[int], user: User, status: str) -> int:
    _require_staff(user)
    count = 0
    for alert_id in sorted(set(alert_ids)):
        alert_triage(alert_id=alert_id, user=user, status=status)
        count += 1
    return count


def subscription_save(*, user: User, subscription: Subscription) -> Subscription:
    """Users manage their own subscriptions; staff manage everyone's."""
    if subscription.pk and subscription.user_id != user.pk and not user.is_staff:
        raise PermissionDenied("you can only change your own subscriptions")
    if not subscription.user_id:
        subscription.user = user
    subscription.full_clean()
    subscription.save()
    return subscription


def subscription_delete(*, user: User, subscription: Subscription) -> None:
    if subscription.user_id != user.pk and not user.is_staff:
        raise PermissionDenied("you can only delete your own subscriptions")
    subscription.delete()
