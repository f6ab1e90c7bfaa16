"""Reads for the profile diff: pooled kernel profiles of one side, and what the pickers offer.

A side is one or more runs (their trials' ticks summed, ``perfdb.features.profile_diff.pool``), or
every run of one build of a setup. The unit of work is the side's throughput: the first
higher-is-better metric both sides have (the headline number, as ``selection.default_metric``
picks it), each run's mean counted once per profiled trial, so ticks per unit of work assume
profiles of equal length, as the papers' listings are.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from django.db.models import Count, Exists, OuterRef

from perfdb.cache import cache_key, cached, scope_key
from perfdb.features.profile_diff import ProfileSide
from perfdb.models import ProfileEntry, Result, Run, SetupSummary

# Metrics a profile produces about itself: never the unit of work.
PROFILE_METRICS = ("kernel_ticks", "kernel_busy_pct", "scheduler_pct")


@dataclass(frozen=True)
class ProfileRuns:
    """The runs of one side that have a profile, with their builds and labels."""

    run_ids: tuple[int, ...]
    kernel: str
    builds: tuple[str, ...]
    setup_ids: tuple[int, ...]


def _build(kernel: str, patches: str) -> str:
    return f"{kernel}+{patches}" if patches else kernel


def profiled_runs(*, run_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Keys of the given runs that have a profile entry. One query on run's primary key,
    with an EXISTS probe on profile_uniq (run, ...)."""
    rows = (
        Run.objects.filter(pk__in=run_ids)
        .filter(Exists(ProfileEntry.objects.filter(run_id=OuterRef("pk"))))
        .values("id", "setup_id", "kernel__version", "patch_set__name")
    )
    return {
        r["id"]: {
            "setup_id": r["setup_id"],
            "kernel": r["kernel__version"],
            "build": _build(r["kernel__version"], r["patch_set__name"]),
        }
        for r in rows
    }


def build_runs(*, setup_id: int, build: str) -> list[int]:
    """Runs of one build (kernel+patches) of a setup that have a profile, oldest first.
    One query; served by run_series_idx (setup, kernel, patch_set)."""
    kernel, _, patches = build.partition("+")
    return list(
        Run.objects.filter(setup_id=setup_id, kernel__version=kernel, patch_set__name=patches)
        .filter(Exists(ProfileEntry.objects.filter(run_id=OuterRef("pk"))))
        .order_by("created_at", "id")
        .values_list("id", flat=True)
    )


def profile_builds(*, setup_id: int) -> list[str]:
    """Builds of the setup with at least one profiled run, in kernel order. One query."""
    rows = (
        Run.objects.filter(setup_id=setup_id)
        .filter(Exists(ProfileEntry.objects.filter(run_id=OuterRef("pk"))))
        .values("kernel__version", "kernel__sort_key", "patch_set__name")
        .distinct()
        .order_by("kernel__sort_key", "kernel__version", "patch_set__name")
    )
    return [_build(r["kernel__version"], r["patch_set__name"]) for r in rows]


def profiled_setups() -> list[dict[str, Any]]:
    """Setups with profiled runs (id, label, scope key, number of profiled runs), busiest
    first. Cached once per data version (warmed after each upload,
    dashboards/page_cache/warm.py). One query on the summaries PostgreSQL keeps
    (``perfdb.models.SetupSummary``): counting them from the runs (an EXISTS probe on
    profile_uniq per stored run) had cost 13 ms per scope an upload touched and 0.5-1.6 s
    for all, most of the database's CPU under load."""
    return cached(cache_key("profiled-setups"), _profiled_setups)


