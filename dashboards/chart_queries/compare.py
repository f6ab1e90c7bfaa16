"""Reads for the compare page: run labels and every metric's values for two sets of runs."""

from __future__ import annotations

from collections.abc import Sequence

from django.db.models import Count, Q

from dashboards.chart_queries.charts import params_text
from dashboards.chartdata import (
    RunInfo,
)
from dashboards.compare import MetricValues, StatedSpread
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
