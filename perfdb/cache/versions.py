"""The data versions every cached entry is stamped with, coarse to fine.

The *data* version moves on every write; the *structure* version only when runs are
removed or edited or the vocabulary is (``invalidate.data_changed``); there is one per
*scope* (workload x hardware x UP/SMP, ``scope_key``; ``CATALOG`` for what depends only on
which setups exist) and one per *setup* (its series). Beside them, each series' *alerts*
version (setup and metric) moves whenever one of its alerts is created, changed (triage,
the detector) or deleted (``invalidate.alerts_changed``): the marks of a series follow its
own alerts, not its data nor the alerts of the setup's other metrics. A
version that Redis lost starts again from the clock, never from 1, so it cannot meet an
old value's number.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from django.core.cache import cache

from perfdb.cache import writes

VERSION_KEY = "perfdb:data-version"
STRUCTURE_KEY = "perfdb:structure-version"
SCOPE_VERSION_PREFIX = "perfdb:scope-version:"
SETUP_VERSION_PREFIX = "perfdb:setup-version:"
ALERTS_VERSION_PREFIX = "perfdb:alerts-version:"


def alerts_version_key(setup_id: int, metric_id: int) -> str:
    """The version key of a series' alerts (``ALERTS_VERSION_PREFIX``)."""
    return f"{ALERTS_VERSION_PREFIX}{setup_id}:{metric_id}"


# The pseudo-scope of what depends only on which setups exist (catalogue, scope picker).
CATALOG = "*catalog*"


def _fresh_version() -> int:
    """A start no earlier version used (if Redis lost the key, 1 could meet an old 1)."""
    return time.time_ns()


def data_version() -> int:
    versions = current_versions([VERSION_KEY])
    return _fresh_version() if versions is None else versions[0]


def bump(*keys: str) -> None:
    """Move each version key (a missing one starts fresh); on Redis in one round trip."""
    if hasattr(cache, "bump_many"):  # backend.py; not the tests' LocMemCache
        cache.bump_many(list(keys), _fresh_version)
        return
    for key in keys:
        try:
            cache.incr(key)
        except ValueError:  # the key is missing: any new value invalidates
            cache.set(key, _fresh_version(), timeout=None)


def current_versions(keys: list[str], found: Mapping[str, Any] | None = None) -> list[int] | None:
    """Each version key's value (started when missing; ``found``: what was read already);
    None when the cache is unreachable, so nothing is reused."""
    found = cache.get_many(keys) if found is None else found
    missing = [key for key in keys if found.get(key) is None]
    if missing:  # all started in one round trip, then read back (another may have won)
        writes.add_many(missing, _fresh_version(), None)
        found = {**found, **cache.get_many(missing)}
    out = []
    for key in keys:
        version = found.get(key)
        if version is None:
            return None
        out.append(int(version))
    return out


def scope_key(workload_id: int, hardware_id: int, mode: str) -> str:
    """A scope's name: the same text as the pages' ``scope`` parameter."""
    return f"{workload_id}-{hardware_id}-{mode}"
