"""GET /api/references/: the reference builds (per hardware or setup) and the alerts held
because their reference moved with them. Reference builds are set in the manifest
(``reference = {kernel, patches}``) or the admin.

GET /api/alerts/<id>/reference/ (``format=csv`` too): the reference's runs behind one held
alert, the data of the alert page's "Shared with the reference" chart."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from dashboards.api.errors import DETAIL_ERRORS
from dashboards.web.exports import ListCSVRenderer
from perfdb.features.reference import reference_history
from perfdb.models import ReferenceBuild, ReferenceHold

RUN_COLUMNS = ("run", "uploaded", "mean", "trials", "recent")


class ReferenceListView(APIView):
    @extend_schema(
        responses={200: OpenApiTypes.OBJECT},
        summary="Reference builds and the alerts held because their reference moved",
    )
    def get(self, request: Request) -> Response:
        refs = ReferenceBuild.objects.select_related("hardware", "setup", "kernel", "patch_set")
        holds = ReferenceHold.objects.select_related("alert").order_by("-created_at")[:200]
        return Response(
            {
                "references": [
                    {
                        "id": r.pk,
                        "hardware": r.hardware.name if r.hardware else None,
                        "setup": r.setup_id,
                        "kernel": r.kernel.version,
                        "patches": [p for p in r.patch_set.name.split("+") if p],
                    }
                    for r in refs.order_by("id")
                ],
                "held_alerts": [
                    {
                        "alert": h.alert_id,
                        "status": h.alert.status,
                        "held": h.alert.status == "untriaged",
                        "reference": h.build,
                        "shift_pct": h.shift_pct,
                        "p_value": h.p_value,
                        "reason": h.reason,
                        "page": request.build_absolute_uri(f"/alerts/{h.alert_id}/"),
                    }
                    for h in holds
                ],
            }
        )


class ReferenceRunSerializer(serializers.Serializer):
    run = serializers.IntegerField(help_text="the reference build's run id")
    uploaded = serializers.DateTimeField()
    mean = serializers.FloatField(help_text="mean of the run's kept trials")
    trials = serializers.IntegerField(help_text="how many trials the mean is of")
    recent = serializers.BooleanField(help_text="one of the runs whose shift made the hold")


class AlertReferenceSerializer(serializers.Serializer):
    alert = serializers.IntegerField()
    reference = serializers.CharField(help_text="the reference build, kernel[+patches]")
    setup = serializers.IntegerField(help_text="the reference runs' setup")
    metric = serializers.CharField()
    unit = serializers.CharField()
    shift_pct = serializers.FloatField(help_text="recent runs against older ones")
    p_value = serializers.FloatField(allow_null=True)
    reason = serializers.CharField()
    held = serializers.BooleanField(help_text="held out of email until triaged")
    runs = ReferenceRunSerializer(many=True)


class ReferenceRunsCSVRenderer(ListCSVRenderer):
    """``runs`` as CSV, one row per reference run."""

    key = "runs"
    columns = RUN_COLUMNS


class AlertReferenceView(APIView):
    renderer_classes = [JSONRenderer, ReferenceRunsCSVRenderer]

    @extend_schema(
        summary="The reference build's runs behind an alert held because the reference moved",
        parameters=[
            OpenApiParameter(
                "format",
                str,
                enum=["json", "csv", ""],
                description="csv: the runs as CSV; json or empty: JSON",
            )
        ],
        responses={
            (200, "application/json"): AlertReferenceSerializer,
            (200, "text/csv"): OpenApiResponse(OpenApiTypes.STR, description="runs as CSV"),
            **DETAIL_ERRORS,
        },
    )
    def get(self, request: Request, alert_id: int) -> Response:
        hold = (
            ReferenceHold.objects.filter(alert_id=alert_id)
            .select_related("alert", "metric")
            .first()
        )
        if hold is None:
            raise NotFound(f"alert {alert_id} is not held by a reference build")
        runs = [
            {
                "run": r.run_id,
                "uploaded": r.uploaded.isoformat(timespec="seconds"),
                "mean": r.mean,
                "trials": r.trials,
                "recent": r.recent,
            }
            for r in reference_history(hold)
        ]
        return Response(
            {
                "alert": hold.alert_id,
                "reference": hold.build,
                "setup": hold.reference_setup_id,
                "metric": hold.metric.name,
                "unit": hold.metric.unit,
                "shift_pct": hold.shift_pct,
                "p_value": hold.p_value,
                "reason": hold.reason,
                "held": hold.alert.status == "untriaged",
                "runs": runs,
            }
        )
