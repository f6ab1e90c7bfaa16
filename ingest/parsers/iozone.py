"""iozone output: auto/table mode rows and throughput-mode blocks (docs/parsers/iozone.md).

A file is often several iozone runs (a mail comparing kernels, a harness log running one test
after another). Each table row becomes a record keyed by ``file_size_kb``/``record_size_kb``
and each throughput block a record keyed by ``test``/``procs`` (plus the sizes the run states).
When two runs would give records with the same keys, every record gets a ``run`` key (1, 2,
... in order of appearance) rather than being taken for repeats of one measurement.
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
    normalize_key_value,
    register,
)
from ingest.parsers.iozone_table import (
    Table,
    add_row,
    cell_value,
    extend_header,
    finish,
    header,
    is_row,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_BANNER = re.compile(r"Iozone: Performance Test of File I/O")
_COMMAND = re.compile(r"^\s*Command line used:\s*(.*?)\s*$")
_VERSION = re.compile(r"Version \$Revision: ([\d.]+) \$")
_OUTPUT = re.compile(
    r"Output is in (Kbytes/sec|kBytes/sec|operations per second|microseconds per operation)"
)
_TABLE_UNITS: dict[str, tuple[str, Better]] = {
    "Kbytes/sec": ("KB/s", "higher"),
    "kBytes/sec": ("KB/s", "higher"),
    "operations per second": ("ops/s", "higher"),
    "microseconds per operation": ("us/op", "lower"),
}
_EACH = re.compile(r"Each (?:process|thread) writes a (\d+) kByte file in (\d+) kByte records")
_CHILDREN = re.compile(
    r"^\s*Children see throughput for\s+(\d+)\s+(\S.*?)\s*=\s*(\S+)\s+(\S+)/sec\s*$"
)
_PARENT = re.compile(
    r"^\s*Parent sees throughput for\s+(\d+)\s+(\S.*?)\s*=\s*(\S+)\s+(\S+)/sec\s*$"
)
_PER = re.compile(
    r"^\s*(Min|Max|Avg) throughput per (?:process|thread)\s*=\s*(\S+)\s+(\S+)/sec\s*$"
)
_XFER = re.compile(r"^\s*Min xfer\s*=\s*(\S+)\s+(\S+)\s*$")
_CHILD = re.compile(
    r"^\s*Child\[(\d+)\] xfer count\s*=\s*(\S+)\s+(\S+),\s*Throughput\s*=\s*(\S+)\s+(\S+)/sec"
    r"(?:,\s*wall=\s*(\S+),\s*cpu=\s*(\S+),\s*%=\s*(\S+))?\s*$"
)
_CPU = re.compile(
    r"^\s*CPU [Uu]tilization: Wall time\s+(\S+)\s+CPU time\s+(\S+)"
    r"\s+CPU utilization\s+(\S+)\s*%\s*$"
)
# A line that starts like a throughput line but matched none of the patterns above is broken.
_LOOKS_THROUGHPUT = re.compile(
    r"^\s*(Children see|Parent sees|(Min|Max|Avg) throughput per|Min xfer|Child\[|CPU [Uu]tiliz)"
)
_RATE_UNITS = {"kB": "KB/s", "KB": "KB/s", "ops": "ops/s"}
_SIZE_UNITS = {"kB": "KB", "KB": "KB", "ops": "ops"}


@dataclass
class _Segment:
    """One iozone run (banner/command line) or one pasted table: what tells its records apart."""

    index: int
    command: str | None = None
    unit: tuple[str, Better] | None = None
    sizes: dict[str, KeyValue] = field(default_factory=dict)
    records: list[Record] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)


@dataclass
class _Block:
    """One open throughput test ('Children see throughput ...' and the lines under it)."""

    keys: dict[str, KeyValue]
    line: int
    measurements: list[Measurement] = field(default_factory=list)


def _unit(token: str, table: Mapping[str, str], number: int) -> str:
    if token not in table:
        raise ParseError(f"iozone unit {token!r} is not kB, KB or ops", number)
    return table[token]


class _Reader:
    """Walks the lines once, opening a segment per run and a record per row or test."""

    def __init__(self) -> None:
        self.segments: list[_Segment] = [_Segment(1)]
        self.table: Table | None = None
        self.block: _Block | None = None  # the open throughput test
        self.warnings: list[str] = []
        self.versions: set[str] = set()

    @property
    def segment(self) -> _Segment:
        return self.segments[-1]

    def new_segment(self) -> None:
        self.close_block()
        self.table = None
        seg = self.segment
        if seg.records or seg.tables or seg.command:
            self.segments.append(_Segment(len(self.segments) + 1))

    def close_block(self) -> None:
        if self.block is not None:
            block = self.block
            self.segment.records.append(
                Record(keys=block.keys, line=block.line, measurements=tuple(block.measurements))
            )
            self.block = None

    def line(self, number: int, line: str) -> None:
        if self.table is not None:
            if is_row(line):
                add_row(self.table, line, number)
                return
            if not self.table.rows and extend_header(self.table, line):
                return  # the rest of a header a mail client wrapped
            self.table = None
        if _BANNER.search(line):
            self.new_segment()
        elif m := _COMMAND.match(line):
            if self.segment.command is not None or self.segment.records or self.segment.tables:
                self.new_segment()
            self.segment.command = m.group(1)
        elif m := _VERSION.search(line):
            self.versions.add(m.group(1))
        elif m := _OUTPUT.search(line):
            if not line.lstrip().startswith('"'):  # the -R report repeats it in quotes
                self.segment.unit = _TABLE_UNITS[m.group(1)]
        elif m := _EACH.search(line):
            self.segment.sizes = {
                "file_size_kb": int(m.group(1)),
                "record_size_kb": int(m.group(2)),
            }
        elif (table := header(line, number)) is not None:
            self.close_block()
            if self.segment.tables or self.segment.records:
                self.new_segment()
            self.segment.tables.append(table)
            self.table = table
        elif _LOOKS_THROUGHPUT.match(line):
            self.throughput(number, line)

    def throughput(self, number: int, line: str) -> None:
        if m := _CHILDREN.match(line):
            self.close_block()
            keys: dict[str, KeyValue] = {"test": m.group(2), "procs": int(m.group(1))}
            keys.update(self.segment.sizes)
            self.block = _Block(keys, number)
            self._add(
                number, "children_throughput", m.group(3), _unit(m.group(4), _RATE_UNITS, number)
            )
            return
        if self.block is None:
            raise ParseError(
                "iozone throughput line outside a 'Children see throughput' block", number
            )
        keys = self.block.keys
        if m := _PARENT.match(line):
            if (int(m.group(1)), m.group(2)) != (keys["procs"], keys["test"]):
                raise ParseError(
                    f"'Parent sees' line is for {m.group(1)} {m.group(2)}, but the block is "
                    f"for {keys['procs']} {keys['test']}",
                    number,
                )
            self._add(
                number, "parent_throughput", m.group(3), _unit(m.group(4), _RATE_UNITS, number)
            )
        elif m := _PER.match(line):
            name = f"{m.group(1).lower()}_throughput_per_process"
            self._add(number, name, m.group(2), _unit(m.group(3), _RATE_UNITS, number))
        elif m := _XFER.match(line):
            self._add(
                number, "min_xfer", m.group(1), _unit(m.group(2), _SIZE_UNITS, number), "none"
            )
        elif m := _CHILD.match(line):
            child = f"child{m.group(1)}"
            self._add(
                number, f"{child}_xfer", m.group(2), _unit(m.group(3), _SIZE_UNITS, number), "none"
            )
            self._add(
                number, f"{child}_throughput", m.group(4), _unit(m.group(5), _RATE_UNITS, number)
            )
            for index, name, unit in ((6, "wall_s", "s"), (7, "cpu_s", "s"), (8, "cpu_pct", "%")):
                if m.group(index) is not None:
                    self._add(number, f"{child}_{name}", m.group(index), unit, "none")
        elif m := _CPU.match(line):
            self._add(number, "cpu_wall_time", m.group(1), "s", "none")
            self._add(number, "cpu_time", m.group(2), "s", "none")
            self._add(number, "cpu_utilization", m.group(3), "%", "none")
        else:
            raise ParseError(
                f"iozone throughput line is incomplete or garbled: {line.strip()!r}", number
            )

    def _add(
        self, number: int, metric: str, token: str, unit: str, better: Better = "higher"
    ) -> None:
        assert self.block is not None
        found = self.block.measurements
        if any(m.metric == metric for m in found):
            raise ParseError(f"second {metric} line in one iozone throughput block", number)
        value = parse_number(token, line=number, what=f"iozone {metric}")
        found.append(Measurement(metric, value, unit, better))


def _table_records(segment: _Segment, warnings: list[str]) -> list[Record]:
    """One record per table row; the unit is the run's 'Output is in' line (KB/s if absent)."""
    unit, better = segment.unit or ("KB/s", "higher")
    if segment.unit is None and segment.tables:
        lines = ", ".join(str(t.line) for t in segment.tables)
        warnings.append(f"line {lines}: no 'Output is in' line for this table; read as KB/s")
    records = []
    for table in segment.tables:
        finish(table)
        for row in table.rows:
            measurements = tuple(
                Measurement(
                    table.names[c],
                    cell_value(token, table.names[c], row.line),
                    unit,
                    better,
                )
                for c, token in sorted(row.cells.items())
            )
            keys = {"file_size_kb": row.file_kb, "record_size_kb": row.record_kb}
            records.append(Record(keys=keys, line=row.line, measurements=measurements))
    return records


