"""What sysstat's text and JSON readers share: the series being built, column names as
metric names and units (docs/parsers/sysstat.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.parsers.base import (
    Better,
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    SeriesColumn,
)

# header column -> record key for the column that names the CPU, device or interface of a row
KEY_COLUMNS = {
    "CPU": "cpu", "IFACE": "iface", "DEV": "device", "Device": "device", "Device:": "device",
    "INTR": "intr", "TTY": "tty", "FILESYSTEM": "filesystem", "BUS": "bus",
}  # fmt: skip
# a column only one report has -> the report's name (sar's option names where it has one)
REPORT_SIGNATURES = (
    ("%user", "cpu"), ("%usr", "cpu"), ("runq-sz", "queue"), ("proc/s", "task"),
    ("cswch/s", "task"), ("rxpck/s", "dev"), ("rxerr/s", "edev"), ("kbmemfree", "memory"),
    ("pgpgin/s", "paging"), ("pswpin/s", "swapping"), ("intr/s", "interrupts"),
    ("dentunusd", "kernel"), ("totsck", "sock"),
)  # fmt: skip


def report_name(columns: tuple[str, ...], key: str | None) -> str:
    """The report a header belongs to; an unknown header is named after its first column."""
    for column, name in REPORT_SIGNATURES:
        if column in columns:
            return name
    if key == "device":
        return "disk"
    if "tps" in columns:
        return "io"
    return metric_name(columns[0]) if columns else "unknown"


def metric_name(column: str) -> str:
    """snake_case for a column: ``%user`` -> ``user_pct``, ``rxkB/s`` -> ``rxkb_per_s``."""
    pct = column.startswith("%")
    name = column.lstrip("%").replace("/s", "_per_s").lower()
    name = re.sub(r"[^a-z0-9]+", "_", name).strip("_")
    return f"{name}_pct" if pct else name


def unit(column: str) -> str:
    if column.startswith("%"):
        return "%"
    lowered = column.lower()
    if "await" in lowered or lowered == "svctm":
        return "ms"
    rate = lowered.endswith("/s") or lowered in {"tps", "rtps", "wtps", "dtps", "bread", "bwrtn"}
    for marker, amount in (("kb", "kB"), ("mb", "MB"), ("blk", "blocks"), ("sec", "sectors")):
        if marker in lowered and not lowered.startswith(("runq", "plist")):
            return f"{amount}/s" if rate else amount
    if lowered in {"runq-sz", "plist-sz", "blocked"}:
        return "tasks"
    if lowered.startswith("ldavg"):
        return "load"
    if lowered.endswith(("req-sz", "rq-sz")):
        return "kB" if "areq" in lowered else "sectors"
    if lowered.endswith("qu-sz") or lowered == "aqu-sz":
        return "requests"
    return "/s" if rate else "count"


def better(column: str) -> Better:
    """Latencies are lower-better; everything else depends on the workload."""
    return "lower" if "await" in column.lower() or column == "svctm" else "none"


@dataclass
class Series:
    """One record being built: a column of values per header name, row by row."""

    keys: dict[str, KeyValue]
    line: int | None
    stamps: list[str] = field(default_factory=list)
    rows: list[dict[str, float]] = field(default_factory=list)
    average: dict[str, float] = field(default_factory=dict)
    since_boot: bool = False

    def add(self, stamp: str | None, values: dict[str, float], line: int | None) -> None:
        if self.rows and set(values) != set(self.rows[0]):
            raise ParseError(
                f"{self.describe()}: the columns change from the row at line {self.line}", line
            )
        self.stamps.append(stamp or "")
        self.rows.append(values)

    def describe(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.keys.items())

    def record(self, source: str) -> Record:
        names = list(self.rows[0]) if self.rows else []
        stamps = tuple(self.stamps) if any(self.stamps) else ()
        columns = tuple(
            SeriesColumn(
                source,
                name,
                tuple(row[name] for row in self.rows),
                first_is_since_boot=self.since_boot,
                timestamps=stamps,
            )
            for name in names
        )
        measurements = tuple(
            Measurement(f"{source}_{metric_name(c)}_avg", v, unit(c), better(c))
            for c, v in self.average.items()
        )
        return Record(
            keys=dict(self.keys), line=self.line, columns=columns, measurements=measurements
        )


def result(
    series: list[Series], source: str, warnings: list[str], metadata: dict[str, str | int | float]
) -> ParseResult:
    records = tuple(s.record(source) for s in series if s.rows or s.average)
    if not records:
        raise ParseError(f"no {source} data rows found")
    return ParseResult(records=records, warnings=tuple(warnings), metadata=metadata)
