"""Page data cached in Redis (Django's cache), keyed by data versions.

Everything cached is derived from the stored runs. Every write that adds or removes runs
moves a version after its commit; an entry computed under an older one is not served as
current again. A reader takes the versions *before* it queries, so a value computed from
data older than a commit can only be stored with the versions that commit left behind.
Versions, coarse to fine: the *data* version (``cached``: every write), the *structure*
version (only ``data_changed``: runs removed or edited, vocabulary edited), one per *scope*
(workload x hardware x UP/SMP: ``cached_in_scope``, ``cached_per_scope``) and one per
*setup* (``cached_in_setup``: a series). ``runs_added`` moves the data version and those of
the scopes and setups the runs went to; every other scope's and setup's entries stay current.

An entry is stored under one key with the versions it was computed under (its *stamp*) and
when: one ``get_many`` reads versions and entries. An entry whose stamp is old but whose
structure version is current holds the previous value, served while another process computes
the entry (under a short lock: a burst after an upload costs one computation) and, with
``stale=True`` and ``PAGE_CACHE_STALE_SECONDS`` > 0 (gunicorn: 30; 0 elsewhere), while
younger than that, recomputed by a background thread at most once every third of that time
(an older one by the request): a scope chart is at most that far behind the uploads. Runs
removed or edited are never served stale.

Every key carries the code version (settings.CACHE_VERSION, the KEY_PREFIX): a deploy never
reads values of an older shape. Values are plain data, never ORM objects.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from perfdb import cache_reads, cache_refresh, cache_warm, cache_writes
from perfdb.operations.gc_pause import collector_paused

VERSION_KEY = "perfdb:data-version"
STRUCTURE_KEY = "perfdb:structure-version"
SCOPE_VERSION_PREFIX = "perfdb:scope-version:"
SETUP_VERSION_PREFIX = "perfdb:setup-version:"
ENTRY_PREFIX = "perfdb:e:"
# Entries of old versions are dead weight once nobody reads them; let Redis drop them.
TIMEOUT_SECONDS = 6 * 60 * 60
# Longest a computation may keep others on the previous value before they compute too.
LOCK_SECONDS = 60

T = TypeVar("T")
# An entry as stored: (stamp: the versions it was computed under, when, the value pickled on
# its own: a stamp not current costs no unpickling of a value not served, ~40 ms per MB).
Stored = tuple[tuple[int, ...], float, bytes]
Stamps = Mapping[str, tuple[int, ...]]  # entry name -> the versions it is computed under
Compute = Callable[[list[str]], Mapping[str, T]]  # entry names -> their values


def _fresh_version() -> int:
    """A start no earlier version used (if Redis lost the key, 1 could meet an old 1)."""
    return time.time_ns()


def stale_seconds() -> float:
    """How old a previous value may be and still be served while it is recomputed."""
    given = getattr(settings, "PAGE_CACHE_STALE_SECONDS", None)
    return float(os.environ.get("PAGE_CACHE_STALE_SECONDS", 0) if given is None else given)


def data_version() -> int:
    versions = _versions([VERSION_KEY])
    return _fresh_version() if versions is None else versions[0]


def _bump(*keys: str) -> None:
    """Move each version key (a missing one starts fresh); on Redis in one round trip."""
    if hasattr(cache, "bump_many"):  # perfdb.cache_backend; not the tests' LocMemCache
        cache.bump_many(list(keys), _fresh_version)
        return
    for key in keys:
        try:
            cache.incr(key)
        except ValueError:  # the key is missing: any new value invalidates
            cache.set(key, _fresh_version(), timeout=None)


def data_changed() -> None:
    """Runs were removed or edited (or anything else changed): nothing cached so far may be
    served again, whichever scope it is for."""
    _bump(VERSION_KEY, STRUCTURE_KEY)


def data_changed_on_commit() -> None:
    """``data_changed`` at commit: a reader before it must not cache old data as new."""
    transaction.on_commit(data_changed)


def _versions(keys: list[str], found: Mapping[str, Any] | None = None) -> list[int] | None:
    """Each version key's value (started when missing; ``found``: what was read already);
    None when the cache is unreachable, so nothing is reused."""
    found = cache.get_many(keys) if found is None else found
    missing = [key for key in keys if found.get(key) is None]
    if missing:  # all started in one round trip, then read back (another may have won)
        cache_writes.add_many(missing, _fresh_version(), None)
        found = {**found, **cache.get_many(missing)}
    out = []
    for key in keys:
        version = found.get(key)
        if version is None:
            return None
        out.append(int(version))
    return out


def _name(key: str, scope: str) -> str:
    """An entry's name whatever the versions (hashed: a key may carry free text)."""
    return hashlib.sha256(f"{key}|{scope}".encode()).hexdigest()[:40]


