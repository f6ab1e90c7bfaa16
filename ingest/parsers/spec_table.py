"""SPEC results as a table pasted in a mail (docs/parsers/spec-summary.md).

SPECweb99 results of the 2.5 era were posted as hand-made tables: one row per kernel or
configuration, column names over one or two lines, a rule of ``=`` or ``-`` runs under them::

    kernel    preemption     conforming     percent
              threshold      connections    improvement
    ======    ===========    ===========    ===========
    2.5.33    0 (default)    2906           baseline

Cells are found by the rule's column spans (a cell such as ``0 (default)`` holds a space).
Columns naming a SPEC metric are measurements; a comparison column (``percent improvement``)
is derived from the others and not stored; every other column tells rows apart and becomes a
record key, ``kernel`` as ``label``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ingest.parsers.base import Better, KeyValue, Measurement, ParseError, Record
from ingest.parsers.numbers import parse_number

# Normalized column name -> (metric, unit, better).
TABLE_METRICS: dict[str, tuple[str, str, Better]] = {
    "conforming connections": ("conforming_connections", "connections", "higher"),
    "conforming": ("conforming_connections", "connections", "higher"),
    "simultaneous connections": ("conforming_connections", "connections", "higher"),
    "conforming simultaneous connections": ("conforming_connections", "connections", "higher"),
    "specweb99": ("conforming_connections", "connections", "higher"),
    "ops per sec": ("ops_per_s", "ops/s", "higher"),
    "ops per s": ("ops_per_s", "ops/s", "higher"),
    "ops sec": ("ops_per_s", "ops/s", "higher"),
    "ops per second": ("ops_per_s", "ops/s", "higher"),
}
_DERIVED = re.compile(r"\b(?:improvement|change|diff|delta|ratio|speedup|gain)\b")
_RULE = re.compile(r"^\s*(?:=+|-+)(?:\s+(?:=+|-+))+\s*$")
_KEY_NAMES = {"kernel": "label", "kernel version": "label", "os": "label"}


def normalize(label: str) -> str:
    """``ops/sec`` -> ``ops per sec``, ``Conforming  Connections`` -> ``conforming connections``."""
    label = label.lower().replace("%", " pct ").replace("/", " per ")
    return " ".join(re.sub(r"[^a-z0-9]+", " ", label).split())


@dataclass(frozen=True)
class _Column:
    label: str
    start: int
    end: int


def _cells(line: str, columns: list[_Column]) -> list[str]:
    """Each token goes to the column its characters overlap most (nearest when none)."""
    cells: list[list[str]] = [[] for _ in columns]
    for match in re.finditer(r"\S+", line):
        start, end = match.start(), match.end() - 1

        def score(i: int, start: int = start, end: int = end) -> tuple[int, int]:
            col = columns[i]
            overlap = min(end, col.end) - max(start, col.start) + 1
            return (max(overlap, 0), -max(col.start - end, start - col.end, 0))

        cells[max(range(len(columns)), key=score)].append(match.group())
    return [" ".join(cell) for cell in cells]


def _key(label: str) -> str:
    name = normalize(label)
    return _KEY_NAMES.get(name, name.replace(" ", "_"))


def _key_value(cell: str) -> KeyValue:
    return int(cell) if cell.isdigit() else cell


def read_tables(
    lines: list[tuple[int, str]], options: Mapping[str, object], warnings: list[str]
) -> list[Record]:
    """One record per row of every rule-separated table that has a SPEC metric column."""
    records: list[Record] = []
    texts = [(n, line.expandtabs().rstrip()) for n, line in lines]
    for index, (_, line) in enumerate(texts):
        if not _RULE.match(line):
            continue
        header_start = index
        while header_start > 0 and texts[header_start - 1][1].strip() and index - header_start < 3:
            header_start -= 1
        if header_start == index:
            continue
        spans = [(m.start(), m.end() - 1) for m in re.finditer(r"[=-]+", line)]
        bare = [_Column("", lo, hi) for lo, hi in spans]
        header_cells = [_cells(text, bare) for _, text in texts[header_start:index]]
        columns = [
            _Column(" ".join(cells[i] for cells in header_cells if cells[i]), lo, hi)
            for i, (lo, hi) in enumerate(spans)
        ]
        if not any(normalize(c.label) in TABLE_METRICS for c in columns):
            continue
        records.extend(_rows(texts, index, columns, options, warnings))
    return records


def _rows(
    texts: list[tuple[int, str]],
    rule: int,
    columns: list[_Column],
    options: Mapping[str, object],
    warnings: list[str],
) -> list[Record]:
    body = rule + 1
    while body < len(texts) and not texts[body][1].strip():
        body += 1  # a blank line between the rule and the rows
    records = []
    header_line = texts[rule][0]
    derived = [c.label for c in columns if _DERIVED.search(normalize(c.label))]
    if derived:
        warnings.append(
            f"line {header_line}: column(s) {', '.join(repr(d) for d in derived)} compare the "
            "rows with each other and are not stored"
        )
    for number, line in texts[body:]:
        if not line.strip() or _RULE.match(line):
            break
        cells = _cells(line, columns)
        keys: dict[str, KeyValue] = {}
        measurements = []
        for column, cell in zip(columns, cells, strict=True):
            name = normalize(column.label)
            if name in TABLE_METRICS:
                metric, unit, better = TABLE_METRICS[name]
                if not cell:
                    raise ParseError(f"no value under {column.label!r}", number)
                value = parse_number(
                    cell, line=number, what=column.label, thousands=bool(options.get("thousands"))
                )
                measurements.append(Measurement(metric, value, unit, better))
            elif column.label in derived or not cell:
                continue
            else:
                keys[_key(column.label)] = _key_value(cell)
        records.append(Record(keys=keys, line=number, measurements=tuple(measurements)))
    if not records:
        raise ParseError(
            "a SPEC results table with no rows under its rule: expected one row per kernel "
            "or configuration",
            header_line,
        )
    return records
