"""Reads of the data model (selectors). Pages and the API call these; no writes here."""

from __future__ import annotations

from django.db.models import QuerySet, Sum
from django.db.models.functions import Coalesce

from perfdb.models import Run, SetupSummary, Upload


def runs_recent(*, limit: int = 20) -> QuerySet[Run]:
    return Run.objects.select_related(
        "setup__workload", "setup__hardware", "kernel", "patch_set"
    ).order_by("-created_at", "-id")[:limit]


# --- the demo (ingest/demo.py loads it) ---------------------------------------------------

# The seed documents the demo bundles reproduce, by the prefix of the bundle's name.
DEMO_SOURCES = {
    "000": "Bryant & Hartner, “Java, threads, and scheduling in Linux”, IBM LTC, January 2000",
    "001": "Hartner, “[PATCH] [PERFORMANCE RESULTS] priority preemption in Linux”, LKML, "
    "15 October 2002",
    "002": "Anand et al., “Benchmarks that Model Enterprise Workloads”, Ottawa Linux "
    "Symposium 2003",
    "004": "Vianney, “Linux Performance” slides, April 2003",
}


def demo_uploads() -> list[tuple[Upload, str]]:
    """The loaded demo uploads with the document each reproduces, for the overview."""
    uploads = Upload.objects.filter(source="demo").order_by("filename")
    return [(u, DEMO_SOURCES.get(u.filename[:3], "")) for u in uploads]


# --- runs ---------------------------------------------------------------------------------


def _of_setups(workload: str | None, hardware: str | None, mode: str | None) -> dict[str, str]:
    """The filters that are the setup's own, as lookups through ``setup`` (a run's and a
    setup summary's alike)."""
    lookups = {
        "setup__workload__name": workload,
        "setup__hardware__name": hardware,
        "setup__mode": mode.upper() if mode else None,
    }
    return {lookup: value for lookup, value in lookups.items() if value}


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
    runs = runs.filter(**_of_setups(workload, hardware, mode))
    if kernel:
        runs = runs.filter(kernel__version=kernel)
    if patches is not None:
        runs = runs.filter(patch_set__name="" if patches in ("", "stock") else patches)
    return runs


def runs_filtered_count(
    *,
    workload: str | None = None,
    kernel: str | None = None,
    patches: str | None = None,
    hardware: str | None = None,
    mode: str | None = None,
) -> int | None:
    """How many runs ``runs_filtered`` gives, from the per-setup summaries when every filter
    is one of the setup's (no kernel, no patches): a sum over the matching setups, kept by
    the database with each write (perfdb/models/summaries.py), instead of a count of every
    run on each request (0.16 s at 100M results, linear in runs). None: count the runs."""
    if kernel or patches is not None:
        return None
    setups = SetupSummary.objects.filter(**_of_setups(workload, hardware, mode))
    counted: int = setups.aggregate(runs=Coalesce(Sum("run_count"), 0))["runs"]
    return counted


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
    # metric name -> (unit, better, trials, values, discarded trials)
    found: dict[str, tuple[str, str, list[int], list[float], list[int]]] = {}
    for row in rows:
        _, _, trials, values, discarded = found.setdefault(
            row.metric.name, (row.metric.unit, row.metric.better, [], [], [])
        )
        trials.append(row.trial)
        values.append(row.value)
        if row.discarded:
            discarded.append(row.trial)
    out: dict[str, dict[str, object]] = {}
    for name, (unit, better, trials, values, discarded) in found.items():
        kept = [v for t, v in zip(trials, values, strict=True) if t not in discarded]
        out[name] = {
            "unit": unit,
            "better": better,
            "trials": trials,
            "values": values,
            "discarded_trials": discarded,
            "n": len(kept),
            "mean": fmean(kept) if kept else None,
            "sd": stdev(kept) if len(kept) > 1 else None,
        }
    return out
