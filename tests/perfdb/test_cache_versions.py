"""perfdb/cache_versions.py: how far a previous value is behind the runs is measured from the
first version move after it was computed, not from when it was computed, on LocMemCache
(the tests' cache) and on the real Redis (one pipeline for the bumps)."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache

from perfdb import cache as page_cache
from perfdb import cache_versions
from tests.perfdb.test_cache_backend import redis_cache  # noqa: F401 (fixture)

KEY = "perfdb:scope-version:1-1-SMP"


def _previous(computed_seconds_ago: float) -> tuple[dict[str, page_cache.Stored], dict]:
    """An entry computed that long ago under the current versions, and what it wants."""
    stamp = tuple(cache_versions.versions_of([page_cache.STRUCTURE_KEY, KEY]) or ())
    entry = (stamp, time.time() - computed_seconds_ago, b"")
    return {"n": entry}, {"n": (page_cache.STRUCTURE_KEY, KEY)}


def _lag(previous: dict, wanted: dict) -> float:
    stamps = {"n": tuple(cache_versions.versions_of(list(wanted["n"])) or ())}
    return cache_versions.behind(previous, wanted, stamps)["n"]


@pytest.mark.parametrize("backend", ["locmem", "redis"])
def test_a_value_computed_long_ago_is_behind_since_the_first_move_after_it(
    backend,
    request,
    monkeypatch,
):
    if backend == "redis":
        request.getfixturevalue("redis_cache")
    else:
        cache.clear()
    previous, wanted = _previous(computed_seconds_ago=3000)
    assert _lag(previous, wanted) == pytest.approx(3000, abs=5)  # still current: its age
    moved_at = time.time()
    monkeypatch.setattr(cache_versions.time, "time", lambda: moved_at)
    cache_versions.bump(KEY)  # an upload to the scope, now
    monkeypatch.setattr(cache_versions.time, "time", lambda: moved_at + 20)
    cache_versions.bump(KEY)  # another, 20 s later
    monkeypatch.setattr(cache_versions.time, "time", lambda: moved_at + 25)
    assert _lag(previous, wanted) == pytest.approx(25), "from the first move, not the last"


def test_where_the_move_is_not_known_the_age_counts(monkeypatch):
    cache.clear()
    previous, wanted = _previous(computed_seconds_ago=3000)
    cache_versions.bump(KEY)
    (version,) = cache_versions.versions_of([KEY]) or ()
    cache.delete(f"{KEY}@{version}")  # noted longer ago than BEGAN_SECONDS: gone
    assert _lag(previous, wanted) == pytest.approx(3000, abs=5)


def test_a_chart_outdated_a_moment_ago_is_served_while_it_is_recomputed(settings):
    """The page cache's use of it: computed long ago, outdated by an upload just now, and
    asked for with stale=True: the previous value is served (not computed by the request)."""
    cache.clear()
    settings.PAGE_CACHE_STALE_SECONDS = 30
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    entry_key = page_cache._entry_key(page_cache._name("t:chart", "1-1-SMP"))
    stamp, _, value = cache.get(entry_key)
    cache.set(entry_key, (stamp, time.time() - 3000, value))  # computed 50 minutes ago
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    assert calls == [1], "served as the previous value, not computed by the request"
