"""Cached entries recomputed after the response (entries.py, served stale meanwhile),
by one thread per process, one at a time.

One thread, not one per refresh: a burst of due entries after an upload would otherwise
start several CPU-bound threads in a web process at once, each taking its share of the GIL
from the requests; queued, they cost the requests at most one thread's share, and the
thread keeps its database connection through a burst (not one connection per refresh).
The queue is bounded: a refresh that finds it full is not queued, and the entry is computed
by the first reader after its stale limit, as without a thread.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
from collections.abc import Callable

from django.db import close_old_connections, connections

log = logging.getLogger(__name__)

QUEUE_LIMIT = 64

_jobs: queue.Queue[Callable[[], object]] = queue.Queue(QUEUE_LIMIT)
_thread: threading.Thread | None = None
_pid = 0
_starting = threading.Lock()


def submit(job: Callable[[], object]) -> bool:
    """Queue ``job`` for this process's refresh thread (started on first use, and again in
    a forked child); False when the queue is full."""
    global _jobs, _thread, _pid
    with _starting:
        if _pid != os.getpid() or _thread is None or not _thread.is_alive():
            if _pid != os.getpid():  # a fork: the parent's queue and thread are not ours
                _jobs = queue.Queue(QUEUE_LIMIT)
            _pid = os.getpid()
            _thread = threading.Thread(
                target=_run, args=(_jobs,), name="cache-refresh", daemon=True
            )
            _thread.start()
    try:
        _jobs.put_nowait(job)
    except queue.Full:
        return False
    return True


def _run(jobs: queue.Queue[Callable[[], object]]) -> None:
    while True:
        job = jobs.get()
        try:
            job()
        except Exception:  # the next reader past the stale limit computes instead
            log.exception("recomputing cached entries failed")
        finally:
            if jobs.empty():  # the burst is over: an idle thread holds no connection
                connections.close_all()
            else:
                close_old_connections()
            jobs.task_done()


def wait_idle() -> None:
    """Until every refresh queued in this process has run (tests, a clean shutdown)."""
    _jobs.join()
