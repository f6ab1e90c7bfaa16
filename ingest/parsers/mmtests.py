"""mmtests compare-kernels.sh tables, as printed or pasted in a mail (docs/parsers/mmtests.md).

A table compares kernels (columns, the first one the base) over parameters (client counts,
message sizes, ``fault-base-1``) with one row per statistic. Each (table, kernel, parameter)
is a record keyed ``label`` (the column's test name) and ``param``; each statistic row is a
measurement named by the statistic (``amean``, ``bamean-99``, ``1st-qrtle``). The
percentages are derived from the values and never stored. The Duration and Ops blocks that
follow a table are records keyed ``section`` (``duration``, ``ops``) under the same table.

A mail holds several tables and prose: each table is told apart by its ``table`` key (the
heading above it) when the text has more than one. The grammar of single lines and how a
header names its columns live in :mod:`ingest.parsers.mmtests_lines`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import (
    Better,
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    Summary,
    recognises,
    register,
)
from ingest.parsers.mmtests_lines import (
    CELL,
    CELLS_ONLY,
    COMPARE_ROW,
    DURATION_ROW,
    NAN,
    NUMBER,
    NUMBERS_ONLY,
    OPS_CELL_ROW,
    OPS_ROW,
    RATIO_PREFIX,
    Token,
    cell_edges,
    is_header_like,
    is_statistic,
    is_underline,
    join_lines,
    line_names,
    looks_like_row,
    number_edges,
    tokens,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines, skip_mail_header

COMPARE, DURATION, OPS = "compare", "duration", "ops"

# One direction per statistic name, for every table: the store keeps one direction per metric,
# and mmtests prints Min, Max and the percentiles for both directions, so those are "none".
# Amean is the mean of lower-is-better tests and Hmean of higher-is-better ones (Summarise.pm
# getStatName); Stddev and CoeffVar are compared lower-is-better whatever the test
# (Stat.pm stat_compare). The printed percentages check this per row (_evidence).
_LOWER = re.compile(r"(?:b?amean(?:[-.][\d.]+)?|best\d+%?amean|mean|h?stddev|h?coeffvar|coeff)")
_HIGHER = re.compile(r"(?:b?hmean(?:[-.][\d.]+)?|best\d+%?hmean)")
_HEADLINE = (
    ("hmean", ("hstddev", "stddev"), ("hcoeffvar", "coeffvar")),
    ("amean", ("stddev",), ("coeffvar", "coeff")),
    ("mean", ("stddev",), ("coeffvar", "coeff")),
)
_HARDWARE = re.compile(
    r"^(?:SUT\s*:\s*(?P<sut>\S.*)|(?P<socket>\d+[- ]socket\b.*)"
    r"|(?:machine|hardware|platform|test machine)\s*:\s*(?P<named>\S.*))$",
    re.IGNORECASE,
)
_CONFIG = re.compile(r"\bconfig-[A-Za-z0-9][A-Za-z0-9_.+-]*")
_BENCHMARK = re.compile(r"^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z0-9]+)*$")


@dataclass
class _Cell:
    value: str
    pct: str | None  # the printed difference from the base; None for monitor rows


@dataclass
class _Row:
    line: int
    text: str
    name: str  # the statistic, or Duration's User/System/Elapsed, or the Ops counter
    param: str | None
    cells: list[_Cell]


@dataclass
class _Table:
    kind: str
    pre: list[tuple[int, str]]  # the lines of its paragraph above the first row
    above: tuple[int, str] | None  # the prose line above its paragraph, when any
    rows: list[_Row] = field(default_factory=list)
    heading: str | None = None
    name: str | None = None
    labels: list[str] = field(default_factory=list)
    header: list[list[Token]] = field(default_factory=list)

    @property
    def width(self) -> int:
        return len(self.rows[0].cells)


def _cells(text: str) -> list[_Cell]:
    return [_Cell(m["value"], m["pct"]) for m in CELL.finditer(text)]


def _numbers(text: str) -> list[_Cell]:
    return [_Cell(m.group(), None) for m in NUMBER.finditer(text)]


def _read_row(text: str, number: int) -> tuple[str, _Row] | None:
    """The kind and content of a table row, or None for any other line."""
    stripped = text.strip()
    if match := DURATION_ROW.match(stripped):
        return DURATION, _Row(number, text, match["name"], None, _numbers(match["nums"]))
    if match := OPS_CELL_ROW.match(stripped):
        return OPS, _Row(number, text, match["name"], None, _cells(match["cells"]))
    if match := OPS_ROW.match(stripped):
        return OPS, _Row(number, text, match["name"], None, _numbers(match["nums"]))
    if stripped.startswith(RATIO_PREFIX):
        return None
    match = COMPARE_ROW.match(stripped)
    if match and is_statistic(match["stat"]):
        return COMPARE, _Row(number, text, match["stat"], match["param"], _cells(match["cells"]))
    return None


def _tables(lines: list[tuple[int, str]], warnings: list[str]) -> list[_Table]:
    """Cut the text into tables: a table is a run of rows of one kind, after the lines of its
    paragraph (heading, header); blank lines and prose end it. A short row that a mail client
    wrapped is joined with the next line when that line is only the missing cells."""
    tables: list[_Table] = []
    current: _Table | None = None
    pending: list[tuple[int, str]] = []  # the paragraph's lines since its last row
    prose: tuple[int, str] | None = None
    for number, raw in lines:
        text = raw.expandtabs(8).rstrip()
        if not text.strip():
            if pending and current is None:
                kept = [p for p in pending if not is_underline(p[1])]
                prose = kept[-1] if kept else prose
            current, pending = None, []
            continue
        read = _read_row(text, number)
        if read is not None:
            kind, row = read
            if current is None or current.kind != kind or pending:
                current = _Table(kind, pending, prose)
                tables.append(current)
                pending, prose = [], None
            current.rows.append(row)
            continue
        if current is not None and not pending and current.rows:
            last = current.rows[-1]
            if current.kind == COMPARE and CELLS_ONLY.match(text):
                last.cells.extend(_cells(text))
                continue
            if current.kind != COMPARE and NUMBERS_ONLY.match(text):
                last.cells.extend(_numbers(text))
                continue
        stripped = text.strip()
        if stripped.startswith(RATIO_PREFIX) and "%" in stripped:
            warnings.append(f"line {number}: ratio rows are derived from other tables; not read")
        elif looks_like_row(stripped):
            raise ParseError(
                f"mmtests row cannot be read: {stripped!r} (expected a statistic, a "
                "parameter and one 'value (difference%)' cell per kernel)",
                number,
            )
        current = None
        pending.append((number, text))
    return tables


def _check_widths(table: _Table) -> None:
    for row in table.rows:
        if len(row.cells) != table.width:
            raise ParseError(
                f"mmtests row has {len(row.cells)} kernels' values where the table's first "
                f"row (line {table.rows[0].line}) has {table.width}",
                row.line,
            )


def _split_paragraph(table: _Table) -> tuple[str | None, list[list[Token]]]:
    """The heading (a line at the margin) and the header lines (indented) above the rows."""
    headings: list[str] = []
    header: list[list[Token]] = []
    for _, text in table.pre:
        if is_underline(text):
            continue
        if not header and not is_header_like(text):
            headings.append(text.strip())
        else:
            header.append(tokens(text))
    return (headings[-1] if headings else None), header


def _edges(table: _Table) -> tuple[list[int], int]:
    """Where each column's field ends, and the fields' width.

    A header line naming every kernel with room to spare gives its own edges (a name is
    right-aligned in its field); otherwise the first row's cells do. The width is the
    narrowest gap: a value or name wider than its field only pushes the ones after it right.
    """
    n = table.width
    edges: list[int] = []
    for line in table.header:
        ends = [t.end for t in line]
        gaps = [b - a for a, b in zip(ends, ends[1:], strict=False)]
        if len(line) == n and all(gap > len(t.text) for gap, t in zip(gaps, line[1:], strict=True)):
            edges = ends
            break
    if not edges:
        row = table.rows[0]
        found = cell_edges(row.text) if table.kind == COMPARE else number_edges(row.text)
        edges = found[-n:] if len(found) >= n else []
    if not edges:
        return [], 0
    gaps = [b - a for a, b in zip(edges, edges[1:], strict=False)]
    return edges, (min(gaps) if gaps else 10**6)


def _header_names(table: _Table, known: frozenset[str]) -> list[str] | None:
    """The test name of each column from the header lines, or None when they cannot be told
    apart. A header line that a mail client wrapped continues at the margin."""
    edges, width = _edges(table)
    if not edges:
        edges = list(range(table.width))  # a wrapped row: only a count of names can be trusted
        width = 0
    header = [line for line in table.header if line]
    lines: list[list[str]] = []
    i = len(header) - 1
    while i >= 0 and len(lines) < 2:  # the two lines right above the rows name the columns
        names = line_names(header[i], edges, width, known) if width else None
        if names is None and len(header[i]) == table.width:
            names = [t.text for t in header[i]]
        if names is None and i > 0 and header[i][0].start < header[i - 1][0].start:
            joined = header[i - 1] + header[i]  # wrapped: the rest starts at the margin
            if len(joined) == table.width:
                names, i = [t.text for t in joined], i - 1
        if names is None:
            break
        lines.insert(0, names)
        i -= 1
    if not lines:
        return None
    if len(lines) == 1:
        return lines[0]
    first, second = lines
    return [join_lines(a, b) for a, b in zip(first, second, strict=True)]


def _name_tables(tables: list[_Table], warnings: list[str]) -> None:
    """Give each table its column labels and the name that keys its records."""
    for table in tables:
        table.heading, table.header = _split_paragraph(table)
    known = frozenset(
        t.text
        for table in tables
        for line in table.header
        if len(line) == table.width
        for t in line
    )
    labelled: dict[int, list[str]] = {}  # the latest header's labels, by number of kernels
    used: set[tuple[str, str]] = set()
    parent: str | None = None
    count = 0
    for table in tables:
        names = _header_names(table, known) if table.header else None
        if names is None:
            inherited = labelled.get(table.width)
            if inherited is not None and not table.header:
                names = inherited
            else:
                what = "cannot be read" if table.header else "is missing"
                warnings.append(
                    f"line {table.rows[0].line}: the table's header {what}; its columns are "
                    "labelled by position (column-1 is the base)"
                )
                names = [f"column-{j}" for j in range(1, table.width + 1)]
        else:
            labelled[table.width] = names
        table.labels = names
        name = table.heading
        if table.kind == COMPARE:
            count += 1
            if name is None and table.above is not None:
                name = table.heading = table.above[1].strip()
            name = name or f"table {count}"
        else:
            name = name or parent or (table.above[1].strip() if table.above else None)
            name = name or f"table {count + 1}"
        base, k = name, 1
        while (name, table.kind) in used:
            k += 1
            name = f"{base} #{k}"
        used.add((name, table.kind))
        table.name = name
        if table.kind == COMPARE:
            parent = name


def _value(token: str, line: int, what: str) -> float | None:
    if token in NAN:
        return None
    return parse_number(token, line=line, what=what)


def _evidence(row: _Row, line: int) -> set[Better]:
    """The direction the printed differences show: compare-kernels prints a positive
    difference for a better value (pdiff for higher-is-better, pndiff for lower)."""
    seen: set[Better] = set()
    base = row.cells[0]
    if base.value in NAN or base.pct is None:
        return seen
    base_value = parse_number(base.value, line=line)
    for cell in row.cells[1:]:
        if cell.value in NAN or cell.pct is None or cell.pct.lstrip("+-") in NAN:
            continue
        value, pct = parse_number(cell.value, line=line), float(cell.pct)
        if base_value <= 0 or value <= 0 or value == base_value or pct == 0:
            continue
        seen.add("higher" if (value > base_value) == (pct > 0) else "lower")
    return seen


def _direction(row: _Row, warnings: list[str]) -> Better:
    stat = row.name.lower()
    fixed: Better = (
        "lower" if _LOWER.fullmatch(stat) else "higher" if _HIGHER.fullmatch(stat) else "none"
    )
    if fixed == "none":
        return fixed
    shown = _evidence(row, row.line)
    if shown and shown != {fixed}:
        warnings.append(
            f"line {row.line}: {row.name} is {fixed}-is-better in mmtests but this row's "
            "differences say otherwise; stored with no direction"
        )
        return "none"
    return fixed


def _summary(values: dict[str, float]) -> tuple[str, Summary] | None:
    """The headline mean's spread as the table prints it: Stddev (HStddev for Hmean since
    2024) as ``sd`` and CoeffVar as ``sd_pct``."""
    for mean, sds, pcts in _HEADLINE:
        if mean not in values:
            continue
        sd = next((values[s] for s in sds if s in values and values[s] >= 0), None)
        pct = next((values[p] for p in pcts if p in values and values[p] >= 0), None)
        if sd is None and pct is None:
            return None
        return mean, Summary(sd=sd, sd_pct=pct)
    return None


def _compare_records(table: _Table, keyed: bool, warnings: list[str]) -> list[Record]:
    by_param: dict[str, list[_Row]] = {}
    for row in table.rows:
        rows = by_param.setdefault(row.param or "", [])
        if any(r.name == row.name for r in rows):
            earlier = next(r for r in rows if r.name == row.name)
            raise ParseError(
                f"mmtests row {row.name} {row.param} appears twice in one table "
                f"(lines {earlier.line} and {row.line})",
                row.line,
            )
        rows.append(row)
    records = []
    for param, rows in by_param.items():
        directions = {row.name: _direction(row, warnings) for row in rows}
        for j, label in enumerate(table.labels):
            values: dict[str, float] = {}
            lines: dict[str, int] = {}
            for row in rows:
                value = _value(row.cells[j].value, row.line, f"{row.name} of {label}")
                if value is None:
                    warnings.append(f"line {row.line}: {row.name} {param} of {label} is NaN")
                    continue
                values[row.name.lower()] = value
                lines[row.name.lower()] = row.line
            headline = _summary(values)
            measurements = tuple(
                Measurement(
                    stat,
                    value,
                    "",
                    directions[next(r.name for r in rows if r.name.lower() == stat)],
                    summary=headline[1] if headline and headline[0] == stat else None,
                )
                for stat, value in values.items()
            )
            if measurements:
                keys: dict[str, KeyValue] = {"label": label, "param": param}
                if keyed:
                    keys = {"table": table.name or "", **keys}
                records.append(Record(keys=keys, line=rows[0].line, measurements=measurements))
    return records


def _section_records(table: _Table, keyed: bool, warnings: list[str]) -> list[Record]:
    records = []
    unit = "s" if table.kind == DURATION else ""
    seen: dict[str, int] = {}
    for row in table.rows:
        if row.name.lower() in seen:
            raise ParseError(
                f"mmtests {table.kind} row {row.name!r} appears twice in one block "
                f"(lines {seen[row.name.lower()]} and {row.line})",
                row.line,
            )
        seen[row.name.lower()] = row.line
    for j, label in enumerate(table.labels):
        found = []
        for row in table.rows:
            value = _value(row.cells[j].value, row.line, f"{row.name} of {label}")
            if value is None:
                warnings.append(f"line {row.line}: {row.name} of {label} is NaN")
                continue
            found.append(Measurement(row.name.lower(), value, unit, "none"))
        if found:
            keys: dict[str, KeyValue] = {"label": label, "section": table.kind}
            if keyed:
                keys = {"table": table.name or "", **keys}
            records.append(Record(keys=keys, line=table.rows[0].line, measurements=tuple(found)))
    return records


def _metadata(tables: list[_Table], lines: list[tuple[int, str]]) -> dict[str, str | int | float]:
    """What the text states about the runs: the benchmark (the first word of the tables'
    headings, as compare-kernels prints ``netperf-udp`` or ``dbench4 Latency``), the machine
    and the mmtests config."""
    found: dict[str, str | int | float] = {}
    workloads: list[str] = []
    for table in tables:
        if table.kind != COMPARE or not table.heading:
            continue
        words = re.sub(r"^(?:[a-z0-9][).]|[-*])\s+", "", table.heading).strip("[]: ").split()
        if words and len(words) <= 5 and _BENCHMARK.match(words[0]) and words[0] not in workloads:
            workloads.append(words[0])
    if len(workloads) == 1:
        found["workload"] = workloads[0]
    elif workloads:
        found["workloads"] = ", ".join(workloads)
    for _, text in lines:
        stripped = text.strip()
        if "hardware" not in found and (match := _HARDWARE.match(stripped)):
            found["hardware"] = next(v for v in match.groups() if v).strip()
        if "config" not in found and (match := _CONFIG.search(stripped)):
            found["config"] = match.group()
    return found


@register("mmtests")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    lines = skip_mail_header(numbered_lines(text))
    warnings: list[str] = []
    tables = _tables(lines, warnings)
    if not tables:
        raise ParseError(
            "no mmtests comparison table: expected rows such as 'Amean  fault-base-1  "
            "0.50 (   0.00%)  0.48 *   4.00%*' or 'Duration User  25810.02  25158.93'"
        )
    for table in tables:
        _check_widths(table)
    _name_tables(tables, warnings)
    keyed = len({t.name for t in tables}) > 1
    records: list[Record] = []
    for table in tables:
        if table.kind == COMPARE:
            records.extend(_compare_records(table, keyed, warnings))
        else:
            records.extend(_section_records(table, keyed, warnings))
    if not records:
        raise ParseError("the mmtests tables hold no value that is a number (all NaN)")
    return ParseResult(
        records=tuple(records), metadata=_metadata(tables, lines), warnings=tuple(warnings)
    )


@recognises("mmtests")
def recognise(text: str) -> bool:
    """A compare-kernels table: a statistic row with a parameter and ``x%)`` cells."""
    for line in text.splitlines()[:5000]:
        stripped = line.strip().lstrip(">").strip()
        if not stripped or "%" not in stripped:
            continue
        match = COMPARE_ROW.match(stripped)
        if match and is_statistic(match["stat"]):
            return True
    return False
