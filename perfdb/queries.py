"""Reads of the data model (selectors). Pages and the API call these; no writes here."""

from __future__ import annotations

from django.db.models import Count, QuerySet

from perfdb.models import Hardware, Run, Upload, Workload


def workloads_with_counts() -> QuerySet[Workload]:
    return Workload.objects.annotate(run_count=Count("setup__runs")).order_by("name", "version")


def hardware_with_counts() -> QuerySet[Hardware]:
    return Hardware.objects.annotate(run_count=Count("setup__runs")).order_by("name")


def runs_recent(*, limit: int = 20) -> QuerySet[Run]:
    return Run.objects.select_related(
        "setup__workload", "setup__hardware", "kernel", "patch_set"
    ).order_by("-created_at", "-id")[:limit]


def uploads_recent(*, limit: int = 10) -> QuerySet[Upload]:
    return Upload.objects.select_related("user").order_by("-created_at")[:limit]


# --- runs ---------------------------------------------------------------------------------


def runs_filtered(
    *,
    workload: str | None = None,
    kernel: str | None = None,
    patches: str | None = None,
    hardware: str | None = None,
    mode: str | None = None,
) -> QuerySet[Run]:
    """Runs matching API filters; ``patches`` is the '+'-joined set, 'stock' or '' for none."""
    runs = Run.objects.select_related(
        "setup__workload", "setup__hardware", "kernel", "patch_set"
    ).order_by("-id")
    if workload:
        runs = runs.filter(setup__workload__name=workload)
    if kernel:
        runs = runs.filter(kernel__version=kernel)
    if patches is not None:
        runs = runs.filter(patch_set__name="" if patches in ("", "stock") else patches)
    if hardware:
        runs = runs.filter(setup__hardware__name=hardware)
    if mode:
        runs = runs.filter(setup__mode=mode.upper())
    return runs


def run_with_keys(*, run_id: int) -> Run | None:
    return (
        Run.objects.select_related(
            "setup__workload", "setup__hardware", "kernel", "patch_set", "upload"
        )
        .filter(pk=run_id)
        .first()
    )


def run_results(*, run_id: int) -> dict[str, dict[str, object]]:
    """Per metric: unit, better, values in trial order, discarded trials, mean, sd, n.

    Warm-up trials are listed but left out of mean, sd and n.
    """
    from statistics import fmean, stdev

    from perfdb.models import Result

    rows = (
        Result.objects.filter(run_id=run_id)
        .select_related("metric")
        .order_by("metric__name", "metric__unit", "trial")
    )
    out: dict[str, dict[str, object]] = {}
    for row in rows:
        entry = out.setdefault(
            row.metric.name,
            {
                "unit": row.metric.unit,
                "better": row.metric.better,
                "trials": [],
                "values": [],
                "discarded_trials": [],
            },
        )
        entry["trials"].append(row.trial)
        entry["values"].append(row.value)
        if row.discarded:
            entry["discarded_trials"].append(row.trial)
    for entry in out.values():
        kept = [
            v
            for t, v in zip(entry["trials"], entry["values"], strict=True)
            if t not in entry["discarded_trials"]
        ]
        entry["n"] = len(kept)
        entry["mean"] = fmean(kept) if kept else None
        entry["sd"] = stdev(kept) if len(kept) > 1 else None
    return out


# --- alerts -------------------------------------------------------------------------------

ALERT_FILTERS = ("status", "workload", "hardware", "kernel", "patch", "direction")


def alerts_filtered(
    *,
    status: str | None = None,
    workload: str | None = None,
    hardware: str | None = None,
    kernel: str | None = None,
    patch: str | None = None,
    direction: str | None = None,
):
    """Alerts newest first with everything a list row shows (no N+1)."""
    from perfdb.models import Alert

    alerts = Alert.objects.select_related(
        "setup__workload",
        "setup__hardware",
        "metric",
        "candidate_run__kernel",
        "candidate_run__patch_set",
        "assignee",
    ).prefetch_related("baseline_runs__kernel", "baseline_runs__patch_set")
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


def alert_with_history(*, alert_id: int):
    from perfdb.models import Alert

    return (
        Alert.objects.select_related(
            "setup__workload",
            "setup__hardware",
            "metric",
            "candidate_run__kernel",
            "candidate_run__patch_set",
            "assignee",
            "upload",
        )
        .prefetch_related("baseline_runs__kernel", "baseline_runs__patch_set", "events__user")
        .filter(pk=alert_id)
        .first()
    )


def outbox_recent(*, limit: int = 50):
    from perfdb.models import OutboxMessage

    return OutboxMessage.objects.order_by("-created_at")[:limit]
