"""Cells of hand-made tables (``*2,720,600 KB``, ``184MB/sec``, ``3.49 M``, ``89623.85±0.35%``),
read exactly or refused; a decimal comma's error fits a table (no LC_ALL=C to re-run with)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from ingest.parsers.base import Better, KeyValue, Measurement, ParseError, Record
from ingest.parsers.numbers import parse_number

_number = partial(parse_number, comma_hint="write decimal points (a comma only groups thousands)")
MISSING = frozenset({"", "....", "...", "..", "-", "--", "---", "n/a", "N/A", "na", "NA", "?"})
_NUM = r"[+-]?(?:\d[\d,]*\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_UNIT = r"%|[A-Za-zµ]+(?:/[A-Za-z]+)?"
_CLEAN = re.compile(
    rf"^(?P<pre>\*+)?(?P<num>{_NUM})(?P<suf>[KkMG](?![A-Za-z]))?"
    rf"(?:\s*(?P<unit>{_UNIT}))?(?P<post>\*+)?$"
)
_NUM_TOKEN = re.compile(rf"^\*?{_NUM}(?:[KkMG])?\*?,?$")
_IN_TEXT = re.compile(rf"(?<![\w.]){_NUM}(?![\w.])")
_MULTIPLIER = {"K": "K", "k": "K", "M": "M", "G": "G"}
# A token that is only a unit, printed apart from its number ("1,987,024 KB", "3.49 M").
_UNIT_TOKEN = re.compile(
    r"^(?:%|[KkMG]|[KMGT]i?B(?:/s(?:ec)?)?|[KMG]?bytes(?:/s(?:ec)?)?|[KMG]?bits?/s(?:ec)?|"
    r"[KMG]bps|[mµun]?s(?:ec)?|msecs?|usecs?|msgs?/s(?:ec)?|ops/s(?:ec)?|MHz|GHz|pages)$"
)


@dataclass(frozen=True)
class Group:
    """Adjacent tokens that belong to one cell, with their character span in the line."""
    text: str
    start: int
    end: int  # exclusive


@dataclass(frozen=True)
class Cell:
    """One cell read: ``kind`` is "missing", "number" (clean) or "text"."""
    kind: str
    values: tuple[float, ...] = ()  # one, or several for a ``a, b, c`` list
    unit: str | None = None  # as printed in the cell
    marker: str = ""  # '*' / '***' printed around the number
    spread: float | None = None  # the Y of ``X±Y``
    spread_unit: str | None = None
    note: str = ""  # text printed beside the one number of a text cell


def is_number_token(token: str) -> bool:
    return bool(_NUM_TOKEN.match(token))


def is_unit_token(token: str) -> bool:
    return bool(_UNIT_TOKEN.match(token))


def groups(line: str) -> list[Group]:
    """Whitespace tokens of a row, merged into cells.

    Merged: a unit or multiplier printed apart (``1,987,024 KB``, ``3.49 M``, ``5 %``); a lone
    ``*`` marker before or after a number; ``X ± Y``; a ``a, b, c`` list of numbers; and a
    parenthesized remark with what precedes it (``0 (default)``, ``Linux (green threads)``).
    """
    tokens = [Group(m.group(), m.start(), m.end()) for m in re.finditer(r"\S+", line)]
    out: list[Group] = []
    depth = 0
    for token in tokens:
        prev = out[-1] if out else None
        text = token.text
        near = prev is not None and token.start - prev.end <= 1
        joins = prev is not None and (
            depth > 0
            or (near and text.startswith("("))
            or (near and is_unit_token(text) and _ends_with_number(prev.text))
            or (near and re.fullmatch(r"\*+", text) is not None and _ends_with_number(prev.text))
            or (near and re.fullmatch(r"\*+", prev.text) is not None and is_number_token(text))
            or text.startswith("±")
            or prev.text.endswith("±")
            or (prev.text.endswith(",") and is_number_token(text) and _ends_with_number(prev.text))
        )
        depth = max(depth + text.count("(") - text.count(")"), 0)
        if joins and prev is not None:
            out[-1] = Group(f"{prev.text} {text}", prev.start, token.end)
        else:
            out.append(token)
    return out


def _ends_with_number(text: str) -> bool:
    return is_number_token(text.split()[-1])


def _one(text: str, *, line: int, what: str, thousands: bool) -> Cell | None:
    """A clean ``[*]number[K|M|G][ unit][*]``, or None when the text is not one."""
    match = _CLEAN.match(text)
    if not match:
        return None
    unit, suffix = match.group("unit"), match.group("suf") or ""
    number = match.group("num") + suffix
    if unit in _MULTIPLIER:  # '3.49 M': a multiplier printed apart
        if suffix:
            return None
        number, unit = number + _MULTIPLIER[unit], None
    elif suffix == "k" and "." not in number and not unit:  # "384624k" (free, ps): kilobytes
        number, unit = match.group("num"), "k"  # as printed, not 384624000
    if "," in number and not thousands:
        raise ParseError(f"{what} {text!r} has a comma; option thousands is off", line)
    value = _number(number, line=line, what=what, suffixes=True, thousands=thousands)
    marker = (match.group("pre") or "") + (match.group("post") or "")
    return Cell("number", (value,), unit, marker)


def read_cell(text: str, *, line: int, what: str, thousands: bool = True) -> Cell:
    """Read one cell's text; a malformed number (decimal comma, ``1.2.3``) is an error."""
    text = " ".join(text.split())
    if text in MISSING:
        return Cell("missing")
    clean = _one(text, line=line, what=what, thousands=thousands)
    if clean is not None:
        return clean
    if "±" in text:
        left, _, right = text.partition("±")
        value = _one(left.strip(), line=line, what=what, thousands=thousands)
        spread = _one(right.strip(), line=line, what=what, thousands=thousands)
        if value is not None and spread is not None and spread.values:
            unit = spread.unit or value.unit
            return Cell("number", value.values, value.unit, value.marker, spread.values[0], unit)
    parts = [part.strip() for part in text.split(", ")]
    if len(parts) > 1:
        items = [_one(part, line=line, what=what, thousands=thousands) for part in parts]
        units = {item.unit for item in items if item is not None}
        if all(item is not None and not item.marker for item in items) and len(units) == 1:
            values = tuple(v for item in items if item is not None for v in item.values)
            return Cell("number", values, units.pop())
    if " " not in text and re.search(r"\d", text):  # '51x24', '1.2.3': a broken number
        raise ParseError(f"{what} {text!r} is not a number", line)
    return _text_cell(text, line=line, what=what, thousands=thousands)


