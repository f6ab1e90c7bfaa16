"""A cached value and the entry it is kept in (perfdb/cache/entries.py): stored as plain data
(never an ORM object) with the versions it was computed under, computed again only when one
of them moved (and then without unpickling the old value), the previous value served while
another process computes or, where asked, while it is recomputed in the background (never
after runs were removed, never inside another computation), a whole page kept by its age,
a series' alerts' values kept apart from its runs', and entries named so that no two meet."""

from __future__ import annotations

import io
import pickle
import time

import pytest
from django.core.cache import cache

from perfdb import cache as page_cache
from perfdb.cache import entries, refresh
from perfdb.cache.entries import entry_key, entry_name
from perfdb.cache.versions import current_versions
from tests.dashboards.data import load
from tests.perfdb.cache.counting import counter

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(tmp_path):
    return load(tmp_path)


class _Classes(pickle.Unpickler):
    """Unpickles while recording every class a value names."""

    def __init__(self, data: bytes):
        super().__init__(io.BytesIO(data))
        self.seen: set[str] = set()

    def find_class(self, module, name):
        self.seen.add(f"{module}.{name}")
        return super().find_class(module, name)


def test_no_orm_object_is_cached(client, data):
    for url in ("/", "/kernels/", "/scaling/", "/kernel-time/", "/wakeups/", "/profile-diff/"):
        assert client.get(url).status_code == 200, url
    stored = cache._cache  # LocMemCache (config/test_settings.py): key -> pickled value
    assert stored, "the pages cached nothing"
    seen: set[str] = set()
    todo = list(stored.values())
    while todo:
        reader = _Classes(todo.pop())
        value = reader.load()
        seen |= reader.seen
        if isinstance(value, tuple) and len(value) == 3 and isinstance(value[2], bytes):
            todo.append(value[2])  # an entry: its value is pickled on its own
    orm = sorted(c for c in seen if ".models" in c or c.startswith("django.db"))
    assert not orm, orm


class Unpickled:
    """A value that counts how often it is unpickled."""

    loads = 0

    def __init__(self, n: int) -> None:
        self.n = n

    def __setstate__(self, state: dict) -> None:
        Unpickled.loads += 1
        self.__dict__.update(state)


def test_an_entry_not_current_is_recomputed_without_unpickling_its_old_value():
    """The check of an entry's stamp reads the entry; its value, pickled on its own, is
    unpickled only when it is served (a scope chart's is ~1 MB)."""
    computed: list[int] = []

    def compute() -> Unpickled:
        computed.append(1)
        return Unpickled(len(computed))

    assert page_cache.cached_in_scope("t:lazy", "1-1-SMP", compute).n == 1
    Unpickled.loads = 0
    assert page_cache.cached_in_scope("t:lazy", "1-1-SMP", compute).n == 1  # served: unpickled
    assert Unpickled.loads == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:lazy", "1-1-SMP", compute).n == 2  # computed again
    assert Unpickled.loads == 1


@pytest.mark.parametrize("bounded", [True, False])
def test_a_computation_kept_by_age_reads_stale_entries_as_any_reader(settings, bounded):
    """A whole page kept a few seconds (``max_age``) may be made of entries served stale,
    as any reader gets them; a computation kept under versions never is (it would be
    stored as current)."""
    settings.PAGE_CACHE_STALE_SECONDS = 30
    computed: list[int] = []

    def chart() -> int:
        computed.append(1)
        return len(computed)

    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", chart, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])  # the chart's value is now the previous one

    def page(_: list[str]) -> dict[str, int]:
        if not bounded:
            return {"page": page_cache.cached_in_scope("t:chart", "1-1-SMP", chart, stale=True)}
        with page_cache.bounded_by_age():
            return {"page": page_cache.cached_in_scope("t:chart", "1-1-SMP", chart, stale=True)}

    got = page_cache.cached_entries({"page": (page_cache.STRUCTURE_KEY,)}, page, max_age=10)
    assert got["page"] == (1 if bounded else 2)
    assert computed == ([1] if bounded else [1, 1])