def _entry_key(name: str) -> str:
    return ENTRY_PREFIX + name


def _lock_key(name: str, stamp: tuple[int, ...]) -> str:
    """Held while a process computes the entry for these versions."""
    return f"perfdb:computing:{name}:{'.'.join(map(str, stamp))}"


def cached_entries(
    wanted: Mapping[str, Sequence[str]],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int = TIMEOUT_SECONDS,
    stale: bool = False,
    found: Mapping[str, Any] | None = None,
    max_age: float = 0.0,
) -> dict[str, T]:
    """For each entry name, the value ``compute([...names])[name]`` computed under the
    current values of its version keys (``STRUCTURE_KEY`` first), in one round trip when
    all are current (none if ``found`` holds ``read_ahead(wanted)``, read with a caller's
    own keys); only the others are computed (in one call). ``max_age``: current until two
    thirds of that age whatever the versions; then as a previous value (``stale``)."""
    with collector_paused():  # a scope chart unpickles ~100,000 objects
        return _cached_entries(wanted, compute, timeout, stale, found, max_age)


def _cached_entries(
    wanted: Mapping[str, Sequence[str]],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int,
    stale: bool,
    found: Mapping[str, Any] | None,
    max_age: float,
) -> dict[str, T]:
    version_keys = list(dict.fromkeys(k for keys in wanted.values() for k in keys))
    found = cache_reads.get_many(read_ahead(wanted)) if found is None else found
    found = cache_writes.overlay(found, [_entry_key(n) for n in wanted])
    current = _versions(version_keys, found)
    if current is None:  # the cache is unreachable: nothing is reused
        cache_reads.served_previous()  # (nor kept: no versions to keep it under)
        return dict(compute(list(wanted)))
    now = dict(zip(version_keys, current, strict=True))
    cache_reads.found_versions(now)  # what a whole answer is kept under (page_cache.py)
    stamps = {n: tuple(now[k] for k in keys) for n, keys in wanted.items()}
    out: dict[str, T] = {}
    previous: dict[str, Stored] = {}
    for name, stamp in stamps.items():
        entry = found.get(_entry_key(name))
        renew = max_age > 0 and entry is not None and _age(entry) >= max_age * 2 / 3
        if entry is not None and entry[0] == stamp and not renew:
            out[name] = _value(entry)
        elif entry is not None and entry[0][0] == stamp[0]:  # runs only added since
            previous[name] = entry
    missing = [n for n in wanted if n not in out]
    if missing:  # a previous value may be served up to ``limit`` seconds old
        limit = max(max_age, stale_seconds() if stale else 0.0)
        out.update(_refresh(missing, previous, stamps, compute, timeout, limit))
    return out


