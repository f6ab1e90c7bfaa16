"""DRF's anonymous and per-user rate throttles with their counters read in one cache round
trip and written in one (DRF's own classes read and write each of the two apart: four
round trips on every API request, more than a cached answer costs).

The same rates (``DEFAULT_THROTTLE_RATES``: ``anon``, ``user``), the same keys and the same
sliding window as ``AnonRateThrottle`` and ``UserRateThrottle``: a client is refused by
exactly the requests DRF's pair would refuse.
"""

from __future__ import annotations

from typing import Any

from rest_framework.throttling import (
    AnonRateThrottle,
    BaseThrottle,
    SimpleRateThrottle,
    UserRateThrottle,
)


class AnonAndUserRateThrottle(BaseThrottle):
    def __init__(self) -> None:
        self.refused_by: SimpleRateThrottle | None = None

    def allow_request(self, request, view) -> bool:
        throttles = [(t, t.get_cache_key(request, view)) for t in self._pair()]
        counted = [(t, key) for t, key in throttles if t.rate is not None and key is not None]
        if not counted:
            return True
        cache = counted[0][0].cache
        histories = cache.get_many([key for _, key in counted])
        for throttle, key in counted:
            throttle.key = key
            throttle.now = throttle.timer()
            history = histories.get(key, [])
            throttle.history = [t for t in history if t > throttle.now - throttle.duration]
            if len(throttle.history) >= throttle.num_requests:
                self.refused_by = throttle
                return False
        by_duration: dict[int, dict[str, list[float]]] = {}
        for throttle, key in counted:
            throttle.history.insert(0, throttle.now)
            by_duration.setdefault(throttle.duration, {})[key] = throttle.history
        for duration, values in by_duration.items():
            cache.set_many(values, duration)
        return True

    @staticmethod
    def _pair() -> list[Any]:  # SimpleRateThrottles; their rate fields are untyped
        """New instances per request, as DRF makes them: they read the rates now (a test or
        a setting may change them)."""
        return [AnonRateThrottle(), UserRateThrottle()]

    def wait(self) -> float | None:
        return None if self.refused_by is None else self.refused_by.wait()
