"""The claims page (``/claims/``) and its CSV/JSON: every claim a bundle stated, checked
against the stored runs (``dashboards.page_data.claims``), filtered by verdict."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from dashboards.page_data.claims import (
    VERDICTS,
    claims_list,
    claims_table,
    compare_url,
    verdict_counts,
)
from dashboards.pure.selection import choice_param, format_param
from dashboards.web.page_tools import bad_params_are_400, download, links


@bad_params_are_400
def claims_page(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    verdict = choice_param(q, "verdict", VERDICTS, "")
    claims = claims_list(verdict)
    if fmt:
        return download((claims_table(claims),), request, fmt)
    return render(
        request,
        "dashboards/claims.html",
        {
            **links("dashboards-claims", {"verdict": verdict}, ("claims",)),
            "rows": [(c, compare_url(c)) for c in claims],
            "verdict": verdict,
            "verdicts": VERDICTS,
            "counts": verdict_counts(),
        },
    )
