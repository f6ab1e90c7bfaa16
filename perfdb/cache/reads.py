"""What one request's answer was read under: the data versions its cached reads found current,
so that dashboards/page_cache/kept.py can keep the whole answer under exactly those versions.

A value of entries.py is current under the versions read before it was computed, so an
answer made only of such values is current while every version its reads found is unchanged:
kept under them, it is served exactly as long as computing it again would give the same bytes,
and an upload or an edit (which moves one of them) makes the next request compute it. It is not
kept if any read served a previous value (stale, or while another process computes), found the
cache unreachable, saw a version move between two of its reads, or if the view queried the
database outside a cached computation (a read no version follows).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.core.cache import cache
from django.db import connections

# Depth of the cached computations running in this thread (entries.py): what they read
# is stored with their stamp.
computing = threading.local()
_recording = threading.local()


@dataclass
class Reads:
    versions: dict[str, int] = field(default_factory=dict)
    current: bool = True  # False: something read is not (only) what ``versions`` say


def depth() -> int:
    return int(getattr(computing, "depth", 0))


@contextmanager
def bounded_by_age() -> Iterator[None]:
    """A computation kept for a bounded time whatever the versions (a whole page kept a few
    seconds, dashboards/page_cache/kept.py), not under the versions it read: the entries it reads
    may be served stale as for any reader, so it stays as old as they are allowed to be plus
    its own age, and recomputing it recomputes only what is due."""
    outer = depth()
    computing.depth = 0
    try:
        yield
    finally:
        computing.depth = outer


def found_versions(now: Mapping[str, int]) -> None:
    """The version keys' values a cached read took (entries.py, every read)."""
    reads: Reads | None = getattr(_recording, "reads", None)
    if reads is None:
        return
    for key, version in now.items():
        if reads.versions.setdefault(key, version) != version:
            reads.current = False  # moved during the request: parts of two versions


def served_previous() -> None:
    """A read answered with a value older than the current versions (or none were read)."""
    reads: Reads | None = getattr(_recording, "reads", None)
    if reads is not None:
        reads.current = False


@contextmanager
def recorded() -> Iterator[Reads]:
    """Record this thread's cached reads (and any query outside a computation) meanwhile."""
    reads = Reads()

    def guard(execute: Any, sql: Any, params: Any, many: bool, context: Any) -> Any:
        if not depth():
            reads.current = False
        return execute(sql, params, many, context)

    _recording.reads = reads
    try:
        with ExitStack() as stack:
            for alias in connections:
                stack.enter_context(connections[alias].execute_wrapper(guard))
            yield reads
    finally:
        _recording.reads = None


_ahead = threading.local()


@contextmanager
def read_together(keys: Sequence[str], found: Mapping[str, Any] | None = None) -> Iterator[None]:
    """Read ``keys`` now, in one round trip, for the cached reads inside: one whose keys are
    all among them (``entries.read_ahead``) reads nothing more. A page computed after
    an upload reads its nested parts (the series page: the setup's metric ids, the series)
    with its own entry, not one round trip each: on a loaded web process each is a wait
    for a core and the GIL again. ``found``: the cache's values of ``keys``, read by the
    caller with its own (e.g. with the API throttle's counts): no read here."""
    if found is None:
        found = cache.get_many(list(keys))
    outer = getattr(_ahead, "read", None)
    _ahead.read = (set(keys), found)
    try:
        yield
    finally:
        _ahead.read = outer


def get_many(keys: Sequence[str]) -> Mapping[str, Any]:
    """``cache.get_many(keys)``, or what ``read_together`` read of them if it read them all."""
    read: tuple[set[str], Mapping[str, Any]] | None = getattr(_ahead, "read", None)
    if read is None or not read[0].issuperset(keys):
        found: Mapping[str, Any] = cache.get_many(list(keys))
        return found
    return {key: read[1][key] for key in keys if key in read[1]}
