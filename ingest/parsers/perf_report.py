"""``perf report --stdio`` listings as kernel profiles (docs/parsers/perf-report.md).

A profile entry needs a tick count, and perf prints one only with ``-n`` (the ``Samples``
column: the entry's own samples, also under ``--children``). Percentages alone are not turned
into ticks: the ``# Samples: 10K`` header is rounded, so any count derived from it would be
invented. Without a ``Samples`` column the file is refused, unless ``options rows = true``
asks for the percentages as plain measurements (one record per row). ``Children`` shares
include callees and have no sample count; they are only kept in ``rows`` mode.

Records: one per event (``# Samples: ... of event 'cycles'``) and, when those columns are
present, per ``command`` and ``shared_object``. Each profile record also gets
``scheduler_share_pct`` and ``idle_share_pct``: the summed shares of the scheduler and idle
functions of a current kernel (the modern sets of perfdb/kernels/functions.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ingest.parsers.base import (
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    ProfileEntry,
    Record,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines
from perfdb.kernels.functions import IDLE_FUNCTIONS_MODERN as MODERN_IDLE_FUNCTIONS
from perfdb.kernels.functions import SCHEDULER_FUNCTIONS_MODERN as MODERN_SCHEDULER_FUNCTIONS

_NUMERIC_COLUMNS = {"Overhead", "Children", "Self", "Samples", "Period"}
_PCT_COLUMNS = {"Overhead": "overhead_pct", "Children": "children_pct", "Self": "self_pct"}
_SAMPLES = re.compile(r"^#\s*Samples:\s*(?P<count>\S+)\s+of event '(?P<event>[^']*)'")
_EVENT_COUNT = re.compile(r"^#\s*Event count \(approx\.\):\s*(?P<count>\d+)")
_ROW = re.compile(r"^\s*\d+\.\d+%\s")
_MARKER = re.compile(r"\[[k.gHuv]\]\s+")


@dataclass
class _Row:
    line: int
    event: str
    numbers: dict[str, str]  # column -> token as printed
    texts: dict[str, str]  # Command, Shared Object, ... -> text
    symbol: str | None


@dataclass
class _Listing:
    rows: list[_Row] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    header_line: int | None = None
    event: str = ""
    event_counts: dict[str, int] = field(default_factory=dict)


def _columns(text: str) -> list[str]:
    return [c.strip() for c in re.split(r"\s{2,}", text.lstrip("#").strip()) if c.strip()]


def _row(listing: _Listing, text: str, line: int) -> _Row:
    rest = text.strip()
    numbers: dict[str, str] = {}
    for column in listing.columns:
        if column not in _NUMERIC_COLUMNS:
            break
        token, _, rest = rest.partition(" ")
        numbers[column] = token
        rest = rest.lstrip()
    text_columns = [c for c in listing.columns if c not in _NUMERIC_COLUMNS]
    symbol = None
    if "Symbol" in text_columns:
        before = text_columns[: text_columns.index("Symbol")]
        marker = _MARKER.search(rest)
        if marker is None or (not before and marker.start() != 0):
            raise ParseError("perf report row has no [k]/[.] symbol marker", line)
        symbol = rest[marker.end() :].strip()
        if "IPC" in text_columns[text_columns.index("Symbol") + 1 :]:
            symbol = symbol.rsplit(None, 2)[0]
        pieces = [p for p in re.split(r"\s{2,}", rest[: marker.start()].strip()) if p]
    else:
        before, pieces = text_columns, [p for p in re.split(r"\s{2,}", rest) if p]
    if len(pieces) != len(before):
        raise ParseError(f"perf report row has {len(pieces)} values for the columns {before}", line)
    return _Row(line, listing.event, numbers, dict(zip(before, pieces, strict=True)), symbol)


def _read(lines: list[tuple[int, str]]) -> _Listing:
    listing = _Listing()
    for number, line in lines:
        stripped = line.strip()
        if match := _SAMPLES.match(stripped):
            listing.event, listing.columns = match["event"], []
            continue
        if match := _EVENT_COUNT.match(stripped):
            listing.event_counts[listing.event] = int(match["count"])
            continue
        if stripped.startswith("#") and re.match(r"#\s*(Overhead|Children)\s", stripped):
            listing.columns, listing.header_line = _columns(stripped), number
            continue
        if _ROW.match(line) and not stripped.startswith(("|", "-")):
            if not listing.columns:
                raise ParseError(
                    "perf report row before any '# Overhead ...' column header; the columns "
                    "cannot be told apart",
                    number,
                )
            listing.rows.append(_row(listing, line, number))
    return listing


def _keys(row: _Row) -> dict[str, KeyValue]:
    keys: dict[str, KeyValue] = {"event": row.event} if row.event else {}
    for column, key in (("Command", "command"), ("Shared Object", "shared_object")):
        if column in row.texts:
            keys[key] = row.texts[column]
    return keys


def _pct(token: str, line: int, what: str) -> float:
    return parse_number(token, line=line, what=what, percent=True)


def _row_records(rows: list[_Row]) -> list[Record]:
    records = []
    for row in rows:
        keys = _keys(row)
        if row.symbol is not None:
            keys["symbol"] = row.symbol
        found = [
            Measurement(_PCT_COLUMNS[c], _pct(t, row.line, c), "%", "none")
            for c, t in row.numbers.items()
            if c in _PCT_COLUMNS
        ]
        for column in ("Samples", "Period"):
            if column in row.numbers:
                value = parse_number(row.numbers[column], line=row.line, what=column)
                found.append(Measurement(column.lower(), value, "count", "none"))
        records.append(Record(keys=keys, line=row.line, measurements=tuple(found)))
    return records


def _base_name(function: str) -> str:
    """``finish_task_switch.isra.0`` is finish_task_switch (a compiler clone)."""
    return function.split(".", 1)[0] if not function.startswith(".") else function


def _name_set(options: Mapping[str, object], key: str, default: Iterable[str]) -> frozenset[str]:
    value = options.get(key, default)
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")]
    if not isinstance(value, Iterable):
        raise ParseError(f"option {key} must be a list of function names")
    return frozenset(str(name) for name in value if str(name))


def _shares(
    rows: list[_Row], share_column: str, options: Mapping[str, object]
) -> list[Measurement]:
    """Summed printed shares (Decimal, so 1.16 + 0.5 is 1.66) of scheduler and idle functions."""
    found = []
    for metric, key, default in (
        ("scheduler_share_pct", "scheduler_functions", MODERN_SCHEDULER_FUNCTIONS),
        ("idle_share_pct", "idle_functions", MODERN_IDLE_FUNCTIONS),
    ):
        names = _name_set(options, key, default)
        total = sum(
            (
                Decimal(r.numbers[share_column].rstrip("%"))
                for r in rows
                if _base_name(r.symbol or "") in names
            ),
            Decimal(0),
        )
        found.append(Measurement(metric, float(total), "%", "none"))
    return found


def _profile_records(listing: _Listing, options: Mapping[str, object]) -> list[Record]:
    share_column = "Self" if "Self" in listing.columns else "Overhead"
    groups: dict[tuple[tuple[str, str], ...], list[_Row]] = {}
    for row in listing.rows:
        groups.setdefault(tuple((k, str(v)) for k, v in _keys(row).items()), []).append(row)
    records = []
    for rows in groups.values():
        seen: dict[str, int] = {}
        entries = []
        for row in rows:
            symbol = row.symbol or ""
            if symbol in seen:
                raise ParseError(
                    f"symbol {symbol!r} listed twice for {_keys(row)} (first at line "
                    f"{seen[symbol]}); add the column that tells them apart to --sort",
                    row.line,
                )
            seen[symbol] = row.line
            ticks = parse_number(row.numbers["Samples"], line=row.line, what="Samples")
            share = _pct(row.numbers[share_column], row.line, share_column)
            entries.append(ProfileEntry(function=symbol, ticks=ticks, share_pct=share))
        records.append(
            Record(
                keys=_keys(rows[0]),
                line=rows[0].line,
                profile=tuple(entries),
                measurements=tuple(_shares(rows, share_column, options)),
            )
        )
    return records


@register("perf-report")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    listing = _read(numbered_lines(text))
    if not listing.rows:
        raise ParseError("no perf report rows (lines like '    12.34%  cmd  dso  [k] symbol')")
    warnings: list[str] = []
    metadata: dict[str, str | int | float] = {
        f"event_count {event}" if event else "event_count": count
        for event, count in listing.event_counts.items()
    }
    if options.get("rows"):
        records = _row_records(listing.rows)
    else:
        if "Samples" not in listing.columns:
            raise ParseError(
                "perf report without a Samples column: the sample counts are not printed "
                "and are not derived from percentages; re-run it as perf report -n --stdio "
                "to store the profile",
                listing.header_line,
            )
        if "Symbol" not in listing.columns:
            raise ParseError(
                "perf report without a Symbol column: not a profile", listing.header_line
            )
        if "Children" in listing.columns:
            warnings.append(
                "Children shares (callees included, no sample counts) are not stored in the "
                "profile; set options rows = true to read them"
            )
        records = _profile_records(listing, options)
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
