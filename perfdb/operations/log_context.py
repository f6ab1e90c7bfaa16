"""What a log line is about: the request id and the upload id, through web and worker.

One request id follows an upload from the HTTP request that sent it to every task it causes
(the ingest, the regression check, the email): the web middleware binds it
(config/observability_middleware.py), Celery carries it in each task's message headers and
the worker binds it again before the task runs (config/celery_observability.py). Context
variables, not thread locals, so a gunicorn thread or a Celery task sees only its own.

``ContextFilter`` (on the log handlers, config/observability.py) copies the ids onto every
record, so a JSON log line carries them and staff can find every line of one upload's story.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token

_request_id: ContextVar[str | None] = ContextVar("perfdb_request_id", default=None)
_upload_id: ContextVar[int | None] = ContextVar("perfdb_upload_id", default=None)
_task: ContextVar[str | None] = ContextVar("perfdb_task", default=None)

# What a proxy's X-Request-ID may be for us to keep it: it ends up in log lines and headers,
# so nothing that could break a line or a header, and nothing long.
_REQUEST_ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def new_request_id() -> str:
    return uuid.uuid4().hex


def valid_request_id(value: str | None) -> str | None:
    """The value when it is a safe id (a proxy's X-Request-ID, a task header), else None."""
    return value if value and _REQUEST_ID_RE.fullmatch(value) else None


def request_id() -> str | None:
    return _request_id.get()


def upload_id() -> int | None:
    return _upload_id.get()


Tokens = tuple[Token[str | None], Token[int | None], Token[str | None]]


def bind(
    *, request_id: str | None = None, upload_id: int | None = None, task: str | None = None
) -> Tokens:
    """Set the ids for the current context (what is not given keeps its value); returns the
    tokens ``unbind`` restores the previous values with."""
    return (
        _request_id.set(request_id if request_id is not None else _request_id.get()),
        _upload_id.set(upload_id if upload_id is not None else _upload_id.get()),
        _task.set(task if task is not None else _task.get()),
    )


def unbind(tokens: Tokens) -> None:
    request_token, upload_token, task_token = tokens
    _task.reset(task_token)
    _upload_id.reset(upload_token)
    _request_id.reset(request_token)


@contextmanager
def bound(
    *, request_id: str | None = None, upload_id: int | None = None, task: str | None = None
) -> Iterator[None]:
    tokens = bind(request_id=request_id, upload_id=upload_id, task=task)
    try:
        yield
    finally:
        unbind(tokens)


class ContextFilter(logging.Filter):
    """Adds ``request_id``, ``upload_id`` and ``task`` to every record (None when unset).

    On a handler, not a logger: a logger's filter does not see records its children pass up.
    A value already on the record (``extra=``) is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        for name, var in (("request_id", _request_id), ("upload_id", _upload_id), ("task", _task)):
            if not hasattr(record, name):
                setattr(record, name, var.get())
        if record.request_id is None:  # type: ignore[attr-defined]
            # Django logs a 4xx/5xx answer ("Not Found: ...") after the middleware returned,
            # outside the request's context, with the request itself on the record.
            request = getattr(record, "request", None)
            record.request_id = getattr(request, "request_id", None)
        return True
