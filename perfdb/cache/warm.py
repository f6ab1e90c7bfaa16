"""The pages' warm-up after uploads (dashboards/page_cache/warm.py), queued once per burst
of uploads.

Each upload's commit used to queue a warm task of its own. Ten uploaders at once queue
about one a second, more than the pages worker (one process at nice 10) finishes on a busy
machine: bench/load.py found 550-675 warm tasks waiting on the pages queue, so no warm ran
before the next visitor and every first request after an upload computed what the warm was
for. Now an upload adds its scopes to a set in Redis and queues a task only when none is
queued (a flag set with the set, in one round trip). The task takes the set and clears the
flag atomically when it starts: at most one task waits, and it warms every scope added until
it started; an upload after that queues the next one. The flag expires after
``QUEUED_SECONDS``, so a task lost (a queue purged, a broker restarted) holds the warms
back no longer than that: a task queued as well as a late one finds the set taken and has
nothing to do.

On a cache without sets (the tests' LocMemCache) each upload queues its own task, as before.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.dispatch import Signal

log = logging.getLogger(__name__)

# The task that recomputes the pages' shared entries after runs are added (by name: the
# task lives in dashboards/tasks.py, above this layer).
WARM_PAGES = "dashboards.tasks.warm_pages"
SCOPES_KEY = "perfdb:warm:scopes"
QUEUED_KEY = "perfdb:warm:queued"
QUEUED_SECONDS = 10

# Sent in the writer's process right after its commit moved the versions (``runs_added``,
# with ``settings.PAGE_CACHE_WARM``), with ``scopes`` and ``series``: a receiver recomputes
# there what is cheap and read first after an upload (dashboards/page_cache/warm.py
# ``after_commit``).
runs_committed = Signal()
# Sent where alerts were written, right after their commit moved their setups' alerts
# versions (``alerts_changed``, with ``settings.PAGE_CACHE_WARM``), with ``series``.
alerts_committed = Signal()


def queue_warm(scopes: list[str]) -> None:
    """Have ``scopes`` warmed by the pages worker: added to the waiting set, and a task
    queued unless one is waiting already (then it takes these scopes too)."""
    if hasattr(cache, "add_to_set"):
        if not cache.add_to_set(SCOPES_KEY, scopes, QUEUED_KEY, QUEUED_SECONDS):
            return  # a queued task will take them (or Redis is down: no warm, as below)
        args: list[list[str] | None] = [None]
    else:
        args = [scopes]
    try:
        # on a queue of its own: it never holds the next upload back
        current_app.send_task(WARM_PAGES, args=args, queue=settings.CELERY_PAGES_QUEUE)
    except Exception as exc:  # the broker is down: the next browser computes instead
        log.warning("could not queue %s (%s)", WARM_PAGES, exc)


def warm_now(scopes: list[str], series: list[tuple[int, int]] | None = None) -> None:
    """``runs_committed``'s receivers, here and now; one that fails is logged, never raised:
    the upload is committed, and the pages' warm recomputes the same later. ``series``: the
    (setup id, metric id) pairs the runs added have points in."""
    _send(runs_committed, "an upload", scopes=scopes, series=series or [])


def alerts_warm_now(series: list[tuple[int, int]]) -> None:
    """``alerts_committed``'s receivers, here and now, for these (setup id, metric id)
    series; one that fails is logged, never raised: the alerts are committed."""
    _send(alerts_committed, "alerts written", series=series)


def _send(signal: Signal, after: str, **kwargs: object) -> None:
    for receiver, result in signal.send_robust(sender=None, **kwargs):
        if isinstance(result, Exception):
            log.warning("%s after %s failed: %r", receiver, after, result)


def queued_scopes(scopes: Iterable[str] | None) -> list[str]:
    """The scopes a warm task is to warm: those it was given (a task queued before the set,
    or without one), and those waiting in the set, which it now takes (clearing the flag:
    an upload after this queues a new task)."""
    taken = cache.take_set(SCOPES_KEY, QUEUED_KEY) if hasattr(cache, "take_set") else []
    return sorted({*(scopes or ()), *taken})
