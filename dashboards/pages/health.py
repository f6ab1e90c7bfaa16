"""``/healthz`` (public, fast, no error text) and ``/healthz/detail`` (staff, everything)."""

from __future__ import annotations

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache

from perfdb.operations.health import health_report, probe


@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    report = probe()
    return JsonResponse(report, status=200 if report["ok"] else 503)


@never_cache
@staff_member_required
def healthz_detail(request: HttpRequest) -> JsonResponse:
    report = health_report()
    return JsonResponse(report, status=200 if report["ok"] else 503)
