"""The compare page (``/compare/``): two sets of runs picked per side, a row per metric,
the headline first, with the patch-stack waterfall when one side is a stock kernel and the
other a patch stack on it, and its CSV/JSON downloads (``dashboards.page_data.compare``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.chart_queries import profiles as profile_queries
from dashboards.figures import compare_figure
from dashboards.page_cache.kept import kept_for_anonymous
from dashboards.page_data.attribution import attribution_table, compare_attribution
from dashboards.page_data.compare import (
    compare_data,
    compare_picker,
    compare_rows,
    compare_selection,
    note_parts,
)
from dashboards.pure.compare import headline_metric
from dashboards.pure.selection import format_param
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, links, run_text


@kept_for_anonymous("compare")
@bad_params_are_400
def compare(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    base, new = compare_selection(q)
    context: dict[str, Any] = {
        "base": base,
        "new": new,
        **compare_picker(q, base, new),
    }
    if not base:
        return render(request, "dashboards/compare.html", context)
    lines, infos = compare_data(base, new)
    attribution = compare_attribution(base, new, lines)
    attribution_tables = (attribution_table(attribution),) if attribution else ()
    if fmt:
        return download((exports.compare_table(lines), *attribution_tables), request, fmt)
    selection = {"base": ",".join(map(str, base)), "new": ",".join(map(str, new))}
    directed = [line for line in lines if line.direction != "none"]
    rows = compare_rows(directed or lines, infos[base[0]][0], infos[new[0]][0])
    headline = headline_metric(lines)
    return render(
        request,
        "dashboards/compare.html",
        {
            **context,
            **links(
                "dashboards-compare", selection, ("compare", *(t.name for t in attribution_tables))
            ),
            "attribution": attribution,
            "lines": [
                (line, (line.metric, line.unit) == headline, note_parts(line.alert_note))
                for line in lines
            ],
            "base_runs": [run_text(*infos[i]) for i in base],
            "new_runs": [run_text(*infos[i]) for i in new],
            "figure": compare_figure(tuple(rows), title="Candidate against baseline"),
            "charted_all": not directed,
            "profile_diff_url": profile_queries.profile_diff_url(base, new),
        },
    )
