"""The version keys of the page cache (perfdb/cache.py): moved by writes, read by readers,
and when each version began, so that a previous value's lag behind the runs is known."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from django.core.cache import cache

from perfdb import cache_writes

# An entry as stored: (stamp: the versions it was computed under, when, the value pickled on
# its own: a stamp not current costs no unpickling of a value not served, ~40 ms per MB).
Stored = tuple[tuple[int, ...], float, bytes]
Stamps = Mapping[str, tuple[int, ...]]  # entry name -> the versions it is computed under
# How long the time each version began is kept (a previous value behind by more is not
# served as one anyway: PAGE_CACHE_STALE_SECONDS is tens of seconds).
BEGAN_SECONDS = 3600


def fresh_version() -> int:
    """A start no earlier version used (if Redis lost the key, 1 could meet an old 1)."""
    return time.time_ns()


def bump(*keys: str) -> None:
    """Move each version key (a missing one starts fresh; on Redis in one round trip), and
    note when each new version began (``behind``)."""
    if hasattr(cache, "bump_many"):  # perfdb.cache_backend; not the tests' LocMemCache
        moved = cache.bump_many(list(keys), fresh_version)
    else:
        moved = {}
        for key in keys:
            try:
                moved[key] = cache.incr(key)
            except ValueError:  # the key is missing: any new value invalidates
                cache.set(key, fresh_version(), timeout=None)
    now = time.time()
    cache.set_many({_began_key(k, v): now for k, v in moved.items()}, timeout=BEGAN_SECONDS)


def _began_key(version_key: str, version: int) -> str:
    """Where the time ``version`` of ``version_key`` began is noted."""
    return f"{version_key}@{version}"


def versions_of(keys: list[str], found: Mapping[str, Any] | None = None) -> list[int] | None:
    """Each version key's value (started when missing; ``found``: what was read already);
    None when the cache is unreachable, so nothing is reused."""
    found = cache.get_many(keys) if found is None else found
    missing = [key for key in keys if found.get(key) is None]
    if missing:  # all started in one round trip, then read back (another may have won)
        cache_writes.add_many(missing, fresh_version(), None)
        found = {**found, **cache.get_many(missing)}
    out = []
    for key in keys:
        version = found.get(key)
        if version is None:
            return None
        out.append(int(version))
    return out


def behind(
    previous: Mapping[str, Stored], wanted: Mapping[str, Sequence[str]], stamps: Stamps
) -> dict[str, float]:
    """How long each previous value has been behind the runs: since the first version after
    its stamp began (one round trip), not since it was computed. A scope chart computed an
    hour ago and outdated by an upload a second ago is a second behind, and may be served
    while it is recomputed. Since it was computed where that time is not known (a version
    started fresh, or noted longer ago than ``BEGAN_SECONDS``), and for one still current
    (``max_age``)."""
    began = {
        name: [
            _began_key(key, old + 1)
            for key, old, new in zip(wanted[name], entry[0], stamps[name], strict=True)
            if old != new
        ]
        for name, entry in previous.items()
    }
    found = cache.get_many([k for keys in began.values() for k in keys])
    out = {}
    for name, keys in began.items():
        times = [t for k in keys if (t := found.get(k)) is not None]
        known = bool(keys) and len(times) == len(keys)
        out[name] = time.time() - (min(times) if known else previous[name][1])
    return out
