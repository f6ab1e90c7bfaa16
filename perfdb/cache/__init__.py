"""The page data cache: plain values computed from the stored runs, kept in Redis under the
data versions they were computed from, so that a value is served exactly while its data
stand. This package's names are its one public face: *get* (``cached`` and its scoped and
per-setup forms: a value computed once per version, read in one round trip, served a little
stale while recomputed), *set* (what a computation returns is stored with its versions;
nested ones with the outermost), *invalidate* (``runs_added``, ``data_changed`` and their
``_on_commit`` forms, ``alerts_changed``, and the model signals) and *versions* (``data_version``,
``scope_key``, the version keys), with ``recorded`` and ``read_together`` for a whole
answer kept under the versions its reads found, and the warm-up hooks after an upload.
Every key a value is cached under is made by ``cache_key`` (its kind and parameters,
normalised). Inside: ``keys``, ``versions``, ``entries``, ``invalidate``, ``setups``
(values of many setups' pieces), ``reads`` (what a request read under), ``writes`` (nested
stores), ``refresh`` (the recompute thread), ``warm`` (the pages' warm-up task) and
``backend`` (Django's Redis cache, failing soft: ``settings.CACHES``). Every key also
carries the code version (``settings.CACHE_VERSION``, the ``KEY_PREFIX``); values are never
ORM objects.
"""

from perfdb.cache.entries import (
    TIMEOUT_SECONDS,
    Compute,
    alerts_entry,
    cached,
    cached_before,
    cached_entries,
    cached_in_alerts,
    cached_in_scope,
    cached_in_setup,
    cached_per_scope,
    read_ahead,
    scope_entry,
    setup_entry,
    stale_seconds,
    stored_together,
    updated_in_alerts,
    updated_in_setup,
)
from perfdb.cache.invalidate import (
    alerts_changed,
    data_changed,
    data_changed_on_commit,
    runs_added,
    runs_added_on_commit,
)
from perfdb.cache.keys import cache_key
from perfdb.cache.reads import bounded_by_age, read_together, recorded
from perfdb.cache.setups import cached_per_setup, setup_keys
from perfdb.cache.versions import (
    ALERTS_VERSION_PREFIX,
    CATALOG,
    SCOPE_VERSION_PREFIX,
    SETUP_VERSION_PREFIX,
    STRUCTURE_KEY,
    VERSION_KEY,
    data_version,
    scope_key,
)
from perfdb.cache.warm import WARM_PAGES, alerts_committed, queued_scopes, runs_committed

__all__ = [
    # keys
    "cache_key",
    # get
    "Compute",
    "TIMEOUT_SECONDS",
    "alerts_entry",
    "cached",
    "cached_before",
    "cached_entries",
    "cached_in_alerts",
    "cached_in_scope",
    "cached_in_setup",
    "cached_per_scope",
    "cached_per_setup",
    "read_ahead",
    "scope_entry",
    "setup_entry",
    "setup_keys",
    "stale_seconds",
    "stored_together",
    "updated_in_alerts",
    "updated_in_setup",
    # invalidate
    "alerts_changed",
    "data_changed",
    "data_changed_on_commit",
    "runs_added",
    "runs_added_on_commit",
    # versions
    "ALERTS_VERSION_PREFIX",
    "CATALOG",
    "SCOPE_VERSION_PREFIX",
    "SETUP_VERSION_PREFIX",
    "STRUCTURE_KEY",
    "VERSION_KEY",
    "data_version",
    "scope_key",
    # a whole answer kept under the versions its reads found (dashboards/page_cache/kept.py)
    "bounded_by_age",
    "read_together",
    "recorded",
    # the warm-up after an upload (dashboards/page_cache/warm.py, dashboards/tasks.py)
    "WARM_PAGES",
    "queued_scopes",
    "runs_committed",
    "alerts_committed",
]
