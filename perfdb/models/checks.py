"""Conditions the database checks on stored numbers, for the models' CHECK constraints."""

from __future__ import annotations

from django.db import models

INFINITY = float("inf")


def finite(field: str, *, null: bool = False, positive: bool = False) -> models.Q:
    """``field`` is a finite number (> 0 with ``positive``), or NULL when ``null``.

    One comparison pair covers NaN too: PostgreSQL sorts NaN above Infinity, so
    ``x < 'Infinity'`` is false for it."""
    low = 0.0 if positive else -INFINITY
    condition = models.Q(**{f"{field}__gt": low, f"{field}__lt": INFINITY})
    return models.Q(**{f"{field}__isnull": True}) | condition if null else condition
