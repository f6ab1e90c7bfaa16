"""``/status/``: the pipeline's state for staff (``perfdb.operations.status``); also as JSON
(``?format=json``)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from perfdb.operations.status import status_report


@never_cache
@staff_member_required
def status_page(request: HttpRequest) -> HttpResponse:
    report = status_report()
    if request.GET.get("format") == "json":
        return JsonResponse(report, json_dumps_params={"default": str})
    return render(request, "dashboards/status.html", {"r": report})
