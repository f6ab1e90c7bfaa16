"""HTTP API for reading runs: GET /api/runs/ and GET /api/runs/<id>/."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.selection import choice_param, text_param
from perfdb import queries
from perfdb.models import Mode, Run


def run_keys_json(run: Run, request: Request) -> dict[str, object]:
    return {
        "id": run.pk,
        "url": request.build_absolute_uri(reverse("api-run", args=[run.pk])),
        "page": request.build_absolute_uri(reverse("run-detail", args=[run.pk])),
        "workload": run.setup.workload.name,
        "workload_version": run.setup.workload.version,
        "kernel": run.kernel.version,
        "patches": [p for p in run.patch_set.name.split("+") if p],
        "hardware": run.setup.hardware.name,
        "mode": run.setup.mode,
        "params": run.setup.params,
        "label": run.label,
        "notes": run.notes,
        "upload": run.upload_id,
    }


RunSchema = inline_serializer(
    "Run",
    {
        "id": serializers.IntegerField(),
        "url": serializers.URLField(),
        "workload": serializers.CharField(),
        "kernel": serializers.CharField(),
        "patches": serializers.ListField(child=serializers.CharField()),
        "hardware": serializers.CharField(),
        "mode": serializers.ChoiceField(choices=Mode.choices),
        "params": serializers.DictField(),
        "notes": serializers.CharField(),
        "results": serializers.DictField(
            help_text="per metric: unit, better, values (per trial), mean, sd, n"
        ),
    },
)
RunPage = inline_serializer(
    "RunPage",
    {
        "count": serializers.IntegerField(),
        "next": serializers.URLField(allow_null=True),
        "previous": serializers.URLField(allow_null=True),
        "results": RunSchema.__class__(many=True),
    },
)

RUN_FILTERS = [
    OpenApiParameter("workload", str, description="workload name, e.g. VolanoMark"),
    OpenApiParameter("kernel", str, description="kernel version, e.g. 2.5.59"),
    OpenApiParameter("patches", str, description="patch set joined with '+'; 'stock' for none"),
    OpenApiParameter("hardware", str, description="hardware configuration name"),
    OpenApiParameter("mode", str, enum=["UP", "SMP"]),
]


class RunListView(APIView):
    @extend_schema(
        parameters=RUN_FILTERS,
        responses=RunPage,
        operation_id="runs_list",
        summary="Runs, newest first, paginated",
    )
    def get(self, request: Request) -> Response:
        q = request.query_params  # BadParam: a JSON 400 naming it (dashboards/api_errors.py)
        mode = choice_param({"mode": q.get("mode", "").upper()}, "mode", ("UP", "SMP"), "")
        runs = queries.runs_filtered(
            workload=text_param(q, "workload"),
            kernel=text_param(q, "kernel"),
            patches=(text_param(q, "patches") or "") if "patches" in q else None,
            hardware=text_param(q, "hardware"),
            mode=mode or None,
        )
        paginator = PageNumberPagination()
        page = paginator.paginate_queryset(runs, request, view=self)
        return paginator.get_paginated_response([run_keys_json(r, request) for r in page])


class RunDetailView(APIView):
    @extend_schema(
        responses=RunSchema, summary="One run: keys, parameters, notes and results per metric"
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = queries.run_with_keys(run_id=run_id)
        if run is None:
            raise Http404(f"no run {run_id}")
        body = run_keys_json(run, request)
        body["results"] = queries.run_results(run_id=run.pk)
        return Response(body)
