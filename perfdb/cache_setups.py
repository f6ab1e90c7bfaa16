"""Values cached one entry per setup, for values made of many setups' pieces.

A scope's scaling chart draws every run of its ~100 setups (at 10M results, ~0.4 s of CPU
and as much again in PostgreSQL). Cached per scope version, every upload to the scope
recomputed all of it, though a nightly upload adds one run to one setup there. Cached per
setup version (``perfdb.cache.setup_entry``: the versions ``runs_added`` moves), the pieces
of the setups an upload did not write to stay current and only the others are read again,
in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from perfdb.cache import cached_entries, setup_entry

T = TypeVar("T")


def cached_per_setup(
    key: str,
    setup_ids: Sequence[int],
    compute: Callable[[list[int]], Mapping[int, T]],
) -> dict[int, T]:
    """For each setup, ``compute([...setups])[setup]``, cached per setup version: only the
    setups written to since their entry was cached are computed again (in one call).
    ``key`` must name everything ``compute`` reads besides the setup's runs."""
    wanted: dict[str, tuple[str, str]] = {}
    setup_of: dict[str, int] = {}
    for setup_id in dict.fromkeys(setup_ids):
        entry = setup_entry(key, setup_id)
        wanted.update(entry)
        setup_of.update(dict.fromkeys(entry, setup_id))

    def compute_named(todo: list[str]) -> dict[str, T]:
        computed = compute([setup_of[n] for n in todo])
        return {n: computed[setup_of[n]] for n in todo if setup_of[n] in computed}

    got = cached_entries(wanted, compute_named)
    return {setup_of[n]: value for n, value in got.items()}