def _text_cell(text: str, *, line: int, what: str, thousands: bool) -> Cell:
    """Text in a cell; its number kept when it holds exactly one (``0 (default)``)."""
    numbers = _IN_TEXT.findall(text)
    try:
        value = _number(numbers[0], line=line, what=what, thousands=thousands)
    except (ParseError, IndexError):
        return Cell("text", note=text)
    return Cell("text", (value,), note=text) if len(numbers) == 1 else Cell("text", note=text)


_PHRASE = r"\s+(?:numbers\s+|values\s+)?(?:is|are)\s+(?:better|faster)\b"
_DIRECTION = (
    (re.compile(r"\b(?:higher|bigger|larger|more)" + _PHRASE, re.I), "higher"),
    (re.compile(r"\b(?:lower|smaller|less|fewer)" + _PHRASE, re.I), "lower"),
)


def direction(text: str) -> str | None:
    """'higher'/'lower' when the text says so in words (``bigger is better``), else None."""
    found = {better for pattern, better in _DIRECTION if pattern.search(text)}
    return found.pop() if len(found) == 1 else None


_BRACKETED = re.compile(r"\s*[(\[]([^()\[\]]*)[)\]]\s*$")


def split_header(header: str) -> tuple[str, str | None, str | None]:
    """(metric, unit, better) of a header: ``Throughput (msg/s)``, ``%CPU``, a direction phrase
    in a trailing bracket (better), a short token in one (the unit)."""
    unit: str | None = None
    better = direction(header)
    rest = header
    for _ in range(2):
        match = _BRACKETED.search(rest)
        if not match:
            break
        inner = match.group(1).strip()
        if direction(inner):
            rest = rest[: match.start()]
        elif inner and " " not in inner and len(inner) <= 12 and unit is None:
            unit, rest = inner, rest[: match.start()]
        else:
            break
    if unit is None and _UNIT_TOKEN.match(rest.strip()):
        unit = rest.strip()  # a header that is only a unit: 'msg/s', 'MB/s'
    if unit is None and rest.count("%") == 1 and re.search(r"(^%|%$)", rest.strip()):
        unit = "%"
        rest = rest.replace("%", " ") + " pct"
    return snake_case(rest), unit, better


