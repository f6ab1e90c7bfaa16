"""Page data cached in Redis (Django's cache), keyed by a data version.

Everything the dashboards cache is derived from the stored runs (picker choices, run counts,
the overview's latest runs). Rather than track which key each write touches, every write
that adds or removes runs calls ``data_changed()`` after its commit: the version goes up, and
every key cached under the old version is simply never read again (it expires by its
timeout). A reader takes the version *before* it queries, so a value computed from data older
than a commit can only be stored under the version that commit left behind.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

VERSION_KEY = "perfdb:data-version"
# Old versions' entries are dead weight once the version moves; let Redis drop them.
TIMEOUT_SECONDS = 6 * 60 * 60
_MISSING = object()

T = TypeVar("T")


def _fresh_version() -> int:
    """A start value no earlier version used: if Redis lost the key, counting again from 1
    could meet entries cached under an old 1."""
    return time.time_ns()


def data_version() -> int:
    version = cache.get(VERSION_KEY)
    if version is None:
        cache.add(VERSION_KEY, _fresh_version(), timeout=None)
        version = cache.get(VERSION_KEY)
    if version is None:  # the cache is unreachable (perfdb.cache_backend): nothing is reused
        return _fresh_version()
    return int(version)


def data_changed() -> None:
    """Runs were added or removed: nothing cached so far may be served again."""
    try:
        cache.incr(VERSION_KEY)
    except ValueError:  # the key is missing: any new value invalidates
        cache.set(VERSION_KEY, _fresh_version(), timeout=None)


def data_changed_on_commit() -> None:
    """``data_changed`` once the current transaction commits (at once outside one): a reader
    between the write and the commit must not cache the old data under the new version."""
    transaction.on_commit(data_changed)


def cached(key: str, fn: Callable[[], T], timeout: int = TIMEOUT_SECONDS) -> T:
    """``fn()``, computed once per data version. ``key`` must name everything ``fn`` reads
    besides the stored runs (e.g. the scope it is for)."""
    # Hashed: a key may carry free text (parameters held fixed), which a cache key must not.
    digest = hashlib.sha256(key.encode()).hexdigest()[:40]
    full_key = f"perfdb:v{data_version()}:{digest}"
    value = cache.get(full_key, _MISSING)
    if value is _MISSING:
        value = fn()
        cache.set(full_key, value, timeout)
    return value  # type: ignore[return-value]


@receiver(post_save, sender="perfdb.Run")
@receiver(post_delete, sender="perfdb.Run")
def _run_saved_or_deleted(**kwargs: object) -> None:
    """Runs added, edited or deleted through the ORM one by one (the admin, a shell). The
    bulk writers (ingest, synthetic history) call ``data_changed_on_commit`` themselves."""
    data_changed_on_commit()
