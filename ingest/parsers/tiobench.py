"""tiobench.pl 0.3.x reports: four sections of per-thread-count rows (docs/parsers/tiobench.md).

Every section row is a record keyed by what the row states (test, identifier, file size, block
size, threads), so a mail comparing kernels or thread counts keeps every row apart. Metric names
carry the section (``seq_read_rate``) so a chart of one name never mixes reads and writes.
Mail clients wrap the 100+ column rows; a short row is joined with the next line when the two
add up to exactly one row, and rejected with its line number otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ingest.parsers.base import (
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import key_by_headings
from ingest.parsers.text import numbered_lines

SECTIONS = {
    "sequential reads": "seq_read",
    "random reads": "rand_read",
    "sequential writes": "seq_write",
    "random writes": "rand_write",
}
FULL = (
    "file_size",
    "block_size",
    "threads",
    "rate",
    "cpu",
    "avg_lat",
    "max_lat",
    "lat2",
    "lat10",
    "eff",
)
COMPACT = FULL[2:]
# section prefix -> the ``test`` key, as tiobench titles it
TESTS = {prefix: title.title() for title, prefix in SECTIONS.items()}
# row field -> (metric suffix, unit, better)
METRICS = {
    "rate": ("rate", "MB/s", "higher"),
    "cpu": ("cpu_pct", "%", "none"),
    "avg_lat": ("avg_lat_ms", "ms", "lower"),
    "max_lat": ("max_lat_ms", "ms", "lower"),
    "lat2": ("lat_over_2s_pct", "%", "lower"),
    "lat10": ("lat_over_10s_pct", "%", "lower"),
    "eff": ("cpu_eff", "MB/s per CPU", "higher"),
}
_CELL = re.compile(r"^(?:[\d.,]+%?|[#.]*#[#.]*%?)$")  # '#' marks an overflowed field


@dataclass(frozen=True)
class _Row:
    section: str
    identifier: str
    line: int
    cells: dict[str, str]


def _layout(tokens: list[str]) -> tuple[str, ...]:
    """The fields a header line announces: tiobench drops the maximum-latency and Lat%
    columns in some versions (``Identifier Size Size Thr Rate (CPU%) Latency Eff``).
    A header cut by mail wrapping (no ``Eff``, the last column, on it) is the full layout."""
    if "Eff" not in tokens or (tokens.count("Latency") >= 2 and ">2s" in tokens):
        return FULL if "Size" in tokens else COMPACT
    fields = ["file_size", "block_size"] if "Size" in tokens else []
    fields += ["threads", "rate", "cpu"]
    fields += ["avg_lat", "max_lat"][: tokens.count("Latency")]
    fields += ["lat2", "lat10"] if ">2s" in tokens else []
    fields += ["eff"] if "Eff" in tokens else []
    return tuple(fields)


def _section(line: str) -> str | None:
    lowered = line.strip().lower()
    for title, prefix in SECTIONS.items():
        if lowered == title or lowered.startswith(title + " "):
            return prefix
    return None


def _is_cells(tokens: list[str]) -> bool:
    return bool(tokens) and all(_CELL.match(token) for token in tokens)


def _rows(text: str) -> list[_Row]:
    lines = numbered_lines(text)
    rows: list[_Row] = []
    section, layout = None, None
    section_rows = 0  # rows read under the current title
    i = 0
    while i < len(lines):
        number, line = lines[i]
        i += 1
        tokens = line.split()
        if (prefix := _section(line)) is not None:
            section, layout, section_rows = prefix, None, 0
            continue
        if section is None or not tokens:
            continue
        if "Thr" in tokens:
            layout = _layout(tokens)
            continue
        if len(tokens) < 2 or not _is_cells(tokens[1:]):
            if section_rows and not set(line.strip()) <= {"-", " "}:
                section = None  # prose, a prompt or a signature after the rows ends the section
            continue
        cells = tokens[1:]
        expected = len(layout) if layout else None
        if expected is None and len(cells) in (len(FULL), len(COMPACT)):
            expected = len(cells)
        if expected is not None and len(cells) < expected and i < len(lines):
            following = lines[i][1].split()
            if _is_cells(following) and len(cells) + len(following) == expected:
                cells += following
                i += 1
        if len(cells) != expected:
            raise ParseError(
                f"tiobench row has {len(cells)} values, expected {expected or '8 or 10'} "
                "(a mail-wrapped row whose rest is not on the next line?)",
                number,
            )
        names = layout or (FULL if expected == len(FULL) else COMPACT)
        rows.append(_Row(section, tokens[0], number, dict(zip(names, cells, strict=True))))
        section_rows += 1
    return rows


def _select(rows: list[_Row], options: Mapping[str, object]) -> list[_Row]:
    """The ``identifier`` and ``block_size`` options filter rows; by default every row is kept."""
    wanted = options.get("identifier")
    if wanted is not None:
        identifiers = sorted({row.identifier for row in rows})
        rows = [row for row in rows if row.identifier == str(wanted)]
        if not rows:
            raise ParseError(f"no rows for identifier {wanted!r}; the file has {identifiers}")
    block = options.get("block_size")
    if block is not None:
        rows = [row for row in rows if row.cells.get("block_size") == str(block)]
        if not rows:
            raise ParseError(f"no rows with block size {block}")
    return rows


def _threads(row: _Row) -> int:
    token = row.cells["threads"]
    if not token.isdigit():
        raise ParseError(f"thread count {token!r} is not an integer", row.line)
    return int(token)


def _measurements(row: _Row, warnings: list[str]) -> list[Measurement]:
    out = []
    for field, (suffix, unit, better) in METRICS.items():
        if field not in row.cells:
            continue  # a column this tiobench version does not print
        token = row.cells[field]
        metric = f"{row.section}_{suffix}"
        if "#" in token:
            warnings.append(f"line {row.line}: {metric} overflowed ('{token}'); omitted")
            continue
        value = parse_number(token, line=row.line, what=metric, percent=field == "cpu")
        out.append(Measurement(metric, value, unit, better))  # type: ignore[arg-type]
    return out


def _keys(row: _Row) -> dict[str, KeyValue]:
    """What tells a row apart, as printed: test, identifier, sizes (full layout), threads."""
    keys: dict[str, KeyValue] = {"test": TESTS[row.section], "label": row.identifier}
    for field, key in (("file_size", "file_size_mb"), ("block_size", "block_size")):
        if field in row.cells:
            token = row.cells[field]
            if not token.isdigit():
                raise ParseError(f"{key} {token!r} is not an integer", row.line)
            keys[key] = int(token)
    keys["threads"] = _threads(row)
    return keys


@register("tiobench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Every section row is a record; rows with equal keys (``--numruns`` pasted twice,
    two runs of one kernel) are trials of one configuration, never merged here."""
    rows = _rows(text)
    if not rows:
        raise ParseError(
            "no tiobench rows under a 'Sequential Reads'/'Random Reads'/'Sequential Writes'/"
            "'Random Writes' title"
        )
    warnings: list[str] = []
    records = [
        Record(keys=_keys(row), line=row.line, measurements=tuple(_measurements(row, warnings)))
        for row in _select(rows, options)
    ]
    # Two attachments or pasted reports of one identifier (both "2.6.6") under other headings
    # or file names are other runs, not trials.
    records = key_by_headings(records, numbered_lines(text), warnings, skip=_own_line)
    return ParseResult(records=tuple(records), warnings=tuple(warnings))


def _own_line(line: str) -> bool:
    """tiobench's own titles and headers are never headings."""
    tokens = line.split()
    return _section(line) is not None or "Thr" in tokens or "Identifier" in tokens
