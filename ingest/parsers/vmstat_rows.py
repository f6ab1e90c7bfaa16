"""vmstat's rows as its parser reads them, and the columns made of them (ingest/parsers/vmstat.py).

A row is a tuple of its values next to the header it was read under, not a dict per row (a
1M-sample file has 62,500 rows); a run of plain rows read at once (plain_rows.py) is one
PlainBlock holding their values as an array.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ingest.parsers.base import Sample, SeriesColumn

# A data row: its line, the header it was read under, one value per header column, and its
# timestamp. A tuple, not a dict per row: a 1M-sample file has 62,500 rows.
Row = tuple[int, tuple[str, ...], tuple[float, ...], str | None]


@dataclass(frozen=True, slots=True)
class PlainBlock:
    """Consecutive plain rows read at once (ingest/parsers/plain_rows.py): what as many Rows
    from line ``line`` on would hold, with no timestamps, their values a rows x columns array
    of integers below 2**53 (read_block), each exactly its double."""

    line: int
    columns: tuple[str, ...]
    values: np.ndarray


Rows = list[Row | PlainBlock]


def series_columns(
    rows: Rows, flag_first: bool
) -> tuple[tuple[SeriesColumn, ...], tuple[Sample, ...]]:
    """A SeriesColumn per column present in every row; a column that only some rows have
    (the header changed mid-file) is kept as single Samples with their row numbers."""
    same = _same_columns(rows)
    if same is not None and any(isinstance(row, PlainBlock) for row in rows):
        stamps = _stamps(rows)
        table = _matrix(rows, len(same)).T  # a column per row (a view: no 800 kB copy)
        return tuple(
            SeriesColumn(
                "vmstat",
                name,
                tuple(column.astype(np.float64).tolist()),  # exact doubles, as floats
                first_is_since_boot=flag_first,
                timestamps=stamps,
            )
            for name, column in zip(same, table, strict=True)
        ), ()
    return _row_columns(_expanded(rows), flag_first)


def _expanded(rows: Rows) -> list[Row]:
    """Every row on its own, as _Reader._row stores it (plain blocks taken apart)."""
    out: list[Row] = []
    for row in rows:
        if isinstance(row, PlainBlock):
            out.extend(
                (row.line + k, row.columns, tuple(values), None)
                for k, values in enumerate(row.values.astype(np.float64).tolist())
            )
        else:
            out.append(row)
    return out


def _stamps(rows: Rows) -> tuple[str, ...]:
    """One timestamp per row ("" where none) if any row has one, else ()."""
    if not any(not isinstance(row, PlainBlock) and row[3] for row in rows):
        return ()
    return tuple(stamp or "" for _, _, _, stamp in _expanded(rows))


def _matrix(rows: Rows, width: int) -> np.ndarray:
    """All the rows' values as one rows x columns array (exact: a Python float is a double,
    a plain block's integers are below 2**53), plain blocks as read and the other rows in
    between in their order: integers when it is one plain block, else doubles."""
    parts: list[np.ndarray] = []
    single: list[tuple[float, ...]] = []
    for row in rows:
        if isinstance(row, PlainBlock):
            if single:
                parts.append(np.array(single, dtype=np.float64).reshape(-1, width))
                single = []
            parts.append(row.values)
        else:
            single.append(row[2])
    if single:
        parts.append(np.array(single, dtype=np.float64).reshape(-1, width))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _row_columns(
    rows: list[Row], flag_first: bool
) -> tuple[tuple[SeriesColumn, ...], tuple[Sample, ...]]:
    """series_columns for rows each on its own (no plain block), cell by cell."""
    stamps = tuple(stamp or "" for _, _, _, stamp in rows)
    same = _same_columns(rows)
    if same is not None:  # the usual file: one header, every row complete
        table = zip(*(values for _, _, values, _ in rows), strict=True)
        return tuple(
            SeriesColumn(
                "vmstat",
                name,
                column,
                first_is_since_boot=flag_first,
                timestamps=stamps if any(stamps) else (),
            )
            for name, column in zip(same, table, strict=True)
        ), ()
    by_name = [dict(zip(columns, values, strict=True)) for _, columns, values, _ in rows]
    names: list[str] = []
    for values in by_name:
        names.extend(c for c in values if c not in names)
    out = []
    partial: list[Sample] = []
    for name in names:
        cells = [values.get(name) for values in by_name]
        if any(cell is None for cell in cells):
            partial.extend(
                Sample("vmstat", name, i, v, flag_first and i == 0, stamps[i] or None)
                for i, v in enumerate(cells)
                if v is not None
            )
            continue
        out.append(
            SeriesColumn(
                "vmstat",
                name,
                tuple(cell for cell in cells if cell is not None),  # none is: checked above
                first_is_since_boot=flag_first,
                timestamps=stamps if any(stamps) else (),
            )
        )
    return tuple(out), tuple(partial)


def _same_columns(rows: Sequence[Row | PlainBlock]) -> tuple[str, ...] | None:
    """The columns, when every row has the same ones in the same order; else None."""
    if not rows:
        return None
    first = _columns_of(rows[0])
    return first if all(_columns_of(row) == first for row in rows) else None


def _columns_of(row: Row | PlainBlock) -> tuple[str, ...]:
    return row.columns if isinstance(row, PlainBlock) else row[1]


def row_count(rows: Rows) -> int:
    return sum(len(row.values) if isinstance(row, PlainBlock) else 1 for row in rows)
