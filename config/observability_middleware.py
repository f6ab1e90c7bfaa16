"""Outermost middleware: the request id, the request's duration, and ``/metrics``.

First in the stack (config/settings.py), so every log line of a request, a kept answer's
included, carries the request id, and every answer is timed. The id is the proxy's
``X-Request-ID`` when it sends a well-formed one (so the proxy's access log and ours share
it), else a new one; the response carries it back in ``X-Request-ID``, and the tasks the
request queues carry it on (config/celery_observability.py).

``/metrics`` is answered here, before sessions, CSRF, the HTTPS redirect and the page caches:
a scrape is no visit (config/metrics.py decides who may read it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

from config.metrics import REQUEST_DURATION, metrics_response
from perfdb.operations import log_context

REQUEST_ID_HEADER = "X-Request-ID"
# Any other method a client makes up is counted as "other": a label value per made-up word
# would be a new series each.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def view_label(request: HttpRequest) -> str:
    """The URL's name (``api-uploads``, ``alert-detail``): a bounded label, never the path
    (ids in paths would make a series per upload). A kept answer never reached the URL
    resolver, so it is resolved here; a path no route matches is ``unmatched``."""
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return "unmatched"
    return match.view_name or "unnamed"


class ObservabilityMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        request_id = (
            log_context.valid_request_id(request.META.get("HTTP_X_REQUEST_ID"))
            or log_context.new_request_id()
        )
        request.request_id = request_id  # type: ignore[attr-defined]
        with log_context.bound(request_id=request_id):
            if request.path_info == settings.METRICS_PATH:
                response = metrics_response(request)
                view = "metrics"
            else:
                response = self.get_response(request)
                view = view_label(request)
        response[REQUEST_ID_HEADER] = request_id
        method = request.method if request.method in METHODS else "other"
        REQUEST_DURATION.labels(view, method, str(response.status_code)).observe(
            time.perf_counter() - started
        )
        return response
