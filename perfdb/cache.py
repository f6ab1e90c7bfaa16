"""Page data cached in Redis (Django's cache), keyed by a data version.

Everything the dashboards cache is derived from the stored runs (picker choices, run counts,
the overview's latest runs). Rather than track which key each write touches, every write
that adds or removes runs calls ``data_changed()`` after its commit: the version goes up, and
every key cached under the old version is simply never read again (it expires by its
timeout). A reader takes the version *before* it queries, so a value computed from data older
than a commit can only be stored under the version that commit left behind.

Runs *added* are tracked finer (``runs_added``): each scope (workload x hardware x UP/SMP)
has a version of its own, and a value that reads only some scopes (a scope's chart, its
setups' run counts) is cached with ``cached_per_scope`` under those scopes' versions and the
*structure* version, which only ``data_changed`` moves (runs removed or edited). An upload
then leaves every other scope's entries warm, and what reads all scopes (the overview, the
scope picker) is rebuilt from the per-scope entries, recomputing only the scopes it touched.

While one process computes a missing entry (it holds a short lock), others asking for it
are served the entry's previous value, if runs were only *added* since (the structure
version is the same), instead of computing it too: a burst of requests after an upload
costs one computation, and a value warmed after an upload's commit (``scopes_changed``,
``dashboards/warm.py``) is never paid by a browser. Runs removed or edited are never
served stale.

Every key also carries the code version (settings.CACHE_VERSION, the cache's KEY_PREFIX), so
a deploy never reads values of an older shape; values are plain data (dicts, tuples, small
dataclasses of numbers and text), never ORM objects. An edit or deletion of a kernel, patch
set, workload, hardware, setup or metric moves the data version like a run's does.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

from celery import current_app
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

log = logging.getLogger(__name__)

VERSION_KEY = "perfdb:data-version"
# The task that recomputes the pages' shared entries after runs are added (by name: the
# task lives in dashboards/tasks.py, above this layer).
WARM_PAGES = "dashboards.tasks.warm_pages"
STRUCTURE_KEY = "perfdb:structure-version"
SCOPE_VERSION_PREFIX = "perfdb:scope-version:"
# Old versions' entries are dead weight once the version moves; let Redis drop them.
TIMEOUT_SECONDS = 6 * 60 * 60
# Longest a computation may keep others on the previous value before they compute too.
LOCK_SECONDS = 60
_MISSING = object()

T = TypeVar("T")


def _fresh_version() -> int:
    """A start value no earlier version used: if Redis lost the key, counting again from 1
    could meet entries cached under an old 1."""
    return time.time_ns()


def data_version() -> int:
    version = cache.get(VERSION_KEY)
    if version is None:
        cache.add(VERSION_KEY, _fresh_version(), timeout=None)
        version = cache.get(VERSION_KEY)
    if version is None:  # the cache is unreachable (perfdb.cache_backend): nothing is reused
        return _fresh_version()
    return int(version)


def _bump(key: str) -> None:
    try:
        cache.incr(key)
    except ValueError:  # the key is missing: any new value invalidates
        cache.set(key, _fresh_version(), timeout=None)


def data_changed() -> None:
    """Runs were removed or edited (or anything else changed): nothing cached so far may be
    served again, whichever scope it is for."""
    _bump(VERSION_KEY)
    _bump(STRUCTURE_KEY)


def data_changed_on_commit() -> None:
    """``data_changed`` once the current transaction commits (at once outside one): a reader
    between the write and the commit must not cache the old data under the new version."""
    transaction.on_commit(data_changed)


def cached(key: str, fn: Callable[[], T], timeout: int = TIMEOUT_SECONDS) -> T:
    """``fn()``, computed once per data version. ``key`` must name everything ``fn`` reads
    besides the stored runs (e.g. the scope it is for)."""
    # Hashed: a key may carry free text (parameters held fixed), which a cache key must not.
    digest = hashlib.sha256(key.encode()).hexdigest()[:40]
    full_key = f"perfdb:v{data_version()}:{digest}"
    value = cache.get(full_key, _MISSING)
    if value is not _MISSING:
        return cast(T, value)
    versions = _versions([STRUCTURE_KEY])
    if versions is None:  # the cache is unreachable: nothing is reused
        return fn()
    wanted = {digest: full_key}
    stale = _stale(wanted, versions[0])
    return _compute_and_store(wanted, stale, lambda _: {digest: fn()}, timeout, versions[0])[digest]


# --- stale while another process recomputes --------------------------------------------------


def _lock_key(full_key: str) -> str:
    return f"perfdb:computing:{full_key}"


def _latest_key(name: str) -> str:
    return f"perfdb:latest:{name}"


def _stale(wanted: Mapping[str, str], structure: int) -> dict[str, Any]:
    """The last value stored for each entry (name -> its current full key) under an earlier
    version with this structure version, for the entries another process is computing now
    (their lock is held). One or two round trips."""
    busy = cache.get_many([_lock_key(k) for k in wanted.values()])
    names = [n for n, k in wanted.items() if _lock_key(k) in busy]
    if not names:
        return {}
    pointers = cache.get_many([_latest_key(n) for n in names])
    older = {
        n: pointers[_latest_key(n)][1]
        for n in names
        if _latest_key(n) in pointers and pointers[_latest_key(n)][0] == structure
    }
    found = cache.get_many(list(older.values()))
    return {n: found[k] for n, k in older.items() if k in found}


def _compute_and_store(
    wanted: Mapping[str, str],
    stale: Mapping[str, Any],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int,
    structure: int,
) -> dict[str, T]:
    """Entries (name -> full key) missing from the cache: the stale value of those another
    process is computing, ``compute`` of the rest under a lock each (so that others serve
    the stale value meanwhile), stored with a pointer to them for the next miss."""
    out: dict[str, T] = dict(stale)
    todo = [n for n in wanted if n not in stale]
    if not todo:
        return out
    # Only the locks taken here are released here; one another process took meanwhile
    # is its own (both compute: rare, and as before the lock).
    locks = [k for k in (_lock_key(wanted[n]) for n in todo) if cache.add(k, 1, LOCK_SECONDS)]
    try:
        computed = compute(todo)
        fresh: dict[str, Any] = {wanted[n]: computed[n] for n in todo if n in computed}
        fresh.update({_latest_key(n): (structure, wanted[n]) for n in todo if n in computed})
        cache.set_many(fresh, timeout)
    finally:
        cache.delete_many(locks)
    out.update({n: computed[n] for n in todo if n in computed})
    return out


# --- per-scope versions ----------------------------------------------------------------------


def scope_key(workload_id: int, hardware_id: int, mode: str) -> str:
    """A scope's name: the same text as the pages' ``scope`` parameter."""
    return f"{workload_id}-{hardware_id}-{mode}"


def runs_added(scopes: Iterable[str]) -> None:
    """Runs were added to these scopes (and nowhere else): entries cached for other scopes
    stay valid; everything cached with ``cached`` (all runs) does not. With
    ``settings.PAGE_CACHE_WARM``, the pages' shared entries are then recomputed by a task
    (dashboards/warm.py) rather than by the next browser."""
    scopes = sorted(set(scopes))
    _bump(VERSION_KEY)
    for scope in scopes:
        _bump(SCOPE_VERSION_PREFIX + scope)
    if getattr(settings, "PAGE_CACHE_WARM", False):
        try:
            # on the ingest queue: the workers that wrote the runs warm their pages
            current_app.send_task(WARM_PAGES, args=[scopes], queue=settings.CELERY_INGEST_QUEUE)
        except Exception as exc:  # the broker is down: the next browser computes instead
            log.warning("could not queue %s (%s)", WARM_PAGES, exc)


def runs_added_on_commit(scopes: Iterable[str]) -> None:
    """``runs_added`` once the current transaction commits (at once outside one)."""
    scopes = tuple(scopes)
    transaction.on_commit(lambda: runs_added(scopes))


def _versions(keys: list[str]) -> list[int] | None:
    """The current value of each version key (started when missing); None when the cache is
    unreachable, so nothing is reused."""
    found = cache.get_many(keys)
    out = []
    for key in keys:
        version = found.get(key)
        if version is None:
            cache.add(key, _fresh_version(), timeout=None)
            version = cache.get(key)
            if version is None:
                return None
        out.append(int(version))
    return out


def _scoped_name(key: str, scope: str) -> str:
    """An entry's name whatever the versions: what its previous value is found by."""
    return hashlib.sha256(f"{key}|{scope}".encode()).hexdigest()[:40]


