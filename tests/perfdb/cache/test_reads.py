"""perfdb/cache/reads.py: what an answer was read under. Current only when every cached read
found its value current, no version moved between two reads, and nothing was queried
outside a cached computation."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection

from perfdb import cache as page_cache
from perfdb.cache.entries import entry_name, lock_key
from perfdb.cache.reads import get_many, read_together, recorded
from perfdb.cache.versions import SCOPE_VERSION_PREFIX as SCOPE

pytestmark = pytest.mark.django_db


def test_the_versions_of_current_reads_are_recorded():
    with recorded() as reads:
        assert page_cache.cached_in_setup("a", 7, lambda: 1) == 1  # computed
        assert page_cache.cached_in_setup("a", 7, lambda: 2) == 1  # found current
    versions = cache.get_many([page_cache.STRUCTURE_KEY, page_cache.SETUP_VERSION_PREFIX + "7"])
    assert reads.current and reads.versions == versions


def test_a_version_moved_between_two_reads_is_not_current():
    with recorded() as reads:
        page_cache.cached_in_setup("a", 8, lambda: 1)
        page_cache.runs_added([], [8])
        page_cache.cached_in_setup("b", 8, lambda: 1)
    assert not reads.current


def test_a_previous_value_served_is_not_current(settings):
    """Another process computes a scope's entry (its lock is held): the previous value is
    served, older than the versions just read."""
    page_cache.cached_in_scope("a", "9-9-UP", lambda: "old")
    page_cache.runs_added(["9-9-UP"], [])
    name = entry_name("a", "9-9-UP")
    stamp = tuple(cache.get(key) for key in (page_cache.STRUCTURE_KEY, SCOPE + "9-9-UP"))
    cache.add(lock_key(name, stamp), 1, 60)
    with recorded() as reads:
        assert page_cache.cached_in_scope("a", "9-9-UP", lambda: "new") == "old"
    assert not reads.current


def test_a_setup_entry_is_never_served_older_than_its_version(settings):
    """A setup's entry (a series) whose lock another process holds is computed here all the
    same: the reader right after an upload, its uploader most likely, sees it."""
    page_cache.cached_in_setup("a", 9, lambda: "old")
    page_cache.runs_added([], [9])
    ((name, keys),) = page_cache.setup_entry("a", 9).items()
    stamp = tuple(cache.get(key) for key in keys)
    cache.add(lock_key(name, stamp), 1, 60)
    with recorded() as reads:
        assert page_cache.cached_in_setup("a", 9, lambda: "new") == "new"
    assert reads.current


def test_a_query_outside_a_computation_is_not_current_inside_one_is():
    def compute() -> int:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone()[0]

    with recorded() as reads:
        page_cache.cached_in_setup("q", 10, compute)
    assert reads.current
    with recorded() as reads:
        compute()
    assert not reads.current


def test_reads_inside_read_together_take_what_it_read_others_read_the_cache():
    cache.set_many({"a": 1, "b": 2})
    with read_together(["a", "b", "absent"]):
        cache.set("a", 10)  # after the read: what it read is what the reads inside see
        assert get_many(["a", "absent"]) == {"a": 1}
        assert get_many(["a", "c"]) == {"a": 10}  # "c" not read: the cache
    assert get_many(["a", "b"]) == {"a": 10, "b": 2}
