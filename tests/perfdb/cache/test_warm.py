"""perfdb/cache/warm.py on the real Redis and broker: a burst of uploads queues one warm task,
which takes every scope added before it started; an upload after that queues the next."""

from __future__ import annotations

import redis

from dashboards import tasks
from perfdb import cache as page_cache
from perfdb.cache import warm
from tests.conftest import free_port
from tests.perfdb.cache.redis_backend import redis_cache  # noqa: F401 (fixture)


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
        assert warm.queued_scopes(None) == ["1-1-SMP", "2-1-UP", "3-1-UP"]
        page_cache.runs_added(["4-1-UP"], [4])  # after the task started: a task of its own
        assert broker.llen(queue) == 2
        assert warm.queued_scopes(["9-9-UP"]) == ["4-1-UP", "9-9-UP"]
    finally:
        broker.delete(queue)


def test_the_warm_task_takes_the_waiting_scopes(redis_cache, db):  # noqa: F811
    """The task run as a worker runs it: the set is emptied and the flag cleared, so the next
    upload queues a task of its own (nothing is stored under these scopes: no warm work)."""
    redis_cache.add_to_set(warm.SCOPES_KEY, ["5-1-UP"], warm.QUEUED_KEY, 60)
    tasks.warm_pages(None)
    assert redis_cache.take_set(warm.SCOPES_KEY, "-") == []
    assert redis_cache.add_to_set(warm.SCOPES_KEY, [], warm.QUEUED_KEY, 60)
