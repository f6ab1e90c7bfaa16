"""perfdb/cache/refresh.py: entries served stale are recomputed by one thread per process,
one at a time, from a bounded queue."""

from __future__ import annotations

import threading

from perfdb.cache import refresh


def test_a_burst_of_refreshes_runs_one_at_a_time_on_one_thread():
    gate = threading.Event()
    seen: list[int] = []
    running = {"now": 0, "most": 0}
    lock = threading.Lock()

    def job() -> None:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        gate.wait(10)
        seen.append(threading.get_ident())
        with lock:
            running["now"] -= 1

    threads_before = threading.active_count()
    assert all(refresh.submit(job) for _ in range(5))
    assert threading.active_count() <= threads_before + 1
    gate.set()
    refresh.wait_idle()
    assert len(seen) == 5 and len(set(seen)) == 1 and running["most"] == 1
    assert threading.get_ident() not in seen, "after the response, not in the caller"


def test_a_full_queue_refuses_the_refresh():
    gate = threading.Event()
    done: list[int] = []
    assert refresh.submit(lambda: gate.wait(10))  # taken by the thread, then waits
    accepted = [refresh.submit(lambda: done.append(1)) for _ in range(refresh.QUEUE_LIMIT + 2)]
    gate.set()
    refresh.wait_idle()
    assert accepted.count(False) >= 1 and len(done) == accepted.count(True)