def snake_case(text: str) -> str:
    """A metric name from a header: ``Total swpin`` -> total_swpin, ``msg/s`` -> msg_per_s."""
    text = text.replace("%", " pct ").replace("/", " per ").replace("+", " plus ")
    name = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    if name and name[0].isdigit():
        name = "col_" + name
    return name


_TRIAL_NAMES = {"run", "run #", "run#", "#", "iteration", "iter", "trial"}


class _Table(Protocol):  # table.py's Table, without an import cycle (read-only here)
    @property
    def columns(self) -> Sequence[Any]: ...
    @property
    def rows(self) -> Sequence[Any]: ...
    @property
    def title(self) -> str: ...
    @property
    def caption(self) -> str: ...


def _norm(name: str) -> str:  # headers compare case-insensitively, whitespace normalized
    return " ".join(name.split()).lower()


def _safe_kind(text: str) -> str:
    try:
        return read_cell(text, line=0, what="cell").kind
    except ParseError:
        return "text"  # '2.6.0' in a leading column is a key, not a broken number


def _key_columns(table: _Table, options: Mapping[str, object]) -> list[int]:
    names = [_norm(c.name) for c in table.columns]
    wanted = options.get("key_columns")
    if isinstance(wanted, int) and not isinstance(wanted, bool):
        return list(range(wanted))
    if isinstance(wanted, list):
        missing = [w for w in wanted if _norm(str(w)) not in names]
        if missing:
            raise ParseError(f"option key_columns names {missing}; the header has {names}")
        return [names.index(_norm(str(w))) for w in wanted]
    keys = [0]
    for index in range(1, len(names)):
        if any(_safe_kind(row.cells[index]) == "number" for row in table.rows):
            break
        keys.append(index)
    return keys


def _column_unit(name: str, header_unit: str | None, cells: list[tuple[int, Cell]]) -> str | None:
    """The unit every number of a column is printed in; a different one is an error."""
    first: tuple[int, str] | None = None
    for line, cell in cells:
        if cell.kind == "number" and cell.unit:
            if first is None:
                first = (line, cell.unit)
            elif cell.unit != first[1]:
                raise ParseError(
                    f"column {name!r}: {cell.unit!r} here but {first[1]!r} at line {first[0]}",
                    line,
                )
    spread = [(n, c.spread_unit or "") for n, c in cells if c.spread is not None]
    for line, spread_unit in spread:
        if spread_unit != spread[0][1]:
            where = f"{spread[0][1]!r} at line {spread[0][0]}"
            raise ParseError(f"column {name!r}: ± part in {spread_unit!r} here but {where}", line)
    unit = first[1] if first else None
    if header_unit and unit and header_unit != unit:
        message = f"column {name!r} is in {header_unit!r} but the cell is in {unit!r}"
        raise ParseError(message, first[0] if first else None)
    if unit and not header_unit:
        for line, cell in cells:
            if cell.kind == "number" and not cell.unit and any(v != 0 for v in cell.values):
                raise ParseError(
                    f"column {name!r}: a number without unit where others are in {unit!r}", line
                )
    return header_unit or unit


def option_entry(name: str, options: Mapping[str, object], option: str = "columns") -> Any:
    """The ``columns`` (or ``rows``) option's entry for a header: a table, False to skip, or {}."""
    entries = options.get(option) or {}
    if not isinstance(entries, Mapping):
        raise ParseError(f"option {option} must be a table of name = {{metric, unit, better}}")
    for header, spec in entries.items():
        if _norm(str(header)) == _norm(name):
            if spec is False:
                return None
            if not isinstance(spec, Mapping):
                raise ParseError(f"option {option}.{header!r} must be a table or false")
            return spec
    return {}