def _scoped_key(key: str, scope: str, structure: int, version: int) -> str:
    return f"perfdb:s{structure}.{version}:{_scoped_name(key, scope)}"


def cached_per_scope(
    key: str,
    scopes: Sequence[str],
    compute: Callable[[list[str]], Mapping[str, T]],
    timeout: int = TIMEOUT_SECONDS,
) -> dict[str, T]:
    """For each scope, ``compute([...scopes])[scope]``, cached per scope version: only the
    scopes changed since their entry was cached are computed again (in one call). ``key``
    must name everything ``compute`` reads besides the scope's runs."""
    scopes = list(dict.fromkeys(scopes))
    versions = _versions([STRUCTURE_KEY] + [SCOPE_VERSION_PREFIX + s for s in scopes])
    if versions is None:
        return dict(compute(scopes))
    structure, *per_scope = versions
    full = {s: _scoped_key(key, s, structure, v) for s, v in zip(scopes, per_scope, strict=True)}
    found = cache.get_many(list(full.values()))
    out = {s: found[k] for s, k in full.items() if k in found}
    missing = {s: full[s] for s in scopes if s not in out}
    if missing:
        names = {_scoped_name(key, s): s for s in missing}
        wanted = {n: missing[s] for n, s in names.items()}
        stale = _stale(wanted, structure)

        def compute_named(todo: list[str]) -> dict[str, T]:
            computed = compute([names[n] for n in todo])
            return {n: computed[names[n]] for n in todo if names[n] in computed}

        got = _compute_and_store(wanted, stale, compute_named, timeout, structure)
        out.update({names[n]: v for n, v in got.items()})
    return out


