"""What hangs off one run, for the API: trials, results per metric, profile, time series
(vmstat and the like), histograms, curves and the list of raw files.

``/api/runs/<id>/<part>/``; a run that does not exist is a 404 JSON, an empty part an empty
list. The long parts (profile, time series) are paginated like every list.
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.api import serializers as s
from dashboards.api.errors import DETAIL_ERRORS
from perfdb import queries
from perfdb.models import Curve, Histogram, ProfileEntry, RawFile, Run, Sample, Trial


class RunPart(generics.ListAPIView):
    model: type = Trial
    order: tuple[str, ...] = ("id",)

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # the schema generator
            return self.model.objects.none()
        run = get_object_or_404(Run.objects.only("id"), pk=self.kwargs["run_id"])
        return self.model.objects.filter(run=run).order_by(*self.order)


def part(summary: str, serializer):
    return extend_schema(summary=summary, responses={200: serializer, **DETAIL_ERRORS})


class RunTrials(RunPart):
    model = Trial
    order = ("number",)
    serializer_class = s.TrialSerializer

    @part("A run's trials; discarded ones (warm-up) are left out of means", s.TrialSerializer)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RunProfile(RunPart):
    model = ProfileEntry
    order = ("trial", "-ticks", "function")
    serializer_class = s.ProfileEntrySerializer

    @part(
        "A run's kernel profile (readprofile, perf report): functions by ticks",
        s.ProfileEntrySerializer,
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RunTimeSeries(RunPart):
    model = Sample
    order = ("trial", "source", "column")
    serializer_class = s.TimeSeriesSerializer

    @part(
        "A run's time series (vmstat, schedstat columns), one per trial, tool and column",
        s.TimeSeriesSerializer,
    )
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RunHistograms(RunPart):
    model = Histogram
    order = ("trial", "name")
    serializer_class = s.HistogramSerializer

    @part("A run's histograms (latency distributions)", s.HistogramSerializer)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RunCurves(RunPart):
    model = Curve
    order = ("trial", "name")
    serializer_class = s.CurveSerializer

    @part("A run's curves (a value against time or load)", s.CurveSerializer)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RunFiles(RunPart):
    model = RawFile
    order = ("trial", "path")
    serializer_class = s.RawFileSerializer

    def get_queryset(self):
        return super().get_queryset().defer("content")

    @part("A run's raw files as uploaded, with their download links", s.RawFileSerializer)
    def get(self, request, *args, **kwargs):
        return super().get(request, *args, **kwargs)


class RunResults(APIView):
    @extend_schema(
        summary="A run's results: per metric, the value of each trial, mean, sd and n",
        responses={200: s.ResultSerializer(many=True), **DETAIL_ERRORS},
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = get_object_or_404(Run.objects.only("id"), pk=run_id)
        rows = [
            {"metric": name, **entry} for name, entry in queries.run_results(run_id=run.pk).items()
        ]
        return Response(s.ResultSerializer(rows, many=True).data)
