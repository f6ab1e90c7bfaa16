"""Reads for patch-stack attribution: every build of one kernel in one setup, for a metric."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from perfdb.models import Result, Run

Patches = tuple[str, ...]


def kernel_builds(
    *, setup_id: int, metric_id: int, kernel: str
) -> dict[Patches, tuple[float, ...]]:
    """Kept values of each build (patch set) of ``kernel`` in the setup, runs and trials
    pooled; ``()`` is stock. One query; served by result_series_idx (setup, metric)."""
    rows = Result.objects.filter(
        setup_id=setup_id, metric_id=metric_id, discarded=False, run__kernel__version=kernel
    ).values_list("run__patch_set__name", "value")
    builds: dict[Patches, list[float]] = {}
    for name, value in rows:
        builds.setdefault(tuple(p for p in name.split("+") if p), []).append(value)
    return {k: tuple(v) for k, v in builds.items()}


def one_build(*, run_ids: Sequence[int]) -> dict[str, Any] | None:
    """Setup, kernel and patches shared by every run given, or None when they differ.
    One query on run's primary key."""
    rows = list(
        Run.objects.filter(pk__in=run_ids)
        .values_list("setup_id", "kernel__version", "patch_set__name")
        .distinct()
    )
    if len(rows) != 1:
        return None
    setup_id, kernel, patches = rows[0]
    return {
        "setup_id": setup_id,
        "kernel": kernel,
        "patches": tuple(p for p in patches.split("+") if p),
    }
