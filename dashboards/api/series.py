"""The data behind the charts, for the API.

``GET /api/series/?setup=<id>&metric=<id>``: one metric of one setup across kernels and patch
sets (the /kernels/ chart): a point per run, in kernel order, with mean, sd and n.
``GET /api/scaling/?setups=<ids>&metric=<id>&param=<name>``: a metric against a numeric
parameter over several setups (the /scaling/ chart). Both as JSON, or as CSV with
``format=csv``. Parameters are read by dashboards/pure/selection.py like the pages'.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, Throttled
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards import chart_queries as cq
from dashboards.api.errors import READ_ERRORS
from dashboards.api.scope_charts import IDS, NAME
from dashboards.api.serializers import MetricSerializer, ParamsField
from dashboards.api.throttle import AnonAndUserRateThrottle
from dashboards.page_data import series_data
from dashboards.pure.selection import (
    BadParam,
    ids_param,
    int_param,
    is_number,
    metric_named,
    text_param,
)
from dashboards.web.exports import ListCSVRenderer
from dashboards.web.page_tools import setup_id_param
from perfdb.cache import cache_key, read_together
from perfdb.models import Metric, Setup

POINT_COLUMNS = ("run", "kernel", "patches", "hardware", "mode", "x", "mean", "sd", "n")


class PointsCSVRenderer(ListCSVRenderer):
    """``points`` as CSV, one row per run; the patch set joined with '+' ("stock": none)."""

    key = "points"
    columns = POINT_COLUMNS

    def row(self, item: dict[str, Any]) -> list[object]:
        return [
            "+".join(item["patches"]) or "stock" if c == "patches" else item.get(c)
            for c in POINT_COLUMNS
        ]


class PointSerializer(serializers.Serializer):
    run = serializers.IntegerField(help_text="run id")
    kernel = serializers.CharField()
    patches = serializers.ListField(child=serializers.CharField(), help_text="[] is stock")
    # a field named like a Field attribute: DRF's serializer metaclass keeps the two apart
    label = serializers.CharField(help_text="the run's label (Base1), may be empty")  # type: ignore[assignment]
    hardware = serializers.CharField()
    mode = serializers.CharField()
    x = serializers.FloatField(allow_null=True, help_text="the parameter's value (scaling)")
    mean = serializers.FloatField()
    sd = serializers.FloatField(allow_null=True, help_text="null with a single value")
    n = serializers.IntegerField(help_text="trials")


class SeriesSerializer(serializers.Serializer):
    setup = serializers.IntegerField()
    workload = serializers.CharField()
    hardware = serializers.CharField()
    mode = serializers.CharField()
    params = ParamsField()
    metric = MetricSerializer()
    kernels = serializers.ListField(child=serializers.CharField(), help_text="kernel order")
    points = PointSerializer(many=True)


class ScalingSerializer(serializers.Serializer):
    setups = serializers.ListField(child=serializers.IntegerField())
    param = serializers.CharField()
    metric = MetricSerializer()
    points = PointSerializer(many=True)


ID = {"type": "integer", "minimum": 1, "maximum": 10**18 - 1}
# Names: which exist the schema cannot say (an unknown one is a 400 naming it).
SETUP_NAME = {
    "type": "string",
    "maxLength": 200,
    "pattern": "^[^/\\x00]+/[^/\\x00]+/[^/\\x00]+(/[^\\x00]*)?$",
}
METRIC_NAME = {"type": "string", "maxLength": 200, "pattern": "^[^\\x00]*[^\\x00\\d][^\\x00]*$"}

FORMAT = OpenApiParameter(
    "format",
    str,
    enum=["json", "csv", ""],
    description="csv: the points as CSV (text/csv); json or empty: JSON",
)


def _metric(query) -> Metric:
    metric_id = int_param(query, "metric")
    if metric_id is None:
        raise BadParam("metric", "give a metric id (see /api/metrics/)")
    return _metric_by_id(metric_id)


def _metric_by_id(metric_id: int) -> Metric:
    metric = Metric.objects.filter(pk=metric_id).first()
    if metric is None:
        raise NotFound(f"no metric {metric_id}")
    return metric


def _metric_id(query, setup_id: int) -> int:
    """``metric`` as an id, or its name resolved among the metrics the setup has results
    for (``selection.metric_named``, as the pages read it): a name it does not have, or
    has in two units, is a 400 saying so."""
    raw = text_param(query, "metric")
    if raw is None:
        raise BadParam("metric", "give a metric id (see /api/metrics/) or its name")
    if is_number(raw):
        return int(raw)
    return int(metric_named(raw, series_data.metric_choices({"id": setup_id}))["id"])


def _metric_dict(metric: Metric) -> dict[str, Any]:
    return {"id": metric.pk, "name": metric.name, "unit": metric.unit, "better": metric.better}


def _point(p, x: float | None = None, label: str = "") -> dict[str, Any]:
    return series_data.api_point(p, x, label)


class SeriesView(APIView):
    renderer_classes = [JSONRenderer, PointsCSVRenderer]
    throttle_classes = [AnonAndUserRateThrottle]  # DRF's two, in two round trips, not four

    @staticmethod
    def _by_ids(request: Request) -> bool:
        q = request.query_params
        return q.get("setup", "").isdigit() and q.get("metric", "").isdigit()

    def check_throttles(self, request: Request) -> None:
        """A request with a setup id and a metric id is counted in ``get`` (with the read of
        its answer: one round trip); the others here, before their 400 or their names'
        look-up."""
        if self._by_ids(request):
            return
        super().check_throttles(request)

    @extend_schema(
        summary="One metric of one setup across kernels and patch sets (the /kernels/ chart)",
        parameters=[
            OpenApiParameter(
                "setup",
                {"oneOf": [ID, SETUP_NAME]},
                required=True,
                description="setup id (/api/setups/), or its name as the compare page takes "
                "it: workload/hardware/mode, then /rooms=10,... to pick among its setups",
            ),
            OpenApiParameter(
                "metric",
                {"oneOf": [ID, METRIC_NAME]},
                required=True,
                description="metric id, or its name (with its unit, 'name (unit)', when the "
                "setup has it in two)",
            ),
            FORMAT,
        ],
        responses={
            (200, "application/json"): SeriesSerializer,
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="points as CSV"),
            **READ_ERRORS,
        },
    )
    def get(self, request: Request) -> HttpResponse:
        q = request.query_params
        setup_id = setup_id_param(q)
        if setup_id is None:
            raise BadParam("setup", "give a setup id (see /api/setups/) or its name")
        metric_id = _metric_id(q, setup_id)
        renderer = request.accepted_renderer
        indent = None
        if isinstance(renderer, JSONRenderer):
            indent = renderer.get_indent(request.accepted_media_type, self.get_renderer_context())
        # Compact JSON is joined from its points' texts; an indented one is written whole.
        as_pieces = renderer.format == "json" and not indent
        kind, key = f"api-{renderer.format}", series_data.api_key(metric_id)
        if indent:
            kind, key = "api-json-indented", cache_key("metric", id=metric_id, indent=indent)
        found = None
        # The answer's entry (the series it is joined from is read only when an upload
        # made it stale, and the writer's process brings it up to date first)
        keys = series_data.finished_keys(kind, setup_id, key)
        if self._by_ids(request):  # not counted yet (check_throttles)
            # The throttle's counts and those in one round trip
            throttle = AnonAndUserRateThrottle()
            allowed, found = throttle.allow_and_read(request, self, keys)
            if not allowed:
                raise Throttled(throttle.wait())

        def build() -> bytes:
            setups = Setup.objects.select_related("workload", "hardware").filter(pk=setup_id)
            setup = setups.first()
            if setup is None:
                raise NotFound(f"no setup {setup_id}")
            metric = _metric_by_id(metric_id)
            if as_pieces:  # the points joined from their texts (series_data.FinishedSeries)
                head = renderer.render(self._head(setup, metric), request.accepted_media_type)
                data = series_data.finished_series(setup.pk, _metric_dict(metric))
                return series_data.api_body(head[:-1], data)  # [:-1]: its closing brace
            body = self._series(setup, metric)
            return renderer.render(body, request.accepted_media_type, self.get_renderer_context())

        def update(before: bytes) -> bytes:
            return series_data.api_updated(setup_id, before)

        # Finished bytes, cached until runs are added to the setup: a warm request reads
        # neither the setup, nor the metric, nor the series, and renders nothing.
        with read_together(keys, found):
            body = series_data.finished(
                kind, setup_id, key, build, update=update if as_pieces else None
            )
        content_type = f"{renderer.media_type}; charset=utf-8" if renderer.charset else None
        return HttpResponse(body, content_type=content_type or renderer.media_type)

    @staticmethod
    def _head(setup: Setup, metric: Metric) -> dict[str, Any]:
        """The answer up to its metric: what adding runs to the setup leaves as it is."""
        return {
            "setup": setup.pk,
            "workload": setup.workload.name,
            "hardware": setup.hardware.name,
            "mode": setup.mode,
            "params": setup.params,
            "metric": MetricSerializer(metric).data,
        }

    @classmethod
    def _series(cls, setup: Setup, metric: Metric) -> dict[str, Any]:
        data = series_data.series(setup.pk, _metric_dict(metric))
        return {
            **cls._head(setup, metric),
            "kernels": list(data.series.kernels),
            "points": [
                _point(p, label=data.labels.get(p.run.run_id) or "") for p in data.series.points
            ],
        }


class ScalingView(APIView):
    renderer_classes = [JSONRenderer, PointsCSVRenderer]

    @extend_schema(
        summary="A metric against a numeric parameter over setups (the /scaling/ chart)",
        parameters=[
            OpenApiParameter("setups", IDS, required=True, description="setup ids: 3,4,5"),
            OpenApiParameter("metric", ID, required=True, description="metric id"),
            OpenApiParameter("param", NAME, required=True, description="e.g. rooms, threads"),
            FORMAT,
        ],
        responses={
            (200, "application/json"): ScalingSerializer,
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="points as CSV"),
            **READ_ERRORS,
        },
    )
    def get(self, request: Request) -> Response:
        q = request.query_params
        setup_ids = ids_param(q, "setups", what="setup")
        if not setup_ids:
            raise BadParam("setups", "give setup ids, e.g. setups=3,4,5")
        param = text_param(q, "param", 100)
        if param is None:
            raise BadParam("param", "give the parameter to chart against, e.g. rooms")
        metric = _metric(q)
        chart = cq.scaling_points(setup_ids=setup_ids, metric=_metric_dict(metric), param=param)
        points = chart.points  # kernel order, then as stored
        return Response(
            {
                "setups": setup_ids,
                "param": param,
                "metric": MetricSerializer(metric).data,
                "points": [_point(p, x=p.x) for p in points],
            }
        )
