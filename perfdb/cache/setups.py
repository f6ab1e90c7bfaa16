"""Values cached one entry per setup, for values made of many setups' pieces.

A scope's scaling chart draws every run of its ~100 setups (at 10M results, ~0.4 s of CPU
and as much again in PostgreSQL). Cached per scope version, every upload to the scope
recomputed all of it, though a nightly upload adds one run to one setup there. Cached per
setup version (``cached_in_setup``'s entries, under the setup versions ``runs_added``
moves), the pieces of the setups an upload did not write to stay current and only the
others are read again, in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from perfdb.cache.entries import cached_entries, read_ahead, setup_entry

T = TypeVar("T")
Wanted = dict[str, tuple[str, str]]  # entry name -> its version keys


def _wanted(key: str, setup_ids: Sequence[int]) -> tuple[Wanted, dict[str, int]]:
    """Each setup's entry (``cached_in_setup``'s: its name and version keys), and the setup
    of each entry name."""
    wanted: Wanted = {}
    setups: dict[str, int] = {}
    for setup_id in dict.fromkeys(setup_ids):
        entry = setup_entry(key, setup_id)
        wanted.update(entry)
        setups.update(dict.fromkeys(entry, setup_id))
    return wanted, setups


def cached_per_setup(
    key: str,
    setup_ids: Sequence[int],
    compute: Callable[[list[int]], Mapping[int, T]],
) -> dict[int, T]:
    """For each setup, ``compute([...setups])[setup]``, cached per setup version: only the
    setups written to since their entry was cached are computed again (in one call).
    ``key`` must name everything ``compute`` reads besides the setup's runs."""
    wanted, setups = _wanted(key, setup_ids)

    def compute_named(todo: list[str]) -> dict[str, T]:
        computed = compute([setups[name] for name in todo])
        return {name: computed[setups[name]] for name in todo if setups[name] in computed}

    got = cached_entries(wanted, compute_named)
    return {setups[name]: value for name, value in got.items()}


def setup_keys(key: str, setup_ids: Sequence[int]) -> list[str]:
    """The cache keys ``cached_per_setup(key, setup_ids, ...)`` reads (to read them with
    others: reads.py ``read_together``)."""
    return read_ahead(_wanted(key, setup_ids)[0])
