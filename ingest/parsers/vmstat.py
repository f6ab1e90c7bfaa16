"""vmstat output from procps 2.x (2.2/2.4, with `w`) through procps-ng 4 (`st`, `gu`, `-t`).

Columns are found by header name, never by position: the set changed across procps releases
and users paste only the columns they care about. Rows are split on whitespace because wide
values push the fixed columns out of line. The first data row is vmstat's average since boot,
so it is flagged and left out of the means.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping, Sequence

import numpy as np

from ingest.parsers.base import (
    Measurement,
    ParseError,
    ParseResult,
    Record,
    Sample,
    SeriesColumn,
    group_records,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.plain_rows import PlainRows, read_block, split_lines
from ingest.parsers.run_labels import key_by_headings
from ingest.parsers.text import numbered_lines, strip_mail_quotes
from ingest.parsers.vmstat_rows import PlainBlock, Rows, row_count, series_columns

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

    def width(self) -> int:
        """Tokens in a plain row under the current header; 0 before any header (rows then
        wait for one, token by token)."""
        return len(self.columns) if self.columns is not None else 0

    def plain_block(self, number: int, values: np.ndarray) -> None:
        """Plain rows from line ``number`` on (ingest/parsers/plain_rows.py), stored as
        ``_row`` stores each: under the current header, no timestamp (a plain row has none)."""
        assert self.columns is not None
        self.gap = False
        self.rows.append(PlainBlock(number, self.columns, values))

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
    by_column: dict[str, Sequence[float]] = {
        c.column: c.values[1:] if c.first_is_since_boot else c.values for c in columns
    }
    for sample in partial:
        if not sample.since_boot:
            values = by_column.get(sample.column, ())
            if not isinstance(values, list):
                values = by_column[sample.column] = list(values)
            values.append(sample.value)
    return tuple(
        Measurement(f"vmstat_{name}_mean", statistics.fmean(values), UNITS[name], "none")
        for name, values in by_column.items()
        if values
    )


def _record(start: int, rows: Rows, flag_first: bool, warnings: list[str]) -> Record:
    columns, partial = series_columns(rows, flag_first)
    if flag_first and row_count(rows) == 1:
        warnings.append(f"line {start}: only the since-boot row: no means computed")
    return Record(
        line=start, measurements=_means(columns, partial), columns=columns, samples=partial
    )


# Fewer plain rows than this in a row are read token by token: not worth numpy's call.
MIN_BLOCK = 4


def _read(reader: _Reader, text: str) -> None:
    """Feed every line to the reader; runs of plain rows under its header go at once."""
    lines = split_lines(text)
    plain = PlainRows(lines)
    i = 0
    while i < len(lines):
        width = reader.width()
        end = plain.block_end(i, width)
        if end - i >= MIN_BLOCK:
            reader.plain_block(i + 1, read_block(lines, i, end, width))
            i = end
        else:
            reader.feed(i + 1, strip_mail_quotes(lines[i]))
            i += 1


@register("vmstat")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Samples for every cell, and per-column means without the since-boot row.

    One record per vmstat run pasted in the file; runs under different headings
    (``vmstat (2.4.20aa1)``) are keyed by them (run_labels.key_by_headings), never merged.
    Option ``first_row_since_boot`` (default True): set False for an excerpt that does not
    start at vmstat's first row.
    """
    reader = _Reader()
    _read(reader, text)
    if reader.columns is None and not reader.blocks:
        raise ParseError("no vmstat column header (a line such as 'r b swpd free ... id') found")
    reader.finish()
    if not reader.blocks:
        raise ParseError("vmstat header found but no data rows could be read")
    flag_first = bool(options.get("first_row_since_boot", True))
    warnings = list(reader.warnings)
    records = [_record(start, rows, flag_first, warnings) for start, rows in reader.blocks]
    if len(records) > 1:  # one record has nothing to be told apart from
        records = key_by_headings(records, numbered_lines(text), warnings, skip=_is_group_header)
    if len(group_records(records)) < len(records):
        warnings.append(
            f"{len(records)} vmstat runs with nothing telling them apart are stored as trials"
        )
    return ParseResult(
        records=tuple(records),
        warnings=tuple(warnings),
        metadata={"vmstat_columns": " ".join(reader.columns or ())},
    )