def test_an_entry_kept_by_age_is_served_then_recomputed_after_the_response():
    """Younger than two thirds of ``max_age``: served. Older: served while a thread
    recomputes it. Older than ``max_age``: computed by the reader."""
    computed: list[int] = []

    def page(_: list[str]) -> dict[str, int]:
        computed.append(1)
        return {"page": len(computed)}

    wanted = {"page": (page_cache.STRUCTURE_KEY,)}

    def read() -> int:
        return page_cache.cached_entries(wanted, page, max_age=30)["page"]

    def age_by(seconds: float) -> None:
        key = entry_key("page")
        stamp, when, value = cache.get(key)
        cache.set(key, (stamp, when - seconds, value))

    assert read() == 1
    assert read() == 1 and computed == [1]
    age_by(21)
    assert read() == 1, "two thirds old: the kept copy, at once"
    deadline = time.monotonic() + 10
    while read() != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert read() == 2 and computed == [1, 1], "recomputed once, after the response"
    age_by(31)
    assert read() == 3, "older than its age: computed by the reader"


def test_an_entry_kept_by_age_may_be_served_as_stale_as_any_previous_value(settings):
    """A page kept 10 s (the scope charts', a third of the setting) is served up to
    ``PAGE_CACHE_STALE_SECONDS`` old while a thread recomputes it, like any stale value."""
    settings.PAGE_CACHE_STALE_SECONDS = 30
    computed: list[int] = []

    def page(_: list[str]) -> dict[str, int]:
        computed.append(1)
        return {"page": len(computed)}

    wanted = {"page": (page_cache.STRUCTURE_KEY,)}
    key = entry_key("page")

    def read() -> int:
        return page_cache.cached_entries(wanted, page, stale=True, max_age=10)["page"]

    assert read() == 1
    stamp, when, value = cache.get(key)
    cache.set(key, (stamp, when - 25, value))
    assert read() == 1, "older than its 10 s, younger than 30 s: served"
    deadline = time.monotonic() + 10
    while read() != 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert computed == [1, 1]
    stamp, when, value = cache.get(key)
    cache.set(key, (stamp, when - 31, value))
    assert read() == 3, "older than the setting: computed by the reader"


def test_a_value_of_a_series_alerts_follows_them_not_the_runs_added(data):
    """``cached_in_alerts``: computed again when the series' alerts are written, never
    served older; runs added to the setup (an upload) leave it current, and so do the
    alerts of the setup's other metrics."""
    setup_id, metric_id = data.run("2.5.25").setup_id, 1
    computed: list[int] = []

    def compute() -> int:
        computed.append(1)
        return len(computed)

    def read() -> int:
        return page_cache.cached_in_alerts("marks", setup_id, metric_id, compute)

    read()
    read()
    assert computed == [1]
    page_cache.runs_added(["any-scope"], [setup_id])
    read()
    assert computed == [1], "runs added do not change the marks of existing runs"
    page_cache.alerts_changed([(setup_id, metric_id)])
    read()
    assert computed == [1, 1]
    page_cache.alerts_changed([(setup_id + 1, metric_id), (setup_id, metric_id + 1)])
    read()
    assert computed == [1, 1], "another setup's alerts, another metric's"
    page_cache.data_changed()
    read()
    assert computed == [1, 1, 1], "runs edited or removed"


def test_entries_computed_together_are_stored_when_it_ends():
    """``stored_together``: what is computed meanwhile is stored at its end, in one write,
    and then read as any entry."""
    stored = [
        entry_key(name)
        for key, setup in (("a", 1), ("b", 2))
        for name in page_cache.setup_entry(key, setup)
    ]
    with page_cache.stored_together():
        assert page_cache.cached_in_setup("a", 1, lambda: "A") == "A"
        assert page_cache.cached_in_setup("b", 2, lambda: "B") == "B"
        assert cache.get_many(stored) == {}, "not stored before the end"
    assert set(cache.get_many(stored)) == set(stored)
    assert page_cache.cached_in_setup("a", 1, lambda: pytest.fail("computed again")) == "A"


def test_an_entry_kept_from_before_is_brought_up_to_date_ahead_of_its_reader():
    """``updated_in_setup``: an entry of an earlier version of the setup is updated from its
    value, and then read as current; a missing entry, or one of another structure, is not
    computed; a current one is left as it is."""
    assert not page_cache.updated_in_setup("a", 1, lambda was: pytest.fail("nothing kept"))
    assert page_cache.cached_in_setup("a", 1, lambda: ["run 1"]) == ["run 1"]
    assert page_cache.updated_in_setup("a", 1, lambda was: pytest.fail("current already"))
    page_cache.runs_added(["1-1-SMP"], [1])
    assert page_cache.updated_in_setup("a", 1, lambda was: [*was, "run 2"])
    assert page_cache.cached_in_setup("a", 1, lambda: pytest.fail("updated")) == ["run 1", "run 2"]
    page_cache.data_changed()
    assert not page_cache.updated_in_setup("a", 1, lambda was: pytest.fail("other structure"))


