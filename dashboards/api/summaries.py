"""Alert summaries for the API: the culprit builds of /alerts/summaries/, read-only.

``GET /api/alert-summaries/`` lists them as the page does (the same grouping and order:
newest first; ``kind=regressions``, the default, or ``improvements``), paginated like every
list; ``GET /api/alert-summaries/<kernel>-<patch_set>-<upload>/`` is one build with its
alerts (as ``/api/alerts/`` shows each) and the list-ready ``report`` text its page shows.
Selectors in perfdb/alerting/summaries.py; triage stays on the page and /api/alerts/triage/.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import generics, serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from dashboards.api.errors import DETAIL_ERRORS, READ_ERRORS
from dashboards.api.serializers import AlertSerializer
from dashboards.pages.summaries import report_of
from dashboards.pure.selection import strict_choice_param
from perfdb.alerting import summaries
from perfdb.alerting.summaries import Summary, SummaryKey


class SummaryWorstSerializer(serializers.Serializer):
    """The move that heads the summary (``Summary.worst``)."""

    alert = serializers.IntegerField(source="pk")
    workload = serializers.CharField(source="setup.workload.name")
    metric = serializers.CharField(source="metric.name")
    change_pct = serializers.FloatField()
    direction = serializers.CharField()
    status = serializers.CharField()


class SummarySerializer(serializers.Serializer):
    key = serializers.CharField(
        source="key.slug", help_text="<kernel id>-<patch set id>-<upload id> (0: no upload)"
    )
    build = serializers.CharField(help_text="the culprit build: kernel plus patch set")
    kernel = serializers.CharField(source="run.kernel.version")
    patches = serializers.SerializerMethodField()
    upload = serializers.IntegerField(
        source="run.upload_id", allow_null=True, help_text="null: runs stored without an upload"
    )
    newest = serializers.DateTimeField(help_text="when its newest alert was raised")
    statuses = serializers.CharField(help_text="'2 untriaged, 1 acknowledged'")
    regressions = serializers.SerializerMethodField(help_text="confirmed regressions")
    improvements = serializers.SerializerMethodField(help_text="confirmed improvements")
    pending = serializers.SerializerMethodField(help_text="moves not confirmed yet")
    setups = serializers.IntegerField(help_text="how many set-ups it moved")
    worst = SummaryWorstSerializer()
    page = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="this summary in the API")

    def get_patches(self, summary: Summary) -> list[str]:
        return [p for p in summary.run.patch_set.name.split("+") if p]

    def get_regressions(self, summary: Summary) -> int:
        return len(summary.regressions)

    def get_improvements(self, summary: Summary) -> int:
        return len(summary.improvements)

    def get_pending(self, summary: Summary) -> int:
        return len(summary.pending)

    @extend_schema_field(OpenApiTypes.URI)
    def get_page(self, summary: Summary) -> str:
        request = self.context.get("request")
        path = summaries.summary_path(summary.key)
        return request.build_absolute_uri(path) if request else path

    @extend_schema_field(OpenApiTypes.URI)
    def get_url(self, summary: Summary) -> str:
        k = summary.key
        args = [k.kernel_id, k.patch_set_id, k.upload_id]
        return reverse("api-alert-summary", args=args, request=self.context.get("request"))


class SummaryDetailSerializer(SummarySerializer):
    """One summary as its page shows it: its alerts and the report for the list."""

    alerts = AlertSerializer(many=True)
    report = serializers.SerializerMethodField(help_text="the list-ready text (as report.txt)")

    def get_report(self, summary: Summary) -> str:
        return report_of(summary)


class SummaryList(generics.ListAPIView):
    serializer_class = SummarySerializer

    def get_queryset(self):
        kind = strict_choice_param(self.request.query_params, "kind", summaries.KINDS)
        return summaries.summary_keys(kind=kind or "regressions")

    @extend_schema(
        summary="Alert summaries: culprit builds and what they moved, newest first, paginated",
        parameters=[
            OpenApiParameter(
                "kind",
                str,
                enum=summaries.KINDS,
                description="builds with a regression (default), or with improvements only",
            )
        ],
        responses={200: SummarySerializer, **READ_ERRORS},
    )
    def get(self, request: Request, *args, **kwargs) -> Response:
        # A page of keys (the count and the keys), then the page's alerts: three queries.
        keys = self.paginate_queryset(self.get_queryset()) or []
        found = summaries.summaries_of_keys(keys)
        body = self.get_serializer(found, many=True).data
        return self.get_paginated_response(body)


class SummaryDetail(APIView):
    @extend_schema(
        summary="One alert summary: its alerts and its list-ready report",
        responses={200: SummaryDetailSerializer, **DETAIL_ERRORS},
    )
    def get(self, request: Request, kernel: int, patch_set: int, upload: int) -> Response:
        key = SummaryKey(kernel, patch_set, upload)
        summary = summaries.summary_get(key=key, with_moves=True)
        if summary is None:
            raise Http404("no alerts for this build and upload")
        return Response(SummaryDetailSerializer(summary, context={"request": request}).data)
