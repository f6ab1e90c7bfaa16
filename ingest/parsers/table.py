"""Hand-made text tables (docs/parsers/table.md): a header, a units line and a rule, rows.

Cells go in columns by where they are printed (rule segments, else header spans) and by count;
when the two disagree, or neither fits, the row is an error naming its line: never shifted."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import ParseError, ParseResult, Record, register
from ingest.parsers.table_cells import (
    MISSING,
    Group,
    groups,
    is_number_token,
    is_unit_token,
    read_cell,
)
from ingest.parsers.table_rows import build_table_records
from ingest.parsers.text import numbered_lines, skip_mail_header

_RULE = re.compile(r"^[\s|+:]*[-=_]{3,}[-=_\s|+:]*$")
_RULE_WITH_TEXT = re.compile(r"^\s*[-=]{5,}.*[-=]{5,}\s*$")
_UNITS_LINE = re.compile(r"^\s*(?:[(\[][^()\[\]]+[)\]]\s*)+$")


@dataclass
class Column:
    name: str
    start: int
    end: int
    unit: str | None = None  # from a units line under the header


@dataclass
class Row:
    line: int
    cells: list[str]


@dataclass
class Table:
    header_line: int
    columns: list[Column]
    separated: bool  # '|' columns
    title: str = ""
    caption: str = ""
    rows: list[Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _is_rule(text: str) -> bool:
    return bool(_RULE.match(text) or _RULE_WITH_TEXT.match(text))


def _names(text: str) -> list[Column]:
    """Header names split on '|' or on runs of two or more spaces, with their spans."""
    if "|" in text:
        parts = [p.strip() for p in text.strip().strip("|").split("|")]
        return [Column(p, i, i + 1) for i, p in enumerate(parts)]
    return [Column(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+(?: \S+)*", text)]


def _rule_columns(header: str, rule: str) -> list[Column] | None:
    """Columns from a dashed rule's segments, named by the header words above each."""
    segments = [(m.start(), m.end()) for m in re.finditer(r"[-=]+", rule)]
    if len(segments) < 2 or "|" in rule:
        return None
    words: list[list[str]] = [[] for _ in segments]
    for m in re.finditer(r"\S+", header):
        index = _place(m.start(), m.end(), segments)
        if index is None:
            return None
        words[index].append(m.group())
    return [Column(" ".join(w), s, e) for w, (s, e) in zip(words, segments, strict=True)]


def _stacked(above: str, rule: str, columns: list[Column]) -> None:
    """lmbench-style two-line headers (``fork execve`` over ``process process``): when the
    header alone repeats a name, the line above names the columns its words sit over."""
    names = [c.name for c in columns]
    if len(set(names)) == len(names) or not above.strip() or _is_rule(above):
        return
    for column, upper in zip(columns, _rule_columns(above, rule) or [], strict=False):
        column.name = f"{upper.name} {column.name}".strip()


def _place(start: int, end: int, spans: list[tuple[int, int]]) -> int | None:
    """The span a printed cell belongs to: most overlap, else nearest; a tie is None."""
    overlaps = [max(0, min(end, e) - max(start, s)) for s, e in spans]
    best = max(overlaps)
    if best > 0:
        return overlaps.index(best) if overlaps.count(best) == 1 else None
    gaps = [s - end if end <= s else start - e for s, e in spans]
    nearest = min(gaps)
    return gaps.index(nearest) if gaps.count(nearest) == 1 else None


def _split(table: Table, text: str, line: int) -> list[str] | None:
    """A row's cells by column, or None when the line does not fit the table."""
    n = len(table.columns)
    if table.separated:
        if "|" not in text:
            return None
        parts = [p.strip() for p in text.strip().strip("|").split("|")]
        return parts if len(parts) == n else None
    found = groups(text)
    by_count = [g.text for g in found] if len(found) == n else None
    by_place = _by_position(table, found)
    if by_count and by_place and by_count != by_place:
        raise ParseError(
            f"row cells {by_count} do not line up under the header's columns "
            f"({[c.name for c in table.columns]}); realign the row",
            line,
        )
    return by_place or by_count


def _by_position(table: Table, found: list[Group]) -> list[str] | None:
    spans = [(c.start, c.end) for c in table.columns]
    cells: list[list[str]] = [[] for _ in spans]
    for group in found:
        index = _place(group.start, group.end, spans)
        if index is None and len(spans) > 1 and group.end <= spans[1][0]:
            index = None if _numeric(group.text) else 0  # a long label ("Pipe-based Context")
        if index is None:
            return None
        if cells[index] and index > 0 and _numeric(group.text) and _numeric(cells[index][-1]):
            return None  # two numbers under one header: misaligned
        cells[index].append(group.text)
    return [" ".join(c) for c in cells]


def _kind(text: str) -> str:
    """'number', 'broken' (``46O53``), 'mixed' (text and one number), 'text' or 'missing'."""
    try:
        cell = read_cell(text, line=0, what="cell")
    except ParseError:
        return "broken"
    return "mixed" if cell.kind == "text" and cell.values else cell.kind


