"""Django's Redis cache, failing soft: when Redis does not answer, a read is a miss and a
write is skipped, with a warning in the log (at most one per 30 s per process), so the pages
fall back to computing their data instead of answering 500.

A change of data while Redis is unreachable cannot bump the data version (perfdb/cache.py);
pages may then show data cached before the outage until the next change or the cache
timeout. Short socket timeouts (settings.CACHES OPTIONS) keep a hung Redis from hanging pages.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

import redis.exceptions
from django.core.cache.backends.redis import RedisCache

log = logging.getLogger(__name__)

UNREACHABLE = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)
_last_warning = 0.0


def _warn(operation: str, exc: BaseException) -> None:
    global _last_warning
    now = time.monotonic()
    if now - _last_warning > 30:
        _last_warning = now
        log.warning("cache unreachable (%s: %s); computing without it", operation, exc)


Method = Callable[..., Any]


def _soft(fallback: object) -> Callable[[Method], Method]:
    def wrap(method: Method) -> Method:
        @functools.wraps(method)
        def run(self: RedisCache, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except UNREACHABLE as exc:
                _warn(method.__name__, exc)
                if method.__name__ == "get":
                    return kwargs.get("default", args[1] if len(args) > 1 else None)
                return fallback() if callable(fallback) else fallback

        return run

    return wrap


class FailSoftRedisCache(RedisCache):
    get = _soft(None)(RedisCache.get)
    add = _soft(False)(RedisCache.add)
    set = _soft(None)(RedisCache.set)
    touch = _soft(False)(RedisCache.touch)
    delete = _soft(False)(RedisCache.delete)
    get_many = _soft(dict)(RedisCache.get_many)
    has_key = _soft(False)(RedisCache.has_key)
    set_many = _soft(list)(RedisCache.set_many)
    delete_many = _soft(None)(RedisCache.delete_many)
    clear = _soft(False)(RedisCache.clear)

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> int:
        try:
            return super().incr(key, delta, version)
        except UNREACHABLE as exc:
            _warn("incr", exc)
            return 0

    def bump_many(self, keys: list[str], start: Callable[[], int]) -> None:
        """Move each version key, in one round trip: ``incr`` does two per key (EXISTS, then
        INCRBY), and an upload moves three or more. A missing key is first set to
        ``start()`` (never expiring), so it comes back as a value no earlier version used;
        ints are stored as plain integers (RedisSerializer), so INCR reads what ``set`` wrote
        and ``get`` reads what INCR left. Not a transaction: each key moves on its own, as
        it did one by one."""
        if not keys:
            return
        try:
            client = self._cache.get_client(write=True)  # type: ignore[attr-defined]  # no stub
            pipe = client.pipeline(transaction=False)
            for key in keys:
                made = self.make_and_validate_key(key)
                pipe.set(made, start(), nx=True)
                pipe.incr(made)
            pipe.execute()
        except UNREACHABLE as exc:
            _warn("bump_many", exc)
