"""DRF's anonymous and per-user rate throttles, cheaper: their counters read in one cache
round trip and written in one, and kept per second.

DRF's own classes read and write each of the two apart (four round trips on every API
request, more than a cached answer costs) and keep a list of every request's time in the
window: at 300 requests/s from one address a one-minute window is 18,000 floats, pickled and
sent twice a request. Here the same rates (``DEFAULT_THROTTLE_RATES``: ``anon``, ``user``) and
the same keys count requests per second of the window (at most 60 numbers for a rate per
minute): a client is refused when the requests of the last ``duration`` seconds reach the
rate, as by DRF's pair, with times taken to the whole second. The counts are kept under keys
of their own (DRF's views keep a list of times under theirs): the views with this throttle
are counted apart from the rest of the API, at the same rates.

Both count per client as ``perfdb.operations.client_ip`` reads it through ``TRUSTED_PROXIES``: DRF's
own ``get_ident`` believed the first ``X-Forwarded-For`` entry a client sent (without
``NUM_PROXIES``), so an anonymous client escaped the rate by changing it, and behind a proxy
without the header every client was the proxy.
"""

from __future__ import annotations

import math
from typing import Any

from django.core.cache import cache
from rest_framework import throttling
from rest_framework.throttling import BaseThrottle

from perfdb.operations.client_ip import client_ip

PREFIX = "per-second:"
Counts = tuple[tuple[int, int], ...]  # (second, requests in it), newest first


class AnonRateThrottle(throttling.AnonRateThrottle):
    """DRF's anonymous rate, per client address past the trusted proxies."""

    def get_ident(self, request) -> str:
        return client_ip(request)


class UserRateThrottle(throttling.UserRateThrottle):
    """DRF's per-user rate (keyed on the user; on the address when anonymous)."""

    def get_ident(self, request) -> str:
        return client_ip(request)


class AnonAndUserRateThrottle(BaseThrottle):
    def __init__(self) -> None:
        self.refused: tuple[Any, Counts, int] | None = None  # throttle, its counts, now

    def allow_request(self, request, view) -> bool:
        return self.allow_and_read(request, view, [])[0]

    def allow_and_read(self, request, view, keys: list[str]) -> tuple[bool, dict[str, Any]]:
        """Whether the request is allowed (counted if so), and the cache's values of
        ``keys`` (a view's own, e.g. its answer), read in the same round trip."""
        throttles = [(t, t.get_cache_key(request, view)) for t in self._pair()]
        counted = [(t, f"{PREFIX}{key}") for t, key in throttles if t.rate and key is not None]
        if not counted:
            return True, dict(cache.get_many(keys)) if keys else {}
        found = counted[0][0].cache.get_many([key for _, key in counted] + keys)
        now = math.floor(counted[0][0].timer())
        kept: dict[int, dict[str, Counts]] = {}
        for throttle, key in counted:
            counts = _within(found.get(key, ()), now - throttle.duration)
            if sum(n for _, n in counts) >= throttle.num_requests:
                self.refused = (throttle, counts, now)
                return False, found
            kept.setdefault(throttle.duration, {})[key] = _added(counts, now)
        for duration, values in kept.items():
            counted[0][0].cache.set_many(values, duration)
        return True, found

    @staticmethod
    def _pair() -> list[Any]:  # SimpleRateThrottles; their rate fields are untyped
        """New instances per request, as DRF makes them: they read the rates now (a test or
        a setting may change them)."""
        return [AnonRateThrottle(), UserRateThrottle()]

    def wait(self) -> float | None:
        """As DRF's: the time left until the oldest counted request leaves the window,
        shared among the requests still allowed in it."""
        if self.refused is None:
            return None
        throttle, counts, now = self.refused
        remaining = throttle.duration - (now - counts[-1][0]) if counts else throttle.duration
        available = throttle.num_requests - sum(n for _, n in counts) + 1
        return remaining / available if available > 0 else None


def _within(counts: Counts, after: int) -> Counts:
    return tuple((second, n) for second, n in counts if second > after)


def _added(counts: Counts, now: int) -> Counts:
    if counts and counts[0][0] == now:
        return ((now, counts[0][1] + 1),) + counts[1:]
    return ((now, 1),) + counts
