"""Celery's side of observability: ids through task headers, task durations, logs, a port.

- Publishing (web or worker): the current request id and upload id ride along in the task's
  message headers (``perfdb_request_id``, ``perfdb_upload_id``).
- Before a task runs: they are bound for its log lines (perfdb/operations/log_context.py);
  the upload id is also read from the arguments of the tasks that take one first, so a task
  queued by the recovery sweep names its upload too. A task with no request id (beat's) gets a
  new one, which its follow-up tasks then carry.
- After it ran: its duration goes into ``perfdb_celery_task_duration_seconds``.
- The worker logs through the project's LOGGING (JSON in production), not Celery's own
  format, so web and worker lines read alike.
- With ``METRICS_WORKER_PORT`` set, the worker's main process serves its metrics there
  (the histograms of its pool's processes, in multiprocess mode).

Imported by config/celery.py, so every process that has the Celery app has these handlers.
"""

from __future__ import annotations

import contextlib
import logging.config
import os
import time
from typing import Any

from celery import signals

from perfdb.operations import log_context

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "perfdb_request_id"
UPLOAD_ID_HEADER = "perfdb_upload_id"
# Tasks whose first argument is an upload id (the names are the workers' contract).
UPLOAD_FIRST_ARG = frozenset(
    {"ingest.tasks.ingest_upload", "perfdb.tasks.regressions_check", "perfdb.tasks.notify_upload"}
)

# task id -> (start time, the context tokens to restore)
_running: dict[str, tuple[float, log_context.Tokens]] = {}


@signals.before_task_publish.connect
def _carry_ids(headers: dict[str, Any] | None = None, **_: Any) -> None:
    if headers is None:
        return
    if log_context.request_id():
        headers.setdefault(REQUEST_ID_HEADER, log_context.request_id())
    if log_context.upload_id() is not None:
        headers.setdefault(UPLOAD_ID_HEADER, log_context.upload_id())


def _upload_of(task: Any, args: Any) -> int | None:
    if task.name in UPLOAD_FIRST_ARG and args:
        try:
            return int(args[0])
        except (TypeError, ValueError):
            return None
    carried = getattr(task.request, UPLOAD_ID_HEADER, None)
    return carried if isinstance(carried, int) else None


@signals.task_prerun.connect
def _task_started(task_id: str = "", task: Any = None, args: Any = None, **_: Any) -> None:
    request_id = (
        log_context.valid_request_id(getattr(task.request, REQUEST_ID_HEADER, None))
        or log_context.new_request_id()
    )
    tokens = log_context.bind(
        request_id=request_id, upload_id=_upload_of(task, args), task=task.name
    )
    _running[task_id] = (time.perf_counter(), tokens)


@signals.task_postrun.connect
def _task_finished(task_id: str = "", task: Any = None, state: str | None = None, **_: Any) -> None:
    from config.metrics import TASK_DURATION

    started = _running.pop(task_id, None)
    if started is None:
        return
    began, tokens = started
    TASK_DURATION.labels(task.name, state or "UNKNOWN").observe(time.perf_counter() - began)
    # Bound in another context (a pool thread) raises ValueError: nothing of ours to undo.
    with contextlib.suppress(ValueError):
        log_context.unbind(tokens)


@signals.setup_logging.connect
def _project_logging(**_: Any) -> None:
    """Connected, so Celery leaves the root logger to the project's LOGGING."""
    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


@signals.worker_ready.connect
def _serve_worker_metrics(**_: Any) -> None:
    from django.conf import settings

    port = settings.METRICS_WORKER_PORT
    if port is None:
        return
    from prometheus_client import start_http_server

    from config.metrics import process_registry

    start_http_server(port, addr=settings.METRICS_WORKER_ADDR, registry=process_registry())
    log.info("worker metrics on %s:%d", settings.METRICS_WORKER_ADDR, port)


@signals.worker_process_shutdown.connect
def _pool_process_gone(pid: int | None = None, **_: Any) -> None:
    """A pool process that exits leaves its files; prometheus-client then drops its live
    gauges (its counters and histograms are kept, as they must be)."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())
