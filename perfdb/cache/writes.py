"""Entries computed inside another cached computation, stored with the outermost one.

A page's data computed on a miss is made of nested cached values (the series page: its
context, made of the setup's metric ids and the series), each a cached computation of its
own (entries.py). Each used to take a lock and store itself as soon as it was computed:
three round trips to Redis per value, 31 for the series page after an upload to its setup
(6 now: tests/dashboards/page_data/test_series_data.py). On a loaded web process every round trip
is also a wait for the GIL again (py-spy on bench/load.py: the Redis socket was 44 % of the
samples of a scope chart computed after an upload). So a nested value is kept in this thread's
*pending* writes instead, read from there by the computations after it in the same thread,
and stored with the outermost computation's entries in one round trip (also when that one
raises: what was computed is stored, as before). A nested value takes no lock: only a
reader outside any computation may wait on one (it is served the previous value), and such
a reader then computes the value too, as two nested readers always did.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from django.core.cache import cache

# An entry to store: its cache key -> (the stored tuple, its timeout in seconds).
Writes = dict[str, tuple[Any, int]]

_local = threading.local()


def _pending() -> Writes:
    pending: Writes | None = getattr(_local, "pending", None)
    if pending is None:
        pending = _local.pending = {}
    return pending


def defer(entries: Mapping[str, Any], timeout: int) -> None:
    """Keep ``entries`` (cache key -> stored tuple) to be stored by ``take``'s caller."""
    _pending().update({key: (value, timeout) for key, value in entries.items()})


def overlay(found: Mapping[str, Any], keys: list[str]) -> Mapping[str, Any]:
    """``found`` (what the cache answered for ``keys``) with this thread's pending entries
    among ``keys`` in place of what the cache holds: newer, and not stored yet."""
    pending = getattr(_local, "pending", None)
    if not pending:
        return found
    mine = {key: pending[key][0] for key in keys if key in pending}
    return {**found, **mine} if mine else found


def take() -> Writes:
    """Every pending entry of this thread, which it no longer holds."""
    pending = _pending()
    _local.pending = {}
    return pending


def add_many(keys: list[str], value: object, timeout: int | None) -> list[str]:
    """``cache.add`` of each key, in one round trip on Redis (backend.py): the
    keys added."""
    if not keys:
        return []
    if hasattr(cache, "add_many"):
        added: list[str] = cache.add_many(keys, value, timeout)
        return added
    return [key for key in keys if cache.add(key, value, timeout)]


def store(entries: Writes, locks: list[str]) -> None:
    """The entries stored and the locks released, in one round trip on Redis."""
    if hasattr(cache, "write_many"):
        cache.write_many(entries, locks)
        return
    for timeout in {t for _, t in entries.values()}:
        cache.set_many({k: v for k, (v, t) in entries.items() if t == timeout}, timeout)
    if locks:
        cache.delete_many(locks)
