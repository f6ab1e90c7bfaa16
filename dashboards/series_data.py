"""One series' answers (the /kernels/ page's data, its figure, its downloads, /api/series/),
finished once and served from the cache until runs are added to the series' scope.

A series is one setup's runs, so only runs added to that setup can change it: every value
here but the scope's setup picker is cached with ``perfdb.cache.cached_in_setup``, whose
stamp moves with that setup's version (the writer bumps it when the upload commits) and
with the structure version (runs edited or deleted, vocabulary edited). An upload to the
other setups of its scope leaves the series current. A warm request then reads no results
at all and renders nothing, in one cache round trip: a 1,000-point series costs what a
10-point one does. What is cached is bytes or plain dataclasses, never model rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from dashboards import chart_queries as cq
from dashboards.chartdata import AlertMark, Baseline
from dashboards.figures import across_kernels_figure, alert_marks
from perfdb.cache import (
    cached_in_scope,
    cached_in_setup,
    cached_per_setup,
    read_ahead,
    scope_key,
    setup_entry,
    setup_keys,
)

# Each setup's metric ids, cached per setup (``metrics_of_setups``).
METRIC_IDS = "series:setup-metric-ids"


def setup_scope(setup: Mapping[str, Any]) -> str:
    """The scope whose version a value of this setup is cached under."""
    return scope_key(setup["workload_id"], setup["hardware_id"], setup["mode"])


def series(setup_id: int, metric: Mapping[str, Any]) -> cq.KernelSeries:
    """``series_points`` of the setup and metric, cached per setup. Keyed by the metric's id
    alone (its name and unit are vocabulary: editing them moves every version), so that a
    page can read it before it knows them (``page_keys``); the page, its figure, its
    downloads and /api/series/ share it, so an upload's series is read once whichever of
    them is asked first. After an upload to the setup it is brought up to date from the
    value cached before (only the runs added are read), never served older than the
    upload. Untitled: the figure names it "<metric> across kernels"."""
    return cached_in_setup(
        _series_key(metric["id"]),
        setup_id,
        lambda: cq.series_points(setup_id=setup_id, metric=metric),
        update=lambda since: cq.series_points(setup_id=setup_id, metric=metric, since=since),
    )


def _series_key(metric_id: int) -> str:
    return f"series:points:{metric_id}"


def page_keys(setup_id: int, context_key: str, metric_id: int | None) -> list[str]:
    """The cache keys of a series page's context (``context_key``, cached per setup) and of
    the parts it is made of: the setup's metric ids and, when the page names its metric,
    the series. Read together (perfdb.cache.reads ``read_together``), a context computed
    after an upload costs one read for all three, not one each."""
    keys = read_ahead(setup_entry(context_key, setup_id)) + setup_keys(METRIC_IDS, [setup_id])
    if metric_id is not None:
        keys += read_ahead(setup_entry(_series_key(metric_id), setup_id))
    return keys


def finished(
    kind: str,
    setup_id: int,
    key: str,
    build: Callable[[], bytes],
    found: Mapping[str, Any] | None = None,
) -> bytes:
    """``build()``'s bytes (a response body), cached per version of the setup. ``key`` must
    name everything else the body depends on (metric, baseline, format). A hit needs
    nothing else: no setup or metric query (``build`` reads them, and raises a 404 or 400
    for a setup or metric that does not exist, which is then not stored). ``found``: the
    cache's values of ``finished_keys(...)``, read by the caller with its own."""
    return cached_in_setup(f"series:{kind}:{key}", setup_id, build, found)


def finished_keys(kind: str, setup_id: int, key: str) -> list[str]:
    """The cache keys ``finished(kind, setup_id, key, ...)`` reads."""
    return read_ahead(setup_entry(f"series:{kind}:{key}", setup_id))


def figure_json(data: cq.KernelSeries, baseline: Baseline | None) -> bytes:
    """The across-kernels figure as the JSON Plotly takes: compact, no spaces."""
    figure = across_kernels_figure(data.series, baseline)
    return json.dumps(figure, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


# An overlay with nothing to draw (a series without alerts).
NO_TRACES = b'{"data":[]}'


def alert_marks_json(
    data: cq.KernelSeries, marks: Sequence[AlertMark], baseline: Baseline | None
) -> bytes:
    """The series' alert marks as the overlay the page's chart draws over ``figure_json``'s
    figure (``{"data": [...]}``); not cached: alerts change without the series."""
    traces = alert_marks(data.series, marks, baseline)
    return json.dumps({"data": traces}, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


def metric_choices(setup: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The setup's metrics (the page's picker): its metric ids cached per setup, then one
    query for their names. Called inside answers cached per setup version themselves."""
    return metrics_of_setups([setup["id"]])


def metrics_of_setups(setup_ids: Sequence[int]) -> list[dict[str, Any]]:
    """``cq.metric_choices`` of these setups (the metrics with results in any of them);
    which metrics each setup has is cached per setup version, so after an upload only the
    setups it wrote to are read again (one index-only query), where an EXISTS probe per
    metric over a scope's hundred setups had been the slowest read of a scope chart
    computed after an upload (py-spy on bench/load.py)."""
    per_setup = cached_per_setup(
        METRIC_IDS, setup_ids, lambda todo: cq.metrics_by_setup(setup_ids=todo)
    )
    return cq.metrics_ordered(m for ids in per_setup.values() for m in ids)


def setup_choices(scope: tuple[int, int, str]) -> list[dict[str, Any]]:
    """The scope's setups with their run counts (the page's second picker), cached per scope."""
    workload_id, hardware_id, mode = scope
    return cached_in_scope(
        "series:setups",
        scope_key(workload_id, hardware_id, mode),
        lambda: cq.setup_choices(scope=scope),
    )
