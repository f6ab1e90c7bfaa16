"""perfdb/cache/writes.py: values computed inside another cached computation are stored with
the outermost one, read from this thread's pending writes meanwhile (never computed twice
in one computation), and stored even when the outer computation raises."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from perfdb import cache as page_cache
from perfdb.cache import writes
from perfdb.cache.entries import entry_key


def _inner(calls: list[str]) -> int:
    def compute() -> int:
        calls.append("inner")
        return 7

    return page_cache.cached_in_setup("inner", 1, compute)


def _stored(key: str, setup_id: int) -> bool:
    (name,) = page_cache.setup_entry(key, setup_id)
    return cache.get(entry_key(name)) is not None


def test_a_nested_value_is_stored_with_the_outer_one_and_read_from_pending_meanwhile():
    calls: list[str] = []
    seen: list[bool] = []

    def outer() -> int:
        first = _inner(calls)
        seen.append(_stored("inner", 1))  # not yet in the cache: pending
        return first + _inner(calls)  # read from pending, not computed again

    assert page_cache.cached_in_setup("outer", 1, outer) == 14
    assert calls == ["inner"] and seen == [False]
    assert _stored("inner", 1) and _stored("outer", 1)
    assert writes.take() == {}  # nothing left pending in this thread
    assert page_cache.cached_in_setup("outer", 1, outer) == 14  # a hit: nothing computed
    assert calls == ["inner"]


def test_nested_values_are_stored_when_the_outer_computation_raises():
    calls: list[str] = []

    def outer() -> int:
        _inner(calls)
        raise LookupError("no such setup")

    with pytest.raises(LookupError):
        page_cache.cached_in_setup("outer", 2, outer)
    assert _stored("inner", 1) and not _stored("outer", 2)
    assert writes.take() == {}
