"""Waiting for a condition another thread or process makes true, with a deadline: a test
that races a check must not sleep a fixed time (a helper, not a test module)."""

from __future__ import annotations

import time


def wait_for(predicate, what: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
