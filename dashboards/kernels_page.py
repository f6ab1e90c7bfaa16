"""The across-kernels page (/kernels/): one metric of one setup across kernels and patch sets,
its figure (/kernels/figure/) and its CSV/JSON downloads.

The page does not embed its figure: its chart fetches it once from /kernels/figure/ (a
1,000-kernel series is ~260 kB of figure JSON, which the page's HTML would carry on every
visit and which Django's template engine would escape on every render). Both, and the
downloads, come finished from the cache until an upload to the setup's scope
(``dashboards/series_data.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from dashboards import chart_queries as cq
from dashboards import exports, series_data
from dashboards.chartdata import Baseline
from dashboards.page_tools import bad_params_are_400, links, run_text
from dashboards.pages import _scope_choice_of, _scope_index
from dashboards.selection import (
    BadParam,
    choice_param,
    format_param,
    int_param,
    metric_param,
    scope_param,
    setup_label,
)


def _title(metric: Mapping[str, Any]) -> str:
    return f"{metric['name']} across kernels"


@bad_params_are_400
def kernels(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    setup = _kernels_setup(q)
    if setup is None:
        return render(request, "dashboards/kernels.html", {})
    metrics = series_data.metric_choices(setup)
    metric, note = metric_param(q, metrics)
    baseline_id = int_param(q, "baseline")
    values: dict[int, float] = {}
    if metric is not None:
        values = series_data.values(setup, metric, _title(metric))
        _check_baseline(values, baseline_id)  # a 400 here, not in the figure's request
        if fmt:  # a download needs no picker
            return _download(request, fmt, setup, metric)
    scope = _scope_choice_of(setup)
    context: dict[str, Any] = {
        "scopes": _scope_index().scopes,
        "scope": scope,
        "setups": [
            {"id": s["id"], "text": f"{setup_label(s)} ({s['run_count']} runs)"}
            for s in series_data.setup_choices(scope.ids)
        ],
        "setup": setup,
    }
    if metric is None:
        return render(request, "dashboards/kernels.html", context)
    selection = {"setup": setup["id"], "metric": metric["id"], "baseline": baseline_id}
    figure_query = links("dashboards-kernels", selection, ())["permalink"].partition("?")[2]
    return render(
        request,
        "dashboards/kernels.html",
        {
            **context,
            **links("dashboards-kernels", selection, ("across-kernels",)),
            "metrics": metrics,
            "metric": metric,
            "note": note,
            "baseline_id": baseline_id,
            "baseline_options": _baseline_options(setup, metric, baseline_id),
            "figure_src": f"{reverse('dashboards-kernels-figure')}?{figure_query}",
            "n_points": len(values),
        },
    )


def _baseline_options(setup, metric, chosen: int | None) -> str:
    """Every run of the series as a baseline ``<option>`` (a 1,000-run series: 1,000 of
    them), rendered once per scope version: the template engine took tens of milliseconds
    a request for them. Only the chosen one's ``selected`` is added per request."""

    def build() -> bytes:
        data = series_data.series(setup, metric, _title(metric))
        return "".join(
            f'<option value="{p.run.run_id}">relative: '
            f"{escape(run_text(p.run, data.labels.get(p.run.run_id, '')))} = 100</option>"
            for p in data.series.points
        ).encode()

    html = series_data.finished("baseline-options", setup, str(metric["id"]), build).decode()
    if chosen is not None:
        html = html.replace(f'<option value="{chosen}">', f'<option value="{chosen}" selected>')
    return mark_safe(html)  # the texts escaped above; ids are integers


def _download(request: HttpRequest, fmt: str, setup, metric) -> HttpResponse:
    name = "across-kernels"  # exports.series_table's name
    choice_param(request.GET, "chart", (name,), name)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"

    def build() -> bytes:
        table = exports.series_table(series_data.series(setup, metric, _title(metric)).series)
        return exports.export_response(table, fmt).content

    body = series_data.finished(f"download-{fmt}", setup, str(metric["id"]), build)
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


@bad_params_are_400
def kernels_figure(request: HttpRequest) -> HttpResponse:
    """The page's figure as JSON (what its chart fetches): the same selection as the page."""
    q = request.GET
    setup = _kernels_setup(q)
    if setup is None:
        raise BadParam("setup", "no setup with runs")
    metric, _ = metric_param(q, series_data.metric_choices(setup))
    if metric is None:
        raise BadParam("metric", "this setup has no results")
    baseline_id = int_param(q, "baseline")

    def build() -> bytes:
        data = series_data.series(setup, metric, _title(metric))
        return series_data.figure_json(data, _baseline(data, baseline_id))

    body = series_data.finished("figure", setup, f"{metric['id']}:{baseline_id}", build)
    return HttpResponse(body, content_type="application/json")


def _kernels_setup(q) -> dict[str, Any] | None:
    """The setup to chart: ``setup`` (old permalinks name only it), else the busiest setup
    of ``scope``, else the busiest of all. None when nothing has runs."""
    wanted = int_param(q, "setup")
    if wanted is not None:
        found = cq.setup_choices(setup_id=wanted)
        if not found:
            raise BadParam("setup", f"no setup {wanted} with runs")
        return found[0]
    index = _scope_index()
    scope = scope_param(q, index.scopes) if q.get("scope") else None
    if scope is None:
        if index.busiest_setup_id is None:
            return None
        return cq.setup_choices(setup_id=index.busiest_setup_id)[0]
    return max(series_data.setup_choices(scope.ids), key=lambda s: s["run_count"])


def _check_baseline(values: Mapping[int, float], run_id: int | None) -> None:
    """A 400 for a baseline run that is not in the series or whose value is 0."""
    if run_id is None:
        return
    if run_id not in values:
        raise BadParam("baseline", f"run {run_id} is not in this series")
    if values[run_id] == 0:
        raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")


def _baseline(data: cq.KernelSeries, run_id: int | None) -> Baseline | None:
    if run_id is None:
        return None
    for point in data.series.points:
        if point.run.run_id == run_id:
            if point.value == 0:
                raise BadParam("baseline", f"run {run_id} has the value 0; nothing is % of 0")
            label = data.labels.get(run_id) or f"run #{run_id}"
            return Baseline(value=point.value, label=label)
    raise BadParam("baseline", f"run {run_id} is not in this series")
