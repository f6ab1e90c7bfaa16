"""A way back for every upload: try a failed one again (its owner or staff), ingest a stored
bundle again, delete an upload and everything it made (staff). Web buttons and API."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect
from django.views.decorators.http import require_POST
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingest import recovery, services
from ingest.api import UploadDetailView, UploadSchema, upload_json
from perfdb.models import Upload

# The retry's refusal: the upload is being ingested, or is done (re-ingest is staff's).
NOT_SENT_AGAIN = OpenApiResponse(
    inline_serializer("UploadNotSentAgain", {"error": serializers.CharField()}),
    description="not sent again: the upload is being ingested right now, or is done",
)


def may_retry(user, upload: Upload) -> bool:
    return bool(user.is_authenticated and (user.is_staff or upload.user_id == user.pk))


def upload_try_again(upload: Upload) -> tuple[Upload | None, str]:
    """(upload, "") when a new attempt was queued, else (None, why not)."""
    if upload.status == Upload.Status.FAILED:
        return services.upload_retry(upload_id=upload.pk), ""
    if upload.status == Upload.Status.QUEUED or (
        upload.status == Upload.Status.PROCESSING and services.upload_orphaned(upload.pk)
    ):
        services.ingest_queue(upload_id=upload.pk)  # idempotent: a duplicate does nothing
        return upload, ""
    if upload.status == Upload.Status.PROCESSING:
        return None, "the upload is being ingested right now"
    return None, "the upload is done; staff can ingest it again (re-ingest)"


# --- web -----------------------------------------------------------------------------------


@require_POST
@login_required
def upload_retry_page(request: HttpRequest, upload_id: int) -> HttpResponse:
    upload = get_object_or_404(Upload, pk=upload_id)
    if not may_retry(request.user, upload):
        return HttpResponseForbidden("only the uploader or staff can try an upload again")
    _, why_not = upload_try_again(upload)
    if why_not:
        messages.error(request, f"Not sent again: {why_not}.")
    return redirect("upload-detail", upload_id=upload_id)


@require_POST
@login_required
def upload_reingest_page(request: HttpRequest, upload_id: int) -> HttpResponse:
    if not request.user.is_staff:
        return HttpResponseForbidden("staff only")
    recovery.upload_reingest(
        upload_id=get_object_or_404(Upload, pk=upload_id).pk, user=request.user
    )
    return redirect("upload-detail", upload_id=upload_id)


@require_POST
@login_required
def upload_delete_page(request: HttpRequest, upload_id: int) -> HttpResponse:
    if not request.user.is_staff:
        return HttpResponseForbidden("staff only")
    get_object_or_404(Upload, pk=upload_id)
    gone = recovery.upload_delete(upload_id=upload_id, user=request.user)
    messages.info(request, f"Upload {upload_id} deleted with its {gone['runs']} runs.")
    return redirect("home")


# --- API -----------------------------------------------------------------------------------


class UploadRetryView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=None,
        responses={202: UploadSchema, 409: NOT_SENT_AGAIN},
        summary="Send a failed (or stuck) upload through ingest again",
    )
    def post(self, request: Request, upload_id: int) -> Response:
        upload = get_object_or_404(Upload, pk=upload_id)
        if not may_retry(request.user, upload):
            return Response({"error": "only the uploader or staff"}, status=403)
        again, why_not = upload_try_again(upload)
        if again is None:
            return Response({"error": why_not}, status=status.HTTP_409_CONFLICT)
        again.refresh_from_db()
        return Response(upload_json(again, request), status=status.HTTP_202_ACCEPTED)


class UploadReingestView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={202: UploadSchema}, summary="Ingest again (staff)")
    def post(self, request: Request, upload_id: int) -> Response:
        if not request.user.is_staff:
            return Response({"error": "staff only"}, status=403)
        get_object_or_404(Upload, pk=upload_id)
        upload = recovery.upload_reingest(upload_id=upload_id, user=request.user)
        upload.refresh_from_db()
        return Response(upload_json(upload, request), status=status.HTTP_202_ACCEPTED)


class UploadDetailDeleteView(UploadDetailView):
    """GET an upload (anyone); DELETE it with everything it created (staff)."""

    @extend_schema(responses={200: None}, summary="Delete an upload and its runs (staff)")
    def delete(self, request: Request, upload_id: int) -> Response:
        if not (request.user.is_authenticated and request.user.is_staff):
            return Response({"error": "staff only"}, status=403)
        get_object_or_404(Upload, pk=upload_id)
        return Response(
            {"deleted": upload_id, **recovery.upload_delete(upload_id=upload_id, user=request.user)}
        )
