"""Values computed once per version and stored with the versions they were computed under.

An entry is stored under one key with its *stamp* (the versions it was computed under) and
when: one ``get_many`` reads versions and entries. A reader takes the versions *before* it
queries, so a value computed from data older than a commit can only be stored with the
versions that commit left behind. An entry whose stamp is old but whose structure version
is current holds the previous value, served while another process computes the entry
(under a short lock: a burst after an upload costs one computation) and, with
``stale=True`` and ``PAGE_CACHE_STALE_SECONDS`` > 0 (gunicorn: 30; 0 elsewhere), while
younger than that, recomputed by a background thread (``refresh``) at most once every
third of that time (an older one by the request): a scope chart is at most that far behind
the uploads. Runs removed or edited are never served stale. An entry of one setup (a
series, ``cached_in_setup``) is never served older than its versions: each reader that finds
it so brings it up to date (``update``) or computes it.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import lru_cache, partial
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache

from perfdb.cache import reads, refresh, writes
from perfdb.cache.keys import cache_key
from perfdb.cache.versions import (
    SCOPE_VERSION_PREFIX,
    SETUP_VERSION_PREFIX,
    STRUCTURE_KEY,
    VERSION_KEY,
    alerts_version_key,
    current_versions,
)
from perfdb.operations.gc_pause import collector_paused

ENTRY_PREFIX = "perfdb:e:"
# Entries of old versions are dead weight once nobody reads them; let Redis drop them.
TIMEOUT_SECONDS = 6 * 60 * 60
# Longest a computation may keep others on the previous value before they compute too.
LOCK_SECONDS = 60
# Entry names kept made in a process (``entry_name``): a few hundred bytes each at most.
NAMES_KEPT = 8192


T = TypeVar("T")
# An entry as stored: (stamp: the versions it was computed under, when, the value pickled on
# its own: a stamp not current costs no unpickling of a value not served, ~40 ms per MB).
Stored = tuple[tuple[int, ...], float, bytes]
Stamps = Mapping[str, tuple[int, ...]]  # entry name -> the versions it is computed under
Compute = Callable[[list[str]], Mapping[str, T]]  # entry names -> their values
# (entry name, its previous value) -> its value now: brought up to date, not computed again.
Update = Callable[[str, T], T]


def stale_seconds() -> float:
    """How old a previous value may be and still be served while it is recomputed."""
    given = getattr(settings, "PAGE_CACHE_STALE_SECONDS", None)
    return float(os.environ.get("PAGE_CACHE_STALE_SECONDS", 0) if given is None else given)


@lru_cache(maxsize=NAMES_KEPT)
def entry_name(key: str, scope: str) -> str:
    """An entry's name whatever the versions: its key within the scope whose versions it
    follows (a scope's key, ``CATALOG``, ``"*all*"``, a setup's or its alerts'), hashed (a
    key may be long). Kept once made: a scope chart names its ~100 setups' entries on every
    request, and the names repeat."""
    return hashlib.sha256(cache_key("entry", key=key, scope=scope).encode()).hexdigest()[:40]


def entry_key(name: str) -> str:
    return ENTRY_PREFIX + name


def lock_key(name: str, stamp: tuple[int, ...]) -> str:
    """Held while a process computes the entry for these versions."""
    return f"perfdb:computing:{name}:{'.'.join(map(str, stamp))}"


def cached_entries(
    wanted: Mapping[str, Sequence[str]],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int = TIMEOUT_SECONDS,
    stale: bool = False,
    found: Mapping[str, Any] | None = None,
    max_age: float = 0.0,
    update: Update[T] | None = None,
) -> dict[str, T]:
    """For each entry name, the value ``compute([...names])[name]`` computed under the
    current values of its version keys (``STRUCTURE_KEY`` first), in one round trip when
    all are current (none if ``found`` holds ``read_ahead(wanted)``, read with a caller's
    own keys); only the others are computed (in one call). ``max_age``: current until two
    thirds of that age whatever the versions; then as a previous value (``stale``).
    ``update``: entries brought up to date (``_brought_up_to_date``), never served older."""
    with collector_paused():  # a scope chart unpickles ~100,000 objects
        return _cached_entries(wanted, compute, timeout, stale, found, max_age, update)


def _cached_entries(
    wanted: Mapping[str, Sequence[str]],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int,
    stale: bool,
    found: Mapping[str, Any] | None,
    max_age: float,
    update: Update[T] | None = None,
) -> dict[str, T]:
    version_keys = list(dict.fromkeys(k for keys in wanted.values() for k in keys))
    found = reads.get_many(read_ahead(wanted)) if found is None else found
    found = writes.overlay(found, [entry_key(n) for n in wanted])
    current = current_versions(version_keys, found)
    if current is None:  # the cache is unreachable: nothing is reused
        reads.served_previous()  # (nor kept: no versions to keep it under)
        return dict(compute(list(wanted)))
    now = dict(zip(version_keys, current, strict=True))
    reads.found_versions(now)  # what a whole answer is kept under (page_cache.py)
    stamps = {n: tuple(now[k] for k in keys) for n, keys in wanted.items()}
    out: dict[str, T] = {}
    previous: dict[str, Stored] = {}
    for name, stamp in stamps.items():
        entry = found.get(entry_key(name))
        renew = max_age > 0 and entry is not None and entry_age(entry) >= max_age * 2 / 3
        if entry is not None and entry[0] == stamp and not renew:
            out[name] = _value(entry)
        elif entry is not None and entry[0][0] == stamp[0]:  # runs only added since
            previous[name] = entry
    missing = [n for n in wanted if n not in out]
    if missing and update is not None:
        out.update(_brought_up_to_date(missing, previous, stamps, compute, update, timeout))
    elif missing:  # a previous value may be served up to ``limit`` seconds old
        limit = max(max_age, stale_seconds() if stale else 0.0)
        out.update(_recompute(missing, previous, stamps, compute, timeout, limit))
    return out


def _recompute(
    missing: list[str],
    previous: Mapping[str, Stored],
    stamps: Stamps,
    compute: Compute[T],
    timeout: int,
    limit: float,
) -> dict[str, T]:
    """The entries not current: the previous value of those younger than ``limit`` seconds
    (recomputed in the background when a third of that old) or of those another process is
    computing, the others computed here under a lock each. Taking the locks is also how a
    computation elsewhere is seen (a lock not taken is held): one round trip for both."""
    if reads.depth():  # inside a computation: computed again here, never a stale copy
        return _compute_and_store(missing, stamps, compute, timeout, [])
    young = [n for n in missing if n in previous and entry_age(previous[n]) < limit]
    due = [n for n in young if entry_age(previous[n]) >= limit / 3]
    rest = [n for n in missing if n not in young]
    locks = set(_lock(due + rest, stamps))
    busy = [n for n in rest if n in previous and lock_key(n, stamps[n]) not in locks]
    out: dict[str, T] = {n: _value(previous[n]) for n in young + busy}
    if out:  # older than the versions: an answer made of them is not kept whole
        reads.served_previous()
    again = [n for n in due if lock_key(n, stamps[n]) in locks]
    if again:
        mine = [lock_key(n, stamps[n]) for n in again]
        job = partial(_compute_and_store, again, stamps, compute, timeout, mine)
        if not refresh.submit(job):  # too many queued: a reader past the limit computes
            cache.delete_many(mine)
    todo = [n for n in rest if n not in busy]
    if todo:
        mine = [lock_key(n, stamps[n]) for n in todo if lock_key(n, stamps[n]) in locks]
        out.update(_compute_and_store(todo, stamps, compute, timeout, mine))
    return out


def _brought_up_to_date(
    missing: list[str],
    previous: Mapping[str, Stored],
    stamps: Stamps,
    compute: Compute[T],
    update: Update[T],
    timeout: int,
) -> dict[str, T]:
    """The entries not current, each ``update(name, previous value)`` when it has one of the
    current structure version (only runs were added since), else computed; here, by every
    reader that finds it so: never the previous value served meanwhile, no lock, no wait on
    another process (an update costs the runs added; a reader right after an upload, most
    likely its uploader, must see that upload)."""

    def compute_or_update(todo: list[str]) -> dict[str, T]:
        whole = [n for n in todo if n not in previous]
        out = dict(compute(whole)) if whole else {}
        out.update((n, update(n, _value(previous[n]))) for n in todo if n in previous)
        return out

    return _compute_and_store(missing, stamps, compute_or_update, timeout, [])


def _value(entry: Stored) -> Any:
    return pickle.loads(entry[2])


def entry_age(entry: Stored) -> float:
    return time.time() - entry[1]  # seconds since its versions were read


def _lock(names: list[str], stamps: Stamps) -> list[str]:
    """The lock of each entry that nobody else holds now (taken here, in one round trip)."""
    return writes.add_many([lock_key(n, stamps[n]) for n in names], 1, LOCK_SECONDS)


def _compute_and_store(
    todo: list[str], stamps: Stamps, compute: Compute[T], timeout: int, locks: list[str]
) -> dict[str, T]:
    """``compute(todo)``, stored with each entry's stamp; the locks taken are released
    (one another process took meanwhile is its own: both compute, rare). Inside another
    computation the entries are stored with the outermost one (perfdb/writes.py)."""
    started = time.time()
    nested = reads.depth() > 0
    reads.computing.depth = reads.depth() + 1
    try:
        computed = compute(todo)
        kept = {n: pickle.dumps(computed[n], -1) for n in todo if n in computed}  # -1: newest
        writes.defer({entry_key(n): (stamps[n], started, v) for n, v in kept.items()}, timeout)
    finally:
        reads.computing.depth -= 1
        if not nested:  # stored even if compute raised: what was computed is current
            writes.store(writes.take(), locks)
    return {n: computed[n] for n in todo if n in computed}


@contextmanager
def stored_together() -> Iterator[None]:
    """The entries computed meanwhile stored in one round trip at the end, as those a
    computation nests are (writes.py): a page that brings several entries of one setup up
    to date after an upload (its context, its series, its scope's setups) stores them
    together, not one round trip each. As nested ones, none takes a lock or is served
    older than its versions: each reader that finds one not current computes it. Only
    cached reads belong inside: a query made here outside a computation would count as
    one's, which a whole answer kept under its reads' versions must not take for current
    (reads.py ``recorded``)."""
    outer = reads.depth()
    reads.computing.depth = outer + 1
    try:
        yield
    finally:
        reads.computing.depth = outer
        if not outer:
            writes.store(writes.take(), [])


def cached(key: str, fn: Callable[[], T], timeout: int = TIMEOUT_SECONDS, stale: bool = False) -> T:
    """``fn()``, computed once per data version. ``key`` must name everything ``fn`` reads
    besides the stored runs (e.g. the scope it is for)."""
    name = entry_name(key, "*all*")
    wanted = {name: (STRUCTURE_KEY, VERSION_KEY)}
    return cached_entries(wanted, lambda _: {name: fn()}, timeout, stale)[name]


def cached_per_scope(
    key: str,
    scopes: Sequence[str],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int = TIMEOUT_SECONDS,
    stale: bool = False,
    update: Callable[[str, T], T] | None = None,
) -> dict[str, T]:
    """For each scope, ``compute([...scopes])[scope]``, cached per scope version: only those
    moved since are computed again, in one call. ``key`` names all else it reads.
    ``update(scope, earlier)``: what brings a value computed before runs were added to the
    scope up to date, used instead of ``compute`` when the entry holds such a value (never
    served older, as ``cached_in_setup``)."""
    names = {entry_name(key, s): s for s in dict.fromkeys(scopes)}
    wanted = {n: v for s in names.values() for n, v in scope_entry(key, s).items()}

    def compute_named(todo: list[str]) -> dict[str, T]:
        computed = compute([names[n] for n in todo])
        return {n: computed[names[n]] for n in todo if names[n] in computed}

    brought = None if update is None else (lambda n, earlier: update(names[n], earlier))
    got = cached_entries(wanted, compute_named, timeout, stale, update=brought)
    return {names[n]: v for n, v in got.items()}


def cached_in_scope(
    key: str,
    scope: str,
    fn: Callable[[], T],
    timeout: int = TIMEOUT_SECONDS,
    stale: bool = False,
) -> T:
    """``fn()``, computed once per version of ``scope``: for a value that reads only that
    scope's runs (its charts). ``key`` must name everything else ``fn`` reads."""
    return cached_per_scope(key, [scope], lambda _: {scope: fn()}, timeout, stale)[scope]


def read_ahead(wanted: Mapping[str, Sequence[str]]) -> list[str]:
    """The keys ``cached_entries(wanted, ...)`` reads."""
    keys = dict.fromkeys(k for version_keys in wanted.values() for k in version_keys)
    return list(keys) + [entry_key(n) for n in wanted]


def scope_entry(key: str, scope: str) -> dict[str, tuple[str, str]]:
    """``cached_per_scope``'s entry of one scope: its name and version keys."""
    return {entry_name(key, scope): (STRUCTURE_KEY, SCOPE_VERSION_PREFIX + scope)}


def setup_entry(key: str, setup_id: int) -> dict[str, tuple[str, str]]:
    """``cached_in_setup``'s entry: its name and version keys."""
    versions = (STRUCTURE_KEY, SETUP_VERSION_PREFIX + str(setup_id))
    return {entry_name(key, cache_key("setup", id=setup_id)): versions}


def cached_in_setup(
    key: str,
    setup_id: int,
    fn: Callable[[], T],
    found: Mapping[str, Any] | None = None,
    update: Callable[[T], T] | None = None,
) -> T:
    """``fn()``, computed once per version of the setup: for a value that reads only that
    setup's runs (a series). ``key`` must name everything else ``fn`` reads. An entry of a
    setup that does not exist is never stored if ``fn`` raises (a 404).

    Never served older than the setup's version (``_brought_up_to_date``): the first reader
    after an upload to a setup is most likely its uploader. ``update``: what brings the
    value computed before runs were added to the setup up to date (a series reads only the
    runs added), used instead of ``fn`` when the entry holds such a value."""
    wanted = setup_entry(key, setup_id)
    (name,) = wanted

    def brought(_: str, earlier: T) -> T:
        return fn() if update is None else update(earlier)

    return cached_entries(wanted, lambda _: {name: fn()}, found=found, update=brought)[name]


def updated_in_setup(key: str, setup_id: int, update: Callable[[T], T]) -> bool:
    """Bring ``cached_in_setup(key, setup_id, ...)``'s entry up to date ahead of its reader,
    if it holds a value of an earlier version of the setup (only runs were added since):
    someone reads it, and ``update`` costs only the runs added. Nothing is computed when
    the entry is current already, missing or of another structure: a value nobody reads
    costs one cache read. Whether the entry is current now."""
    return _updated(setup_entry(key, setup_id), update)


def _updated(wanted: Mapping[str, Sequence[str]], update: Callable[[T], T]) -> bool:
    found = cached_entries(wanted, lambda _: {}, update=lambda _, was: update(was))
    return bool(found)


def alerts_entry(key: str, setup_id: int, metric_id: int) -> dict[str, tuple[str, str]]:
    """``cached_in_alerts``' entry: its name and version keys."""
    versions = (STRUCTURE_KEY, alerts_version_key(setup_id, metric_id))
    return {entry_name(key, cache_key("alerts", id=setup_id, metric=metric_id)): versions}


def cached_in_alerts(
    key: str,
    setup_id: int,
    metric_id: int,
    fn: Callable[[], T],
    found: Mapping[str, Any] | None = None,
) -> T:
    """``fn()``, computed once per version of the series' alerts (the setup's metric): for
    a value made of its alerts and of their runs' points (a series' alert marks). Runs
    added to the setup leave it current: a run's point changes only when the run is
    edited (the structure version), and an alert on a new run moves the alerts version
    when it is written. ``key`` must name everything else ``fn`` reads. Never served
    older than that version: a triage or an alert the detector wrote is shown by the next
    request."""
    wanted = alerts_entry(key, setup_id, metric_id)
    (name,) = wanted
    compute = lambda _: {name: fn()}  # noqa: E731
    return cached_entries(wanted, compute, found=found, update=lambda _, __: fn())[name]


def updated_in_alerts(key: str, setup_id: int, metric_id: int, fn: Callable[[], T]) -> bool:
    """``cached_in_alerts(key, setup_id, metric_id, fn)``'s entry computed again ahead of
    its reader, if it holds a value of an earlier version of the series' alerts: someone
    reads it. Nothing is computed when it is current, missing or of another structure.
    Whether the entry is current now."""
    return _updated(alerts_entry(key, setup_id, metric_id), lambda _: fn())


def cached_before(key: str, scope: str) -> bool:
    """Whether ``cached_in_scope(key, scope, ...)`` was computed under an earlier (or the
    current) version with the current structure: someone looks at it, so it is worth
    recomputing ahead of them."""
    stored_at = entry_key(entry_name(key, scope))
    found = cache.get_many([STRUCTURE_KEY, stored_at])
    versions = current_versions([STRUCTURE_KEY], found)
    entry = found.get(stored_at)
    return versions is not None and entry is not None and entry[0][0] == versions[0]
