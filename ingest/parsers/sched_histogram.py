"""Run-queue length distribution and goodness() cost against run-queue length (seed 000).

Bryant & Hartner instrumented schedule() in 2.2.12 / 2.3.28 and reported the run-queue
length distribution (mean 32.2, sd 19.8, max 414) and the cycles spent in the goodness loop
against queue length, summarised as the slope of a linear fit (cycles per queue element).
Their trace output was never published, so the format is ours: docs/parsers/sched-histogram.md.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from ingest.parsers.base import Curve, Histogram, Measurement, ParseError, ParseResult, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_SECTION = re.compile(r"^#\s*(runqueue-length|goodness-cycles)\s*$", re.IGNORECASE)


def _sections(text: str) -> dict[str, list[tuple[float, float, int]]]:
    sections: dict[str, list[tuple[float, float, int]]] = {}
    current: str | None = None
    for number, line in numbered_lines(text):
        stripped = line.strip()
        if not stripped:
            continue
        section = _SECTION.match(stripped)
        if section:
            current = section.group(1).lower()
            if current in sections:
                raise ParseError(f"section '# {current}' appears twice", number)
            sections[current] = []
            continue
        if stripped.startswith("#"):
            continue
        if current is None:
            raise ParseError("data before any '# runqueue-length' or '# goodness-cycles'", number)
        fields = stripped.split()
        if len(fields) != 2:
            raise ParseError(f"expected 'length value', found {len(fields)} fields", number)
        x = parse_number(fields[0], line=number, what="run-queue length")
        y = parse_number(fields[1], line=number, what="count" if "length" in current else "cycles")
        if x < 0 or y < 0:
            raise ParseError("run-queue lengths, counts and cycles cannot be negative", number)
        sections[current].append((x, y, number))
    return sections


def distribution_stats(bins: list[tuple[float, float]]) -> tuple[float, float, float]:
    """Mean, sample standard deviation and maximum of a (value, count) distribution."""
    n = sum(count for _, count in bins)
    mean = sum(value * count for value, count in bins) / n
    squares = sum(count * (value - mean) ** 2 for value, count in bins)
    sd = math.sqrt(squares / (n - 1)) if n > 1 else 0.0
    return mean, sd, max(value for value, count in bins if count > 0)


def slope(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of y on x: the cost of one more run-queue element."""
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    sxx = sum((x - mean_x) ** 2 for x, _ in points)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    return sxy / sxx


def _histogram(rows: list[tuple[float, float, int]]) -> tuple[Histogram, list[Measurement]]:
    bins = [(x, y) for x, y, _ in rows]
    if sum(count for _, count in bins) <= 0:
        raise ParseError(
            "the run-queue length histogram has no counts", rows[0][2] if rows else None
        )
    mean, sd, top = distribution_stats(bins)
    return Histogram("runqueue_length", "run-queue length (tasks)", tuple(bins)), [
        Measurement("runqueue_length_mean", mean, "tasks", "lower"),
        Measurement("runqueue_length_sd", sd, "tasks", "lower"),
        Measurement("runqueue_length_max", top, "tasks", "lower"),
    ]


def _curve(rows: list[tuple[float, float, int]]) -> tuple[Curve, list[Measurement]]:
    points = sorted((x, y) for x, y, _ in rows)
    curve = Curve("goodness_cycles", "run-queue length (tasks)", "cycles", tuple(points))
    if len({x for x, _ in points}) < 2:
        line = rows[0][2] if rows else None
        raise ParseError("goodness-cycles needs at least two different lengths for a slope", line)
    return curve, [Measurement("goodness_cycles_per_element", slope(points), "cycles", "lower")]


@register("sched-histogram")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Either section may be missing; a file with neither is rejected."""
    sections = _sections(text)
    if not sections:
        raise ParseError("no '# runqueue-length' or '# goodness-cycles' section found")
    measurements: list[Measurement] = []
    histograms: tuple[Histogram, ...] = ()
    curves: tuple[Curve, ...] = ()
    if "runqueue-length" in sections:
        histogram, found = _histogram(sections["runqueue-length"])
        histograms, measurements = (histogram,), measurements + found
    if "goodness-cycles" in sections:
        curve, found = _curve(sections["goodness-cycles"])
        curves, measurements = (curve,), measurements + found
    return ParseResult(measurements=tuple(measurements), histograms=histograms, curves=curves)