def _refresh(
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
    if cache_reads.depth():  # inside a computation: computed again here, never a stale copy
        return _compute_and_store(missing, stamps, compute, timeout, [])
    young = [n for n in missing if n in previous and _age(previous[n]) < limit]
    due = [n for n in young if _age(previous[n]) >= limit / 3]
    rest = [n for n in missing if n not in young]
    locks = set(_lock(due + rest, stamps))
    busy = [n for n in rest if n in previous and _lock_key(n, stamps[n]) not in locks]
    out: dict[str, T] = {n: _value(previous[n]) for n in young + busy}
    if out:  # older than the versions: an answer made of them is not kept whole
        cache_reads.served_previous()
    refresh = [n for n in due if _lock_key(n, stamps[n]) in locks]
    if refresh:
        mine = [_lock_key(n, stamps[n]) for n in refresh]
        job = partial(_compute_and_store, refresh, stamps, compute, timeout, mine)
        if not cache_refresh.submit(job):  # too many queued: a reader past the limit computes
            cache.delete_many(mine)
    todo = [n for n in rest if n not in busy]
    if todo:
        mine = [_lock_key(n, stamps[n]) for n in todo if _lock_key(n, stamps[n]) in locks]
        out.update(_compute_and_store(todo, stamps, compute, timeout, mine))
    return out


def _value(entry: Stored) -> Any:
    return pickle.loads(entry[2])


def _age(entry: Stored) -> float:
    return time.time() - entry[1]  # seconds since its versions were read


def _lock(names: list[str], stamps: Stamps) -> list[str]:
    """The lock of each entry that nobody else holds now (taken here, in one round trip)."""
    return cache_writes.add_many([_lock_key(n, stamps[n]) for n in names], 1, LOCK_SECONDS)


def _compute_and_store(
    todo: list[str], stamps: Stamps, compute: Compute[T], timeout: int, locks: list[str]
) -> dict[str, T]:
    """``compute(todo)``, stored with each entry's stamp; the locks taken are released
    (one another process took meanwhile is its own: both compute, rare). Inside another
    computation the entries are stored with the outermost one (perfdb/cache_writes.py)."""
    started = time.time()
    nested = cache_reads.depth() > 0
    cache_reads.computing.depth = cache_reads.depth() + 1
    try:
        computed = compute(todo)
        kept = {n: pickle.dumps(computed[n], -1) for n in todo if n in computed}  # -1: newest
        cache_writes.defer(
            {_entry_key(n): (stamps[n], started, v) for n, v in kept.items()}, timeout
        )
    finally:
        cache_reads.computing.depth -= 1
        if not nested:  # stored even if compute raised: what was computed is current
            cache_writes.store(cache_writes.take(), locks)
    return {n: computed[n] for n in todo if n in computed}


def cached(key: str, fn: Callable[[], T], timeout: int = TIMEOUT_SECONDS, stale: bool = False) -> T:
    """``fn()``, computed once per data version. ``key`` must name everything ``fn`` reads
    besides the stored runs (e.g. the scope it is for)."""
    name = _name(key, "*all*")
    wanted = {name: (STRUCTURE_KEY, VERSION_KEY)}
    return cached_entries(wanted, lambda _: {name: fn()}, timeout, stale)[name]


def scope_key(workload_id: int, hardware_id: int, mode: str) -> str:
    """A scope's name: the same text as the pages' ``scope`` parameter."""
    return f"{workload_id}-{hardware_id}-{mode}"


def cached_per_scope(
    key: str,
    scopes: Sequence[str],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int = TIMEOUT_SECONDS,
    stale: bool = False,
) -> dict[str, T]:
    """For each scope, ``compute([...scopes])[scope]``, cached per scope version: only those
    moved since are computed again, in one call. ``key`` names all else it reads."""
    names = {_name(key, s): s for s in dict.fromkeys(scopes)}
    wanted = {n: (STRUCTURE_KEY, SCOPE_VERSION_PREFIX + s) for n, s in names.items()}

    def compute_named(todo: list[str]) -> dict[str, T]:
        computed = compute([names[n] for n in todo])
        return {n: computed[names[n]] for n in todo if names[n] in computed}

    got = cached_entries(wanted, compute_named, timeout, stale)
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
    return list(keys) + [_entry_key(n) for n in wanted]


def setup_entry(key: str, setup_id: int) -> dict[str, tuple[str, str]]:
    """``cached_in_setup``'s entry: its name and version keys."""
    return {_name(key, f"setup:{setup_id}"): (STRUCTURE_KEY, SETUP_VERSION_PREFIX + str(setup_id))}


def cached_in_setup(
    key: str, setup_id: int, fn: Callable[[], T], found: Mapping[str, Any] | None = None
) -> T:
    """``fn()``, computed once per version of the setup: for a value that reads only that
    setup's runs (a series). ``key`` must name everything else ``fn`` reads. An entry of a
    setup that does not exist is never stored if ``fn`` raises (a 404)."""
    wanted = setup_entry(key, setup_id)
    (name,) = wanted
    return cached_entries(wanted, lambda _: {name: fn()}, found=found)[name]


def cached_before(key: str, scope: str) -> bool:
    """Whether ``cached_in_scope(key, scope, ...)`` was computed under an earlier (or the
    current) version with the current structure: someone looks at it, so it is worth
    recomputing ahead of them."""
    entry_key = _entry_key(_name(key, scope))
    found = cache.get_many([STRUCTURE_KEY, entry_key])
    versions = _versions([STRUCTURE_KEY], found)
    entry = found.get(entry_key)
    return versions is not None and entry is not None and entry[0][0] == versions[0]


def runs_added(scopes: Iterable[str], setups: Iterable[int] = ()) -> None:
    """Runs were added to these scopes (and setups, when known: the ingest writer's runs),
    nowhere else: entries cached for other scopes and setups stay current; everything cached
    with ``cached`` (all runs) does not. With ``settings.PAGE_CACHE_WARM``, the pages' shared
    entries are then recomputed by a task (dashboards/warm.py) rather than by the next
    browser, one task per burst of uploads (perfdb/cache_warm.py), and the cheapest of them
    here and now (``cache_warm.runs_committed``)."""
    scopes = sorted(set(scopes))
    setup_keys = (SETUP_VERSION_PREFIX + str(s) for s in sorted(set(setups)))
    _bump(VERSION_KEY, *(SCOPE_VERSION_PREFIX + s for s in scopes), *setup_keys)
    if getattr(settings, "PAGE_CACHE_WARM", False):
        cache_warm.queue_warm(scopes)
        cache_warm.warm_now(scopes)


def runs_added_on_commit(scopes: Iterable[str], setups: Iterable[int] = ()) -> None:
    """``runs_added`` once the current transaction commits (at once outside one)."""
    scopes, setups = tuple(scopes), tuple(setups)
    transaction.on_commit(lambda: runs_added(scopes, setups))


@receiver(post_save, sender="perfdb.Run")
@receiver(post_delete, sender="perfdb.Run")
def _run_saved_or_deleted(instance: Any, created: bool = False, **kwargs: object) -> None:
    """Runs added, edited or deleted one by one (the admin, a shell): a new run touches its
    scope and setup only, an edit or a deletion anything. The bulk writers call
    ``runs_added_on_commit`` (ingest) or ``data_changed_on_commit`` (synthetic) themselves."""
    if created:
        setup = instance.setup  # the writer passed the Setup object: no query
        scope = scope_key(setup.workload_id, setup.hardware_id, setup.mode)
        runs_added_on_commit([scope], [setup.pk])
    else:
        data_changed_on_commit()


# Vocabulary shown in cached page data: names, labels, units, the pickers' choices.
VOCABULARY = tuple(
    f"perfdb.{name}" for name in ("Kernel", "PatchSet", "Workload", "Hardware", "Setup", "Metric")
)


# The pseudo-scope of what depends only on which setups exist (catalogue, scope picker).
CATALOG = "*catalog*"


@receiver(post_save, sender="perfdb.Setup")
def _setup_created(instance: Any, created: bool = False, **kwargs: object) -> None:
    """A new setup (the ingest writer's get_or_create) is a new entry of the catalogue; an
    edit moves everything (``_vocabulary_changed``)."""
    if created:
        transaction.on_commit(lambda: _bump(SCOPE_VERSION_PREFIX + CATALOG))


def _vocabulary_changed(created: bool = False, **kwargs: object) -> None:
    """A kernel, patch set, workload, hardware, setup or metric edited or deleted (the admin,
    a shell) may appear in any cached value: nothing cached so far is served again. A row
    created (the ingest writer's get_or_create) changes nothing cached until runs use it,
    and those runs move their scope's version."""
    if not created:
        data_changed_on_commit()


for _model in VOCABULARY:
    post_save.connect(_vocabulary_changed, sender=_model, dispatch_uid=f"cache:{_model}:save")
    post_delete.connect(_vocabulary_changed, sender=_model, dispatch_uid=f"cache:{_model}:del")
