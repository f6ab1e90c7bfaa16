"""One metric of one setup across kernels: the /kernels/ page's series, /api/series/ and
the figure, read whole or brought up to date with the runs added since (split from
``charts``, which reads the other charts)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

from django.db import connections
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast, Collate

from dashboards.chart_queries.charts import RunValues, metric_data, params_text
from dashboards.pure.chartdata import Point, Series
from perfdb.models import Result, Run

# A point's place in kernel order: KERNEL_ORDER's values (kernel sort key, version, patch
# set, run id), kept with the series so that points added later are merged into it.
OrderKey = tuple[tuple[int, ...], str, str, int]


@dataclass(frozen=True)
class KernelSeries:
    """A series plus the run labels ("Base1") that the baseline picker shows, and what an
    update needs: each point's ``OrderKey`` and the ids of every run its setup had when
    read (with or without this metric: the runs an update need not read again)."""

    series: Series
    labels: dict[int, str]
    order: tuple[OrderKey, ...] = ()
    runs: frozenset[int] = frozenset()


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
    "run__kernel__sort_key",
)
# KERNEL_ORDER with its texts compared by code point (collation "C"), as Python compares
# them: the order ``_merged`` keeps is then the order a whole read gives, whatever the
# database's collation. Then by trial: a run's rows adjacent, in trial order.
SERIES_ORDER = (
    "run__kernel__sort_key",
    Collate("run__kernel__version", "C"),
    Collate("run__patch_set__name", "C"),
    "run_id",
    "trial",
)


def series_points(
    *,
    setup_id: int,
    metric: Mapping[str, Any],
    title: str = "",
    since: KernelSeries | None = None,
) -> KernelSeries:
    """One series: every run of the setup for this metric, one point per run, kernel order.

    ``since``: the same series read earlier, while only runs have been added to the setup
    since (no run edited or removed: the caller knows it from perfdb.cache's structure
    version). Then only the runs added since are read and their points merged in: after a
    one-kernel upload to a 1,000-run setup, one run's rows instead of 1,000 runs' (the
    joins and the sort of every row were most of a series page's first request through
    gunicorn). The result is the same as reading it whole (tests/dashboards/
    test_series_update.py).

    Two queries: the setup's run ids (run_series_idx), then the rows of the runs not in
    ``since`` (all of them without it). Rows of a run committed between the two are left
    out, so the value is the setup as the first found it and ``runs`` says exactly which
    runs it holds (a run's rows are written with it, in one transaction).
    """
    if since is not None and since.runs:
        added = series_added(setup_id=setup_id, metric=metric, known=since.runs)
        if added is not None:
            if not added.order:
                return replace(since, runs=added.runs)
            return _merged(since, added, added.runs, title)
    runs = setup_run_ids(setup_id)
    return _read(metric, runs, _series_rows(Result.objects.all(), setup_id, metric["id"]), title)


def setup_run_ids(setup_id: int) -> frozenset[int]:
    """The ids of the setup's runs (run_series_idx). Fetched as plain tuples: through the
    ORM's per-row iteration, a 1,000-run setup's ids were a fifth of an API answer's CPU
    after an upload."""
    query = Run.objects.filter(setup_id=setup_id).order_by().values_list("id")
    sql, params = query.query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        return frozenset(row[0] for row in cursor.fetchall())


def series_added(
    *, setup_id: int, metric: Mapping[str, Any], known: frozenset[int]
) -> KernelSeries | None:
    """The points of the setup's runs not in ``known`` (its runs when a series was read),
    with ``runs`` all of the setup's runs now; None when a run of ``known`` is gone (then
    the series must be read whole). One query for the run ids, and one for the new runs'
    rows when there are new runs."""
    runs = setup_run_ids(setup_id)
    if not known <= runs:
        return None
    todo = runs - known
    if not todo:
        return KernelSeries(_series(metric, [], ""), {}, (), runs)
    db = Result.objects.all().db
    with connections[db].cursor() as cursor:
        cursor.execute(_added_rows_sql(), [sorted(todo), metric["id"], setup_id])
        return _read(metric, runs, cursor.fetchall())


def _series_rows(
    results: QuerySet[Result], setup_id: int, metric_id: int
) -> QuerySet[Result, tuple[Any, ...]]:
    """The series' rows among ``results``, as tuples of ``SERIES_COLUMNS`` and the setup's
    params, a run's trials adjacent (the order ends in run, trial). Served by
    result_series_idx (setup, metric)."""
    return (
        results.filter(setup_id=setup_id, metric_id=metric_id, discarded=False)
        .annotate(params_json=Cast("run__setup__params", TextField()))
        .values_list(*SERIES_COLUMNS, "params_json")
        .order_by(*SERIES_ORDER)
    )


@cache
def _added_rows_sql() -> str:
    """``_series_rows`` of some runs as SQL, compiled once, whose parameters are the run ids
    (an array), the metric and the setup: compiling the query through the ORM took as long
    as running it (~1 ms) for each series brought up to date after an upload."""
    run_ids = Result.objects.filter(run_id__in=[-1])
    sql, params = _series_rows(run_ids, -3, -2).query.sql_with_params()
    among = f'"{Result._meta.db_table}"."run_id" IN (%s)'
    if tuple(params) != (-1, -2, -3) or sql.count(among) != 1:
        raise RuntimeError(f"the series query changed its shape: {sql}")
    return sql.replace(among, f'"{Result._meta.db_table}"."run_id" = ANY(%s::bigint[])')


def _read(
    metric: Mapping[str, Any],
    runs: frozenset[int],
    rows: Iterable[tuple[Any, ...]],
    title: str = "",
) -> KernelSeries:
    """The points of the series' ``rows`` (``_series_rows``) whose run is among ``runs``."""
    points: list[Point] = []
    order: list[OrderKey] = []
    labels: dict[int, str] = {}
    params: dict[str, tuple[tuple[str, str], ...]] = {}
    for run_id, trials in groupby(rows, key=itemgetter(0)):
        if run_id not in runs:  # committed after the run ids were read
            continue
        first, *rest = trials
        _, _, kernel, patches, notes, label, hardware, mode, sort_key, params_json = first
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
        order.append((tuple(sort_key), kernel, patches, run_id))
        labels[run_id] = label
    return KernelSeries(_series(metric, points, title), labels, tuple(order), runs)


def _merged(
    since: KernelSeries, added: KernelSeries, runs: frozenset[int], title: str
) -> KernelSeries:
    """``since`` with ``added``'s points in their places in kernel order."""
    pairs = sorted(
        chain(
            zip(since.order, since.series.points, strict=True),
            zip(added.order, added.series.points, strict=True),
        ),
        key=itemgetter(0),
    )  # two sorted runs: Timsort merges them in linear time
    metric = since.series.metric
    series = Series(
        metric=metric,
        kernels=tuple(dict.fromkeys(p.run.kernel for _, p in pairs)),
        points=tuple(p for _, p in pairs),
        title=title,
    )
    return KernelSeries(series, {**since.labels, **added.labels}, tuple(k for k, _ in pairs), runs)


def _series(metric: Mapping[str, Any], points: list[Point], title: str) -> Series:
    return Series(
        metric=metric_data(metric),
        kernels=tuple(dict.fromkeys(p.run.kernel for p in points)),
        points=tuple(points),
        title=title,
    )
