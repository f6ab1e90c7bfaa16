"""One metric of one setup across kernels: the /kernels/ page's series, /api/series/ and
the figure, read in one query (split from ``charts``, which reads the other charts)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from typing import Any

from django.db.models import TextField
from django.db.models.functions import Cast

from dashboards.chart_queries.charts import KERNEL_ORDER, RunValues, metric_data, params_text
from dashboards.chartdata import Point, Series
from perfdb.models import Result


@dataclass(frozen=True)
class KernelSeries:
    """A series plus the run labels ("Base1") that the baseline picker shows."""

    series: Series
    labels: dict[int, str]


# A series' columns: the run keys that differ per run, then the setup's, which are the same
# on every row (its params as their JSON text, decoded once: Django decodes a JSONField per
# row, a third of a 1,000-point series' read).
SERIES_COLUMNS = (
    "run_id",
    "value",
    "run__kernel__version",
    "run__patch_set__name",
    "run__notes",
    "run__label",
    "run__setup__hardware__name",
    "run__setup__mode",
)


def series_points(*, setup_id: int, metric: Mapping[str, Any], title: str = "") -> KernelSeries:
    """One series: every run of the setup for this metric, one point per run, kernel order.

    One query; served by result_series_idx (setup, metric), then kernel_order_idx's columns
    for the sort. Rows come as tuples, a run's trials adjacent (the order ends in run, trial).
    """
    rows = (
        Result.objects.filter(setup_id=setup_id, metric_id=metric["id"], discarded=False)
        .annotate(params_json=Cast("run__setup__params", TextField()))
        .values_list(*SERIES_COLUMNS, "params_json")
        .order_by(*KERNEL_ORDER, "trial")
    )
    points: list[Point] = []
    labels: dict[int, str] = {}
    params: dict[str, tuple[tuple[str, str], ...]] = {}
    for run_id, trials in groupby(rows, key=itemgetter(0)):
        first, *rest = trials
        _, _, kernel, patches, notes, label, hardware, mode, params_json = first
        if params_json not in params:
            params[params_json] = params_text(json.loads(params_json))
        keys = {
            "run_id": run_id,
            "kernel": kernel,
            "patches": patches,
            "hardware": hardware,
            "mode": mode,
            "params_text": params[params_json],
            "notes": notes,
        }
        run = RunValues(keys=keys, values=[first[1], *(row[1] for row in rest)])
        points.append(Point(run=run.info(), value=run.mean, sd=run.sd))
        labels[run_id] = label
    series = Series(
        metric=metric_data(metric),
        kernels=tuple(dict.fromkeys(p.run.kernel for p in points)),
        points=tuple(points),
        title=title,
    )
    return KernelSeries(series, labels)
