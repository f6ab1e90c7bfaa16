"""Upload pages: the form (with browser-side progress) and an upload's status page."""

from __future__ import annotations

from django import forms
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from ingest.services import UploadTooLarge, upload_create
from perfdb.alerting.summaries import upload_moves
from perfdb.models import Run, Upload


class BundleForm(forms.Form):
    bundle = forms.FileField(
        help_text="A .tar.gz or .zip result bundle, or one report as it is: a kernel test "
        "robot mail or an mmtests compare-kernels table (no manifest needed)."
    )


@login_required
def upload_new(request: HttpRequest) -> HttpResponse:
    form = BundleForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        bundle = form.cleaned_data["bundle"]
        try:
            upload, _ = upload_create(
                stream=bundle, filename=bundle.name, user=request.user, source="web"
            )
        except UploadTooLarge as exc:
            form.add_error("bundle", str(exc))
        else:
            if request.headers.get("x-requested-with") == "fetch":
                page = reverse("upload-detail", args=[upload.pk])
                return JsonResponse({"id": upload.pk, "page": page})
            return redirect("upload-detail", upload_id=upload.pk)
    if request.method == "POST" and request.headers.get("x-requested-with") == "fetch":
        return JsonResponse({"errors": form.errors}, status=400)
    return render(request, "ingest/upload_new.html", {"form": form})


def upload_detail(request: HttpRequest, upload_id: int) -> HttpResponse:
    upload = get_object_or_404(Upload, pk=upload_id)
    # The runs with their keys (workload, kernel, patches), in the upload's order; a run
    # deleted since is left out. One query, by primary key.
    found = Run.objects.filter(pk__in=upload.run_ids).select_related(
        "setup__workload", "setup__hardware", "kernel", "patch_set"
    )
    by_id = {run.pk: run for run in found}
    return render(
        request,
        "ingest/upload_detail.html",
        {
            "upload": upload,
            "error_lines": [line for line in upload.error.splitlines() if line.strip()],
            "runs": [by_id[rid] for rid in upload.run_ids if rid in by_id],
            "moves": upload_moves(upload),
        },
    )
