"""The across-kernels page (/kernels/): one metric of one setup across kernels and patch sets,
its figure (/kernels/figure/) and its CSV/JSON downloads.

The page does not embed its figure: its chart fetches it once from /kernels/figure/ (a
1,000-kernel series is ~260 kB of figure JSON, which the page's HTML would carry on every
visit and which Django's template engine would escape on every render). Both, and the
downloads, come finished from the cache until an upload to the setup's scope
(``dashboards/series_data.py``); an anonymous reader's whole answer is kept until then and
served before the middleware stack runs (``dashboards/page_cache.py``).

The series' alerts are not in that figure: triage changes them without changing the series.
The chart draws them over it from /kernels/alerts/ (``kernels_alerts``), read fresh on every
request. A page whose URL names no set-up opens on the newest open regression (the series a
reader most likely came for), else on the busiest set-up.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from dashboards import chart_queries as cq
from dashboards import exports, series_data
from dashboards.chartdata import Baseline
from dashboards.page_cache import kept_while_current
from dashboards.page_tools import bad_params_are_400, links, setup_id_param
from dashboards.pages import scope_index
from dashboards.selection import (
    BadParam,
    choice_param,
    format_param,
    int_param,
    is_number,
    metric_param,
    scope_param,
    setup_label,
)
from perfdb.cache import CATALOG, cached_in_setup, cached_per_scope, read_together


@kept_while_current
@bad_params_are_400
def kernels(request: HttpRequest) -> HttpResponse:
    q = _with_open_regression(_setup_as_id(request.GET))
    fmt = format_param(q)
    setup_id = _kernels_setup_id(q)
    if setup_id is None:
        return render(request, "dashboards/kernels.html", {})
    series = _series_context_cached(q, setup_id)
    setup, metric, baseline_id = series["setup"], series["metric"], int_param(q, "baseline")
    if metric is not None:
        _check_baseline(series["values"], baseline_id)  # a 400 here, not in the figure's request
        if fmt:  # a download needs no picker
            return _download(request, fmt, setup, metric)
    scope_key = series_data.setup_scope(setup)
    ids = (setup["workload_id"], setup["hardware_id"], setup["mode"])
    scope_options, setup_options = _picker_options(scope_key, ids)
    context: dict[str, Any] = {
        "scope_options": _selected(scope_options, escape(scope_key)),
        "setup_options": _selected(setup_options, setup["id"]),
        "setup": setup,
    }
    if metric is None:
        return render(request, "dashboards/kernels.html", context)
    selection = {"setup": setup["id"], "metric": metric["id"], "baseline": baseline_id}
    figure_query = links("dashboards-kernels", selection, ())["permalink"].partition("?")[2]
    # escaped when built; a plain str here would be escaped again by the template
    options = (
        mark_safe(series["options"])
        if baseline_id is None
        else _selected(series["options"], baseline_id)
    )
    return render(
        request,
        "dashboards/kernels.html",
        {
            **context,
            **links("dashboards-kernels", selection, ("across-kernels",)),
            "metric_options": _selected(series["metric_options"], metric["id"]),
            "metric": metric,
            "note": series["note"],
            "baseline_id": baseline_id,
            "baseline_options": options,
            "figure_src": f"{reverse('dashboards-kernels-figure')}?{figure_query}",
            "alerts_src": f"{reverse('dashboards-kernels-alerts')}?{figure_query}",
            "n_points": len(series["values"]),
        },
    )


def pickers_warm(scope_keys: Collection[str]) -> None:
    """After an upload to these scopes: their setup pickers, with the run counts it moved,
    computed together (one lock, one store), so that the first visitor of one of their
    series, most likely the uploader, does not compute one. Called in the writer's process
    right after its commit (``dashboards.warm.after_commit``) and by the pages' warm."""
    ids = {s.key: s.ids for s in scope_index().scopes if s.key in scope_keys}
    if ids:
        _picker_entries(ids)


def _picker_options(scope_key: str, ids: tuple[int, int, str]) -> tuple[str, str]:
    """The scope picker's and the setup picker's ``<option>``s, read in one round trip."""
    found = _picker_entries({scope_key: ids})
    return found[CATALOG], found[scope_key]


