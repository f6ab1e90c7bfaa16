"""The statements an ingest sends about its upload's own row, written as SQL.

They are the same on every upload, whatever its size: the session lock, the claim, the
progress, the row lock before writing, the outcome. Through the ORM each cost 0.4-0.8 ms of
CPU to compile (a 100k-sample upload's whole ingest is about 45 ms, its raw COPY 22 ms);
here each is one short statement: the claim takes the lock and moves the row in one (was
three: lock, UPDATE, SELECT), and the row lock reads whether an earlier ingest's runs are
stored in the same statement (was a second query; a re-ingest deletes those runs there).
The values stored are those the ORM stored: the same columns, timestamps from
``timezone.now()``, JSON through ``Jsonb``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from django.db import DatabaseError, connection
from django.utils import timezone
from psycopg.types.json import Jsonb

from perfdb.models import Run, Upload

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


def claim(upload_id: int) -> tuple[bool, Upload | None]:
    """Take the upload's session lock and, only if it was free, mark the upload processing
    and count its attempt unless it is finished: one statement in autocommit (the lock is
    a materialized CTE the UPDATE's condition reads, so it is taken once, before any row
    is moved). Returns whether the lock was taken, and the upload moved (its id, file and
    attempts, the other fields deferred) or None when it is finished already or gone: the
    caller then releases the lock."""
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
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} SET files_done = %s, files_total = %s WHERE id = %s",
            (done, total, upload_id),
        )


def take_for_write(upload_id: int) -> tuple[str, list[int]]:
    """Inside the writing transaction: lock the upload's row and return its status and run
    ids. An upload still processing whose earlier ingest stored runs is being ingested again
    (re-ingest): those runs are deleted here, so a fixed parser's reading reaches them (the
    same raw files give the same fingerprints, so they would otherwise count as already
    stored). No other ingest of it writes meanwhile: the caller holds its session lock."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT u.status, u.run_ids, EXISTS (SELECT FROM perfdb_run r WHERE "
            f"r.upload_id = u.id) FROM {_TABLE} u WHERE u.id = %s FOR UPDATE OF u",
            (upload_id,),
        )
        row = cursor.fetchone()
    if row is None:
        raise Upload.DoesNotExist(f"upload {upload_id} is gone")
    status, run_ids, earlier_runs = str(row[0]), list(row[1]), bool(row[2])
    if earlier_runs and status == _PROCESSING:
        _runs_delete(upload_id)
    return status, run_ids


def _runs_delete(upload_id: int) -> None:
    """Delete the runs an earlier ingest of this upload created (the rare re-ingest: through
    the ORM, which also unlinks the runs that named them as their baseline)."""
    runs = list(Run.objects.filter(upload_id=upload_id).values_list("pk", flat=True))
    Run.objects.filter(baseline_id__in=runs).update(baseline=None)
    Run.objects.filter(pk__in=runs).delete()
    log.info("upload %s: replacing %d runs of an earlier ingest", upload_id, len(runs))


def mark_done(
    upload_id: int,
    *,
    warnings: Sequence[str],
    run_ids: Sequence[int],
    series: Sequence[tuple[int, int]],
    due_at: datetime | None,
) -> None:
    """The ingest's outcome on the locked row, with the regression check it owes."""
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
