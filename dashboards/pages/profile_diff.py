"""The profile diff page (``/profile-diff/``): which kernel functions grew between two runs
or two builds of one setup, as a ranked table and a chart of the top movers, and its CSV/JSON
download; the diff itself is ``dashboards.page_data.profile_diff``'s."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.chart_queries import profiles as pq
from dashboards.figures.profile_diff import profile_diff_figure
from dashboards.page_data.profile_diff import diff_from_query, diff_table
from dashboards.pure.selection import BadParam, format_param, int_param
from dashboards.web.page_tools import bad_params_are_400, download, links
from perfdb.features.profile_diff import idle_rows, top_movers

TOP_DEFAULT, TOP_MAX = 15, 50


def _top(q) -> int:
    top = int_param(q, "top")
    top = TOP_DEFAULT if top is None else top
    if not 1 <= top <= TOP_MAX:
        raise BadParam("top", f"expected 1 to {TOP_MAX}, got {top}")
    return top


@bad_params_are_400
def profile_diff_page(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    top = _top(q)
    diff = diff_from_query(q)
    context: dict[str, Any] = {"setups": pq.profiled_setups(), "top": top}
    if diff is None:
        return render(request, "dashboards/profile_diff.html", context)
    if fmt:
        return download((diff_table(diff),), request, fmt)
    movers = top_movers(diff.rows, top)
    sched = [r for r in diff.rows if r.status == "set" and not r.idle]
    idle = idle_rows(diff.rows)
    selection = {**diff.selection, "top": top}
    return render(
        request,
        "dashboards/profile_diff.html",
        {
            **context,
            **links("dashboards-profile-diff", selection, ("profile-diff",)),
            "diff": diff,
            "rows": [r for r in diff.rows if not r.idle],
            "scheduler": sched[0] if sched else None,
            "idle_line": idle[0] if idle else None,
            "idle_rows": idle[1:],
            "appeared": [r.function for r in diff.rows if r.status == "appeared" and not r.idle],
            "vanished": [r.function for r in diff.rows if r.status == "vanished" and not r.idle],
            "figure": profile_diff_figure(sched + movers, diff.base.label, diff.new.label),
            "compare_url": f"/compare/?base={','.join(map(str, diff.base_ids))}"
            f"&new={','.join(map(str, diff.new_ids))}",
        },
    )