def _picker_entries(scopes: Mapping[str, tuple[int, int, str]]) -> dict[str, str]:
    """The scope picker's ``<option>``s (under ``CATALOG``) and each scope's setup picker's,
    rendered once (the scopes per setups catalogue, a scope's setups with their run counts
    per scope version): the template engine spent most of a warm page's CPU on these loops."""

    def build(keys: list[str]) -> dict[str, str]:
        out = {}
        if CATALOG in keys:
            out[CATALOG] = "".join(
                f'<option value="{escape(s.key)}">{escape(s.label)}</option>'
                for s in scope_index().scopes
            )
        for key in keys:
            if key in scopes:  # a query: this entry is itself cached per scope
                out[key] = "".join(
                    f'<option value="{s["id"]}">'
                    f"{escape(setup_label(s))} ({s['run_count']} runs)</option>"
                    for s in cq.setup_choices(scope=scopes[key])
                )
        return out

    return cached_per_scope("kernels:picker-options", [CATALOG, *scopes], build)


def _selected(options: str, value: object) -> str:
    """``options`` (escaped when built) with the one of ``value`` selected."""
    chosen = f'<option value="{value}"'
    return mark_safe(options.replace(f"{chosen}>", f"{chosen} selected>", 1))


def _series_context_cached(q, setup_id: int) -> dict[str, Any]:
    """``_series_context`` of a page that names its setup, cached per setup version under
    the metric it asks for: a warm page reads it in one round trip, no query, and one
    computed after an upload reads its parts in the same round trip."""
    asked = q.get("metric", "")
    key = f"series:page-context:{asked}"
    metric_id = int(asked) if asked.isascii() and asked.isdigit() else None
    with read_together(series_data.page_keys(setup_id, key, metric_id)):
        return cached_in_setup(key, setup_id, lambda: _series_context(q, setup_id))


def _series_context(q, setup_id: int) -> dict[str, Any]:
    """What the page shows of the setup's series: the setup, its metrics, the metric chosen
    (and the note when the one asked for has no data here), each run's value (the baseline
    check) and the baseline options. Cached whole per setup version
    (``_series_context_cached``), so its parts are not cached again one by one: computed
    after an upload, each nested cached read would be one more round trip to Redis."""
    setup = _setup_with_runs(setup_id)
    metrics = series_data.metric_choices(setup)
    metric, note = metric_param(q, metrics)
    values: dict[int, float] = {}
    options = ""
    if metric is not None:
        finished = series_data.finished_series(setup["id"], metric)
        values = finished.values()
        options = series_data.baseline_options(finished)
    metric_options = "".join(
        f'<option value="{m["id"]}">{escape(m["name"])} ({escape(m["unit"])})</option>'
        for m in metrics
    )
    context = {"setup": setup, "metric_options": metric_options, "metric": metric, "note": note}
    return {**context, "values": values, "options": options}


def _download(request: HttpRequest, fmt: str, setup, metric) -> HttpResponse:
    name = "across-kernels"  # exports.series_table's name
    choice_param(request.GET, "chart", (name,), name)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"

    def build() -> bytes:
        table = exports.series_table(series_data.series(setup["id"], metric).series)
        return exports.export_response(table, fmt).content

    body = series_data.finished(f"download-{fmt}", setup["id"], str(metric["id"]), build)
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@kept_while_current
@bad_params_are_400
def kernels_figure(request: HttpRequest) -> HttpResponse:
    """The page's figure as JSON (what its chart fetches): the same selection as the page.
    Cached per setup version under the query's metric and baseline when it names its
    setup (what the page asks): a warm request is one cache round trip, no query. After
    an upload to the setup, its parts (the setup's metric ids, the figure, the series) are
    read in that same round trip, and the setup is not read again (``_figure``)."""
    q = _setup_as_id(request.GET)
    setup_id = int_param(q, "setup")
    if setup_id is None:
        body = _figure(q)
    else:
        metric, baseline = q.get("metric", ""), q.get("baseline", "")
        key = f"{metric}:{baseline}"
        keys = series_data.finished_keys("figure-of-query", setup_id, key)
        keys += series_data.figure_keys(setup_id, metric, baseline)
        with read_together(keys):
            body = series_data.finished(
                "figure-of-query",
                setup_id,
                key,
                lambda: _figure(q),
                update=lambda _: _figure(q, known=setup_id),
            )
    return HttpResponse(body, content_type="application/json")


