"""What fio's three layouts share: units, exact numbers, metric names (docs/parsers/fio.md)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

from ingest.parsers.base import Better, Measurement, ParseError
from ingest.parsers.numbers import parse_number

DIRECTIONS = ("read", "write", "trim", "mixed")

# latency unit as fio prints it -> factor to microseconds
LAT_UNITS = {
    "nsec": Decimal("0.001"),
    "ns": Decimal("0.001"),
    "usec": Decimal(1),
    "us": Decimal(1),
    "msec": Decimal(1000),
    "ms": Decimal(1000),
}
# bandwidth unit -> factor to KiB/s (fio's binary units; B/s is bytes)
BW_UNITS = {
    "B": Decimal(1) / Decimal(1024),
    "KiB": Decimal(1),
    "MiB": Decimal(1024),
    "GiB": Decimal(1024**2),
    "TiB": Decimal(1024**3),
}
_SUFFIX = {"": Decimal(1), "k": Decimal(1000), "K": Decimal(1000), "M": Decimal(10**6)}
_EXACT = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))([kKM]?)$")


def exact(token: str, *, line: int | None, what: str, suffix: bool = False) -> Decimal:
    """One number as an exact Decimal; ``suffix`` allows fio's num2str ``10.9k`` / ``5.3M``."""
    token = token.strip()
    match = _EXACT.match(token)
    if not match or (match[2] and not suffix):
        parse_number(token, line=line, what=what)  # raises the shared, precise message
        raise ParseError(f"{what} {token!r} is not a number", line)
    return Decimal(match[1]) * _SUFFIX[match[2]]


def measurement(metric: str, value: Decimal | int, unit: str, better: Better) -> Measurement:
    return Measurement(metric, float(value), unit, better)


def percentile_name(prefix: str, percent: str, *, line: int | None) -> str:
    """``clat`` + ``99.900000`` -> ``clat_p99_9_us``: one name per percentile however printed."""
    value = exact(percent.rstrip("%").removesuffix("th"), line=line, what="percentile")
    text = format(value.normalize(), "f")
    return f"{prefix}_p{text.replace('.', '_')}_us"


def lat_stats(prefix: str, stats: Mapping[str, Decimal], factor: Decimal) -> list[Measurement]:
    """min/max/mean/stddev of one latency kind, converted to microseconds."""
    out = []
    for name in ("min", "max", "mean", "stddev"):
        if name in stats:
            out.append(measurement(f"{prefix}_{name}_us", stats[name] * factor, "us", "lower"))
    return out
