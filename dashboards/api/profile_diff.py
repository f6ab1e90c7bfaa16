"""``GET /api/profile-diff/``: the profile diff's rows as JSON, its sides named as the page
names them (``dashboards.page_data.profile_diff``)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.api.compare import RUN_IDS
from dashboards.page_data.profile_diff import diff_from_query, row_json
from dashboards.pure.selection import BadParam


class ProfileDiffView(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("base", RUN_IDS, description="baseline run ids: 12,13"),
            OpenApiParameter("new", RUN_IDS, description="candidate run ids: 15"),
            # Which setups and builds have a profile is the data's, not the schema's: a
            # well-formed value naming none is a 400 naming the parameter (as /api/compare/).
            OpenApiParameter(
                "setup",
                {"type": "integer", "minimum": 1},
                description="or: a setup with profiled runs (default: the first such setup)",
            ),
            OpenApiParameter(
                "base_build",
                str,
                description="one of the setup's profiled builds (kernel+patches, e.g. 2.4.20)",
            ),
            OpenApiParameter(
                "new_build",
                str,
                description="one of the setup's profiled builds, e.g. 2.5.59+O(1)",
            ),
        ],
        responses={200: OpenApiTypes.OBJECT},
        summary="Which kernel functions moved between two profiles",
        description=(
            "Every function of either side: a line summing the scheduler set of each side's "
            "kernel era, a line summing the idle set (`default_idle`, `intel_idle`, …), then "
            "the busy functions, largest change in share of busy (non-idle) ticks first, then "
            "the idle functions (`idle` true), whose shares are of all ticks. Sides pool "
            "their runs' and trials' ticks. `*_ticks_per_work` divide ticks by the side's "
            "throughput (`work_metric`) when both sides have one. `status`: both, appeared, "
            "vanished, set."
        ),
    )
    def get(self, request: Request) -> Response:
        diff = diff_from_query(request.query_params)
        if diff is None:
            raise BadParam("base", "no run has a kernel profile yet")
        return Response(
            {
                "base": {
                    "label": diff.base.label,
                    "runs": list(diff.base_ids),
                    "kernel": diff.base.kernel,
                    "total_ticks": diff.base.total,
                    "work": diff.base.work,
                },
                "new": {
                    "label": diff.new.label,
                    "runs": list(diff.new_ids),
                    "kernel": diff.new.kernel,
                    "total_ticks": diff.new.total,
                    "work": diff.new.work,
                },
                "work_metric": diff.work,
                "rows": [row_json(r) for r in diff.rows],
            }
        )
