"""An alert's placement (how likely its kernel is, and the next likeliest) as stored on it,
and where a drift lies, in words.

The detector's rule is ``perfdb.detector.placement`` (pure); this is the alert's record of
it: set when the alert is made, confirmed or moved, and brought up to date when a later
check reads it differently (``refresh``). The model's fields keep their name ``location``.
A drift (``perfdb.detector.drift``) has no first kernel: its baseline is its window's first
kernel, and ``drift_text`` says how far it went over how many kernels."""

from __future__ import annotations

import math

from perfdb import detector
from perfdb.models import Alert, AlertEvent, Result

FIELD = "location"  # AlertEvent.field of a placement a later check settled or unsettled

FIELDS = ("location_share", "runner_up_run_id", "runner_up_share")  # for save(update_fields)


def values(change: detector.Change) -> dict[str, object]:
    """The alert's placement fields for ``change`` (None for a pairwise change)."""
    runner_up = change.runner_up or (None, None)
    return dict(zip(FIELDS, (change.location_share, *runner_up), strict=True))


def apply(alert: Alert, change: detector.Change) -> None:
    """Set ``alert``'s placement fields to the change's (saved by the caller: ``FIELDS``)."""
    for name, value in values(change).items():
        setattr(alert, name, value)


def refresh(alert: Alert, change: detector.Change, upload_id: int | None) -> bool:
    """A confirmed step alert's placement as this check reads it, when it says otherwise now.

    An unsure alert asks for its two kernels to be run again; the check after those runs
    reads the step's start anew, and the alert should say what it found rather than keep
    asking. Saved when what the alert states changes (its share or the runner-up's, in whole
    per cent, or the runner-up itself); an event, not an email, when its doubt does (sure
    now, unsure now, or another runner-up). Returns whether the alert was saved."""
    if alert.location_share is None or change.candidate_run_id != alert.candidate_run_id:
        return False
    if change.method != alert.method or change.location_share is None:
        return False
    if _stated(values(change)) == _stated({name: getattr(alert, name) for name in FIELDS}):
        return False
    before, doubted = text(alert), _doubted(alert)
    apply(alert, change)
    alert.save(update_fields=list(FIELDS))
    if _doubted(alert) != doubted:
        AlertEvent.objects.create(
            alert=alert,
            field=FIELD,
            old=before,
            new=f"{text(alert)}: upload {upload_id}'s check, with the kernels and runs since "
            "(not emailed again)",
        )
    return True


def _doubted(alert: Alert) -> int | None:
    """The runner-up an unsure alert names (its run), None when it is sure: an event is
    recorded when this changes, not when the shares move a point between checks."""
    share, other = alert.location_share, alert.runner_up_run_id
    return None if share is None or share >= SURE or other is None else other


def _stated(fields: dict[str, object]) -> tuple[object, ...]:
    """The placement as an alert states it: shares in whole per cent, the runner-up's run."""
    share, other, other_share = (fields[name] for name in FIELDS)
    shown = [percent(v) if isinstance(v, float) else None for v in (share, other_share)]
    return (shown[0], other, shown[1])


SURE = 0.95  # a share this high names one kernel; below it the next likeliest is named too


def text(alert: Alert) -> str:
    """How sure the alert is of its kernel, in words: "" for a pairwise change, else e.g.
    "2.6.12 (99 %)" or "2.6.12 (71 %) or 2.6.11 (24 %): rerun both to tell"."""
    if alert.location_share is None:
        return ""
    said = f"{alert.candidate_run.kernel.version} ({percent(alert.location_share)} %)"
    other = doubt(alert)
    return f"{said} {other}: rerun both to tell" if other else said


def doubt(alert: Alert) -> str:
    """The other kernel the step may start at, when the alert is not sure of its own (below
    ``SURE``): "or 2.6.11 (24 %)"; else ""."""
    share, other, other_share = alert.location_share, alert.runner_up_run, alert.runner_up_share
    if share is None or share >= SURE or other is None or other_share is None:
        return ""
    return f"or {other.kernel.version} ({percent(other_share)} %)"


def percent(share: float) -> int:
    """A share in whole per cent, rounded down: an unsure alert (below ``SURE``) never reads
    "95 %", and no alert reads "100 %" (0.949 read "95 %" next to "rerun both to tell")."""
    return math.floor(share * 100 + 1e-9)  # 0.29 * 100 is 28.999999999999996


def runner_up_json(alert: Alert) -> dict[str, object] | None:
    """The next likeliest first kernel as the API shows it: run, kernel and share."""
    other = alert.runner_up_run
    if other is None or alert.runner_up_share is None:
        return None
    return {"run": other.pk, "kernel": other.kernel.version, "share": alert.runner_up_share}


def drift_text(alert: Alert) -> str:
    """A drift alert in words: "drift: -14 % over 8 kernels, 6.1 → 6.8" (the fitted change
    over its window; the window's stock kernels of the series, from its first, the alert's
    baseline, to the alert's own); "" for any other method."""
    if alert.method != detector.DRIFT_METHOD:
        return ""
    first = min(
        (run.kernel for run in alert.baseline_runs.select_related("kernel")),
        key=lambda k: (k.sort_key, k.version),
        default=None,
    )
    if first is None:
        return ""
    last = alert.candidate_run.kernel
    kernels = (
        Result.objects.filter(
            setup_id=alert.setup_id,
            metric_id=alert.metric_id,
            run__patch_set__name="",
            run__kernel__sort_key__gte=first.sort_key,
            run__kernel__sort_key__lte=last.sort_key,
        )
        .values("run__kernel_id")
        .distinct()
        .count()
    )
    return (
        f"drift: {alert.change_pct:+.0f} % over {kernels} kernels, {first.version} → {last.version}"
    )
