"""The claims page (``/claims/``), its CSV/JSON and ``GET /api/claims/``: every claim a bundle
stated, checked against the stored runs, contradicted first, each linking to the compare
view of the runs it was checked on."""

from __future__ import annotations

from django.db.models import Case, IntegerField, Value, When
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.pure.selection import choice_param, format_param
from dashboards.web import exports
from dashboards.web.page_tools import bad_params_are_400, download, links
from perfdb.models import Claim

ORDER = [Claim.Verdict.CONTRADICTED, Claim.Verdict.NOT_TESTABLE, Claim.Verdict.SUPPORTED]
VERDICTS = [v.value for v in Claim.Verdict]


def claims_list(verdict: str = "") -> list[Claim]:
    """Contradicted first, then not testable, supported, no data; one query."""
    rank = Case(
        *[When(verdict=v, then=Value(i)) for i, v in enumerate(ORDER)],
        default=Value(len(ORDER)),
        output_field=IntegerField(),
    )
    claims = Claim.objects.select_related("metric", "setup").annotate(rank=rank)
    if verdict:
        claims = claims.filter(verdict=verdict)
    return list(claims.order_by("rank", "document", "id"))


def compare_url(claim: Claim) -> str | None:
    if not claim.baseline_run_ids or not claim.candidate_run_ids:
        return None
    base = ",".join(map(str, claim.baseline_run_ids))
    new = ",".join(map(str, claim.candidate_run_ids))
    return f"/compare/?base={base}&new={new}"


def claim_json(claim: Claim) -> dict[str, object]:
    return {
        "id": claim.pk,
        "setup": claim.setup_text,
        "metric": claim.metric_name,
        "baseline": claim.baseline,
        "candidate": claim.candidate,
        "stated_change_pct": claim.stated_change_pct,
        "computed_change_pct": claim.computed_change_pct,
        "ci_low_pct": claim.ci_low_pct,
        "ci_high_pct": claim.ci_high_pct,
        "tolerance_pct": claim.tolerance_pct,
        "n_baseline": claim.n_baseline,
        "n_candidate": claim.n_candidate,
        "verdict": claim.verdict,
        "reason": claim.reason,
        "source": claim.source,
        "document": claim.document,
        "baseline_runs": list(claim.baseline_run_ids),
        "candidate_runs": list(claim.candidate_run_ids),
        "compare": compare_url(claim),
    }


def claims_table(claims: list[Claim]) -> exports.Table:
    rows = [claim_json(c) for c in claims]
    columns = tuple(rows[0]) if rows else ("id",)
    return exports.Table(
        "claims",
        columns,
        tuple(
            tuple(",".join(map(str, v)) if isinstance(v, list) else v for v in r.values())
            for r in rows
        ),
    )


@bad_params_are_400
def claims_page(request: HttpRequest) -> HttpResponse:
    q = request.GET
    fmt = format_param(q)
    verdict = choice_param(q, "verdict", VERDICTS, "")
    claims = claims_list(verdict)
    if fmt:
        return download((claims_table(claims),), request, fmt)
    counts: dict[str, int] = {}
    for claim in Claim.objects.values_list("verdict", flat=True):
        counts[claim] = counts.get(claim, 0) + 1
    return render(
        request,
        "dashboards/claims.html",
        {
            **links("dashboards-claims", {"verdict": verdict}, ("claims",)),
            "rows": [(c, compare_url(c)) for c in claims],
            "verdict": verdict,
            "verdicts": VERDICTS,
            "counts": counts,
        },
    )


class ClaimListView(APIView):
    @extend_schema(
        parameters=[OpenApiParameter("verdict", str, enum=VERDICTS)],
        responses={200: OpenApiTypes.OBJECT, 400: OpenApiTypes.OBJECT},
        summary="Claims stated in bundles, checked against the stored runs",
        description=(
            "Each `[[claim]]` of an uploaded manifest: the stated % change, the change the "
            "stored runs give, their confidence interval (two or more values a side), and a "
            "verdict (supported, contradicted, not testable, no data); contradicted first."
        ),
    )
    def get(self, request: Request) -> Response:
        verdict = choice_param(request.query_params, "verdict", VERDICTS, "")
        return Response({"claims": [claim_json(c) for c in claims_list(verdict)]})
