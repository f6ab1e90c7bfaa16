"""Which setups a scope chart draws (scaling, kernel-time, wakeups): a bounded number by
default, any others or all of them on request, named in the URL, and never more than a
page of them per request.

A scope gains setups as a lab adds configurations (~100 at 10M synthetic results, ~1,000 at
100M): drawing every one had made the wakeups page 5 MB and 2.5 s at 100M warm, and 29 s on
an emptied cache, most of it reading and drawing setups nobody looks at together. So a
selection larger than a page (``?setups=all``, or a long hand-picked list) is cut into pages
of a bounded number of setups, ``&page=2`` the second: the work of one request is bounded
by the page, whatever the scope's size. The default is one page; the page caches per drawn
selection, so a request reads only what it draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from dashboards.page_data import scope_stats
from dashboards.pure.selection import ALL, MAX_IDS, BadParam, int_param, subset_param
from perfdb.cache import cache_key, cached_in_scope

PAGE = "page"


@dataclass(frozen=True)
class Subset:
    """What a scope chart draws of its choices (setups, or thresholds of several setups):
    the selection the URL asks for, its pages, and the page this request draws."""

    name: str  # the URL parameter: "setups", "thresholds"
    chosen: tuple[str, ...]  # the selection, every page of it
    default: tuple[str, ...]
    drawn: tuple[str, ...]  # this request's page of it
    first: int  # the drawn page's first choice, counted from 1
    page: int  # counted from 1
    pages: int
    every: bool  # the selection is every choice
    offered: int  # how many choices the scope has
    per_page: int  # setups a page draws at most

    @property
    def last(self) -> int:
        """The drawn page's last choice, counted from 1."""
        return self.first + len(self.drawn) - 1

    @property
    def is_default(self) -> bool:
        return self.chosen == self.default


def setup_runs(scope_ids: tuple[int, int, str]) -> dict[int, tuple[int, float, int]]:
    """Each setup of the scope: (run count, newest run's time, newest run's id), from the
    per-scope run summaries the overview keeps (cached per scope version, warmed after an
    upload)."""
    rows = scope_stats.scope_runs([scope_ids]).get(scope_ids, [])
    return {r.setup_id: (r.run_count, r.newest_at, r.newest_run_id) for r in rows}


def drawn_subset(
    chart: str,
    query: Mapping[str, Any],
    name: str,
    scope_key: str,
    choices: Sequence[str],
    default: Callable[[], list[str]],
    per_page: int,
    weight: Callable[[str], int] = lambda _: 1,
) -> Subset:
    """The choices of ``name`` the URL asks for (``all`` for every one), else the default
    (``default()``, computed once per scope version: it ranks every setup of the scope, and
    kept to the choices offered now), cut into pages of at most ``per_page`` setups
    (``weight``: a choice's setups; a choice heavier than a page is a page of its own), and
    the page ``?page=`` names (the first by default). ``chart``: the key of the chart it is
    drawn in (``cache_key``), which the default is cached under."""
    offered = set(choices)
    key = cache_key("default-subset", chart=chart, name=name)
    kept = cached_in_scope(key, scope_key, default, stale=True)
    default_shown = [c for c in kept if c in offered] or list(choices[:1])
    chosen = subset_param(query, name, choices, default_shown)
    pages = paged(chosen, weight, per_page)
    given = int_param(query, PAGE)
    number = 1 if given is None else given
    if not 1 <= number <= len(pages):
        raise BadParam(PAGE, f"expected 1 to {len(pages)}, got {number}")
    first = 1 + sum(len(p) for p in pages[: number - 1])
    return Subset(
        name,
        tuple(chosen),
        tuple(default_shown),
        tuple(pages[number - 1]),
        first,
        number,
        len(pages),
        every=len(chosen) == len(choices) and len(choices) > 1,
        offered=len(choices),
        per_page=per_page,
    )


def paged(chosen: Sequence[str], weight: Callable[[str], int], per_page: int) -> list[list[str]]:
    """``chosen`` in order, cut into pages whose weights add up to at most ``per_page``
    (each page has at least one choice; no choices is one empty page)."""
    pages: list[list[str]] = [[]]
    size = 0
    for choice in chosen:
        w = weight(choice)
        if pages[-1] and size + w > per_page:
            pages.append([])
            size = 0
        pages[-1].append(choice)
        size += w
    return pages


def selection_of(selection: dict[str, Any], subset: Subset) -> dict[str, Any]:
    """The page's selection for its permalink and downloads: the subset only when it is not
    the default (``all`` when it is every choice), and its page past the first, so a
    default URL stays short and a download is what the page draws."""
    if subset.is_default and subset.page == 1:
        return selection
    out = {**selection, subset.name: ALL if subset.every else list(subset.chosen)}
    if subset.page > 1:
        out[PAGE] = subset.page
    return out


def subset_links(view_name: str, selection: Mapping[str, Any], subset: Subset) -> dict[str, Any]:
    """The subset control's links: "show all", "back to the default", and the previous and
    next pages of a selection longer than one."""
    base = reverse(view_name)
    kept = {k: v for k, v in selection.items() if v not in (None, "") and k != PAGE}
    mine = {k: v for k, v in kept.items() if k != subset.name}

    def url(query: Mapping[str, Any]) -> str:
        return f"{base}?{urlencode(query, doseq=True)}"

    def page_url(number: int) -> str | None:
        if not 1 <= number <= subset.pages:
            return None
        return url({**kept, PAGE: number} if number > 1 else kept)

    return {
        "all_url": url({**mine, subset.name: ALL}),
        "default_url": url(mine),
        "previous_url": page_url(subset.page - 1),
        "next_url": page_url(subset.page + 1),
    }


def api_url(view_name: str, setup_ids: Sequence[int], **extra: object) -> str | None:
    """The API's answer for the setups a page draws (None past the API's ``MAX_IDS``)."""
    if not setup_ids or len(setup_ids) > MAX_IDS:
        return None
    kept = urlencode({k: v for k, v in extra.items() if v not in (None, "")})
    ids = ",".join(map(str, setup_ids))  # digits and commas: nothing to quote
    return f"{reverse(view_name)}?setups={ids}" + (f"&{kept}" if kept else "")