def _profiled_setups() -> list[dict[str, Any]]:
    rows = (
        SetupSummary.objects.filter(profiled_runs__gt=0)
        .values(
            "setup_id",
            "setup__workload_id",
            "setup__hardware_id",
            "setup__workload__name",
            "setup__workload__version",
            "setup__hardware__name",
            "setup__mode",
            "setup__params",
            "profiled_runs",
        )
        .order_by("-profiled_runs", "setup_id")
    )
    out = []
    for r in rows:
        workload = f"{r['setup__workload__name']} {r['setup__workload__version']}".strip()
        params = ", ".join(f"{k}={v}" for k, v in sorted(r["setup__params"].items()))
        label = f"{workload} on {r['setup__hardware__name']}, {r['setup__mode']}"
        scope = scope_key(r["setup__workload_id"], r["setup__hardware_id"], r["setup__mode"])
        text = label + (f" ({params})" if params else "")
        out.append({"id": r["setup_id"], "text": text, "n": r["profiled_runs"], "scope": scope})
    return out


def profile_side(*, run_ids: Sequence[int], label: str, kernel: str) -> ProfileSide:
    """Ticks per function over the runs and their trials. One query; served by
    profile_uniq (run, trial, source, function)."""
    ticks: dict[str, float] = {}
    rows = ProfileEntry.objects.filter(run_id__in=run_ids).values_list("function", "ticks")
    for function, value in rows:
        ticks[function] = ticks.get(function, 0.0) + value
    return ProfileSide(label=label, kernel=kernel, ticks=ticks)


def work_metric(*, base_ids: Sequence[int], new_ids: Sequence[int]) -> dict[str, Any] | None:
    """The throughput metric both sides have (higher is better, not a profile's own
    figure), by name; None when there is none. One query; served by result_uniq (run, ...)."""
    rows = (
        Result.objects.filter(
            run_id__in=[*base_ids, *new_ids], discarded=False, metric__better="higher"
        )
        .exclude(metric__name__in=PROFILE_METRICS)
        .values("run_id", "metric_id", "metric__name", "metric__unit")
        .distinct()
    )
    sides: dict[int, tuple[set[int], set[int], dict[str, Any]]] = {}
    base = set(base_ids)
    for r in rows:
        entry = sides.setdefault(
            r["metric_id"],
            (
                set(),
                set(),
                {"id": r["metric_id"], "name": r["metric__name"], "unit": r["metric__unit"]},
            ),
        )
        (entry[0] if r["run_id"] in base else entry[1]).add(r["run_id"])
    shared = [meta for b, n, meta in sides.values() if b == base and n == set(new_ids)]
    return min(shared, key=lambda m: (m["name"], m["id"])) if shared else None


def work_of(*, run_ids: Sequence[int], metric_id: int) -> float | None:
    """Each run's mean of the metric, counted once per profiled trial, summed. Two queries."""
    values: dict[int, list[float]] = {}
    rows = Result.objects.filter(run_id__in=run_ids, metric_id=metric_id, discarded=False)
    for run_id, value in rows.values_list("run_id", "value"):
        values.setdefault(run_id, []).append(value)
    trials = dict(
        ProfileEntry.objects.filter(run_id__in=run_ids)
        .values("run_id")
        .annotate(n=Count("trial", distinct=True))
        .values_list("run_id", "n")
    )
    if set(values) != set(run_ids):
        return None
    return sum(fmean(v) * max(1, trials.get(run_id, 1)) for run_id, v in values.items())


# --- links from other pages ---------------------------------------------------------------


def profile_diff_url(
    base_ids: list[int], new_ids: list[int], setup_id: int | None = None
) -> str | None:
    """A profile diff of these runs when they all have a profile; else, with ``setup_id``, of
    their builds in that setup when both builds have profiled runs, else of the setup's
    profiled builds; None when there is no profile to diff."""
    runs = profiled_runs(run_ids=[*base_ids, *new_ids])
    if base_ids and new_ids and all(i in runs for i in [*base_ids, *new_ids]):
        base, new = ",".join(map(str, base_ids)), ",".join(map(str, new_ids))
        return f"/profile-diff/?base={base}&new={new}"
    if setup_id is None:
        return None
    builds = profile_builds(setup_id=setup_id)
    if not builds:
        return None
    return f"/profile-diff/?setup={setup_id}"
