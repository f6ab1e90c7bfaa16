"""Reads of alerts and their email (selectors): the alert pages and the upload page use these."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from perfdb.alerting.moves import FIELD as MOVE_FIELD
from perfdb.models import Alert, AlertEvent

ALERT_FILTERS = ("status", "workload", "hardware", "kernel", "patch", "direction")

# What an alert row shows, fetched with it (no N+1).
ROW_RELATED = (
    "setup__workload",
    "setup__hardware",
    "metric",
    "candidate_run__kernel",
    "candidate_run__patch_set",
    "runner_up_run__kernel",
    "assignee",
)
ROW_PREFETCHED = ("baseline_runs__kernel", "baseline_runs__patch_set")


def kernel_moves_prefetch() -> Prefetch[str, QuerySet[AlertEvent], str]:
    """The alert's re-attributions (``moves.move``), oldest first, as ``alert.kernel_moves``:
    a row says where the detector first placed the step."""
    moved = AlertEvent.objects.filter(field=MOVE_FIELD).order_by("at", "pk")
    return Prefetch("events", queryset=moved, to_attr="kernel_moves")


def alerts_filtered(
    *,
    status: str | None = None,
    workload: str | None = None,
    hardware: str | None = None,
    kernel: str | None = None,
    patch: str | None = None,
    direction: str | None = None,
) -> QuerySet[Alert]:
    """Alerts newest first with everything a list row shows (no N+1)."""
    alerts = Alert.objects.select_related(*ROW_RELATED).prefetch_related(
        *ROW_PREFETCHED, kernel_moves_prefetch()
    )
    if status == "open":
        alerts = alerts.filter(status__in=["untriaged", "acknowledged", "investigating"])
    elif status:
        alerts = alerts.filter(status=status)
    if workload:
        alerts = alerts.filter(setup__workload__name=workload)
    if hardware:
        alerts = alerts.filter(setup__hardware__name=hardware)
    if kernel:
        alerts = alerts.filter(candidate_run__kernel__version=kernel)
    if patch:
        alerts = alerts.filter(candidate_run__patch_set__patches__name=patch)
    if direction:
        alerts = alerts.filter(direction=direction)
    return alerts.order_by("-created_at", "-id")


def alert_with_history(*, alert_id: int) -> Alert | None:
    return (
        Alert.objects.select_related(*ROW_RELATED, "upload")
        .prefetch_related(*ROW_PREFETCHED, "events__user", kernel_moves_prefetch())
        .filter(pk=alert_id)
        .first()
    )