def _measure_column(
    table: _Table, index: int, options: Mapping[str, object], warnings: list[str]
) -> dict[int, list[Measurement]] | None:
    """Measurements of one column by row line, or None when the column is not measured."""
    column = table.columns[index]
    label = column.name or f"column {index + 1}"
    spec = option_entry(column.name, options)
    if spec is None:
        return None
    thousands = bool(options.get("thousands", True))
    cells = [
        (row.line, read_cell(row.cells[index], line=row.line, what=label, thousands=thousands))
        for row in table.rows
    ]
    if not any(cell.kind == "number" for _, cell in cells):
        if any(cell.kind != "missing" for _, cell in cells):
            warnings.append(f"column {label!r} holds no numbers; not read")
        return None
    metric, header_unit, header_better = split_header(column.name)
    metric = str(spec.get("metric") or metric or f"col_{index + 1}")
    unit = _column_unit(label, column.unit or header_unit, cells)
    unit = str(spec.get("unit", unit if unit is not None else ""))
    if not unit:
        warnings.append(f"column {label!r} states no unit; give one with option columns")
    hint = header_better or direction(f"{table.title} {table.caption}")
    better = str(spec.get("better") or options.get("better") or hint or "none")
    if better not in ("higher", "lower", "none"):
        raise ParseError(f"column {label!r}: better must be higher, lower or none, not {better!r}")
    return {
        line: _cell_measurements(label, metric, unit, better, line, cell, warnings)
        for line, cell in cells
    }


def _cell_measurements(
    label: str, metric: str, unit: str, better: str, line: int, cell: Cell, warnings: list[str]
) -> list[Measurement]:
    b: Better = better  # type: ignore[assignment]
    if cell.kind == "missing":
        return []
    if cell.kind == "text":  # read_cell keeps a text cell's number only when it has one
        stored = f"stored {cell.values[0]:g}" if cell.values else "no value stored"
        warnings.append(f"line {line}: column {label!r} reads {cell.note!r}; {stored}")
        return [Measurement(metric, v, unit, b) for v in cell.values]
    if cell.marker:
        warnings.append(f"line {line}: column {label!r} marked {cell.marker!r} (see the footnote)")
    if len(cell.values) == 1:
        out = [Measurement(metric, cell.values[0], unit, b)]
    else:
        out = [Measurement(f"{metric}_{i}", v, unit, b) for i, v in enumerate(cell.values, 1)]
    if cell.spread is not None:
        out.append(Measurement(f"{metric}_spread", cell.spread, cell.spread_unit or unit, "none"))
    return out


def build_records(
    table: _Table, tag: int | None, options: Mapping[str, object], warnings: list[str]
) -> list[Record]:
    """One Record per row: key columns become keys, numeric columns measurements."""
    names = [_norm(c.name) for c in table.columns]
    trial_index = next((i for i, n in enumerate(names) if n in _TRIAL_NAMES), None)
    keys = [k for k in _key_columns(table, options) if k != trial_index]
    label_name = options.get("label_column")
    label_index = keys[0] if keys else None
    if label_name is not None:
        if _norm(str(label_name)) not in names:
            raise ParseError(f"option label_column {label_name!r} is not in the header {names}")
        label_index = names.index(_norm(str(label_name)))
        keys = [label_index] + [k for k in keys if k != label_index]
    measured: dict[int, dict[int, list[Measurement]]] = {}
    for index in range(len(names)):
        if index not in keys and index != trial_index:
            column = _measure_column(table, index, options, warnings)
            if column is not None:
                measured[index] = column
    return [
        _record(table, row, keys, label_index, trial_index, measured, tag) for row in table.rows
    ]


def _record(
    table: _Table, row: Any, keys: list[int], label_index: int | None,
    trial_index: int | None, measured: dict[int, dict[int, list[Measurement]]], tag: int | None,
) -> Record:
    record_keys: dict[str, KeyValue] = {}
    for index in keys:
        value = " ".join(row.cells[index].split())
        if index == label_index:
            if not value:
                raise ParseError("row without a label in its first column", row.line)
            record_keys["label"] = value
        else:
            name = snake_case(table.columns[index].name) or f"key_{index + 1}"
            record_keys[name] = int(value) if value.isdigit() else value
    if tag is not None:
        record_keys["table"] = tag
    trial = None
    if trial_index is not None:
        text = row.cells[trial_index].strip()
        if not text.isdigit():
            raise ParseError(f"run number {text!r} is not an integer", row.line)
        trial = int(text)
    values = [m for column in measured.values() for m in column[row.line]]
    seen = [m.metric for m in values]
    duplicates = sorted({name for name in seen if seen.count(name) > 1})
    if duplicates:
        message = f"two columns give metric {duplicates}; rename one with option columns"
        raise ParseError(message, row.line)
    return Record(keys=record_keys, trial=trial, line=row.line, measurements=tuple(values))
