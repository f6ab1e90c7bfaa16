"""The detector settings staff set per workload and metric (``Threshold``), written for the
API as the admin writes them: both numbers finite and > 0 or empty, one row per pair."""

from __future__ import annotations

from django.db import IntegrityError, transaction

from perfdb.models import Threshold


class Taken(Exception):
    """The workload and metric already have a row (one per pair): change that one."""

    def __init__(self, existing_id: int | None) -> None:
        super().__init__(f"this workload and metric already have threshold {existing_id}")
        self.existing_id = existing_id


def threshold_save(threshold: Threshold) -> Threshold:
    """Validate and store the row: ``ValidationError`` naming the field for a number the
    detector cannot use (``full_clean``: ``policy.validate_threshold_pct``), ``Taken`` when
    the pair has another row, also when another request stored it in between (the
    database's unique constraint, reported so rather than as a server error)."""
    threshold.full_clean(validate_unique=False, validate_constraints=False)
    if (other := _other_row(threshold)) is not None:
        raise Taken(other)
    try:
        with transaction.atomic():
            threshold.save()
    except IntegrityError as error:
        raise Taken(_other_row(threshold)) from error
    return threshold


def _other_row(threshold: Threshold) -> int | None:
    others = Threshold.objects.filter(
        workload_id=threshold.workload_id, metric_id=threshold.metric_id
    ).exclude(pk=threshold.pk)
    return others.values_list("pk", flat=True).first()
