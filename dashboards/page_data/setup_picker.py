"""The set-up picker of a scope, as the across-kernels and the compare pages show it: the
scope's set-ups with their run counts (``setup_choices``) and their ``<option>``s
(``setup_options``), both kept per scope version.

A scope of 100 million results holds about 1,000 set-ups. Rendered by a template loop on
every request, their options were most of a warm page: 16 ms of the series page's 17, and
on the compare page 55 kB and ~80 ms of CPU each time. Each option is rendered once per
scope version instead (when a page first needs them after the scope moved, not by an
upload's warm-up, which most versions of a busy scope never show) and joined, the chosen
one rendered again selected.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe

from dashboards import chart_queries as cq
from dashboards.page_data.scopes import scope_index
from dashboards.pure.selection import setup_label
from perfdb.cache import cache_key, cached_per_scope, stored_together

SETUP_OPTION = "dashboards/_setup_option.html"
# Each scope's setups with their run counts, cached per scope version (``setup_choices``).
SETUPS = cache_key("series-setups")
# Each scope's setups' ``<option>``s by setup id, cached per scope version.
SETUP_OPTIONS = cache_key("series-setup-options")


# A setup's option as kept: the run count it was rendered with, and the option.
Rendered = dict[int, tuple[int, str]]


def setup_choices(scopes: Mapping[str, tuple[int, int, str]]) -> dict[str, list[dict[str, Any]]]:
    """Each scope's setups (by scope key; the ids: workload, hardware, mode) with their run
    counts and labels, cached per scope version: the scopes moved since are read again
    together."""

    def build(keys: list[str]) -> dict[str, list[dict[str, Any]]]:
        return {
            key: [{**s, "label": setup_label(s)} for s in cq.setup_choices(scope=scopes[key])]
            for key in keys
        }

    return cached_per_scope(SETUPS, list(scopes), build)


def setup_options(
    scope: str, setups: Sequence[Mapping[str, Any]], chosen: int | None
) -> SafeString:
    """The scope's setup ``<option>``s, ``chosen`` selected. After an upload to the scope
    only the options whose run count it moved are rendered again (a nightly moves a dozen
    of a thousand). ``setups``: the scope's, as ``setup_choices`` gives them."""
    kept = cached_per_scope(
        SETUP_OPTIONS,
        [scope],
        lambda _: {scope: _rendered_options(setups, {})},
        update=lambda _, earlier: _rendered_options(setups, earlier),
    )[scope]
    return mark_safe(  # noqa: S308 (each option rendered by SETUP_OPTION)
        "".join(
            _setup_option(s, selected=True) if s["id"] == chosen else _kept_option(s, kept)
            for s in setups
        )
    )


def _kept_option(setup: Mapping[str, Any], kept: Rendered) -> str:
    """The kept option of a setup, or one rendered here when the kept options lack it or
    show another run count (the scope moved between the two reads)."""
    found = kept.get(int(setup["id"]))
    return (
        found[1] if found is not None and found[0] == setup["run_count"] else _setup_option(setup)
    )


def pickers_warm(scope_keys: Collection[str]) -> None:
    """After an upload to these scopes: their setup pickers, with the run counts it moved,
    and their options (those whose count moved rendered again), computed together, so
    that the first visitor of one of their series, most likely the uploader, does not
    compute one. Called in the writer's process right after its commit
    (``dashboards.page_cache.warm.after_commit``) and by the pages' warm."""
    ids = {s.key: s.ids for s in scope_index().scopes if s.key in scope_keys}
    if ids:
        with stored_together():  # the choices and their options, one store
            for scope, setups in setup_choices(ids).items():
                setup_options(scope, setups, None)


def _rendered_options(setups: Sequence[Mapping[str, Any]], earlier: Rendered) -> Rendered:
    """Each setup's ``<option>`` by setup id, rendered by SETUP_OPTION unless ``earlier``
    holds it with the same run count (its label changes only with the structure version,
    which computes the options anew)."""
    out: Rendered = {}
    for setup in setups:
        key, count = int(setup["id"]), setup["run_count"]
        before = earlier.get(key)
        out[key] = (
            before if before is not None and before[0] == count else (count, _setup_option(setup))
        )
    return out


def _setup_option(setup: Mapping[str, Any], selected: bool = False) -> str:
    context = {**setup, "selected": selected}
    return render_to_string(SETUP_OPTION, context).strip()
