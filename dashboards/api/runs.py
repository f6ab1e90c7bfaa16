"""HTTP API for reading runs: GET /api/runs/ and GET /api/runs/<id>/."""

from __future__ import annotations

from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.api.pagination import Pagination
from dashboards.api.schema import TEXT
from dashboards.api.serializers import MetricValuesSerializer, ParamsField
from dashboards.page_cache.kept import kept_data
from dashboards.pure.selection import strict_choice_param, text_param
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


class RunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.URLField()
    page = serializers.URLField()
    workload = serializers.CharField()
    workload_version = serializers.CharField(allow_blank=True)
    kernel = serializers.CharField()
    patches = serializers.ListField(child=serializers.CharField(), help_text="[] is stock")
    hardware = serializers.CharField()
    mode = serializers.ChoiceField(choices=Mode.choices)
    params = ParamsField()
    label = serializers.CharField(allow_blank=True)  # type: ignore[assignment]  # a field named like a Field attribute; DRF keeps it apart
    notes = serializers.CharField(allow_blank=True)
    upload = serializers.IntegerField(allow_null=True)


class RunPageSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    next = serializers.URLField(allow_null=True)
    previous = serializers.URLField(allow_null=True)
    results = RunSerializer(many=True)


class RunDetailSerializer(RunSerializer):
    results = serializers.DictField(child=MetricValuesSerializer(), help_text="per metric name")


RUN_FILTERS = [
    OpenApiParameter("workload", TEXT, description="workload name, e.g. VolanoMark"),
    OpenApiParameter("kernel", TEXT, description="kernel version, e.g. 2.5.59"),
    OpenApiParameter("patches", TEXT, description="patch set joined with '+'; 'stock' for none"),
    OpenApiParameter("hardware", TEXT, description="hardware configuration name"),
    OpenApiParameter("mode", str, enum=Mode.values),
]


class RunListView(APIView):
    @extend_schema(
        parameters=RUN_FILTERS,
        responses=RunPageSerializer,
        operation_id="runs_list",
        summary="Runs, newest first, paginated",
    )
    def get(self, request: Request) -> Response:
        return Response(kept_data(request, "api-runs", lambda: self._page(request)))

    def _page(self, request: Request) -> dict:
        q = request.query_params  # BadParam: a JSON 400 naming it (dashboards/api/errors.py)
        mode = strict_choice_param(q, "mode", Mode.values)
        filters = {
            "workload": text_param(q, "workload"),
            "kernel": text_param(q, "kernel"),
            "patches": (text_param(q, "patches") or "") if "patches" in q else None,
            "hardware": text_param(q, "hardware"),
            "mode": mode or None,
        }
        runs = queries.runs_filtered(**filters)
        paginator = Pagination(count=queries.runs_filtered_count(**filters))
        page = paginator.paginate_queryset(runs, request, view=self) or []
        return dict(
            paginator.get_paginated_response([run_keys_json(r, request) for r in page]).data
        )


class RunDetailView(APIView):
    @extend_schema(
        responses=RunDetailSerializer,
        summary="One run: keys, parameters, notes and results per metric",
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = queries.run_with_keys(run_id=run_id)
        if run is None:
            raise Http404(f"no run {run_id}")
        body = run_keys_json(run, request)
        body["results"] = queries.run_results(run_id=run.pk)
        return Response(body)