def _numeric(text: str) -> bool:
    return _kind(text) in ("number", "broken")


def _clean_row(cells: list[str], strict: bool = False) -> bool:
    """Every cell after the first a number or a missing mark, and at least one number.
    Not strict, a broken number counts (so that the row is read and the error raised)."""
    kinds = [_kind(c) for c in cells[1:]]
    ok = all(k in ("number", "missing") or (k == "broken" and not strict) for k in kinds)
    if strict and len(kinds) > 2 and 2 * kinds.count("number") < len(kinds):
        return False  # after a blank line: "LMbench 2.0p2 average of 9 runs" is no row
    return bool(cells[0].strip()) and ok and any(k != "missing" for k in kinds)


def _mostly_clean(cells: list[str]) -> bool:
    """A first row under a header: a label, and at least half its cells plain numbers."""
    kinds = [_kind(c) for c in cells[1:]]
    clean = [k for k in kinds if k in ("number", "missing")]
    return bool(cells[0].strip()) and 2 * len(clean) >= len(kinds) and "number" in clean


def _has_number(cells: list[str]) -> bool:
    return any(_kind(c) in ("number", "broken", "mixed") for c in cells[1:])


def _header_at(lines: list[tuple[int, str]], i: int) -> tuple[Table, int] | None:
    """The table whose header is lines[i], and the index of its first body line."""
    number, text = lines[i]
    if not text.strip() or _is_rule(text):
        return None
    names = _names(text)
    if len(names) < 2 or not any(not is_number_token(c.name) for c in names):
        return None
    if any(c.name in MISSING for c in names):
        return None
    j, units = i + 1, None
    if j < len(lines) and _UNITS_LINE.match(lines[j][1]):
        units, j = lines[j][1], j + 1
    columns, ruled = None, False
    if j < len(lines) and _is_rule(lines[j][1]) and lines[j][1].strip():
        columns, j = _rule_columns(text, lines[j][1]), j + 1
        ruled = columns is not None
        if columns and i > 0:
            _stacked(lines[i - 1][1], lines[j - 1][1], columns)
    if columns is None:
        if any(is_number_token(c.name) for c in names[1:]) and not ruled:
            return None
        columns = names
    table = Table(number, columns, separated="|" in text)
    first = _first_row(lines, j, table, ruled)
    if first is None:
        return None
    outdented = not table.separated and not ruled and first[0].start < columns[0].start
    if outdented and first[0].end <= columns[0].start:
        table.columns.insert(0, Column("", 0, columns[0].start - 1))
    cells = _split_quiet(table, lines[first[1]][1])
    if cells is None or not _mostly_clean(cells):
        return None
    if units:
        _apply_units(table, units, lines[i + 1][0])
    return table, j


def _first_row(
    lines: list[tuple[int, str]], j: int, table: Table, ruled: bool
) -> tuple[Group, int] | None:
    """The first row under the header block: the next non-blank line, or under a dashed
    rule the first line with a number (note rows such as ``2.4.19 ***** hangs`` may come
    first)."""
    for k in range(j, min(j + 4, len(lines))):
        text = lines[k][1]
        if not text.strip() or _is_rule(text):
            continue
        found = groups(text)
        if found and any(_numeric(g.text) for g in found[1:]):
            return found[0], k
        if not ruled:
            return None
    return None


def _split_quiet(table: Table, text: str) -> list[str] | None:
    try:
        return _split(table, text, 0)
    except ParseError:
        return None


def _apply_units(table: Table, units: str, line: int) -> None:
    """Units under the header: in order when there is one per column (or per column after
    the label), else by position; two units under one column are an error."""
    found = list(re.finditer(r"[(\[]([^()\[\]]+)[)\]]", units))
    if len(found) in (len(table.columns), len(table.columns) - 1):
        columns = table.columns[len(table.columns) - len(found) :]
    else:
        spans = [(c.start, c.end) for c in table.columns]
        places = [_place(m.start(), m.end(), spans) for m in found]
        if None in places or len(set(places)) != len(places):
            raise ParseError("the units line does not line up with the header's columns", line)
        columns = [table.columns[i] for i in places if i is not None]
    for column, match in zip(columns, found, strict=True):
        column.unit = match.group(1).strip()


