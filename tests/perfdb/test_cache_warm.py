"""perfdb/cache_warm.py on the real Redis and broker: a burst of uploads queues one pages warm
task, which takes every scope added before it started (an upload after that queues the next);
each upload's series are warmed by a task of their own on the ingest queue, and the upload
is pending until that task has run (at most PENDING_SECONDS)."""

from __future__ import annotations

import redis

from dashboards import tasks
from perfdb import cache as page_cache
from perfdb import cache_warm
from tests.conftest import free_port
from tests.perfdb.test_cache_backend import redis_cache  # noqa: F401 (fixture)


def test_add_to_set_sets_the_flag_once_and_take_set_clears_both(redis_cache):  # noqa: F811
    assert redis_cache.add_to_set("s", ["a", "b"], "flag", 60) is True
    assert redis_cache.add_to_set("s", ["b", "c"], "flag", 60) is False  # already flagged
    assert redis_cache.take_set("s", "flag") == ["a", "b", "c"]
    assert redis_cache.take_set("s", "flag") == []
    assert redis_cache.add_to_set("s", ["d"], "flag", 60) is True  # flag cleared by the take
    client = redis_cache._cache.get_client(write=True)
    assert 0 < client.ttl(redis_cache.make_key("flag")) <= 60


def test_a_burst_of_uploads_queues_one_warm_that_takes_every_scope(
    redis_cache,  # noqa: F811
    settings,
):
    settings.PAGE_CACHE_WARM = True
    queue = settings.CELERY_PAGES_QUEUE = f"warm-test-{free_port()}"  # nobody consumes it
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    try:
        page_cache.runs_added(["1-1-SMP"], [1])
        page_cache.runs_added(["2-1-UP", "1-1-SMP"], [2])
        page_cache.runs_added(["3-1-UP"], [3])
        assert broker.llen(queue) == 1
        assert cache_warm.queued_scopes(None) == ["1-1-SMP", "2-1-UP", "3-1-UP"]
        page_cache.runs_added(["4-1-UP"], [4])  # after the task started: a task of its own
        assert broker.llen(queue) == 2
        assert cache_warm.queued_scopes(["9-9-UP"]) == ["4-1-UP", "9-9-UP"]
    finally:
        broker.delete(queue)


def test_the_warm_task_takes_the_waiting_scopes(redis_cache, db):  # noqa: F811
    """The task run as a worker runs it: the set is emptied and the flag cleared, so the next
    upload queues a task of its own (nothing is stored under these scopes: no warm work)."""
    redis_cache.add_to_set(cache_warm.SCOPES_KEY, ["5-1-UP"], cache_warm.QUEUED_KEY, 60)
    tasks.warm_pages(None)
    assert redis_cache.take_set(cache_warm.SCOPES_KEY, "-") == []
    assert redis_cache.add_to_set(cache_warm.SCOPES_KEY, [], cache_warm.QUEUED_KEY, 60)


def test_an_upload_is_pending_from_before_its_commit_until_its_series_are_warmed(
    redis_cache,  # noqa: F811
    settings,
    django_capture_on_commit_callbacks,
    db,
):
    """Held inside the writer's transaction, released by the commit's warm of its series (run
    in the committing process: one call per connected receiver, its setups given), bounded
    if the process dies in between; a receiver that raises does not keep it held."""
    settings.PAGE_CACHE_WARM = True
    queue = settings.CELERY_PAGES_QUEUE = f"warm-test-{free_port()}"  # nobody consumes it
    broker = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    warmed: list[list[int]] = []

    def broken(sender: object, setups: list[int], **kwargs: object) -> None:
        warmed.append(setups)
        raise RuntimeError("a warm that fails")

    cache_warm.series_stale.connect(broken, weak=False, dispatch_uid="test-broken")
    try:
        with django_capture_on_commit_callbacks() as commits:
            page_cache.runs_added_on_commit(["6-1-UP"], [6], [41])
            page_cache.runs_added_on_commit(["7-1-UP"], [7, 8], [42])
        assert cache_warm.pages_pending(41) and cache_warm.pages_pending(42)
        assert not cache_warm.pages_pending(43)  # no runs added: never held back
        client = redis_cache._cache.get_client(write=True)
        mark = redis_cache.make_key(cache_warm.PENDING_PREFIX + "41")
        assert 0 < client.ttl(mark) <= cache_warm.PENDING_SECONDS  # bounded if no warm runs
        commits[0]()  # the first commit
        assert warmed == [[6]]
        assert not cache_warm.pages_pending(41) and cache_warm.pages_pending(42)
        commits[1]()
        assert warmed == [[6], [7, 8]] and not cache_warm.pages_pending(42)
        assert broker.llen(queue) == 1  # the scopes: one pages task for the burst
    finally:
        cache_warm.series_stale.disconnect(dispatch_uid="test-broken")
        broker.delete(queue)
