"""Values cached one entry per setup, for values made of many setups' pieces.

A scope's scaling chart draws every run of its ~100 setups (at 10M results, ~0.4 s of CPU
and as much again in PostgreSQL). Cached per scope version, every upload to the scope
recomputed all of it, though a nightly upload adds one run to one setup there. Cached per
setup version (``cached_per_scope`` over the setup versions ``runs_added`` moves), the pieces
of the setups an upload did not write to stay current and only the others are read again,
in one call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from perfdb.cache import SETUP_VERSION_PREFIX, cached_per_scope

T = TypeVar("T")


def cached_per_setup(
    key: str,
    setup_ids: Sequence[int],
    compute: Callable[[list[int]], Mapping[int, T]],
) -> dict[int, T]:
    """For each setup, ``compute([...setups])[setup]``, cached per setup version: only the
    setups written to since their entry was cached are computed again (in one call).
    ``key`` must name everything ``compute`` reads besides the setup's runs."""

    def compute_by_text(todo: list[str]) -> dict[str, T]:
        computed = compute([int(s) for s in todo])
        return {str(setup_id): value for setup_id, value in computed.items()}

    texts = [str(setup_id) for setup_id in setup_ids]
    got = cached_per_scope(key, texts, compute_by_text, version_prefix=SETUP_VERSION_PREFIX)
    return {int(text): value for text, value in got.items()}
