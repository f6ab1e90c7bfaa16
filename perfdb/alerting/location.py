"""An alert's placement (how likely its kernel is, and the next likeliest), from the
detector's change: set when the alert is made, confirmed or moved (``perfdb.placement``)."""

from __future__ import annotations

from perfdb import detection
from perfdb.models import Alert

FIELDS = ("location_share", "runner_up_run_id", "runner_up_share")  # for save(update_fields)


def values(change: detection.Change) -> dict[str, object]:
    """The alert's placement fields for ``change`` (None for a pairwise change)."""
    runner_up = change.runner_up or (None, None)
    return dict(zip(FIELDS, (change.location_share, *runner_up), strict=True))


def apply(alert: Alert, change: detection.Change) -> None:
    """Set ``alert``'s placement fields to the change's (saved by the caller: ``FIELDS``)."""
    for name, value in values(change).items():
        setattr(alert, name, value)


SURE = 0.95  # a share this high names one kernel; below it the next likeliest is named too


def text(alert: Alert) -> str:
    """How sure the alert is of its kernel, in words: "" for a pairwise change, else e.g.
    "2.6.12 (99 %)" or "2.6.12 (71 %) or 2.6.11 (24 %): rerun both to tell"."""
    if alert.location_share is None:
        return ""
    said = f"{alert.candidate_run.kernel.version} ({alert.location_share * 100:.0f} %)"
    other = doubt(alert)
    return f"{said} {other}: rerun both to tell" if other else said


def doubt(alert: Alert) -> str:
    """The other kernel the step may start at, when the alert is not sure of its own (below
    ``SURE``): "or 2.6.11 (24 %)"; else ""."""
    share, other, other_share = alert.location_share, alert.runner_up_run, alert.runner_up_share
    if share is None or share >= SURE or other is None or other_share is None:
        return ""
    return f"or {other.kernel.version} ({other_share * 100:.0f} %)"


def runner_up_json(alert: Alert) -> dict[str, object] | None:
    """The next likeliest first kernel as the API shows it: run, kernel and share."""
    other = alert.runner_up_run
    if other is None or alert.runner_up_share is None:
        return None
    return {"run": other.pk, "kernel": other.kernel.version, "share": alert.runner_up_share}
