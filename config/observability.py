"""Observability settings: logs, /metrics, Sentry. Imported at the end of config/settings.py.

Every value comes from the environment (docs/observability.md lists them):

- ``LOG_FORMAT``: ``json`` (one JSON object a line, with the request id and upload id) or
  ``plain``; JSON by default when DEBUG is off, plain on a developer's console.
- ``METRICS_ALLOWED_NETWORKS`` / ``METRICS_TOKEN``: who may read ``/metrics``
  (config/metrics.py); ``METRICS_WORKER_PORT``: a Celery worker serves its own metrics.
- ``SENTRY_DSN``: errors of the web and the workers go to Sentry, only when it is set.

A module of its own, read by settings.py with one import, so the settings other work edits
stay apart from these.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = [
    "LOG_FORMAT",
    "LOGGING",
    "METRICS_ALLOWED_NETWORKS",
    "METRICS_PATH",
    "METRICS_TOKEN",
    "METRICS_WORKER_ADDR",
    "METRICS_WORKER_PORT",
    "SENTRY_DSN",
]


def _env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in {"1", "true", "yes", "on"}


# --- Logs ---------------------------------------------------------------------------
# The same DEBUG default as settings.py: a developer's console reads plain lines, a
# deployment's log collector JSON.
LOG_FORMAT = os.environ.get("LOG_FORMAT") or ("plain" if _env_bool("DEBUG", True) else "json")
if LOG_FORMAT not in {"json", "plain"}:
    raise RuntimeError(f"LOG_FORMAT must be json or plain, not {LOG_FORMAT!r}")
LOGGING: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "perfdb.operations.log_context.ContextFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            # The record's fields each line carries; an exception adds exc_info (the
            # traceback as text).
            "fmt": "%(levelname)s %(name)s %(message)s %(request_id)s %(upload_id)s %(task)s",
            "rename_fields": {"levelname": "level", "name": "logger"},
            "timestamp": "time",  # ISO 8601, UTC
        },
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["context"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# --- /metrics -------------------------------------------------------------------------
# Served by config.observability_middleware before any other middleware (no session, no
# redirect to HTTPS for a scraper on the inside network). Read from a listed network without
# a proxy in between, or with ``Authorization: Bearer METRICS_TOKEN``; anyone else gets 404.
METRICS_PATH = "/metrics"
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "")
METRICS_ALLOWED_NETWORKS = [
    net.strip()
    for net in os.environ.get("METRICS_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128").split(",")
    if net.strip()
]
# A Celery worker's own metrics (its task durations), on this port when set; each worker of a
# host needs its own port. Bound to loopback unless told otherwise: never publish it.
METRICS_WORKER_PORT = (
    int(os.environ["METRICS_WORKER_PORT"]) if os.environ.get("METRICS_WORKER_PORT") else None
)
METRICS_WORKER_ADDR = os.environ.get("METRICS_WORKER_ADDR", "127.0.0.1")

# --- Sentry -----------------------------------------------------------------------------
SENTRY_DSN = os.environ.get("SENTRY_DSN", "")


def _tag_with_context(event: Any, hint: Any) -> Any:
    """Every event names the request and the upload it happened in, as the log lines do."""
    from perfdb.operations import log_context

    tags = event.setdefault("tags", {})
    if log_context.request_id():
        tags.setdefault("request_id", log_context.request_id())
    if log_context.upload_id() is not None:
        tags.setdefault("upload_id", str(log_context.upload_id()))
    return event


def sentry_start(dsn: str) -> None:
    """Send the web's and the workers' errors to Sentry. No personal data (no user, address
    or cookie: ``send_default_pii`` off); performance traces only when asked for."""
    import sentry_sdk
    from sentry_sdk.integrations.celery import CeleryIntegration
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(
        dsn=dsn,
        integrations=[DjangoIntegration(), CeleryIntegration()],
        environment=os.environ.get("SENTRY_ENVIRONMENT") or None,
        release=os.environ.get("SENTRY_RELEASE") or None,
        traces_sample_rate=float(os.environ.get("SENTRY_TRACES_SAMPLE_RATE", 0)),
        send_default_pii=False,
        before_send=_tag_with_context,
    )


# Here, while the settings load: the web process and every Celery worker (whose main
# process loads the settings before it forks its pool) start it the same way.
if SENTRY_DSN:
    sentry_start(SENTRY_DSN)
