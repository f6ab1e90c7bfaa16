"""Time series (vmstat, schedstat, dbench per-second lines) as stored: one row per column.

Parsers report one value per row and column; the database keeps a column's values as one
array, because series are always written whole and read whole, and a million-sample vmstat
log is then a few dozen rows rather than a million. Pure functions, no Django.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# (trial, source, column, index, value, since_boot, timestamp)
SampleRow = tuple[int, str, str, int, float, bool, str]


@dataclass(frozen=True)
class Column:
    """One column of one series, values in row order."""

    trial: int
    source: str
    column: str
    values: Sequence[float]  # a parser's tuple as it is (a 100k-sample log: no 800 kB copy)
    indexes: list[int] | None  # None when the rows are 0, 1, 2, … with no gap
    first_is_since_boot: bool
    timestamps: list[str]  # [] when the tool printed none

    def preview(self, max_points: int) -> tuple[Sequence[float], list[str], int]:
        """(values, timestamps, k): every k-th row, at most ``max_points`` of them, for charts.

        Row 0 is always kept, so a since-boot first row stays first.
        """
        k = stride(len(self.values), max_points)
        return self.values[::k], self.timestamps[::k], k


def columns_from_samples(samples: Iterable[SampleRow]) -> list[Column]:
    """Group per-value samples into columns, ordered by row index."""
    grouped: dict[tuple[int, str, str], list[tuple[int, float, bool, str]]] = {}
    for trial, source, column, index, value, since_boot, stamp in samples:
        grouped.setdefault((trial, source, column), []).append((index, value, since_boot, stamp))
    out = []
    for (trial, source, column), rows in grouped.items():
        rows.sort(key=lambda r: r[0])
        indexes = [r[0] for r in rows]
        stamps = [r[3] or "" for r in rows]
        out.append(
            Column(
                trial=trial,
                source=source,
                column=column,
                values=[r[1] for r in rows],
                indexes=None if indexes == list(range(len(indexes))) else indexes,
                first_is_since_boot=bool(rows and rows[0][0] == 0 and rows[0][2]),
                timestamps=stamps if any(stamps) else [],
            )
        )
    return out


# Charts draw at most this many rows of a series; the writer stores such a preview.
PREVIEW_POINTS = 1000  # a chart 1,200 px wide shows no more


def stride(length: int, max_points: int) -> int:
    """Keep every k-th row so a chart gets at most ``max_points`` rows of a series."""
    return max(1, math.ceil(length / max_points)) if max_points > 0 else 1
