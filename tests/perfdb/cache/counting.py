"""A computation that counts how often it runs, for the tests that ask when a cached value is
computed again and when it is served (a helper, not tests)."""

from __future__ import annotations

from collections.abc import Callable


def counter() -> Callable[[], int]:
    """A compute function answering 1, 2, 3, …: how many times it has run so far."""
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return len(calls)

    return compute
