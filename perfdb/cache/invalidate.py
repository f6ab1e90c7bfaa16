"""Moving the versions when the stored data change, so that no entry of older data is current.

Bulk writers say what they changed: the ingest writer ``runs_added_on_commit`` (its scopes
and setups only), everything else ``data_changed_on_commit``. Runs, setups and vocabulary
saved or deleted one by one (the admin, a shell) move the versions through the signal
receivers here, connected when the app is ready (perfdb/apps.py); so do alerts, which are
only ever written one by one (the detector, triage, a merge), each moving its setup's alerts
version.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from perfdb.cache import warm
from perfdb.cache.versions import (
    CATALOG,
    SCOPE_VERSION_PREFIX,
    SETUP_VERSION_PREFIX,
    STRUCTURE_KEY,
    VERSION_KEY,
    alerts_version_key,
    bump,
    scope_key,
)


def data_changed() -> None:
    """Runs were removed or edited (or anything else changed): nothing cached so far may be
    served again, whichever scope it is for."""
    bump(VERSION_KEY, STRUCTURE_KEY)


def data_changed_on_commit() -> None:
    """``data_changed`` at commit: a reader before it must not cache old data as new."""
    transaction.on_commit(data_changed)


def runs_added(
    scopes: Iterable[str], setups: Iterable[int] = (), series: Iterable[tuple[int, int]] = ()
) -> None:
    """Runs were added to these scopes (and setups, when known: the ingest writer's runs),
    nowhere else: entries cached for other scopes and setups stay current; everything cached
    with ``cached`` (all runs) does not. With ``settings.PAGE_CACHE_WARM``, the pages' shared
    entries are then recomputed by a task (dashboards/page_cache/warm.py) rather than by the next
    browser, one task per burst of uploads (perfdb/warm.py), and the cheapest of them
    here and now (``warm.runs_committed``), with the ``series`` (setup id, metric id) the
    runs added points to."""
    scopes = sorted(set(scopes))
    setup_keys = (SETUP_VERSION_PREFIX + str(s) for s in sorted(set(setups)))
    bump(VERSION_KEY, *(SCOPE_VERSION_PREFIX + s for s in scopes), *setup_keys)
    if getattr(settings, "PAGE_CACHE_WARM", False):
        warm.queue_warm(scopes)
        warm.warm_now(scopes, sorted(set(series)))


def runs_added_on_commit(
    scopes: Iterable[str], setups: Iterable[int] = (), series: Iterable[tuple[int, int]] = ()
) -> None:
    """``runs_added`` once the current transaction commits (at once outside one)."""
    scopes, setups, series = tuple(scopes), tuple(setups), tuple(series)
    transaction.on_commit(lambda: runs_added(scopes, setups, series))


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


def alerts_changed(series: Iterable[tuple[int, int]]) -> None:
    """Alerts of these series (setup id, metric id) were created, changed or deleted: their
    marks are computed again, nothing else. With ``settings.PAGE_CACHE_WARM``, those that
    someone reads are computed here and now (``warm.alerts_committed``): after an upload's
    check, by its worker rather than by the uploader's first look at the chart."""
    series = sorted(set(series))
    bump(*(alerts_version_key(setup_id, metric_id) for setup_id, metric_id in series))
    if series and getattr(settings, "PAGE_CACHE_WARM", False):
        warm.alerts_warm_now(series)


@receiver(post_save, sender="perfdb.Alert")
@receiver(post_delete, sender="perfdb.Alert")
def _alert_saved_or_deleted(instance: Any, **kwargs: object) -> None:
    """Every write of an alert (the detector's get_or_create and saves, a triage, a move, a
    merge's delete) moves its series' alerts version when it commits: a reader before the
    commit must not cache the alerts of before as current. No alert write goes around
    ``save``/``delete`` but the outbox's ``notified_at``, which no page shows, and none
    moves an alert to another series."""
    series = (instance.setup_id, instance.metric_id)
    transaction.on_commit(lambda: alerts_changed([series]))


# Vocabulary shown in cached page data: names, labels, units, the pickers' choices.
VOCABULARY = tuple(
    f"perfdb.{name}" for name in ("Kernel", "PatchSet", "Workload", "Hardware", "Setup", "Metric")
)


@receiver(post_save, sender="perfdb.Setup")
def _setup_created(instance: Any, created: bool = False, **kwargs: object) -> None:
    """A new setup (the ingest writer's get_or_create) is a new entry of the catalogue; an
    edit moves everything (``_vocabulary_changed``)."""
    if created:
        transaction.on_commit(lambda: bump(SCOPE_VERSION_PREFIX + CATALOG))


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
