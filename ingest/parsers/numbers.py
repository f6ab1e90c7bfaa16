"""The number grammar shared by parsers: exact or an error naming the line.

Accepted: ``42``, ``-3.5``, ``115.`` (lmbench's truncated dot), ``13.K`` / ``10.2K`` / ``3.1M``
(×1e3 / ×1e6, only when ``suffixes=True``), ``1.0E7`` (Java Float.toString), and ``1,987,024``
thousands separators only when ``thousands=True`` (hand-made tables). Refused with a
ParseError: decimal commas (``1,234`` is ambiguous unless thousands are allowed and the
groups are exactly three digits), ``NaN``/``inf``, and anything else.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal

from ingest.parsers.base import ParseError

_PLAIN = re.compile(r"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?$")
_SUFFIX = {"K": Decimal(1000), "k": Decimal(1000), "M": Decimal(10**6), "G": Decimal(10**9)}
_MISSING = {"", "....", "...", "-", "n/a", "N/A"}


def parse_number(
    token: str,
    *,
    line: int | None = None,
    what: str = "value",
    suffixes: bool = False,
    thousands: bool = False,
    percent: bool = False,
    comma_hint: str = "re-run with LC_ALL=C",
) -> float:
    """Parse one numeric token exactly; raise ParseError naming ``what`` and ``line``.

    ``comma_hint`` ends the decimal-comma error: what the user can do about it. Tool output
    can be re-run under LC_ALL=C; a hand-made table cannot (the table parser says so).
    """
    if token.isdigit() and token.isascii() and len(token) < 300:  # vmstat counts: fast
        return float(token)  # (below 10**300: finite)
    raw = token
    token = token.strip()
    if percent and token.endswith("%"):
        token = token[:-1]
    scale = Decimal(1)
    if suffixes and token and token[-1] in _SUFFIX and len(token) > 1:
        scale = _SUFFIX[token[-1]]
        token = token[:-1]
    if thousands and _THOUSANDS.match(token):
        token = token.replace(",", "")
    if not _PLAIN.match(token):
        if re.match(r"^[+-]?\d+,\d+$", token):
            raise ParseError(
                f"{what} {raw.strip()!r} has a decimal comma (localized output); {comma_hint}",
                line,
            )
        raise ParseError(f"{what} {raw.strip()!r} is not a number", line)
    # Decimal, so '4.06 M' is exactly 4060000.0 and not 4059999.9999999995.
    exact = Decimal(token)  # as written: constructing a Decimal never rounds
    try:
        value = float(exact * scale)
    except ArithmeticError:  # an exponent past Decimal's own range: 1e999999999
        value = math.inf
    if not math.isfinite(value):
        raise ParseError(f"{what} {raw.strip()!r} is not a finite number", line)
    if value == 0 and exact != 0:  # 1e-400: no double holds it, 0.0 would be wrong
        raise ParseError(f"{what} {raw.strip()!r} is too small to store as a double", line)
    return value


def parse_optional(token: str, **kwargs: object) -> float | None:
    """Like parse_number, but the table conventions for 'no value' give None."""
    if token.strip() in _MISSING:
        return None
    return parse_number(token, **kwargs)  # type: ignore[arg-type]
