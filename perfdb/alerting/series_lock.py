"""One regression check of a series at a time: a transaction advisory lock per setup.

Two checks of one series can run at once: two uploads to the same setup handled by two
detection workers, or a task delivered again (late acks, the follow-up sweep) while the
first delivery still runs. Each check reads the series' alerts, then writes from what it
read. The alert rows it reads are locked (``check_data.load_alerts``), but a row the other
check is inserting is not there to lock: the second check waited on the rows it could see,
then worked without the other's new alert (a pending alert it should have cleared or
confirmed, or a second alert on one run, or an update colliding with the other's row).

So a check takes this lock on each of its series before it reads anything and holds it to
the end of its transaction; a second check of the series waits, then reads all the first
one wrote. The lock is the series' setup's: one lock per setup, not per series, so a check
over thousands of series (``regressions_recheck_all``) holds a lock per setup, well within
the server's lock table (``max_locks_per_transaction``), and checks of other metrics of
the setup take turns too (an upload's check commits one series at a time, so the wait is
one series' check). Locks are taken in setup order, so two checks over overlapping sets of
setups cannot deadlock on them. A dead worker's lock goes with its connection.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import connection

# The namespace (first key) of these locks; ingest's per-upload lock is 17 (ingest/services.py).
CHECK_LOCK = 16


def lock_keys(series: Iterable[tuple[int, int]]) -> list[int]:
    """The lock keys of (setup, metric) series: their setups, sorted."""
    return sorted({setup_id for setup_id, _ in series})


def hold(series: Iterable[tuple[int, int]]) -> None:
    """Wait for and hold each series' lock until the current transaction ends (call it
    inside the check's ``transaction.atomic``)."""
    keys = lock_keys(series)
    if keys:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_advisory_xact_lock(%s, k) FROM unnest(%s::int[]) AS k",
                [CHECK_LOCK, keys],
            )
