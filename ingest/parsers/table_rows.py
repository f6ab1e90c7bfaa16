"""Tables laid out the other way round (option ``layout = "rows"``): a row per measured
quantity, a column per kernel or configuration, the unit often printed once at the row's end:

    Unixbench-4.2.0                 2.4.18rc2aa2  2.4.18-rc2  2.4.18-rc2-jam1
    Execl Throughput                       381.0       303.7        299.0 lps
    Shell Scripts (1 concurrent)           698.0       612.1        620.7 lpm

Each column after the first is one record (``label`` = its header, as printed); each row is a
metric named by its label, in the unit its cells print. A unit printed on only some cells of a
row is the row's unit only when it is on the last number (the row's end); anywhere else, or two
different units in one row, the row is refused with its line."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ingest.parsers.base import Better, KeyValue, Measurement, ParseError, Record
from ingest.parsers.table_cells import (
    Cell,
    build_records,
    direction,
    option_entry,
    read_cell,
    snake_case,
)

LAYOUTS = ("columns", "rows")


def build_table_records(
    table: Any, tag: int | None, options: Mapping[str, object], warnings: list[str]
) -> list[Record]:
    """The records of one table in the layout the options ask for. A table refused as columns
    that reads cleanly as rows is still refused, with the option that reads it named: the
    layout is the user's statement, never a guess."""
    layout = options.get("layout", "columns")
    if layout not in LAYOUTS:
        raise ParseError(f"option layout = {layout!r}: give 'columns' (default) or 'rows'")
    if layout == "rows":
        return build_row_records(table, tag, options, warnings)
    try:
        return build_records(table, tag, options, warnings)
    except ParseError as error:
        try:
            build_row_records(table, tag, options, [])
        except ParseError:
            raise error from None
        hint = f"{error.message} (a row per quantity, the unit at its end? give option layout = "
        raise ParseError(
            hint + f'"rows" with header_line = {table.header_line})', error.line
        ) from error


def _row_unit(label: str, line: int, cells: Sequence[Cell]) -> str | None:
    """The one unit a row's numbers are in: printed on each of them, or once at the end."""
    numbers = [c for c in cells if c.kind == "number"]
    units = {c.unit for c in numbers if c.unit}
    if len(units) > 1:
        raise ParseError(f"row {label!r} prints two units: {sorted(units)}", line)
    if not units:
        return None
    printed = [c.unit is not None for c in numbers]
    if not (all(printed) or (printed[-1] and not any(printed[:-1]))):
        raise ParseError(
            f"row {label!r}: a unit on some numbers but not on the last one; "
            "print it on every number or once at the row's end",
            line,
        )
    return units.pop()


def _row_measurements(
    table: Any, row: Any, options: Mapping[str, object], warnings: list[str]
) -> dict[int, Measurement] | None:
    """The row's measurement per column index, or None when the row is skipped."""
    label = " ".join(row.cells[0].split())
    if not label:
        raise ParseError("row without a label in its first column", row.line)
    spec = option_entry(label, options, "rows")
    if spec is None:
        return None
    thousands = bool(options.get("thousands", True))
    cells = {
        i: read_cell(row.cells[i], line=row.line, what=f"{label!r}", thousands=thousands)
        for i in range(1, len(table.columns))
    }
    for cell in cells.values():
        if cell.kind == "text" or len(cell.values) > 1 or cell.spread is not None:
            raise ParseError(f"row {label!r}: {cell.note or 'a cell'} is not one number", row.line)
    unit = str(spec.get("unit") or _row_unit(label, row.line, list(cells.values())) or "")
    if not unit:
        warnings.append(f"row {label!r} states no unit; give one with option rows")
    better = spec.get("better") or options.get("better") or direction(table.title) or "none"
    if better not in ("higher", "lower", "none"):
        raise ParseError(f"row {label!r}: better must be higher, lower or none, not {better!r}")
    b: Better = better  # type: ignore[assignment]
    metric = str(spec.get("metric") or snake_case(label))
    return {
        i: Measurement(metric, cell.values[0], unit, b)
        for i, cell in cells.items()
        if cell.kind == "number"
    }


def build_row_records(
    table: Any, tag: int | None, options: Mapping[str, object], warnings: list[str]
) -> list[Record]:
    """One Record per column after the first, its measurements one per row."""
    by_column: dict[int, list[Measurement]] = {i: [] for i in range(1, len(table.columns))}
    first_line: dict[str, int] = {}
    for row in table.rows:
        measured = _row_measurements(table, row, options, warnings)
        if measured is None:
            continue
        for index, measurement in measured.items():
            by_column[index].append(measurement)
        metric = next(iter(measured.values())).metric if measured else None
        if metric is not None:
            if metric in first_line:
                message = f"rows at lines {first_line[metric]} and {row.line} both give {metric!r}"
                raise ParseError(message + "; rename one with option rows", row.line)
            first_line[metric] = row.line
    records = []
    for index, measurements in by_column.items():
        name = " ".join(table.columns[index].name.split())
        if not name:
            raise ParseError(f"column {index + 1} has no header to name its record")
        keys: dict[str, KeyValue] = {"label": name}
        if tag is not None:
            keys["table"] = tag
        if measurements:
            records.append(
                Record(keys=keys, line=table.header_line, measurements=tuple(measurements))
            )
    return records
