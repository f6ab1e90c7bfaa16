"""The Prometheus metrics of the app and who may read them (docs/observability.md).

Two kinds, each measured where it is true for every process at once:

- Events a process sees (a request's duration, a task's duration) are prometheus-client
  histograms. Under gunicorn's several workers (and a Celery prefork pool) each process
  writes its own files into ``PROMETHEUS_MULTIPROC_DIR`` and a scrape adds them up
  (prometheus-client's multiprocess mode); without that variable the process's own registry
  is read (the development server, a solo worker, the tests).
- States (queue depth, uploads by status, alerts by status, the oldest unsent email, the
  regression checks owed) are read from Redis and PostgreSQL at scrape time
  (config/pipeline_metrics.py): one true value whatever ran where, with nothing for a
  process to keep or lose.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from prometheus_client import REGISTRY, CollectorRegistry, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.multiprocess import MultiProcessCollector

REQUEST_DURATION = Histogram(
    "perfdb_http_request_duration_seconds",
    "Time to answer a request, to the response's first byte, by view (URL name), method and "
    "status code.",
    ["view", "method", "status"],
)
# Up to the hard task time limit (660 s): a 1 GiB bundle's ingest takes minutes.
TASK_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 660, float("inf"))
TASK_DURATION = Histogram(
    "perfdb_celery_task_duration_seconds",
    "Time a Celery task ran, by task name and how it ended (SUCCESS, FAILURE, RETRY). The "
    "ingest is ingest.tasks.ingest_upload, the regression check perfdb.tasks.regressions_check.",
    ["task", "state"],
    buckets=TASK_BUCKETS,
)


def process_registry() -> CollectorRegistry:
    """The histograms of this process, or of all of them in multiprocess mode."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        MultiProcessCollector(registry)
        return registry
    return REGISTRY


@lru_cache(maxsize=1)
def _pipeline_registry() -> CollectorRegistry:
    from config.pipeline_metrics import PipelineCollector

    registry = CollectorRegistry(auto_describe=False)
    registry.register(PipelineCollector())
    return registry


def exposition() -> bytes:
    """The text a scrape reads: the processes' histograms, then the pipeline's state."""
    return generate_latest(process_registry()) + generate_latest(_pipeline_registry())


@lru_cache(maxsize=8)
def _networks(
    nets: tuple[str, ...],
) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    return tuple(ipaddress.ip_network(net, strict=False) for net in nets)


# A request that came through a proxy: its REMOTE_ADDR is the proxy's, not the client's.
PROXY_HEADERS = ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP")


def metrics_refusal(request: HttpRequest) -> int | None:
    """None when the request may read /metrics, else the status to answer.

    A bearer token admits from anywhere (403 when it is wrong, so an operator sees why).
    Without one, only a direct peer in ``METRICS_ALLOWED_NETWORKS``: a request that came
    through a proxy is refused, since the proxy's own loopback address would otherwise let
    the whole internet in. Everyone else: 404, as if there were nothing here.
    """
    auth = request.META.get("HTTP_AUTHORIZATION", "")
    if auth[:7].lower() == "bearer ":
        token = settings.METRICS_TOKEN
        given = auth[7:].strip()
        if token and hmac.compare_digest(given.encode(), token.encode()):
            return None
        return 403
    if any(request.META.get(header) for header in PROXY_HEADERS):
        return 404
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return 404
    if any(peer in net for net in _networks(tuple(settings.METRICS_ALLOWED_NETWORKS))):
        return None
    return 404


def metrics_response(request: HttpRequest) -> HttpResponse:
    refusal = metrics_refusal(request)
    if refusal is not None:
        return HttpResponse(status=refusal)
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405, headers={"Allow": "GET, HEAD"})
    # The classic text format's type: every name here is a plain one, so the text is the same,
    # and a Prometheus older than 3.0 (Debian 12 has 2.42) knows no other.
    response = HttpResponse(exposition(), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response