def _identity(record: Record) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, normalize_key_value(v)) for k, v in record.keys.items()))


def _number_runs(segments: list[_Segment]) -> list[Record]:
    """All records; each gets a ``run`` key when two runs hold records with equal keys."""
    seen: dict[tuple[tuple[str, str], ...], int] = {}
    clash = False
    for segment in segments:
        for record in segment.records:
            identity = _identity(record)
            if identity in seen and seen[identity] != segment.index:
                clash = True
            if identity in seen and seen[identity] == segment.index:
                raise ParseError(f"two iozone records {record.describe()} in one run", record.line)
            seen[identity] = segment.index
    out = []
    runs = [s for s in segments if s.records]
    for number, segment in enumerate(runs, start=1):
        for record in segment.records:
            if clash:
                record = Record(
                    keys={**record.keys, "run": number},
                    line=record.line,
                    measurements=record.measurements,
                )
            out.append(record)
    return out


_QP_HEADER = re.compile(r"^content-transfer-encoding:\s*quoted-printable\s*$", re.IGNORECASE)
_QP_ESCAPE = re.compile(r"=([0-9A-F]{2})")


def unquote_printable(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Undo quoted-printable mail encoding (``=3D``, soft line breaks) when the mail says so.

    A soft break (a line ending in ``=``) joins the next line onto this one, which keeps its
    own line number, so errors still name the line where the value starts.
    """
    if not any(_QP_HEADER.match(line.strip()) for _, line in lines):
        return lines
    out: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, line in lines:
        if pending is not None:
            number, line = pending[0], pending[1] + line
            pending = None
        decoded = _QP_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), line.rstrip(" \t"))
        if line.rstrip(" \t").endswith("=") and not line.rstrip(" \t").endswith("=3D"):
            pending = (number, line.rstrip(" \t")[:-1])
            continue
        out.append((number, decoded))
    if pending is not None:
        out.append((pending[0], _QP_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), pending[1])))
    return out


def _metadata(reader: _Reader) -> dict[str, str | int | float]:
    metadata: dict[str, str | int | float] = {}
    if len(reader.versions) == 1:
        metadata["version"] = next(iter(reader.versions))
    commands = [s.command for s in reader.segments if s.command]
    if commands:
        metadata["command"] = commands[0] if len(set(commands)) == 1 else " | ".join(commands)
    return metadata


@register("iozone")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    reader = _Reader()
    for number, line in unquote_printable(numbered_lines(text)):
        reader.line(number, line)
    reader.close_block()
    for segment in reader.segments:
        segment.records = _table_records(segment, reader.warnings) + segment.records
    records = _number_runs(reader.segments)
    if not records:
        tables = [t.line for s in reader.segments for t in s.tables]
        first = next((n for n, line in numbered_lines(text) if line.strip()), None)
        raise ParseError(
            "no iozone results: expected rows of numbers under the 'KB reclen ...' header here"
            if tables
            else "no iozone results: expected a 'KB reclen ...' table with rows or a "
            "'Children see throughput' block, and no line from this one on is either",
            tables[0] if tables else first,
        )
    return ParseResult(
        records=tuple(records), warnings=tuple(reader.warnings), metadata=_metadata(reader)
    )
