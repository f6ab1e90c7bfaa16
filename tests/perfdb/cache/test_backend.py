"""perfdb/cache/backend.py against the real Redis (settings.REDIS_URL; the other tests cache in
LocMemCache): the version bumps of an upload's commit, sent as one pipeline, move every key
they name and start a missing one fresh, and a Redis that does not answer is no error."""

from __future__ import annotations

from django.core.cache import cache
from django.test import override_settings

from perfdb import cache as page_cache
from tests.perfdb.cache.redis_backend import redis_cache, redis_caches  # noqa: F401 (fixtures)


def test_bump_many_moves_each_key_and_starts_missing_ones_fresh(redis_cache):  # noqa: F811
    redis_cache.set("a", 5, timeout=None)
    redis_cache.bump_many(["a", "b", "a"], lambda: 1000)
    assert redis_cache.get_many(["a", "b"]) == {"a": 7, "b": 1001}
    client = redis_cache._cache.get_client(write=True)
    assert client.ttl(redis_cache.make_key("b")) == -1  # a version never expires


def test_runs_added_moves_the_data_scope_and_setup_versions_only(redis_cache):  # noqa: F811
    keys = [
        page_cache.VERSION_KEY,
        page_cache.STRUCTURE_KEY,
        page_cache.SCOPE_VERSION_PREFIX + "1-2-UP",
        page_cache.SCOPE_VERSION_PREFIX + "3-4-SMP",
        page_cache.SETUP_VERSION_PREFIX + "7",
    ]
    redis_cache.set_many(dict.fromkeys(keys, 10), timeout=None)
    page_cache.runs_added(["1-2-UP", "1-2-UP"], [7])
    assert redis_cache.get_many(keys) == dict(zip(keys, [11, 10, 11, 10, 11], strict=True))
    page_cache.data_changed()
    assert redis_cache.get_many(keys[:2]) == {keys[0]: 12, keys[1]: 11}


def test_a_missing_version_comes_back_newer_than_any_earlier_one(redis_cache):  # noqa: F811
    before = page_cache.data_version()
    redis_cache.delete(page_cache.VERSION_KEY)  # Redis lost it (evicted, flushed)
    page_cache.runs_added(["1-2-UP"])
    assert page_cache.data_version() > before


def test_bump_many_on_an_unreachable_redis_is_no_error():
    dead = redis_caches("redis://127.0.0.1:1/0")
    with override_settings(CACHES=dead, PAGE_CACHE_WARM=False):
        cache.bump_many(["a"], lambda: 1)
        page_cache.runs_added(["1-2-UP"], [7])


def test_add_many_sets_only_the_missing_keys_with_their_timeout(redis_cache):  # noqa: F811
    redis_cache.set("held", "theirs", timeout=60)
    added = redis_cache.add_many(["held", "free", "other"], "mine", 30)
    assert added == ["free", "other"]
    assert redis_cache.get_many(["held", "free", "other"]) == {
        "held": "theirs",
        "free": "mine",
        "other": "mine",
    }
    client = redis_cache._cache.get_client(write=True)
    assert 0 < client.ttl(redis_cache.make_key("free")) <= 30
    assert redis_cache.add_many(["forever"], 5, None) == ["forever"]
    assert client.ttl(redis_cache.make_key("forever")) == -1


def test_write_many_stores_each_with_its_timeout_and_removes_the_others(redis_cache):  # noqa: F811
    redis_cache.set_many({"lock": 1, "old": 2}, timeout=60)
    redis_cache.write_many({"entry": ((1, 2.0, b"x"), 40), "old": (3, None)}, ["lock"])
    assert redis_cache.get_many(["entry", "old", "lock"]) == {"entry": (1, 2.0, b"x"), "old": 3}
    client = redis_cache._cache.get_client(write=True)
    assert 0 < client.ttl(redis_cache.make_key("entry")) <= 40
    assert client.ttl(redis_cache.make_key("old")) == -1


def test_a_cached_computation_on_redis_stores_every_entry_and_releases_its_locks(redis_cache):  # noqa: F811
    """Many entries missing at once (a scope chart's hundred setups' pieces): their locks
    are taken and released in one round trip each way, and every value is stored."""
    names = [f"piece-{n}" for n in range(100)]
    wanted = {n: (page_cache.STRUCTURE_KEY, page_cache.SETUP_VERSION_PREFIX + n) for n in names}
    computed: list[list[str]] = []

    def compute(todo: list[str]) -> dict[str, int]:
        computed.append(todo)
        return {n: len(n) for n in todo}

    assert page_cache.cached_entries(wanted, compute) == {n: len(n) for n in names}
    assert page_cache.cached_entries(wanted, compute) == {n: len(n) for n in names}
    assert computed == [names]  # once, all together; the second read found them all
    client = redis_cache._cache.get_client(write=True)
    assert client.keys(redis_cache.make_key("perfdb:computing:*")) == []


def test_add_many_and_write_many_on_an_unreachable_redis_are_no_error():
    dead = redis_caches("redis://127.0.0.1:1/0")
    with override_settings(CACHES=dead, PAGE_CACHE_WARM=False):
        assert cache.add_many(["a"], 1, 30) == ["a"]  # nobody seen holding it: compute here
        cache.write_many({"a": (1, 30)}, ["b"])
        assert page_cache.cached_entries(
            {"x": (page_cache.STRUCTURE_KEY,)}, lambda t: {"x": 1}
        ) == {"x": 1}


def test_one_redis_client_serves_every_command_of_a_cache(redis_cache):  # noqa: F811
    """Django made a new redis.Redis per command (0.07-0.14 ms of CPU each)."""
    first = redis_cache._cache.get_client(write=True)
    redis_cache.set_many({"a": 1, "b": 2})
    assert redis_cache.get_many(["a", "b"]) == {"a": 1, "b": 2}
    assert redis_cache._cache.get_client(write=True) is first
    assert redis_cache._cache.get_client(write=False) is redis_cache._cache.get_client()