def cached_before(key: str, scope: str) -> bool:
    """Whether ``cached_in_scope(key, scope, ...)`` was computed under an earlier (or the
    current) version with the current structure: someone looks at it, so it is worth
    recomputing ahead of them."""
    versions = _versions([STRUCTURE_KEY])
    pointer = cache.get(_latest_key(_scoped_name(key, scope)))
    return versions is not None and pointer is not None and pointer[0] == versions[0]


def cached_in_scope(key: str, scope: str, fn: Callable[[], T], timeout: int = TIMEOUT_SECONDS) -> T:
    """``fn()``, computed once per version of ``scope``: for a value that reads only that
    scope's runs (its charts). ``key`` must name everything else ``fn`` reads."""
    return cached_per_scope(key, [scope], lambda _: {scope: fn()}, timeout)[scope]


@receiver(post_save, sender="perfdb.Run")
@receiver(post_delete, sender="perfdb.Run")
def _run_saved_or_deleted(instance: Any, created: bool = False, **kwargs: object) -> None:
    """Runs added, edited or deleted through the ORM one by one (the ingest writer creates
    each run so, the admin, a shell): a new run touches its scope only, an edit or a
    deletion anything. The COPY writers (synthetic history) call ``data_changed_on_commit``."""
    if created:
        setup = instance.setup  # the writer passed the Setup object: no query
        runs_added_on_commit([scope_key(setup.workload_id, setup.hardware_id, setup.mode)])
    else:
        data_changed_on_commit()


# Vocabulary shown in cached page data: names, labels, units, the pickers' choices.
VOCABULARY = (
    "perfdb.Kernel",
    "perfdb.PatchSet",
    "perfdb.Workload",
    "perfdb.Hardware",
    "perfdb.Setup",
    "perfdb.Metric",
)


# The pseudo-scope of values that depend only on which setups exist (the setups catalogue,
# the scope picker's entries): moved when a setup is created, never by runs added.
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
