"""Reads for the compare page: run labels and every metric's values for two sets of runs."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count, Q

from dashboards.chart_queries.charts import params_text
from dashboards.pure.chartdata import (
    RunInfo,
)
from dashboards.pure.compare import MetricValues, StatedSpread
from perfdb.models import Result, ResultSummary, Run

# --- compare ------------------------------------------------------------------------------


def run_infos(*, run_ids: Sequence[int]) -> dict[int, tuple[RunInfo, str]]:
    """RunInfo and label of each existing run. One query; served by run's primary key, with
    trial_uniq (run, number) for the count of kept trials."""
    rows = (
        Run.objects.filter(pk__in=run_ids)
        .annotate(kept=Count("trials", filter=Q(trials__discarded=False)))
        .values(
            "id",
            "kept",
            "kernel__version",
            "patch_set__name",
            "setup__hardware__name",
            "setup__mode",
            "setup__params",
            "notes",
            "label",
        )
    )
    out = {}
    for r in rows:
        info = RunInfo(
            run_id=r["id"],
            kernel=r["kernel__version"],
            patches=tuple(p for p in r["patch_set__name"].split("+") if p),
            hardware=r["setup__hardware__name"],
            mode=r["setup__mode"],
            n_trials=max(1, r["kept"]),
            params=params_text(r["setup__params"]),
            notes=r["notes"],
        )
        out[r["id"]] = (info, r["label"])
    return out


def compare_values(*, base_ids: Sequence[int], new_ids: Sequence[int]) -> list[MetricValues]:
    """Per metric, the kept values of the baseline runs and of the candidate runs, pooled.

    A run-level value (trial 0) and per-trial values both count as one value each. A side
    that is one run whose value a report gave with its spread carries that spread. Two
    queries; served by result_uniq (run, metric, trial) and result_summary_uniq (run, metric).
    """
    base, new = set(base_ids), set(new_ids)
    rows = (
        Result.objects.filter(run_id__in=base | new, discarded=False)
        .values("run_id", "value", "metric__name", "metric__unit", "metric__better")
        .order_by("metric__name", "metric__unit", "run_id", "trial")
    )
    grouped: dict[tuple[str, str, str], tuple[list[float], list[float]]] = {}
    for r in rows:
        key = (r["metric__name"], r["metric__unit"], r["metric__better"])
        sides = grouped.setdefault(key, ([], []))
        if r["run_id"] in base:
            sides[0].append(r["value"])
        if r["run_id"] in new:
            sides[1].append(r["value"])
    spreads = {
        (run_id, name, unit): StatedSpread(sd, sd_pct, runs)
        for run_id, name, unit, sd, sd_pct, runs in ResultSummary.objects.filter(
            run_id__in=base | new
        ).values_list("run_id", "metric__name", "metric__unit", "sd", "sd_pct", "runs")
    }

    def stated(ids: set[int], name: str, unit: str) -> StatedSpread | None:
        return spreads.get((next(iter(ids)), name, unit)) if len(ids) == 1 else None

    return [
        MetricValues(
            name,
            unit,
            better,
            tuple(b),
            tuple(n),
            base_stated=stated(base, name, unit),
            new_stated=stated(new, name, unit),
        )
        for (name, unit, better), (b, n) in grouped.items()
    ]


# --- the compare page's pickers --------------------------------------------------------------

# A set-up's builds listed for picking, newest kernels first: a long series has a thousand
# kernels, more than anyone scrolls; the filter box and the recent runs reach the rest.
BUILDS_SHOWN = 300


def setup_builds(*, setup_id: int, limit: int = BUILDS_SHOWN) -> dict[str, list[int]]:
    """The set-up's builds (``Run.build``: ``2.5.25+pri_preempt``) with their run ids, newest
    kernel first, stock before patched; at most ``limit`` builds. One query, served by
    run_series_idx (setup, kernel, patch_set)."""
    rows = (
        Run.objects.filter(setup_id=setup_id)
        .values_list("id", "kernel__version", "patch_set__name")
        .order_by("-kernel__sort_key", "kernel__version", "patch_set__name", "id")
    )
    builds: dict[str, list[int]] = {}
    for run_id, kernel, patches in rows.iterator(chunk_size=2000):
        build = f"{kernel}+{patches}" if patches else kernel
        if build not in builds and len(builds) >= limit:
            break
        builds.setdefault(build, []).append(run_id)
    return builds


def run_setup_id(*, run_id: int) -> int | None:
    """The set-up of one run (the picker opens on the compared runs' set-up). One query."""
    found: int | None = Run.objects.filter(pk=run_id).values_list("setup_id", flat=True).first()
    return found


def setups_named(*, workload: str, hardware: str, mode: str) -> list[dict]:
    """Set-ups with runs of a workload (its name, or name and version), hardware and mode,
    by name: what ``selection.setup_of_key`` picks from. One query."""
    from dashboards.chart_queries.summaries import SETUP_FIELDS, SETUP_ORDER, setup_dict
    from perfdb.models import Setup

    rows = (
        Setup.objects.filter(summary__isnull=False, hardware__name=hardware, mode=mode)
        .filter(Q(workload__name=workload) | Q(workload__name=workload.rsplit(" ", 1)[0]))
        .values(*SETUP_FIELDS)
        .order_by(*SETUP_ORDER)
    )
    return [
        setup_dict(r)
        for r in rows
        if workload in (r["workload__name"], f"{r['workload__name']} {r['workload__version']}")
    ]
