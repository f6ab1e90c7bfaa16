"""Reference-kernel control: was an alert raised while the machine itself moved?

A setup (or its hardware) may name a reference build re-run regularly on the same hardware
(``ReferenceBuild``). When its runs of the last ``WINDOW`` shift against its older runs —
judged by ``detector.policy.judge``, the alerts' own rule — in the alert's direction, an alert
on that hardware raised in that window is *shared with the reference*: a ``ReferenceHold``
records it, and the alert is held out of email until someone triages it (``held``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import fmean

from django.db.models import Q, QuerySet

from perfdb.detector import policy, stats
from perfdb.models import Alert, ReferenceBuild, ReferenceHold, Result, Run, Setup

WINDOW = timedelta(days=7)
MIN_HISTORY = 2  # older reference runs needed to call a shift


@dataclass(frozen=True)
class Shift:
    setup_id: int
    metric_id: int
    build: str
    verdict: policy.Verdict
    recent_run_ids: tuple[int, ...]
    history_run_ids: tuple[int, ...]


def reference_for(setup: Setup) -> ReferenceBuild | None:
    """The setup's own reference, else its hardware's."""
    refs = ReferenceBuild.objects.filter(
        Q(setup_id=setup.pk) | Q(hardware_id=setup.hardware_id, setup__isnull=True)
    ).select_related("kernel", "patch_set")
    return min(refs, key=lambda r: r.setup_id is None, default=None)


def reference_runs(ref: ReferenceBuild, hardware_id: int) -> list[Run]:
    return list(
        Run.objects.filter(
            setup__hardware_id=hardware_id, kernel_id=ref.kernel_id, patch_set_id=ref.patch_set_id
        ).order_by("created_at", "id")
    )


def shift_of(
    runs: list[Run], metric_id: int, better: str, at: datetime, exclude: int | None = None
) -> tuple[policy.Verdict, list[int], list[int]] | None:
    """Recent (within WINDOW before ``at`` and after) against older reference runs."""
    means: dict[int, list[float]] = {}
    rows = Result.objects.filter(
        run_id__in=[r.pk for r in runs], metric_id=metric_id, discarded=False
    ).values_list("run_id", "value")
    for run_id, value in rows:
        means.setdefault(run_id, []).append(value)
    recent = [
        r.pk for r in runs if r.pk in means and r.created_at >= at - WINDOW and r.pk != exclude
    ]
    history = [r.pk for r in runs if r.pk in means and r.created_at < at - WINDOW]
    if len(history) < MIN_HISTORY or not recent:
        return None
    old = [fmean(means[i]) for i in history]
    new = [fmean(means[i]) for i in recent]
    noise = stats.coefficient_of_variation_pct(old) if len(old) >= 2 else None
    verdict = policy.judge(old, new, better, noise=noise)
    return verdict, recent, history


def alert_shift(alert: Alert) -> Shift | None:
    """The reference shift an alert shares, if any: first the reference's runs of the
    alert's own setup and metric, then any metric of the reference on that hardware."""
    ref = reference_for(alert.setup)
    if ref is None:
        return None
    runs = reference_runs(ref, alert.setup.hardware_id)
    if not runs:
        return None
    at = alert.candidate_run.created_at
    build = (
        f"{ref.kernel.version}+{ref.patch_set.name}" if ref.patch_set.name else ref.kernel.version
    )
    pairs = (
        Result.objects.filter(run_id__in=[r.pk for r in runs])
        .exclude(metric__better="none")
        .values_list("setup_id", "metric_id", "metric__better")
        .distinct()
    )
    ordered = sorted(pairs, key=lambda p: (p[0] != alert.setup_id, p[1] != alert.metric_id))
    for setup_id, metric_id, better in ordered:
        setup_runs = [r for r in runs if r.setup_id == setup_id]
        found = shift_of(setup_runs, metric_id, better, at, exclude=alert.candidate_run_id)
        if found is None:
            continue
        verdict, recent, history = found
        if verdict.significant and verdict.direction == alert.direction:
            return Shift(setup_id, metric_id, build, verdict, tuple(recent), tuple(history))
    return None


def hold_shared(*, alert_ids: Iterable[int]) -> int:
    """Mark the alerts whose reference moved with them; returns how many. Called once after
    the detector creates alerts (perfdb/alerting/regressions.py), in its transaction."""
    held = 0
    alerts = Alert.objects.filter(pk__in=list(alert_ids), reference_hold__isnull=True)
    for alert in alerts.select_related("setup", "candidate_run"):
        shift = alert_shift(alert)
        if shift is None:
            continue
        ReferenceHold.objects.create(
            alert=alert,
            reference_setup_id=shift.setup_id,
            metric_id=shift.metric_id,
            build=shift.build,
            shift_pct=shift.verdict.change_pct,
            p_value=shift.verdict.p_value,
            reason=(
                f"reference {shift.build}: its {len(shift.recent_run_ids)} recent run(s) "
                f"{shift.verdict.change_pct:+.1f} % against its {len(shift.history_run_ids)} "
                f"older ones ({shift.verdict.reason})"
            ),
            recent_run_ids=list(shift.recent_run_ids),
        )
        held += 1
    return held


@dataclass(frozen=True)
class ReferenceRun:
    """One run of the reference build, as the alert page charts it and the API exports it:
    the mean of its kept trials, with their count so a reader sees what the mean is of."""

    run_id: int
    uploaded: datetime
    mean: float
    trials: int
    recent: bool


def reference_history(hold: ReferenceHold) -> list[ReferenceRun]:
    """The held reference's runs of the hold's metric, oldest first; ``recent`` marks the runs
    whose shift made the hold."""
    kernel, _, patches = hold.build.partition("+")
    rows = (
        Result.objects.filter(
            setup_id=hold.reference_setup_id,
            metric_id=hold.metric_id,
            discarded=False,
            run__kernel__version=kernel,
            run__patch_set__name=patches,
        )
        .values_list("run_id", "run__created_at", "value")
        .order_by("run__created_at", "run_id")
    )
    values: dict[int, tuple[datetime, list[float]]] = {}
    for run_id, at, value in rows:
        values.setdefault(run_id, (at, []))[1].append(value)
    recent = set(hold.recent_run_ids)
    return [
        ReferenceRun(run_id, at, fmean(v), len(v), run_id in recent)
        for run_id, (at, v) in values.items()
    ]


def emailable(alerts: QuerySet[Alert]) -> QuerySet[Alert]:
    """Alerts to email: those shared with the reference wait until someone triages them."""
    return alerts.exclude(reference_hold__isnull=False, status=Alert.Status.UNTRIAGED)
