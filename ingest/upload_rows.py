"""An ingest's upload row and its states, written as SQL: claimed (processing), its
progress, done with its outcome; and the session lock its worker holds meanwhile.

The statements are the same on every upload, whatever its size. Through the ORM each cost
0.4-0.8 ms of CPU to compile (a 100k-sample upload's whole ingest is about 45 ms, its raw
COPY 22 ms); here each is one short statement: the claim takes the lock and moves the row
in one (was three: lock, UPDATE, SELECT). The row lock the writing transaction takes first
is the writer's (ingest/writer.py), with the earlier runs a re-ingest replaces. The values
stored are those the ORM stored: the same columns, timestamps from ``timezone.now()``, JSON
through ``Jsonb``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection
from django.utils import timezone
from psycopg.types.json import Jsonb

from perfdb.models import Upload

log = logging.getLogger(__name__)

# The namespace of the session advisory lock a worker holds on an upload while ingesting it.
INGEST_LOCK = 17

_TABLE = Upload._meta.db_table
_DONE, _FAILED = Upload.Status.DONE.value, Upload.Status.FAILED.value
_PROCESSING = Upload.Status.PROCESSING.value


def try_lock(upload_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", (INGEST_LOCK, upload_id))
        return bool(cursor.fetchone()[0])


def unlock(upload_id: int) -> None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", (INGEST_LOCK, upload_id))
    except DatabaseError:  # the session is gone, and its lock with it
        pass


def claim(upload_id: int) -> Upload | None:
    """Lock the upload for this session and mark it processing, counting its attempt; None
    when another live worker holds it or it is finished already (a duplicate delivery),
    and then no lock is kept. The caller releases the lock of an upload returned
    (``unlock``)."""
    try:
        locked, upload = _claim(upload_id)
    except BaseException:  # the lock may have been taken: a session lock outlives an error
        unlock(upload_id)
        raise
    if not locked:
        log.info("upload %s: another worker is ingesting it", upload_id)
    elif upload is None:  # finished already: the lock is not kept
        unlock(upload_id)
    return upload


def _claim(upload_id: int) -> tuple[bool, Upload | None]:
    """Take the upload's session lock and, only if it was free, mark the upload processing
    and count its attempt unless it is finished: one statement in autocommit (the lock is
    a materialized CTE the UPDATE's condition reads, so it is taken once, before any row
    is moved, and two deliveries never both count an attempt). Returns whether the lock was
    taken, and the upload moved (its id, file and attempts, the other fields deferred) or
    None when it is finished already or gone."""
    with connection.cursor() as cursor:
        cursor.execute(
            "WITH locked AS MATERIALIZED (SELECT pg_try_advisory_lock(%s, %s) AS got), "
            f"moved AS (UPDATE {_TABLE} SET status = %s, started_at = %s, "
            "attempts = attempts + 1 WHERE id = %s AND status NOT IN (%s, %s) "
            "AND (SELECT got FROM locked) RETURNING id, file, attempts) "
            "SELECT locked.got, moved.id, moved.file, moved.attempts "
            "FROM locked LEFT JOIN moved ON true",
            (INGEST_LOCK, upload_id, _PROCESSING, timezone.now(), upload_id, _DONE, _FAILED),
        )
        got, *row = cursor.fetchone()
    if not got or row[0] is None:
        return bool(got), None
    return True, Upload.from_db(connection.alias, ["id", "file", "attempts"], row)


def progress(upload_id: int, done: int, total: int) -> None:
    """How many of the bundle's files are parsed, shown while it ingests."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} SET files_done = %s, files_total = %s WHERE id = %s",
            (done, total, upload_id),
        )


def mark_done(
    upload_id: int,
    *,
    warnings: Sequence[str],
    run_ids: Sequence[int],
    series: Sequence[tuple[int, int]],
    due_at: datetime | None,
) -> None:
    """The ingest's outcome on the row the writer locked, with the regression check its
    commit owes (cleared by the check, swept if it is lost)."""
    params: list[Any] = [
        _DONE,
        Jsonb(list(warnings)),
        list(run_ids),
        timezone.now(),
        Jsonb([list(s) for s in series]),
        due_at,
        upload_id,
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} SET status = %s, error = '', warnings = %s, "
            "run_ids = %s::bigint[], finished_at = %s, detection_series = %s, "
            "detection_due_at = %s WHERE id = %s",
            params,
        )