def _figure(q, known: int | None = None) -> bytes:
    """The figure of the query. ``known``: its setup, which had runs when the figure was
    kept before runs were added to it (it has them still: removing runs moves the
    structure version, and then nothing of before is used), so it is not read again."""
    setup_id = known or _kernels_setup_id(q)
    if setup_id is None:
        raise BadParam("setup", "no setup with runs")
    setup = {"id": setup_id} if known else _setup_with_runs(setup_id)
    metric, _ = metric_param(q, series_data.metric_choices(setup))
    if metric is None:
        raise BadParam("metric", "this setup has no results")
    baseline_id = int_param(q, "baseline")

    def build() -> bytes:
        data = series_data.finished_series(setup["id"], metric)
        return series_data.figure_json(data, _baseline(data, baseline_id))

    return series_data.finished("figure", setup["id"], f"{metric['id']}:{baseline_id}", build)


def _setup_as_id(q: QueryDict) -> QueryDict:
    """The query with a set-up given by name (``setup=VolanoMark/P8/UP/rooms=10``, as the
    compare page takes it: ``page_tools.setup_id_param``) given by its id instead: what
    follows, its caches and the page's links, read the id. A name no set-up or several
    have is a 400 saying which."""
    raw = q.get("setup", "").strip()
    if not raw or is_number(raw):
        return q
    chosen = q.copy()
    chosen["setup"] = str(setup_id_param(q))
    return chosen


def _with_open_regression(q: QueryDict) -> QueryDict:
    """The page's query, with the set-up and metric of the newest open regression (in the
    scope asked for, if any) when it names no set-up: a metric it names is kept. One query
    (``cq.open_regression_series``), so such a page is computed on every request rather than
    kept (an alert's triage moves no version); a page naming its set-up is unchanged."""
    if int_param(q, "setup") is not None:
        return q
    scope = scope_param(q, scope_index().scopes) if q.get("scope") else None
    found = cq.open_regression_series(scope=None if scope is None else scope.ids)
    if found is None:
        return q
    chosen = q.copy()
    chosen["setup"] = str(found[0])
    if not q.get("metric"):
        chosen["metric"] = str(found[1])
    return chosen


@bad_params_are_400
def kernels_alerts(request: HttpRequest) -> HttpResponse:
    """The alert marks of a series as ``{"data": [trace, ...]}``, which the page's chart
    draws over its figure: the same query as the figure's (setup, metric, baseline). The
    alerts are one query on every request (never kept: a triage moves no version); the
    series they sit on is read from the cache, and not at all when there is no alert."""
    q = request.GET
    setup_id, metric_id = int_param(q, "setup"), int_param(q, "metric")
    if setup_id is None or metric_id is None:
        raise BadParam("setup" if setup_id is None else "metric", "required")
    found = cq.series_alert_marks(setup_id=setup_id, metric_id=metric_id)
    if found.metric is None:
        return HttpResponse(series_data.NO_TRACES, content_type="application/json")
    data = series_data.finished_series(setup_id, found.metric)
    baseline = _baseline(data, int_param(q, "baseline"))
    body = series_data.alert_marks_json(data, found.marks, baseline)
    return HttpResponse(body, content_type="application/json")


def _kernels_setup_id(q) -> int | None:
    """The setup to chart: ``setup`` (old permalinks name only it), else the busiest setup
    of ``scope``, else the busiest of all. None when nothing has runs. Its context is read
    per setup version (``_series_context_cached``), the default page's too: computed on
    every request, the busiest setup's (the one uploads lengthen) had been 14 % of the web
    server's CPU under a lab's load (bench/load.py)."""
    wanted = int_param(q, "setup")
    if wanted is not None:
        return wanted
    index = scope_index()
    scope = scope_param(q, index.scopes) if q.get("scope") else None
    if scope is None:
        return index.busiest_setup_id
    return int(max(series_data.setup_choices(scope.ids), key=lambda s: s["run_count"])["id"])


def _setup_with_runs(setup_id: int) -> dict[str, Any]:
    found = cq.setup_choices(setup_id=setup_id)
    if not found:
        raise BadParam("setup", f"no setup {setup_id} with runs")
    return found[0]


def _check_baseline(values: Mapping[int, float], run_id: int | None) -> None:
    """A 400 for a baseline run that is not in the series or whose value is 0."""
    if run_id is None:
        return
    if run_id not in values:
        raise BadParam("baseline", f"run {run_id} is not in this series")
    if values[run_id] == 0:
        raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")


def _baseline(data: series_data.FinishedSeries, run_id: int | None) -> Baseline | None:
    if run_id is None:
        return None
    if run_id not in data.rows:
        raise BadParam("baseline", f"run {run_id} is not in this series")
    value = data.values()[run_id]
    if value == 0:
        raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")
    return Baseline(value=value, label=data.labels.get(run_id) or f"run #{run_id}")
