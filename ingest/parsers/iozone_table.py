"""iozone auto/table mode rows, read by column position (docs/parsers/iozone.md).

iozone prints one row per (file size, record size) with a fixed-width field per test and
blanks for tests not run, so cells are found by where they end, never by counting tokens.
The header words end where their fields end, except that some builds print the data one
column further right than the header word (``read`` in 3.4xx); a cell is accepted within
three characters of its column's end (columns are at least 8 wide, so the match is unique).

A number as wide as its field touches its neighbour (``1638412345678``). Such a token is split
only with the exact data widths of a known iozone layout, only when nothing before it in the
row is shifted, and only when every piece but the first fills its field; anything else is
refused with the line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.parsers.base import ParseError
from ingest.parsers.numbers import parse_number

# Header words after "KB reclen", in iozone's fixed order, and the metric each one names.
HEADER_WORDS = (
    ("write", "write"),
    ("rewrite", "rewrite"),
    ("read", "read"),
    ("reread", "reread"),
    ("read", "random_read"),
    ("write", "random_write"),
    ("read", "bkwd_read"),
    ("rewrite", "record_rewrite"),
    ("read", "stride_read"),
    ("fwrite", "fwrite"),
    ("frewrite", "frewrite"),
    ("fread", "fread"),
    ("freread", "freread"),
    ("pwrite", "pwrite"),
    ("repwrite", "repwrite"),
    ("pread", "pread"),
    ("repread", "repread"),
    ("pwritev", "pwritev"),
    ("repwritev", "repwritev"),
    ("preadv", "preadv"),
    ("repreadv", "repreadv"),
)
# Known layouts: (header word ends, data field ends), relative to the KB column's end, for
# reclen and the tests in HEADER_WORDS order. 3.414: CONTROL_STRING2 and the printf widths of
# each *_perf_test in src/current/iozone.c; 3.489: Debian iozone3 489-1 output run here.
_LAYOUTS = tuple(
    (tuple(map(int, header.split())), tuple(map(int, data.split())))
    for header, data in (
        (  # 3.414
            "8 16 24 32 42 50 58 66 75 84 93 102 110 119 127 136 143 153 163 173 182 191",
            "8 16 24 33 42 50 58 66 75 84 93 102 110 119 127 136 144 153 162 172 182 191",
        ),
        (  # 3.489
            "8 17 26 34 44 52 62 71 81 91 100 109 118 127",
            "8 17 26 35 44 53 62 71 81 91 100 109 118 127",
        ),
    )
)
_TOLERANCE = 3
_TOKEN = re.compile(r"\S+")


@dataclass
class Table:
    """One header and its rows: column ends and the cells read so far."""

    line: int
    names: list[str]  # metric names, in column order (KB and reclen excluded)
    kb_end: int
    header_ends: list[int]  # reclen, then one per name (absolute columns)
    data_ends: list[int]
    exact: bool  # data_ends are a known layout's, so merged numbers may be split
    rows: list[Row] = field(default_factory=list)


@dataclass
class Row:
    line: int
    file_kb: int
    record_kb: int
    cells: dict[int, str]  # column index in names -> token
    continuation: tuple[int, list[str]] | None = None
    last_line: int = 0  # the last line of a row wrapped over several


def header(line: str, number: int) -> Table | None:
    """A table from the ``KB reclen write ...`` line, or None when the line is not one."""
    tokens = [(m.group(), m.end()) for m in _TOKEN.finditer(line.expandtabs())]
    if len(tokens) < 3 or tokens[0][0] not in ("KB", "kB") or tokens[1][0] != "reclen":
        return None
    words = [word for word, _ in tokens[2:]]
    expected = [word for word, _ in HEADER_WORDS[: len(words)]]
    if words != expected:
        raise ParseError(
            f"iozone table header {' '.join(words)!r} is not iozone's column order "
            f"({' '.join(expected)}); a wrapped or edited header cannot be read by position",
            number,
        )
    kb_end = tokens[0][1]
    ends = [end for _, end in tokens[1:]]
    data_ends, exact = list(ends), False
    for header_offsets, data_offsets in _LAYOUTS:
        offsets = [end - kb_end for end in ends]
        if offsets == list(header_offsets[: len(offsets)]):
            data_ends = [kb_end + off for off in data_offsets[: len(offsets)]]
            exact = True
            break
    names = [metric for _, metric in HEADER_WORDS[: len(words)]]
    return Table(number, names, kb_end, ends, data_ends, exact)


def extend_header(table: Table, line: str) -> bool:
    """Take ``line`` as the wrapped rest of the table's header when its words continue
    iozone's column order. Where those columns end is lost with the wrap, so they can only be
    filled by the wrapped tails of rows (:func:`finish`, by count, or refused)."""
    words = line.split()
    start = len(table.names)
    expected = [word for word, _ in HEADER_WORDS[start : start + len(words)]]
    if not words or words != expected:
        return False
    for offset, (_, metric) in enumerate(HEADER_WORDS[start : start + len(words)]):
        table.names.append(metric)
        # no data column ends here: only a wrapped row tail fills these columns
        table.data_ends.append(_UNPLACED + offset)
    table.exact = False
    return True


_UNPLACED = 10**6


def is_row(line: str) -> bool:
    """A line made only of whole numbers: a data row or the wrapped rest of one."""
    tokens = line.split()
    return bool(tokens) and tokens[0].isdigit()


def add_row(table: Table, line: str, number: int) -> None:
    """Read one data row into ``table`` by position; refuse anything that does not fit."""
    tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(line.expandtabs())]
    bad = [tok for tok, _, _ in tokens if not tok.isdigit()]
    if bad:
        raise ParseError(f"iozone row value {bad[0]!r} is not a whole number", number)
    aligned = (
        len(tokens) >= 2
        and tokens[0][2] == table.kb_end
        and abs(tokens[1][2] - table.data_ends[0]) <= _TOLERANCE
    )
    if not aligned:
        last = table.rows[-1] if table.rows else None
        if last is not None and last.line == number - 1 and last.continuation is None:
            last.continuation = (number, [tok for tok, _, _ in tokens])
            last.last_line = number
            return
        if last is not None and last.continuation is not None and last.last_line == number - 1:
            last.continuation[1].extend(tok for tok, _, _ in tokens)  # wrapped twice
            last.last_line = number
            return
        raise ParseError(
            "iozone row does not line up with the KB/reclen columns of the header at line "
            f"{table.line} (edited spacing, or a wrapped row whose start is lost?)",
            number,
        )
    cells: dict[int, str] = {}
    previous, exact = -1, tokens[1][2] == table.data_ends[0]
    for token, _, end in tokens[2:]:
        index = _column_at(table, end, previous)
        if index is None:
            raise ParseError(
                f"iozone value {token!r} ends at column {end}, under no header column of the "
                f"table at line {table.line}",
                number,
            )
        if len(token) <= table.data_ends[index + 1] - table.data_ends[index]:
            cells[index] = token
        else:
            # Split only when nothing before is shifted: every earlier column filled and
            # ending exactly where the layout says (a skipped test's blank can be short).
            contiguous = exact and sorted(cells) == list(range(previous + 1))
            if not (table.exact and contiguous and end == table.data_ends[index + 1]):
                raise ParseError(
                    f"iozone value {token!r} is wider than its column: numbers merged or "
                    "overflowed and cannot be split unambiguously by column position",
                    number,
                )
            cells.update(_split(table, token, previous, index, number))
        exact = exact and end == table.data_ends[index + 1]
        previous = index
    table.rows.append(Row(number, int(tokens[0][0]), int(tokens[1][0]), cells))


def _column_at(table: Table, end: int, previous: int) -> int | None:
    """The column after ``previous`` whose data ends within the tolerance of ``end``."""
    for index in range(previous + 1, len(table.names)):
        if abs(table.data_ends[index + 1] - end) <= _TOLERANCE:
            return index
    return None


def _split(table: Table, token: str, previous: int, index: int, number: int) -> dict[int, str]:
    """Cut a merged token at the known field ends: every piece but the first fills its field."""
    pieces: dict[int, str] = {}
    rest, column = token, index
    while column > previous:
        width = table.data_ends[column + 1] - table.data_ends[column]
        if len(rest) <= width:
            pieces[column] = rest
            rest = ""
            break
        pieces[column], rest = rest[-width:], rest[:-width]
        column -= 1
    if (
        rest
        or min(pieces) != previous + 1
        or any(len(p) > 1 and p.startswith("0") for p in pieces.values())
    ):
        raise ParseError(
            f"iozone value {token!r} spans several columns and cannot be split into whole "
            "fields without guessing",
            number,
        )
    return pieces


def finish(table: Table) -> None:
    """Join wrapped rows: the next line's numbers fill the columns the table's rows use."""
    pattern = sorted({c for row in table.rows if row.continuation is None for c in row.cells})
    for row in table.rows:
        if row.continuation is None:
            continue
        number, tokens = row.continuation
        last = max(row.cells, default=-1)
        missing = [c for c in pattern if c > last] if pattern else []
        if len(missing) != len(tokens):
            missing = list(range(last + 1, len(table.names)))
        if len(missing) != len(tokens):
            raise ParseError(
                f"iozone row has {len(row.cells)} values and line {number} has {len(tokens)} "
                "more; together they do not fill the table's columns exactly (a wrapped row?)",
                row.line,
            )
        row.cells.update(zip(missing, tokens, strict=True))
        row.continuation = None


def cell_value(token: str, metric: str, number: int) -> float:
    return parse_number(token, line=number, what=f"iozone {metric}")
