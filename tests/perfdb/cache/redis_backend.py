"""The page cache on the real Redis (settings.REDIS_URL) with a key prefix of its own,
for the tests that need Redis rather than LocMemCache (a fixture, not tests)."""

from __future__ import annotations

import uuid

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import override_settings


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
