"""What the parser tests read of a parse result (not tests): the one record with given
keys, and its measurements by metric. One place, so that every parser's tests find a
record the same way and fail saying which keys the result had."""

from __future__ import annotations

from typing import Any


def record(result: Any, **keys: object) -> Any:
    """The one record whose keys are exactly ``keys``."""
    found = [r for r in result.records if dict(r.keys) == keys]
    assert len(found) == 1, (keys, [dict(r.keys) for r in result.records])
    return found[0]


def record_with(result: Any, **keys: object) -> Any:
    """The one record whose keys include ``keys`` (it may have others)."""
    found = [r for r in result.records if all(r.keys.get(k) == v for k, v in keys.items())]
    assert len(found) == 1, (keys, [dict(r.keys) for r in result.records])
    return found[0]


def values(rec: Any) -> dict[str, float]:
    """A record's values by metric."""
    return {m.metric: m.value for m in rec.measurements}


def units(rec: Any) -> dict[str, tuple[str, str]]:
    """A record's (unit, better) by metric."""
    return {m.metric: (m.unit, m.better) for m in rec.measurements}


def values_of(result: Any, **keys: object) -> dict[str, float]:
    """The values of the one record whose keys are exactly ``keys``."""
    return values(record(result, **keys))
