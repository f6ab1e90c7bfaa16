"""Which setups a scope chart draws (kernel-time, wakeups): a bounded number by default, any
others or all of them on request, named in the URL.

A scope gains setups as a lab adds configurations (~100 at 10M synthetic results, ~1,000 at
100M): drawing every one had made the wakeups page 5 MB and 2.5 s at 100M, most of it
unpickling and rendering data of setups nobody looks at together. The default is the
most-run setups (the most recently run among equals); the page caches per drawn selection,
so a request reads only what it draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from dashboards import scope_stats
from dashboards.selection import ALL, MAX_IDS, subset_param
from perfdb.cache import cached_in_scope


def setup_runs(scope_ids: tuple[int, int, str]) -> dict[int, tuple[int, float, int]]:
    """Each setup of the scope: (run count, newest run's time, newest run's id), from the
    per-scope run summaries the overview keeps (cached per scope version, warmed after an
    upload)."""
    rows = scope_stats.scope_runs([scope_ids]).get(scope_ids, [])
    return {r.setup_id: (r.run_count, r.newest_at, r.newest_run_id) for r in rows}


def shown_choices(
    page: str,
    query: Mapping[str, Any],
    name: str,
    scope_key: str,
    choices: Sequence[str],
    default: Callable[[], list[str]],
) -> tuple[list[str], list[str]]:
    """(shown, default): the choices of ``name`` the URL asks for (``all`` for every one),
    else the default, computed by ``default()`` once per scope version (cached: it ranks
    every setup of the scope) and kept to the choices offered now."""
    offered = set(choices)
    kept = cached_in_scope(f"{page}:{name}:default", scope_key, default, stale=True)
    default_shown = [c for c in kept if c in offered] or list(choices[:1])
    return subset_param(query, name, choices, default_shown), default_shown


def selection_of(
    selection: dict[str, Any], name: str, shown: list[str], default: list[str], every: int
) -> dict[str, Any]:
    """The page's selection for its permalink and downloads: ``name`` only when it is not
    the default (``all`` when it is every choice), so a default URL stays short."""
    if shown == default:
        return selection
    return {**selection, name: ALL if len(shown) == every else shown}


def subset_links(view_name: str, selection: Mapping[str, Any], name: str) -> dict[str, str]:
    """The "show all" and "back to the default" links of a page's subset control."""
    base = reverse(view_name)
    kept = {k: v for k, v in selection.items() if v not in (None, "") and k != name}
    return {
        "all_url": f"{base}?{urlencode({**kept, name: ALL}, doseq=True)}",
        "default_url": f"{base}?{urlencode(kept, doseq=True)}",
    }


def options_html(choices: Sequence[tuple[str, str]], selected: Sequence[str]) -> SafeString:
    """A subset picker's ``<option>`` elements (value, text), both escaped here: a scope of
    ~1,000 setups (100M synthetic results) made the template's loop over them ~10 ms of
    every request."""
    chosen = set(selected)
    return mark_safe(  # every value and text escaped here
        "".join(
            f'<option value="{escape(value)}"{" selected" if value in chosen else ""}>'
            f"{escape(text)}</option>"
            for value, text in choices
        )
    )


def api_url(view_name: str, setup_ids: Sequence[int], **extra: object) -> str | None:
    """The API's answer for the setups a page draws (None past the API's ``MAX_IDS``)."""
    if not setup_ids or len(setup_ids) > MAX_IDS:
        return None
    kept = urlencode({k: v for k, v in extra.items() if v not in (None, "")})
    ids = ",".join(map(str, setup_ids))  # digits and commas: nothing to quote
    return f"{reverse(view_name)}?setups={ids}" + (f"&{kept}" if kept else "")
