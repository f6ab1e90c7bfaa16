"""Reads to a streaming replica when ``DATABASE_REPLICA_URL`` is set; writes, and the reads
that must see a write, to the primary.

- Every write goes to the primary (``default``); so does every read inside a transaction
  (``atomic``), which is how the ingest writer, the detector and the admin read what they
  are about to change.
- Uploads (their status, polled by a client right after it uploaded) are always read from the
  primary: read-after-write.
- Everything else a page or the API reads goes to the replica.

A replica lags the primary by its replay delay. So that a page never shows an upload as
missing after the status said "done", the status view waits (``replica_caught_up``) until the
replica has replayed the primary's WAL up to the moment it read the status, at most
``DATABASE_REPLICA_WAIT`` seconds, before answering "done".
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import connections

REPLICA = "replica"
PRIMARY = "default"
# Read after write: these models are read from the primary.
PRIMARY_MODELS = {("perfdb", "upload")}


def replica_configured() -> bool:
    return REPLICA in settings.DATABASES


class PrimaryReplicaRouter:
    def db_for_read(self, model: type, **hints: Any) -> str:
        meta = model._meta  # type: ignore[attr-defined]
        if (meta.app_label, meta.model_name) in PRIMARY_MODELS:
            return PRIMARY
        if connections[PRIMARY].in_atomic_block:
            return PRIMARY
        return REPLICA

    def db_for_write(self, model: type, **hints: Any) -> str:
        return PRIMARY

    def allow_relation(self, obj1: Any, obj2: Any, **hints: Any) -> bool:
        return True  # one database, two servers

    def allow_migrate(self, db: str, app_label: str, **hints: Any) -> bool:
        return db == PRIMARY  # the replica follows the primary's WAL


def replica_caught_up(timeout: float | None = None) -> bool:
    """Wait until the replica has replayed everything the primary had written when this was
    called (True), or ``timeout`` seconds passed (False). True at once without a replica."""
    if not replica_configured():
        return True
    if timeout is None:
        timeout = float(getattr(settings, "DATABASE_REPLICA_WAIT", 5.0))
    with connections[PRIMARY].cursor() as cursor:
        cursor.execute("SELECT pg_current_wal_lsn()")
        target = cursor.fetchone()[0]
    deadline = time.monotonic() + timeout
    with connections[REPLICA].cursor() as cursor:
        while True:
            cursor.execute(
                "SELECT pg_last_wal_replay_lsn() IS NULL OR pg_last_wal_replay_lsn() >= %s",
                [target],
            )
            if cursor.fetchone()[0]:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