def test_an_entry_is_named_by_its_key_and_scope_and_by_nothing_they_share():
    """A key ending as a scope begins cannot make another entry's name (they were hashed
    joined by a separator either may carry); a setup's entry and its alerts' are apart."""
    assert entry_name("a|b", "c") != entry_name("a", "b|c")
    assert entry_name("a:scope=b", "c") != entry_name("a", "b:scope=c")
    assert page_cache.setup_entry("a", 9).keys() != page_cache.alerts_entry("a", 9, 1).keys()
    assert page_cache.setup_entry("a", 9).keys() != page_cache.setup_entry("a", 90).keys()


def test_cached_computes_once_per_data_version():
    compute = counter()
    assert page_cache.cached("t:count", compute) == 1
    assert page_cache.cached("t:count", compute) == 1
    page_cache.data_changed()
    assert page_cache.cached("t:count", compute) == 2


def test_cached_per_scope_computes_only_the_missing_scopes():
    asked: list[list[str]] = []

    def compute(scopes):
        asked.append(list(scopes))
        return {s: f"value of {s}" for s in scopes}

    scopes = ["1-1-SMP", "2-1-SMP", "3-1-UP"]
    assert page_cache.cached_per_scope("t:per", scopes, compute)["3-1-UP"] == "value of 3-1-UP"
    page_cache.runs_added(["2-1-SMP"])
    page_cache.cached_per_scope("t:per", scopes, compute)
    assert asked == [scopes, ["2-1-SMP"]]


# --- while another process computes: the previous value is served --------------------------


def another_process_computes(key: str, scope: str) -> None:
    """Hold the lock ``cached_per_scope`` takes while it computes ``key`` of ``scope`` now."""
    stamp = current_versions([page_cache.STRUCTURE_KEY, "perfdb:scope-version:" + scope])
    assert stamp is not None
    lock = entries.lock_key(entries.entry_name(key, scope), tuple(stamp))
    assert cache.add(lock, 1, 60)


def test_while_another_process_computes_the_previous_value_is_served():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    another_process_computes("t:chart", "1-1-SMP")
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1, "computed again"
    page_cache.runs_added(["1-1-SMP"])  # nobody computing this version: computed here
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2


def test_runs_removed_are_never_served_stale():
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 1
    page_cache.data_changed()
    another_process_computes("t:chart", "1-1-SMP")
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2


def test_cached_serves_the_previous_value_while_another_process_computes():
    compute = counter()
    assert page_cache.cached("t:all", compute) == 1
    page_cache.runs_added(["1-1-SMP"])
    stamp = current_versions([page_cache.STRUCTURE_KEY, page_cache.VERSION_KEY])
    assert cache.add(entries.lock_key(entries.entry_name("t:all", "*all*"), tuple(stamp)), 1)
    assert page_cache.cached("t:all", compute) == 1
    page_cache.data_changed()
    assert page_cache.cached("t:all", compute) == 2


# --- served stale while recomputed in the background (PAGE_CACHE_STALE_SECONDS) ---------------


def test_a_young_previous_value_is_served_and_recomputed_in_the_background(stale_for_30s):
    started, _ = stale_for_30s
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    assert len(started) == 1
    refresh.wait_idle()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 2
    assert len(started) == 1, "the value stored by the background is current"


def test_a_very_young_one_is_served_without_recomputing_and_an_old_one_is_computed(
    stale_for_30s,
):
    started, age = stale_for_30s
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])
    age["seconds"] = 2.0  # under a third of 30 s: recomputed a little later, not now
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    assert not started
    age["seconds"] = 31.0  # too old to serve: the request computes it
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 2
    assert not started


def test_stale_serving_is_only_where_asked_and_never_after_runs_removed(stale_for_30s):
    started, _ = stale_for_30s
    compute = counter()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute) == 2  # not asked
    page_cache.data_changed()
    assert page_cache.cached_in_scope("t:chart", "1-1-SMP", compute, stale=True) == 3
    assert not started


def test_a_computation_never_reads_a_stale_copy(stale_for_30s):
    """A value computed from a stale copy would be stored as current: inside a computation
    every read is current."""
    started, _ = stale_for_30s
    inner = counter()
    assert page_cache.cached_in_scope("t:inner", "1-1-SMP", inner, stale=True) == 1
    page_cache.runs_added(["1-1-SMP"])

    def outer() -> int:
        return 10 * page_cache.cached_in_scope("t:inner", "1-1-SMP", inner, stale=True)

    assert page_cache.cached_in_scope("t:outer", "1-1-SMP", outer, stale=True) == 20
    assert not started
