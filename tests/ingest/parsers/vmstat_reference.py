"""The vmstat parser as it was before plain rows were read in blocks (ingest/parsers/plain_rows.py),
kept verbatim (commit 04d2fb9's ingest/parsers/vmstat.py, not registered) as the reference
that tests/ingest/parsers/test_plain_rows.py compares today's parser with, value for
value, bit for bit. Not used by the application.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping

from ingest.parsers.base import (
    Measurement,
    ParseError,
    ParseResult,
    Record,
    Sample,
    SeriesColumn,
    group_records,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import key_by_headings
from ingest.parsers.text import numbered_lines

UNITS = {
    "r": "tasks",
    "b": "tasks",
    "w": "tasks",
    "swpd": "KiB",
    "free": "KiB",
    "buff": "KiB",
    "cache": "KiB",
    "inact": "KiB",
    "active": "KiB",
    "si": "KiB/s",
    "so": "KiB/s",
    "bi": "blocks/s",
    "bo": "blocks/s",
    "in": "/s",
    "cs": "/s",
    "us": "%",
    "sy": "%",
    "id": "%",
    "wa": "%",
    "st": "%",
    "gu": "%",
}
_TZ = re.compile(r"^[A-Z]{2,5}[+-]?\d*$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}$")
_NUMBERISH = re.compile(r"^[+-]?[\d.,]+$|^[+-]?(?:nan|inf)$", re.IGNORECASE)


def _header(tokens: list[str]) -> tuple[tuple[str, ...], bool] | None:
    """Column names and whether a timestamp column follows, if this line is a header."""
    timestamp = False
    if tokens and _TZ.match(tokens[-1]) and tokens[-1].lower() not in UNITS:
        tokens, timestamp = tokens[:-1], True
    if len(tokens) < 3 or any(t not in UNITS for t in tokens) or len(set(tokens)) != len(tokens):
        return None
    return tuple(tokens), timestamp


def _is_group_header(line: str) -> bool:
    return line.lstrip().startswith("procs")


# A data row: its line, the header it was read under, one value per header column, and its
# timestamp. A tuple, not a dict per row: a 1M-sample file has 62,500 rows.
Row = tuple[int, tuple[str, ...], tuple[float, ...], str | None]
Rows = list[Row]


class _Reader:
    """Walks the lines once, keeping the current header; rows before any header wait for it."""

    def __init__(self) -> None:
        self.columns: tuple[str, ...] | None = None
        self.timestamp = False
        self.pending: list[tuple[int, list[str]]] = []
        self.rows: Rows = []
        self.warnings: list[str] = []
        # Blocks: a header after prose or a blank line starts another vmstat run (a mail
        # pasting "vmstat (2.4.20aa1)" then "vmstat (2.4.20rmap)"); a header repeated right
        # under the rows (vmstat reprints it) does not.
        self.blocks: list[tuple[int, Rows]] = []
        self.start = 0
        self.gap = False
        self.short_rows: list[int] = []

    def finish(self) -> None:
        """Close the current block."""
        if self.rows:
            self.blocks.append((self.start, self.rows))
        elif self.columns is not None and self.short_rows:
            raise ParseError(
                f"vmstat rows do not have one field per column ({len(self.columns)} columns "
                "in the header): mail-wrapped rows or header? Unwrap them",
                self.short_rows[0],
            )
        self.rows, self.short_rows = [], []

    def feed(self, number: int, line: str) -> None:
        tokens = line.split()
        if not tokens:
            self.gap = True
            return
        joined = "".join(tokens)
        if joined.isdigit():  # the usual data row: plain counts, nothing to check
            self._data(number, tokens, plain=joined.isascii())
            return
        if _is_group_header(line):
            return
        header = _header(tokens)
        if header is not None:
            self._set_header(number, *header)
            return
        if not all(_NUMBERISH.match(t) or _DATE.match(t) or _TIME.match(t) for t in tokens):
            self.gap = True
            self.warnings.append(f"line {number}: not vmstat output, skipped: {line.strip()!r}")
            return
        self._data(number, tokens)

    def _data(self, number: int, tokens: list[str], plain: bool | None = None) -> None:
        if self.columns is None:
            self.pending.append((number, tokens))
        else:
            self._row(number, tokens, plain)

    def _set_header(self, number: int, columns: tuple[str, ...], timestamp: bool) -> None:
        if self.columns is not None and (self.gap or not self.rows):
            self.finish()  # another run pasted below the first
            self.columns = None
        if self.columns is None:
            self.start = number
        self.gap = False
        if self.columns is not None and columns != self.columns:
            self.warnings.append(f"line {number}: the column header changes here")
        first = self.columns is None
        self.columns, self.timestamp = columns, timestamp
        if first:
            if self.pending:
                self.warnings.append(f"line {number}: header after the data; applied to it")
            for pending_number, tokens in self.pending:
                self._row(pending_number, tokens)
            self.pending = []

    def _row(self, number: int, tokens: list[str], plain: bool | None = None) -> None:
        """``plain``: the caller already knows whether every token is ASCII digits."""
        assert self.columns is not None
        stamp = None
        if self.timestamp and len(tokens) >= 2 and _DATE.match(tokens[-2]):
            stamp = f"{tokens[-2]} {tokens[-1]}"
            tokens, plain = tokens[:-2], None
        self.gap = False
        if len(tokens) != len(self.columns):
            self.warnings.append(
                f"line {number}: {len(tokens)} fields for {len(self.columns)} columns, skipped"
            )
            self.short_rows.append(number)
            return
        if plain is None:
            joined = "".join(tokens)
            plain = joined.isdigit() and joined.isascii()
        if plain:
            values = tuple(map(float, tokens))  # plain counts
        else:
            values = tuple(
                parse_number(token, line=number, what=f"vmstat {column}")
                for column, token in zip(self.columns, tokens, strict=True)
            )
        self.rows.append((number, self.columns, values, stamp))


def _means(
    columns: tuple[SeriesColumn, ...], partial: tuple[Sample, ...]
) -> tuple[Measurement, ...]:
    """Per-column means without the since-boot row."""
    by_column = {
        c.column: list(c.values[1:] if c.first_is_since_boot else c.values) for c in columns
    }
    for sample in partial:
        if not sample.since_boot:
            by_column.setdefault(sample.column, []).append(sample.value)
    return tuple(
        Measurement(f"vmstat_{name}_mean", statistics.fmean(values), UNITS[name], "none")
        for name, values in by_column.items()
        if values
    )


def _columns(rows: Rows, flag_first: bool) -> tuple[tuple[SeriesColumn, ...], tuple[Sample, ...]]:
    """A SeriesColumn per column present in every row; a column that only some rows have
    (the header changed mid-file) is kept as single Samples with their row numbers."""
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


def _same_columns(rows: Rows) -> tuple[str, ...] | None:
    """The columns, when every row has the same ones in the same order; else None."""
    if not rows:
        return None
    first = rows[0][1]
    return first if all(columns is first or columns == first for _, columns, _, _ in rows) else None


def _record(start: int, rows: Rows, flag_first: bool, warnings: list[str]) -> Record:
    columns, partial = _columns(rows, flag_first)
    if flag_first and len(rows) == 1:
        warnings.append(f"line {start}: only the since-boot row: no means computed")
    return Record(
        line=start, measurements=_means(columns, partial), columns=columns, samples=partial
    )


def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Samples for every cell, and per-column means without the since-boot row.

    One record per vmstat run pasted in the file; runs under different headings
    (``vmstat (2.4.20aa1)``) are keyed by them (run_labels.key_by_headings), never merged.
    Option ``first_row_since_boot`` (default True): set False for an excerpt that does not
    start at vmstat's first row.
    """
    reader = _Reader()
    lines = numbered_lines(text)
    for number, line in lines:
        reader.feed(number, line)
    if reader.columns is None and not reader.blocks:
        raise ParseError("no vmstat column header (a line such as 'r b swpd free ... id') found")
    reader.finish()
    if not reader.blocks:
        raise ParseError("vmstat header found but no data rows could be read")
    flag_first = bool(options.get("first_row_since_boot", True))
    warnings = list(reader.warnings)
    records = [_record(start, rows, flag_first, warnings) for start, rows in reader.blocks]
    records = key_by_headings(records, lines, warnings, skip=_is_group_header)
    if len(group_records(records)) < len(records):
        warnings.append(
            f"{len(records)} vmstat runs with nothing telling them apart are stored as trials"
        )
    return ParseResult(
        records=tuple(records),
        warnings=tuple(warnings),
        metadata={"vmstat_columns": " ".join(reader.columns or ())},
    )
