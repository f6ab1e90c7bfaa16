"""``GET /api/claims/``: every claim a bundle stated, checked against the stored runs, as
the claims page lists them (``dashboards.page_data.claims``)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.page_data.claims import VERDICTS, claim_json, claims_list
from dashboards.pure.selection import choice_param


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
