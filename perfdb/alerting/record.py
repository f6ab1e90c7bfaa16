"""A check's changes of one series recorded as alerts: made, confirmed, moved or kept.

One alert per run and direction: the pairwise test at the newest kernel and the step scan
that confirms it later update the same row. A change the detector calls ``unconfirmed``
(the newest kernel moved) is stored as a *pending* alert and not emailed; when a later
check returns it confirmed, the same alert is confirmed and emailed with that upload
(``Alert.notify_upload``). A confirmed step that a later check places on the neighbouring
kernel moves its alert there (``moves``: recorded on the alert, not emailed again) instead
of raising a second one, or leaves it where it is when the step's placement favours the
alert's kernel (``moves_rule.placed_anew``).
"""

from __future__ import annotations

from typing import NamedTuple

from django.utils import timezone

from perfdb.alerting import moves, placement
from perfdb.alerting.check_data import CheckData, SeriesKey
from perfdb.detector import Change
from perfdb.models import Alert, AlertEvent


class Recorded(NamedTuple):
    made: list[int]  # new or newly confirmed alerts (pending ones too)
    owed: bool  # a regression made or confirmed: the upload's email is owed
    kept: set[int]  # every alert the changes made, updated, moved or left where it is


def changes_recorded(
    data: CheckData, key: SeriesKey, changes: list[Change], upload_id: int | None
) -> Recorded:
    """Record one series' changes (``data`` kept current as alerts are written).

    Moves first: an alert moving onto a run absorbs the pending/cleared alert there, which
    another change on that run would otherwise confirm (and email) first."""
    made: list[int] = []
    owed = False
    kept: set[int] = set()
    # a step placed anew: its alert moves, or stays where the evidence puts it; no new alert
    moving, staying = moves.planned(data, key, changes)
    for index, alert_moving in moving.items():
        moves.move(alert_moving, changes[index], data, key, upload_id)
        kept.add(alert_moving.pk)
    kept.update(alert.pk for alert in staying.values())
    for index, change in enumerate(changes):
        if index in moving or index in staying:
            continue
        alert, outcome = _alert_record(change, data, key, upload_id)
        kept.add(alert.pk)
        if outcome in (CREATED, CONFIRMED, PENDING):
            made.append(alert.pk)
        if outcome in (CREATED, CONFIRMED) and alert.direction == "regression":
            owed = True
    return Recorded(made, owed, kept)


CONFIRMED, CREATED, PENDING = "confirmed", "created", "pending"


def _alert_record(
    change: Change, data: CheckData, key: SeriesKey, upload_id: int | None
) -> tuple[Alert, str | None]:
    """Store one detector change; returns the alert and what happened to it.

    ``created``: a new confirmed alert (emailed with this upload); ``pending``: a new
    unconfirmed one (stored, shown, not emailed); ``confirmed``: a pending or cleared alert
    that this check confirms (emailed with this upload, although its run may belong to an
    earlier upload; the history says so); None: nothing new. One alert per run and
    direction: the pairwise test at the newest kernel and the step scan that confirms it
    later update the same row.
    """
    confirmed = change.status != "unconfirmed"
    alert = _same_run_alert(data.alerts.get(key, []), change)
    if alert is None:
        alert, created = _alert_made(change, data, key, upload_id)
        if created:
            return alert, CREATED if confirmed else PENDING
        # made by another writer since this check read the series (checks of a series are
        # serialised, so not another check): confirmed below if this change confirms it
    if alert.confirmed_at is not None:
        if confirmed:
            placement.refresh(alert, change, upload_id)  # the kernels and runs since may settle it
        return alert, None
    if not confirmed:
        return alert, None
    old = alert.status
    if alert.status in (Alert.Status.PENDING, Alert.Status.CLEARED):
        alert.status = (
            Alert.Status.IMPROVEMENT
            if change.direction == "improvement"
            else Alert.Status.UNTRIAGED
        )
    alert.change_pct, alert.p_value = change.change_pct, change.p_value
    alert.confidence, alert.direction, alert.method = (
        change.confidence,
        change.direction,
        change.method,
    )
    alert.confirmed_at, alert.notify_upload_id = timezone.now(), upload_id
    alert.placed_through_run_id = data.newest[key]
    placement.apply(alert, change)
    alert.save()
    alert.baseline_runs.set(change.baseline_run_ids)
    data.baselines.pop(alert.pk, None)
    AlertEvent.objects.create(
        alert=alert,
        field="status",
        old=old,
        new=f"{alert.status} (confirmed by the next kernel, upload {upload_id})",
    )
    return alert, CONFIRMED


def _alert_made(
    change: Change, data: CheckData, key: SeriesKey, upload_id: int | None
) -> tuple[Alert, bool]:
    """The change's alert, made unless another writer made it first (created or not)."""
    confirmed = change.status != "unconfirmed"
    alert, created = Alert.objects.get_or_create(
        setup_id=key[0],
        metric_id=key[1],
        candidate_run_id=change.candidate_run_id,
        method=change.method,
        defaults={
            "upload_id": upload_id,
            "change_pct": change.change_pct,
            "p_value": change.p_value,
            "confidence": change.confidence,
            "direction": change.direction,
            "status": Alert.Status.IMPROVEMENT
            if change.direction == "improvement"
            else (Alert.Status.UNTRIAGED if confirmed else Alert.Status.PENDING),
            "confirmed_at": timezone.now() if confirmed else None,
            "notify_upload_id": upload_id if confirmed else None,
            "placed_through_run_id": data.newest[key],
            **placement.values(change),
        },
    )
    data.alerts.setdefault(key, []).append(alert)
    data.baselines.pop(alert.pk, None)
    if created:
        alert.baseline_runs.set(change.baseline_run_ids)
    return alert, created


def _same_run_alert(alerts: list[Alert], change: Change) -> Alert | None:
    """The series' alert this change updates: the one on its run with its method, else the
    one on its run in its direction confirmed first (pending ones last, then by id), as
    ``ORDER BY confirmed_at, id`` picks in PostgreSQL."""
    same_run = [a for a in alerts if a.candidate_run_id == change.candidate_run_id]
    same_method = [a for a in same_run if a.method == change.method]
    if same_method:
        return same_method[0]
    same_direction = [a for a in same_run if a.direction == change.direction]
    return min(
        same_direction,
        key=lambda a: (a.confirmed_at is None, a.confirmed_at or timezone.now(), a.pk),
        default=None,
    )
