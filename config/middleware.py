"""Request guards that apply to every view.

``BadParamMiddleware``: a ``BadParam`` (dashboards/pure/selection.py) raised by any page becomes
the escaped 400 page naming the parameter. ``BodySizeLimitMiddleware``: a body larger than
the largest bundle (plus room for the multipart envelope) is refused with 413 before a byte
of it is read: Django reads at most CONTENT_LENGTH bytes, so this bounds every upload; a file
that grows past the limit while it streams in (ingest/upload_limit.py) is a 413 too.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from dashboards.pure.selection import BadParam

# The multipart envelope around a bundle (boundaries, headers, the CSRF field).
ENVELOPE_BYTES = 1024 * 1024


def bad_request_page(request: HttpRequest, param: str, message: str) -> HttpResponse:
    """The 400 page; the template escapes both texts (they quote the request)."""
    context = {"param": param, "message": message, "back": request.path}
    return render(request, "dashboards/bad_request.html", context, status=400)


class BadParamMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, BadParam):
            return bad_request_page(request, exception.name, exception.message)
        return None


def body_limit() -> int:
    return int(settings.BUNDLE_MAX_BYTES) + ENVELOPE_BYTES


def _too_large(request: HttpRequest, message: str) -> HttpResponse:
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": message}, status=413)
    else:
        response = HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
    response["Connection"] = "close"  # the unread rest of the body is not a next request
    return response


class BodySizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > body_limit():
            return _too_large(
                request,
                f"the request body is {length} bytes; the largest bundle accepted is "
                f"{settings.BUNDLE_MAX_BYTES} bytes",
            )
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        from ingest.upload_limit import BundleTooLarge

        if isinstance(exception, BundleTooLarge):  # a page's upload form; DRF answers its own
            return _too_large(request, str(exception.detail))
        return None
