"""Django's Redis cache, failing soft: when Redis does not answer, a read is a miss and a
write is skipped, with a warning in the log (at most one per 30 s per process), so the pages
fall back to computing their data instead of answering 500.

A change of data while Redis is unreachable cannot bump the data version (versions.py);
pages may then show data cached before the outage until the next change or the cache
timeout. Short socket timeouts (settings.CACHES OPTIONS) keep a hung Redis from hanging pages.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import redis.exceptions
from django.core.cache.backends.redis import RedisCache, RedisCacheClient

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


class ReusedClients(RedisCacheClient):
    """Django's Redis cache client, keeping one ``redis.Redis`` per connection pool. Django
    makes a new one for every command, copying its ~170 response callbacks each time:
    0.07-0.14 ms of CPU per round trip, ~10 of them a page (cProfile of the pages' warm).
    A ``redis.Redis`` is safe to share (each command takes a connection from the pool),
    and every thread has its own cache object anyway (django.core.cache.caches)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]  # no stub
        client = self._clients.get(id(pool))
        if client is None:
            made = self._client(connection_pool=pool)  # type: ignore[attr-defined]  # no stub
            client = self._clients[id(pool)] = made
        return client


class FailSoftRedisCache(RedisCache):
    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = ReusedClients

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

    def add_many(self, keys: list[str], value: Any, timeout: int | None) -> list[str]:
        """``add`` each key (set it only where it is missing), in one round trip: the keys
        added here. A page computing a hundred setups' pieces took a hundred round trips for
        their locks, each a wait for the GIL again on a loaded web process. On an unreachable
        Redis every key: nobody else can be seen holding one, so the caller computes."""
        if not keys:
            return []
        try:
            client = self._cache.get_client(write=True)  # type: ignore[attr-defined]  # no stub
            dumped = self._cache._serializer.dumps(value)  # type: ignore[attr-defined]
            pipe = client.pipeline(transaction=False)
            seconds = self.get_backend_timeout(timeout)
            if seconds == 0:  # ``add`` with 0 stores nothing: Django's own answer, key by key
                return [key for key in keys if self.add(key, value, 0)]
            for key in keys:
                pipe.set(self.make_and_validate_key(key), dumped, nx=True, ex=seconds)
            done = pipe.execute()
        except UNREACHABLE as exc:
            _warn("add_many", exc)
            return list(keys)
        return [key for key, added in zip(keys, done, strict=True) if added]

    def write_many(self, entries: Mapping[str, tuple[Any, int | None]], delete: list[str]) -> None:
        """Set each key to its value with its own timeout, then delete ``delete``, in one
        round trip (entries stored and their locks released)."""
        if not entries and not delete:
            return
        try:
            client = self._cache.get_client(write=True)  # type: ignore[attr-defined]  # no stub
            dumps = self._cache._serializer.dumps  # type: ignore[attr-defined]
            pipe = client.pipeline(transaction=False)
            for key, (value, timeout) in entries.items():
                made, seconds = self.make_and_validate_key(key), self.get_backend_timeout(timeout)
                if seconds == 0:  # as ``set``: a timeout of 0 or less removes the key
                    pipe.delete(made)
                else:
                    pipe.set(made, dumps(value), ex=seconds)
            if delete:
                pipe.delete(*(self.make_and_validate_key(key) for key in delete))
            pipe.execute()
        except UNREACHABLE as exc:
            _warn("write_many", exc)

    def add_to_set(self, key: str, members: list[str], flag: str, flag_seconds: int) -> bool:
        """Add ``members`` to the set ``key`` and set ``flag`` (for ``flag_seconds``) if it
        was not set, in one round trip: whether the flag was set here (warm.py).
        False when Redis does not answer."""
        try:
            client = self._cache.get_client(write=True)  # type: ignore[attr-defined]  # no stub
            pipe = client.pipeline(transaction=False)
            if members:
                pipe.sadd(self.make_and_validate_key(key), *members)
            pipe.set(self.make_and_validate_key(flag), 1, nx=True, ex=flag_seconds)
            return bool(pipe.execute()[-1])
        except UNREACHABLE as exc:
            _warn("add_to_set", exc)
            return False

    def take_set(self, key: str, flag: str) -> list[str]:
        """The members of the set ``key``, removed, and ``flag`` cleared, atomically (an add
        after this one sets the flag again). Nothing when Redis does not answer."""
        try:
            client = self._cache.get_client(write=True)  # type: ignore[attr-defined]  # no stub
            made = self.make_and_validate_key(key)
            pipe = client.pipeline(transaction=True)
            pipe.delete(self.make_and_validate_key(flag))
            pipe.smembers(made)
            pipe.delete(made)
            members = pipe.execute()[1]
        except UNREACHABLE as exc:
            _warn("take_set", exc)
            return []
        return sorted(m.decode() if isinstance(m, bytes) else str(m) for m in members)
