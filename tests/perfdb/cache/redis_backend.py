"""The page cache on the real Redis (settings.REDIS_URL) with a key prefix of its own,
for the tests that need Redis rather than LocMemCache (a fixture, not tests)."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import override_settings


def count_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every round trip to Redis from now on (a command's name, or "pipeline" for a
    pipeline sent); ``monkeypatch.undo()`` stops it. For tests that pin how many trips a
    request makes."""
    import redis.client

    trips: list[str] = []
    command, execute = redis.client.Redis.execute_command, redis.client.Pipeline.execute

    def counted_command(self, *args, **options):  # type: ignore[no-untyped-def]
        trips.append(str(args[0]))
        return command(self, *args, **options)

    def counted_pipeline(self, *args, **options):  # type: ignore[no-untyped-def]
        trips.append("pipeline")
        return execute(self, *args, **options)

    monkeypatch.setattr(redis.client.Redis, "execute_command", counted_command)
    monkeypatch.setattr(redis.client.Pipeline, "execute", counted_pipeline)
    return trips


def redis_caches(location: str) -> dict[str, dict[str, object]]:
    return {
        "default": {
            "BACKEND": "perfdb.cache.backend.FailSoftRedisCache",
            "LOCATION": location,
            "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.5},
            "KEY_PREFIX": f"perfdb-test-{uuid.uuid4().hex}",  # nobody else's keys
        }
    }


@pytest.fixture
def redis_cache():
    with override_settings(CACHES=redis_caches(settings.REDIS_URL), PAGE_CACHE_WARM=False):
        yield cache
        client = cache._cache.get_client(write=True)
        client.delete(*client.keys(cache.make_key("*")) or ["-"])  # never flushdb: the broker
