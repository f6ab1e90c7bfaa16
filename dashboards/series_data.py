"""One series' answers (the /kernels/ page's data, its figure, its downloads, /api/series/),
finished once and served from the cache until runs are added to the series' scope.

A series is one setup's runs, so only an upload to that setup's scope (workload x hardware x
UP/SMP) can change it: every value here is cached with ``perfdb.cache.cached_in_scope``, whose
key moves with that scope's version (the writer bumps it when the upload commits) and with
the structure version (runs edited or deleted, vocabulary edited). A warm request then reads
no results at all and renders nothing: a 1,000-point series costs what a 10-point one does.
What is cached is bytes or plain dataclasses, never model rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from django.core.serializers.json import DjangoJSONEncoder

from dashboards import chart_queries as cq
from dashboards.chartdata import Baseline
from dashboards.figures import across_kernels_figure
from perfdb.cache import cached_in_scope, scope_key


def setup_scope(setup: Mapping[str, Any]) -> str:
    """The scope whose version a value of this setup is cached under."""
    return scope_key(setup["workload_id"], setup["hardware_id"], setup["mode"])


def _metric_key(metric: Mapping[str, Any]) -> str:
    return f"{metric['id']}|{metric['name']}|{metric['unit']}|{metric['better']}"


def series(setup: Mapping[str, Any], metric: Mapping[str, Any], title: str) -> cq.KernelSeries:
    """``series_points`` of the setup and metric (with the page's title), cached per scope."""
    key = f"series:points:{setup['id']}:{_metric_key(metric)}:{title}"
    return cached_in_scope(
        key,
        setup_scope(setup),
        lambda: cq.series_points(setup_id=setup["id"], metric=metric, title=title),
    )


def values(setup: Mapping[str, Any], metric: Mapping[str, Any], title: str) -> dict[int, float]:
    """Each run's value in the series (run id -> mean), cached per scope: what a warm page
    checks its baseline against without reading back the whole series (a 1,000-point
    series unpickled is ~3 ms a request)."""
    key = f"series:values:{setup['id']}:{_metric_key(metric)}"
    return cached_in_scope(
        key,
        setup_scope(setup),
        lambda: {p.run.run_id: p.value for p in series(setup, metric, title).series.points},
    )


def finished(kind: str, setup: Mapping[str, Any], key: str, build: Callable[[], bytes]) -> bytes:
    """``build()``'s bytes (a response body), cached per version of the setup's scope.
    ``key`` must name everything else the body depends on (metric, baseline, format)."""
    return cached_in_scope(f"series:{kind}:{setup['id']}:{key}", setup_scope(setup), build)


def figure_json(data: cq.KernelSeries, baseline: Baseline | None) -> bytes:
    """The across-kernels figure as the JSON Plotly takes: compact, no spaces."""
    figure = across_kernels_figure(data.series, baseline)
    return json.dumps(figure, cls=DjangoJSONEncoder, separators=(",", ":")).encode()


def metric_choices(setup: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The setup's metrics (the page's picker), cached per scope: an EXISTS probe per
    metric is a few milliseconds a request otherwise."""
    key = f"series:metrics:{setup['id']}"
    return cached_in_scope(
        key, setup_scope(setup), lambda: cq.metric_choices(setup_ids=[setup["id"]])
    )


def setup_choices(scope: tuple[int, int, str]) -> list[dict[str, Any]]:
    """The scope's setups with their run counts (the page's second picker), cached per scope."""
    workload_id, hardware_id, mode = scope
    return cached_in_scope(
        "series:setups",
        scope_key(workload_id, hardware_id, mode),
        lambda: cq.setup_choices(scope=scope),
    )
