"""The across-kernels page (/kernels/): one metric of one setup across kernels and patch sets,
its figure (/kernels/figure/) and its CSV/JSON downloads.

The page does not embed its figure: its chart fetches it once from /kernels/figure/ (a
1,000-kernel series is ~260 kB of figure JSON, which the page's HTML would carry on every
visit and which Django's template engine would escape on every render). Both, and the
downloads, come finished from the cache until an upload to the setup's scope
(``dashboards/series_data.py``); an anonymous reader's whole answer is kept until then and
served before the middleware stack runs (``dashboards/page_cache.py``).

The series' alert marks are drawn into that figure's answer, cached apart from it under the
setup's alerts version, which every alert write moves (``dashboards/series_marks.py``): the
page with its data is two requests, and a triage shows at once. A page whose URL names no
set-up opens on the newest open regression (the series a reader most likely came for), else
on the busiest set-up.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from dashboards import chart_queries as cq
from dashboards import exports, series_data, series_marks
from dashboards.chartdata import Baseline
from dashboards.page_cache import kept_while_current
from dashboards.page_tools import bad_params_are_400, links, setup_id_of
from dashboards.pages import scope_index
from dashboards.selection import (
    ACROSS_KERNELS,
    BadParam,
    KernelsQuery,
    metric_asked,
    scope_named,
    setup_label,
)
from perfdb.cache import CATALOG, cached_per_scope, read_together


@kept_while_current
@bad_params_are_400
def kernels(request: HttpRequest) -> HttpResponse:
    query = _series_chosen(KernelsQuery.read(request.GET), open_regression=True)
    setup_id = query.setup_id
    if setup_id is None:
        return render(request, "dashboards/kernels.html", {})
    series = series_data.kernels_page(setup_id, query)
    setup, metric = series["setup"], series["metric"]
    if metric is not None and query.format:  # a download needs no picker
        return _download(query.format, setup, metric)
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
    context.update(
        metric_options=_selected(series["metric_options"], metric["id"]),
        baseline_options=_selected(series["options"], query.baseline),
        metric=metric,
        note=series["note"],
        n_points=len(series["values"]),
    )
    selection = {"setup": setup["id"], "metric": metric["id"], "baseline": query.baseline}
    figure_query = links("dashboards-kernels", selection, ())["permalink"].partition("?")[2]
    return render(
        request,
        "dashboards/kernels.html",
        {
            **context,
            **links("dashboards-kernels", selection, (ACROSS_KERNELS,)),
            "figure_src": f"{reverse('dashboards-kernels-figure')}?{figure_query}",
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


def _download(fmt: str, setup, metric) -> HttpResponse:
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"

    def build() -> bytes:
        table = exports.series_table(series_data.series(setup["id"], metric).series)
        return exports.export_response(table, fmt).content

    body = series_data.finished(f"download-{fmt}", setup["id"], str(metric["id"]), build)
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{ACROSS_KERNELS}.{fmt}"'
    return response


@kept_while_current
@bad_params_are_400
def kernels_figure(request: HttpRequest) -> HttpResponse:
    """The page's figure as JSON (what its chart fetches), its series' alert marks drawn
    over it: the same selection as the page. The figure is cached per setup version under
    the query's metric and baseline when it names its setup (what the page asks), the marks
    per version of the setup's alerts (``series_marks``): a warm request is one cache round
    trip, no query. After an upload to the setup, its parts (the setup's metric ids, the
    series, the marks) are read in that same round trip, the setup is not read again, and
    the figure is joined from the series' kept pieces (``_figure``). So the figure is stored
    once per setup version, here (and, for an anonymous reader, whole with its marks in the
    kept answer, dashboards/page_cache.py): an entry per metric and baseline ids besides,
    shared by the spellings of a query, had been a third copy of its bytes written after
    each upload, to save a join that costs less than reading it."""
    query = KernelsQuery.read(request.GET)
    if query.setup is None:
        figure = _figure(query)
        marks = _marks(figure)
    else:
        setup_id = _series_chosen(query).setup_id
        assert setup_id is not None  # named: an id, or a 400
        baseline = "" if query.baseline is None else str(query.baseline)
        key = f"{query.metric}:{baseline}"
        keys = series_data.finished_keys("figure-of-query", setup_id, key)
        keys += series_data.figure_keys(setup_id, query.metric)
        if query.metric_id is not None:
            keys += series_marks.marks_keys(setup_id, query.metric_id, query.baseline)
        with read_together(keys):
            figure = series_data.finished(
                "figure-of-query",
                setup_id,
                key,
                lambda: _figure(query),
                update=lambda _: _figure(query, known=setup_id),
            )
            marks = _marks(figure)
    body = series_marks.with_marks(figure[3], marks)
    return HttpResponse(body, content_type="application/json")


# A figure as kept: its setup, metric and baseline run ids, then its JSON.
Figure = tuple[int, int, int | None, bytes]


def _figure(query: KernelsQuery, known: int | None = None) -> Figure:
    """The figure of the query. ``known``: its setup, which had runs when the figure was
    kept before runs were added to it (it has them still: removing runs moves the
    structure version, and then nothing of before is used), so it is not read again."""
    setup_id = known or _series_chosen(query).setup_id
    if setup_id is None:
        raise BadParam("setup", "no setup with runs")
    setup = {"id": setup_id} if known else series_data.setup_with_runs(setup_id)
    metric, _ = metric_asked(query.metric, series_data.metric_choices(setup))
    if metric is None:
        raise BadParam("metric", "this setup has no results")
    data = series_data.finished_series(setup_id, metric)
    body = series_data.figure_json(data, _baseline(data, query.baseline))
    return setup_id, metric["id"], query.baseline, body


def _marks(figure: Figure) -> bytes:
    """The alert marks to draw over ``figure``, with its baseline."""
    setup_id, metric_id, baseline_id, _ = figure
    return series_marks.marks_traces(
        setup_id, metric_id, baseline_id, lambda data: _baseline(data, baseline_id)
    )


def _series_chosen(query: KernelsQuery, open_regression: bool = False) -> KernelsQuery:
    """The query with the setup to chart as an id (None when nothing has runs): the one it
    names, by id or by name (``setup=VolanoMark/P8/UP/rooms=10``, as the compare page takes
    it: a name no set-up or several have is a 400 saying which), so that what follows, its
    caches and the page's links, read the id. Else, with ``open_regression`` (the page),
    the set-up and metric of the newest open regression in the scope asked for, if any (a
    metric the query names is kept): one query, so such a page is computed on every
    request rather than kept, since an alert's triage moves no version. Else the busiest
    setup of the scope asked for, else the busiest of all: its context is still read per
    setup version (``series_data.kernels_page``); computed on every request, the busiest
    setup's (the one uploads lengthen) had been 14 % of the web server's CPU under a lab's
    load (bench/load.py)."""
    if query.setup is not None:
        return replace(query, setup=setup_id_of(query.setup))
    scope = scope_named(query.scope, scope_index().scopes) if query.scope else None
    found = None
    if open_regression:
        found = cq.open_regression_series(scope=None if scope is None else scope.ids)
    if found is not None:
        return replace(query, setup=found[0], metric=query.metric or str(found[1]))
    if scope is None:
        return replace(query, setup=scope_index().busiest_setup_id)
    busiest = max(series_data.setup_choices(scope.ids), key=lambda s: s["run_count"])
    return replace(query, setup=int(busiest["id"]))


def _baseline(data: series_data.FinishedSeries, run_id: int | None) -> Baseline | None:
    if run_id is None:
        return None
    if run_id not in data.rows:
        raise BadParam("baseline", f"run {run_id} is not in this series")
    value = data.values()[run_id]
    if value == 0:
        raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")
    return Baseline(value=value, label=data.labels.get(run_id) or f"run #{run_id}")
