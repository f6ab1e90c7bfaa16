"""HTTP API for uploads: POST /api/uploads/ and GET /api/uploads/<id>/."""

from __future__ import annotations

from dataclasses import asdict

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated, IsAuthenticatedOrReadOnly
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingest.preview import bundle_preview
from ingest.services import UploadTooLarge, upload_create
from perfdb.alerting.summaries import upload_moves
from perfdb.models import Alert, Upload
from perfdb.operations.db_router import replica_caught_up


def upload_json(upload: Upload, request: Request) -> dict[str, object]:
    return {
        "id": upload.pk,
        "status": upload.status,
        "error": upload.error or None,
        "filename": upload.filename,
        "progress": {"files_done": upload.files_done, "files_total": upload.files_total},
        "warnings": upload.warnings,
        "runs": [
            {
                "id": rid,
                "url": request.build_absolute_uri(reverse("api-run", args=[rid])),
                "page": request.build_absolute_uri(reverse("run-detail", args=[rid])),
            }
            for rid in upload.run_ids
        ],
        "url": request.build_absolute_uri(reverse("api-upload", args=[upload.pk])),
        "page": request.build_absolute_uri(reverse("upload-detail", args=[upload.pk])),
        "created_at": upload.created_at,
        "finished_at": upload.finished_at,
        "check": check_json(upload, request),
    }


def check_json(upload: Upload, request: Request) -> dict[str, object]:
    """What the upload's regression check found, for a lab script to print or act on:
    ``state`` "waiting" (not ingested yet), "running" (stored, the check under way), "done",
    or "none" (the upload failed: nothing to check); once done, the confirmed regressions
    and improvements (emailed) and the pending moves (not emailed; ``note`` says what will
    confirm one), surest first."""
    if upload.status == Upload.Status.FAILED:
        return {"state": "none"}
    if upload.status != Upload.Status.DONE:
        return {"state": "waiting"}
    moves = upload_moves(upload)
    if moves.checking:
        return {"state": "running"}
    return {
        "state": "done",
        "regressions": [_move_json(a, request) for a in moves.regressions],
        "improvements": [_move_json(a, request) for a in moves.improvements],
        "pending": [_move_json(a, request) for a in moves.pending],
    }


def _move_json(alert: Alert, request: Request) -> dict[str, object]:
    run = alert.candidate_run
    return {
        "id": alert.pk,
        "metric": alert.metric.name,
        "unit": alert.metric.unit,
        "change_pct": alert.change_pct,
        "p_value": alert.p_value,
        "status": alert.status,
        "workload": alert.setup.workload.name,
        "hardware": alert.setup.hardware.name,
        "kernel": run.kernel.version,
        "patches": run.patch_set.name,
        "run": run.pk,
        "note": alert.state_short,
        "url": request.build_absolute_uri(reverse("api-alert", args=[alert.pk])),
        "page": request.build_absolute_uri(reverse("alert-detail", args=[alert.pk])),
    }


UploadSchema = inline_serializer(
    "Upload",
    {
        "id": serializers.IntegerField(),
        "status": serializers.ChoiceField(choices=Upload.Status.values),
        "error": serializers.CharField(allow_null=True),
        "progress": serializers.DictField(),
        "runs": serializers.ListField(child=serializers.DictField()),
        "url": serializers.URLField(),
        "check": serializers.DictField(),
    },
)


class UploadCreateView(APIView):
    parser_classes = [MultiPartParser]
    permission_classes = [IsAuthenticatedOrReadOnly]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "BundleUpload", {"bundle": serializers.FileField()}
            )
        },
        responses={
            202: OpenApiResponse(UploadSchema, description="queued for ingest"),
            200: OpenApiResponse(UploadSchema, description="identical bundle already uploaded"),
            400: OpenApiResponse(description="no bundle field, or bundle too large"),
        },
        summary="Upload a result bundle (format 1, see docs/bundle-format.md)",
    )
    def post(self, request: Request) -> Response:
        bundle = request.FILES.get("bundle")
        if bundle is None:
            return Response(
                {"error": "send the bundle as multipart form field 'bundle'"},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            upload, created = upload_create(
                stream=bundle, filename=bundle.name, user=request.user, source="api"
            )
        except UploadTooLarge as exc:
            return Response({"error": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        code = status.HTTP_202_ACCEPTED if created else status.HTTP_200_OK
        return Response(upload_json(upload, request), status=code)


class UploadDetailView(APIView):
    @extend_schema(responses={200: UploadSchema}, summary="An upload's status, progress and runs")
    def get(self, request: Request, upload_id: int) -> Response:
        upload = get_object_or_404(Upload, pk=upload_id)  # the primary: db_router.py
        doc = upload_json(upload, request)
        if upload.status == Upload.Status.DONE and not replica_caught_up():
            # The replica pages read from has not replayed the upload yet: "done" now would
            # let a client open a run page that says the run does not exist.
            doc["status"] = Upload.Status.PROCESSING
        return Response(doc)


PreviewRunSchema = inline_serializer(
    "PreviewRun",
    {
        "index": serializers.IntegerField(),
        "workload": serializers.CharField(),
        "workload_version": serializers.CharField(),
        "kernel": serializers.CharField(),
        "patches": serializers.ListField(child=serializers.CharField()),
        "hardware": serializers.CharField(),
        "mode": serializers.CharField(),
        "params": serializers.DictField(),
        "trials": serializers.ListField(child=serializers.IntegerField()),
        "metrics": serializers.ListField(child=serializers.CharField()),
        "files": serializers.ListField(child=serializers.CharField()),
    },
)
PreviewSchema = inline_serializer(
    "Preview",
    {
        "runs": serializers.ListField(child=PreviewRunSchema),
        "warnings": serializers.ListField(child=serializers.CharField()),
        "problems": serializers.ListField(child=serializers.CharField()),
    },
)


class UploadPreviewView(APIView):
    """The runs a bundle would create; nothing is stored."""

    parser_classes = [MultiPartParser]
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer(
                "BundlePreview", {"bundle": serializers.FileField()}
            )
        },
        responses={
            200: OpenApiResponse(PreviewSchema, description="the runs the bundle would create"),
            400: OpenApiResponse(PreviewSchema, description="the bundle would fail: problems"),
        },
        summary="Preview the runs a bundle would create, without storing it",
    )
    def post(self, request: Request) -> Response:
        bundle = request.FILES.get("bundle")
        if bundle is None:
            return Response(
                {"runs": [], "warnings": [], "problems": ["send the bundle as field 'bundle'"]},
                status=status.HTTP_400_BAD_REQUEST,
            )
        preview = bundle_preview(stream=bundle)
        code = status.HTTP_400_BAD_REQUEST if preview.problems else status.HTTP_200_OK
        return Response(asdict(preview), status=code)
