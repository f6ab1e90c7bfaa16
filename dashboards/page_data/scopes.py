"""Scopes (workload x hardware x UP/SMP), the first picker of every chart page: the index of
every scope with runs and a chosen scope's setups, each cached so that an upload to
existing setups leaves the index as it was."""

from __future__ import annotations

from dataclasses import dataclass

from dashboards import chart_queries as cq
from dashboards.page_data import scope_stats
from dashboards.pure.selection import Scope as SetupScope
from perfdb.cache import cache_key, cached_in_scope, scope_key


@dataclass(frozen=True)
class ScopeChoice:
    """One entry of the scope picker; its setups are read only when it is the one shown."""

    key: str
    label: str
    ids: tuple[int, int, str]  # workload id, hardware id, mode
    has_varying_params: bool  # the scaling page can chart it
    has_wakeup_params: bool  # the wakeups page can chart it


@dataclass(frozen=True)
class ScopeIndex:
    scopes: tuple[ScopeChoice, ...]

    @property
    def busiest_setup_id(self) -> int | None:
        """The across-kernels page's default: counted from the per-scope run summaries once
        per data version (after an upload, only its scopes are read again)."""
        return scope_stats.busiest_setup_cached()


def scope_index() -> ScopeIndex:
    """Every scope with runs. Its entries depend only on which setups exist (the catalogue,
    ``scope_stats.scope_rows``): an upload to existing setups leaves them cached, so no
    page rebuilds them after an upload."""
    return ScopeIndex(
        tuple(
            ScopeChoice(
                key=scope_key(r.workload_id, r.hardware_id, r.mode),
                label=r.label,
                ids=(r.workload_id, r.hardware_id, r.mode),
                has_varying_params=r.has_varying_params,
                has_wakeup_params=r.has_params,
            )
            for r in scope_stats.scope_rows()
        )
    )


def scope_setups(choice: ScopeChoice | None) -> SetupScope | None:
    """The chosen scope with its setups (one query for ~100 setups at lab scale), cached
    per scope version like its charts (and as far behind the uploads as they may be)."""
    if choice is None:
        return None
    setups = cached_in_scope(
        cache_key("scope-setups"),
        choice.key,
        lambda: cq.setup_choices(scope=choice.ids),
        stale=True,
    )
    return SetupScope(choice.key, choice.label, tuple(setups))
