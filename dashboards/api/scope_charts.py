"""The data behind the kernel-time and wakeups charts, for the API, over the setups given
(the ids the pages' ``setups`` picker and links name; at most ``selection.MAX_IDS``).

``GET /api/kernel-time/?setups=<ids>[&param=<name>]``: % of time in the kernel and in the
scheduler per profiled run, and the first 40 profiled runs' ticks per kernel function (the
/kernel-time/ charts). ``GET /api/wakeups/?setups=<ids>[&build=<kernel+patches>]``: the
wakeup counters, preemption share and throughput per run (the /wakeups/ table and heatmaps),
of one build or all. Parameters are read by dashboards/pure/selection.py like the pages'.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards import chart_queries as cq
from dashboards.api.errors import READ_ERRORS
from dashboards.pure.chartdata import RunInfo
from dashboards.pure.selection import BadParam, ids_param, text_param

IDS = {"type": "string", "pattern": r"^[0-9]{1,18}(,[0-9]{1,18}){0,49}$"}
# No NUL (which PostgreSQL refuses, so the reader does too); blank is the same as left out.
TEXT = {"type": "string", "maxLength": 100, "pattern": r"^[^\x00]*$"}
# The same where a value is needed: some non-blank character.
NAME = {**TEXT, "minLength": 1, "pattern": r"^[^\x00]*[^\s\x00][^\x00]*$"}
SETUPS = OpenApiParameter("setups", IDS, required=True, description="setup ids: 3,4,5")


class RunFields(serializers.Serializer):
    run = serializers.IntegerField(help_text="run id")
    kernel = serializers.CharField()
    patches = serializers.ListField(child=serializers.CharField(), help_text="[] is stock")
    hardware = serializers.CharField()
    mode = serializers.CharField()


class KernelTimePointSerializer(RunFields):
    x = serializers.FloatField(allow_null=True, help_text="the parameter's value, with param")
    kernel_pct = serializers.FloatField(help_text="% of all profile ticks not idle")
    scheduler_pct = serializers.FloatField(help_text="% of all profile ticks in the scheduler")


class FunctionTicksSerializer(serializers.Serializer):
    function = serializers.CharField()
    ticks = serializers.FloatField(help_text="all trials summed")


class ProfileSerializer(RunFields):
    total_ticks = serializers.FloatField(help_text="the profiler's own total")
    functions = FunctionTicksSerializer(many=True)


class KernelTimeSerializer(serializers.Serializer):
    setups = serializers.ListField(child=serializers.IntegerField())
    param = serializers.CharField(allow_null=True)
    points = KernelTimePointSerializer(many=True)
    profiles = ProfileSerializer(many=True, help_text="the first 40 profiled runs, kernel order")


class WakeupRowSerializer(RunFields):
    build = serializers.CharField(help_text="kernel+patches")
    server_nice = serializers.IntegerField()
    client_nice = serializers.IntegerField()
    preempt_threshold = serializers.IntegerField()
    throughput = serializers.FloatField(help_text="msg/s")
    wakeup_calls = serializers.FloatField()
    preempt_pct = serializers.FloatField(help_text="% of wakeups causing a priority preemption")


class WakeupsSerializer(serializers.Serializer):
    setups = serializers.ListField(child=serializers.IntegerField())
    builds = serializers.ListField(child=serializers.CharField(), help_text="of every row")
    skipped = serializers.IntegerField(help_text="runs left out for a missing value")
    rows = WakeupRowSerializer(many=True)


def _setups(request: Request) -> list[int]:
    setup_ids = ids_param(request.query_params, "setups", what="setup")
    if not setup_ids:
        raise BadParam("setups", "give setup ids, e.g. setups=3,4,5")
    return setup_ids


def _run(run: RunInfo) -> dict[str, Any]:
    return {
        "run": run.run_id,
        "kernel": run.kernel,
        "patches": list(run.patches),
        "hardware": run.hardware,
        "mode": run.mode,
    }


class KernelTimeView(APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        summary="Kernel and scheduler time, and the top kernel functions (the /kernel-time/ "
        "charts), over setups",
        parameters=[
            SETUPS,
            OpenApiParameter("param", TEXT, description="x axis: a parameter, e.g. rooms"),
        ],
        responses={200: KernelTimeSerializer, **READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        setup_ids = _setups(request)
        param = text_param(request.query_params, "param", 100)
        chart = cq.kernel_time_points(setup_ids=setup_ids, param=param)
        profiles = cq.kernel_profiles(setup_ids=setup_ids)
        points = [
            {**_run(p.run), "x": p.x, "kernel_pct": p.kernel_pct, "scheduler_pct": p.scheduler_pct}
            for p in chart.points
        ]
        return Response(
            {
                "setups": setup_ids,
                "param": param,
                "points": points,
                "profiles": [
                    {
                        **_run(p.run),
                        "total_ticks": p.total,
                        "functions": [{"function": f, "ticks": t} for f, t in p.ticks],
                    }
                    for p in profiles
                ],
            }
        )


class WakeupsView(APIView):
    renderer_classes = [JSONRenderer]

    @extend_schema(
        summary="Wakeups, priority preemptions and throughput by nice pair and preemption "
        "threshold (the /wakeups/ table), over setups",
        parameters=[
            SETUPS,
            OpenApiParameter("build", TEXT, description="one build: 2.5.25+pri_preempt"),
        ],
        responses={200: WakeupsSerializer, **READ_ERRORS},
    )
    def get(self, request: Request) -> Response:
        setup_ids = _setups(request)
        build = text_param(request.query_params, "build", 100)
        rows, skipped = cq.wakeup_rows(setup_ids=setup_ids)
        builds = list(dict.fromkeys(r.run.build for r in rows))
        shown = [r for r in rows if build is None or r.run.build == build]
        return Response(
            {
                "setups": setup_ids,
                "builds": builds,
                "skipped": skipped,
                "rows": [
                    {
                        **_run(r.run),
                        "build": r.run.build,
                        "server_nice": r.server_nice,
                        "client_nice": r.client_nice,
                        "preempt_threshold": r.threshold,
                        "throughput": r.throughput,
                        "wakeup_calls": r.wakeup_calls,
                        "preempt_pct": r.preempt_pct,
                    }
                    for r in shown
                ],
            }
        )