def _read_body(lines: list[tuple[int, str]], start: int, table: Table) -> int:
    """Collect the table's rows from lines[start:]; returns where the next table may start."""
    header_text = " ".join(lines[_index(lines, table.header_line)][1].split())
    k, prose, blank = start, False, False
    while k < len(lines):
        number, text = lines[k]
        if not text.strip():
            blank, k = True, k + 1
            continue
        if " ".join(text.split()) == header_text:
            if prose:  # the same header after prose: a new table (e.g. another memory size)
                return k
            k += 1
            continue
        if _is_rule(text):
            k += 1
            continue
        adjacent = not prose and not blank
        cells = _split(table, text, number) if adjacent else _split_quiet(table, text)
        if (cells is None or not _clean_row(cells, True)) and _header_at(lines, k) is not None:
            return k
        joined = _wrapped(lines, k, table, cells)
        if joined is not None:
            table.rows.append(Row(number, joined))
            prose, blank, k = False, False, k + 2
            continue
        loose = adjacent and cells is not None and _has_number(cells)
        if cells is not None and (_clean_row(cells, not adjacent) or loose):
            table.rows.append(Row(number, cells))
            prose, blank = False, False
        elif adjacent and table.rows and _has_number_tokens(text):
            raise ParseError(
                f"row has {len(groups(text))} cells where the header has "
                f"{len(table.columns)} ({[c.name for c in table.columns]}), and joining it "
                "with the next line does not fit either",
                number,
            )
        elif _note_row(lines, k, table, adjacent):
            table.notes.append(
                f"line {number}: row without numbers, not a record: {text.strip()!r}"
            )
        else:
            prose = True
        k += 1
    return k


def _note_row(lines: list[tuple[int, str]], k: int, table: Table, adjacent: bool) -> bool:
    """A line without numbers between rows, or just before one (``2.4.19  ***** hangs``)."""
    if _has_number_tokens(lines[k][1]) or k + 1 >= len(lines):
        return False
    following = _split_quiet(table, lines[k + 1][1])
    return adjacent and bool(table.rows) or (following is not None and _clean_row(following, True))


def _has_number_tokens(text: str) -> bool:
    """A clean number among the line's cells ('1.3.0' in a name is none)."""
    return any(_kind(g.text) == "number" for g in groups(text)[1:])


def _wrapped(
    lines: list[tuple[int, str]], k: int, table: Table, cells: list[str] | None
) -> list[str] | None:
    """A row the mail client wrapped: too few cells, the rest on the next line."""
    if table.separated or k + 1 >= len(lines):
        return None
    if cells is not None and all(c.strip() for c in cells):
        return None
    following = lines[k + 1][1].split()
    if not following or not (is_unit_token(following[0]) or is_number_token(following[0])):
        return None
    found = groups(lines[k][1] + " " + lines[k + 1][1].strip())
    if len(found) != len(table.columns):
        return None
    return [g.text for g in found]


def _index(lines: list[tuple[int, str]], number: int) -> int:
    return next(i for i, (n, _) in enumerate(lines) if n == number)


def _surroundings(lines: list[tuple[int, str]], table: Table, end: int) -> None:
    """The title (the line above the header) and the caption (the paragraph after)."""
    i = _index(lines, table.header_line)
    for back in (i - 1, i - 2):
        if back >= 0 and lines[back][1].strip() and not _is_rule(lines[back][1]):
            table.title = lines[back][1].strip()
            break
    last = _index(lines, table.rows[-1].line) + 1 if table.rows else i + 1
    k = last
    while k < min(end, len(lines)) and not lines[k][1].strip():
        k += 1
    caption = []
    while k < min(end, len(lines)) and lines[k][1].strip():
        caption.append(lines[k][1].strip())
        k += 1
    table.caption = " ".join(caption)


def find_tables(text: str, options: Mapping[str, object]) -> list[Table]:
    """Every table of the file (or the one at option ``header_line``)."""
    lines = skip_mail_header([(n, t.expandtabs(8).rstrip()) for n, t in numbered_lines(text)])
    wanted = options.get("header_line")
    if wanted is not None and not isinstance(wanted, int):
        raise ParseError(f"option header_line = {wanted!r}: give a line number")
    tables: list[Table] = []
    i = 0
    while i < len(lines):
        if wanted is not None and lines[i][0] != wanted:
            i += 1
            continue
        found = _header_at(lines, i)
        if found is None:
            if wanted is not None:
                raise ParseError(f"line {wanted} is not a table header with rows under it", wanted)
            i += 1
            continue
        table, body = found
        end = _read_body(lines, body, table)
        _surroundings(lines, table, end)
        if table.rows:
            tables.append(table)
        if wanted is not None:
            break
        i = max(end, i + 1)
    return tables


@register("table")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    tables = find_tables(text, options)
    if not tables:
        raise ParseError("no table found: a header line with rows of numbers under it")
    chosen = options.get("table")
    numbered = list(enumerate(tables, start=1))
    if chosen is not None:
        numbered = [(n, t) for n, t in numbered if n == chosen]
        if not numbered:
            raise ParseError(f"option table = {chosen!r}: the file has {len(tables)} tables")
    records: list[Record] = []
    warnings: list[str] = []
    metadata: dict[str, str | int | float] = {"tables": len(tables)}
    for number, table in numbered:
        tag = number if len(tables) > 1 else None
        records += build_table_records(table, tag, options, warnings)
        warnings += table.notes
        key = "title" if tag is None else f"title_{number}"
        if table.title:
            metadata[key] = table.title
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
