"""An open alert re-attributed to the neighbouring kernel where a later check places its step.

The rule (which alert, which step) is ``perfdb.alerting.moves_rule``, pure and shared with the
accuracy bench; this applies it to the stored alerts. The alert keeps its id, status, triage
and email: a regression is emailed once, when it is confirmed (``notify_upload`` is not
touched, so no upload's outbox picks it again), and the move is recorded on the alert as an
``AlertEvent`` (field ``kernel``: what it said before, what it says now and why), which the
alert page, the alerts list and the API show. Why no correction mail: a move is one kernel,
the first mail's link shows where the alert is now, and a second mail about one regression
is the double alert a move exists to avoid. A pending or cleared alert of its direction
already on the new run (the same step, flagged before it was confirmed) is merged into the
moving one: its events and notes move over, an event (field ``merged``) says what it was,
and its row goes; it was never emailed, and confirming it instead would email the step a
second time.
"""

from __future__ import annotations

from perfdb import detector
from perfdb.alerting import moves_rule, placement
from perfdb.alerting.check_data import CheckData, SeriesKey
from perfdb.models import Alert, AlertEvent

FIELD = "kernel"  # AlertEvent.field of a re-attribution
MERGED = "merged"  # AlertEvent.field of a pending/cleared alert folded into a moved one


def planned(
    data: CheckData, key: SeriesKey, changes: list[detector.Change]
) -> tuple[dict[int, Alert], dict[int, Alert]]:
    """(change index -> the series' alert it re-attributes, change index -> the alert that
    stays where it is instead: ``moves_rule.placed_anew``)."""
    alerts = data.alerts.get(key, [])
    if not alerts:
        return {}, {}
    held = [_held(a) for a in alerts]
    by_id = {a.pk: a for a in alerts}
    order = moves_rule.KernelOrder.of(data.points[key])
    moving, staying = moves_rule.placed_anew(order, held, changes)
    return (
        {index: by_id[h.key] for index, h in moving.items()},
        {index: by_id[h.key] for index, h in staying.items()},
    )


def _described(kernel: str, run_id: int, change_pct: float) -> str:
    return f"{kernel} (run {run_id}, {change_pct:+.1f} %)"


def move(
    alert: Alert,
    change: detector.Change,
    data: CheckData,
    key: SeriesKey,
    upload_id: int | None,
) -> None:
    """Put ``alert`` on the change's run with the change's figures, and record why."""
    kernels = {p.run_id: detector.kernel_name(p.kernel) for p in data.points[key]}
    before = _described(
        kernels.get(alert.candidate_run_id, "?"), alert.candidate_run_id, alert.change_pct
    )
    where = _where(moves_rule.KernelOrder.of(data.points[key]), _held(alert), change, kernels)
    for other in _merged(alert, change, data, key):
        _merge(alert, other, kernels, upload_id)  # first: the move takes its (run, method)
        data.alerts[key].remove(other)
        data.baselines.pop(other.pk, None)
    alert.candidate_run_id = change.candidate_run_id
    alert.change_pct, alert.p_value = change.change_pct, change.p_value
    alert.confidence = change.confidence
    alert.placed_through_run_id = data.newest[key]
    placement.apply(alert, change)
    alert.save(
        update_fields=[
            "candidate_run",
            "change_pct",
            "p_value",
            "confidence",
            "notes",
            "assignee",
            "placed_through_run_id",
            *placement.FIELDS,
        ]
    )
    alert.baseline_runs.set(change.baseline_run_ids)
    data.baselines.pop(alert.pk, None)
    AlertEvent.objects.create(
        alert=alert,
        field=FIELD,
        old=before,
        new=_described(kernels[change.candidate_run_id], change.candidate_run_id, change.change_pct)
        + f": upload {upload_id}'s check places the step {where} (the step scan "
        "with the kernels since; not emailed again)",
    )


def _where(
    order: moves_rule.KernelOrder,
    alert: moves_rule.Held,
    change: detector.Change,
    kernels: dict[int, str],
) -> str:
    """Where the step went, for the move's event."""
    was, now = order.position(alert.run_id), order.position(change.candidate_run_id)
    if was is None or now is None or was == now:
        return "on another run of the same kernel"
    side = "earlier" if now < was else "later"
    if order.distance(alert, change.candidate_run_id) == 0.5:
        old = kernels.get(alert.run_id, "?")
        return f"on a kernel uploaded since, next to {old} ({side})"
    return f"one kernel {side}"


def _merged(alert: Alert, change: detector.Change, data: CheckData, key: SeriesKey) -> list[Alert]:
    """The series' pending or cleared alerts that ``alert``, moving onto the change's run,
    absorbs (``moves_rule.merged``)."""
    others = [a for a in data.alerts.get(key, []) if a.pk != alert.pk]
    held = {_held(a): a for a in others}
    return [held[h] for h in moves_rule.merged(list(held), change)]


def _held(alert: Alert) -> moves_rule.Held:
    return moves_rule.Held(
        alert.pk,
        alert.candidate_run_id,
        alert.direction,
        alert.method,
        alert.confirmed_at is not None,
        alert.placed_through_run_id,
    )


def _merge(alert: Alert, other: Alert, kernels: dict[int, str], upload_id: int | None) -> None:
    """Fold a never-emailed alert into the confirmed one that moves onto its run: its history
    and notes go to ``alert``, an event says what it was, and its row goes (one alert per run
    and direction; the move takes over its run). Never emailed: it was never confirmed."""
    kernel = kernels.get(other.candidate_run_id, "?")
    AlertEvent.objects.filter(alert=other).update(alert=alert)
    if other.notes:
        alert.notes = "\n\n".join(filter(None, [alert.notes, f"[alert {other.pk}] {other.notes}"]))
    if alert.assignee_id is None:
        alert.assignee_id = other.assignee_id
    AlertEvent.objects.create(
        alert=alert,
        field=MERGED,
        old=f"alert {other.pk}: {other.status}, on "
        + _described(kernel, other.candidate_run_id, other.change_pct)
        + f", {other.method}",
        new=f"merged into this alert: upload {upload_id}'s check places this alert's step on "
        f"{kernel}, where alert {other.pk} had flagged it before it was confirmed (the same "
        "step; not emailed)",
    )
    other.delete()


def merged_into(alert_id: int) -> int | None:
    """The alert that absorbed alert ``alert_id`` (``_merge``), if one did: the merged
    alert's page and the links to it lead there instead of to a 404."""
    events = AlertEvent.objects.filter(field=MERGED, old__startswith=f"alert {alert_id}:")
    return events.values_list("alert_id", flat=True).first()


def kernel_moves(alert: Alert) -> list[AlertEvent]:
    """The alert's re-attributions, oldest first: prefetched by ``queries`` (``kernel_moves``)
    or read."""
    found = getattr(alert, "kernel_moves", None)
    if found is None:
        found = list(alert.events.filter(field=FIELD).order_by("at", "pk"))
    return list(found)


def moves_json(alert: Alert) -> list[dict[str, object]]:
    """The re-attributions as the API shows them: when, from what, to what and why."""
    return [{"at": e.at, "from": e.old, "to": e.new} for e in kernel_moves(alert)]
