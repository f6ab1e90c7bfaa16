"""lockstat reports from the LSE lockmeter patch (Linux 2.4-2.6), see docs/parsers/lockmeter.md.

The layout is lockstat 1.4's ``print_lock``: per value a percentage (``%4.1f%%``), a duration
with its unit glued on (``1.7us``, ``29ms``, MAX in parentheses), a request count and the lock
or caller name. Lock rows put two spaces before the name, call-site rows four; that spacing is
the only thing telling them apart, so a row whose spacing was lost to mail re-wrapping is
resolved from lockstat's own grouping (blank line, lock row, its callers) or rejected. Every
duration is converted exactly to microseconds with Decimal.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from ingest.parsers.base import Better, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.text import numbered_lines

SECTIONS = ("SPINLOCKS", "RWLOCK READS", "RWLOCK WRITES", "SEMAPHORES")
_PCT = r"\d+(?:\.\d+)?%"
_TIME = r"\d+(?:\.\d+)?(?:us|ms)"


def _pair(name: str) -> str:
    return rf"(?P<{name}_mean>{_TIME})\(\s*(?P<{name}_max>{_TIME})\)"


_LEAD = {
    "util": rf"^\s*(?:(?P<util>{_PCT})\s+)?(?P<con>{_PCT})",
    "persec": rf"^\s*(?P<persec>\d+(?:\.\d+)?)\s+(?P<con>{_PCT})",
}
_WAIT = rf"(?:{_pair('wait')}\(\s*(?P<wait_cpu>{_PCT})\)|(?P<wait_zero>0us))"
_TAIL = rf"\s+(?P<total>\d+)\s+(?P<nowait>{_PCT})\s+(?P<spin>{_PCT})"
_NAME = r"(?P<sep>\s+)(?P<name>(?!\d+(?:\.\d+)?%$)\S+)\s*$"
_READERS = (
    rf"(?:(?P<hold_mean>\d+\.\dus)(?P<estimated>\?\?)?\s+(?P<max_readers>\d+)\s+|"
    rf"(?P<sync_error>Data Sync Error)\s+){_pair('busy')}|(?P<lookup_error>RWLOCK LookupError)"
)
_BODY = {
    "SPINLOCKS": rf"\s+(?:{_pair('hold')}\s+)?{_WAIT}{_TAIL}\s+(?P<reject>{_PCT})",
    "RWLOCK READS": rf"\s+(?:(?:{_READERS})\s+)?{_WAIT}{_TAIL}",
    "RWLOCK WRITES": (
        rf"\s+(?:{_pair('hold')}\s+)?{_WAIT}\s+(?:{_pair('ww')}|(?P<ww_zero>0us)){_TAIL}"
        rf"\(\s*(?P<spin_ww>{_PCT})\)"
    ),
}
_ROW = {
    (section, mode): re.compile(_LEAD[mode] + body + _NAME)
    for section, body in _BODY.items()
    for mode in _LEAD
}
# group -> (metric, unit, better)
METRICS: dict[str, tuple[str, str, Better]] = {
    "util": ("util_pct", "%", "lower"),
    "persec": ("requests_per_s", "/s", "none"),
    "con": ("con_pct", "%", "lower"),
    "hold_mean": ("hold_mean_us", "us", "lower"),
    "hold_max": ("hold_max_us", "us", "lower"),
    "max_readers": ("max_readers", "readers", "none"),
    "busy_mean": ("rdr_busy_mean_us", "us", "lower"),
    "busy_max": ("rdr_busy_max_us", "us", "lower"),
    "wait_mean": ("wait_mean_us", "us", "lower"),
    "wait_max": ("wait_max_us", "us", "lower"),
    "wait_cpu": ("wait_cpu_pct", "%", "lower"),
    "ww_mean": ("wait_ww_mean_us", "us", "lower"),
    "ww_max": ("wait_ww_max_us", "us", "lower"),
    "total": ("total", "requests", "none"),
    "nowait": ("nowait_pct", "%", "none"),
    "spin": ("spin_pct", "%", "none"),
    "spin_ww": ("spin_ww_pct", "%", "none"),
    "reject": ("reject_pct", "%", "none"),
}
_HEADER_WORDS = {
    "UTIL", "TOT/SEC", "CON", "MEAN", "MAX", "%", "CPU", "%CPU", "TOTAL", "NOWAIT", "SPIN",
    "RJECT", "NAME", "RDRS", "WW", "SLEEP",
}  # fmt: skip
_RULE = re.compile(r"^\s*(?:-\s*){3,}$|^\s*_{10,}\s*$")
_LABEL = re.compile(r"^\s*(\S+):\s*$")


@dataclass
class _Row:
    line: int
    section: str
    values: dict[str, str]
    name: str
    kind: str  # "lock", "caller" or "unknown" (spacing lost to re-wrapping)
    group: int
    context: dict[str, str | int] = field(default_factory=dict)


def _value(group: str, token: str, line: int) -> float:
    """One cell, exactly: '29ms' is 29000 us, '4.8us' 4.8 us, '0.06%' 0.06."""
    try:
        value = _cell(group, token, line)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value):
        raise ParseError(f"lockstat value {token!r} is not a finite number", line)
    return value


def _cell(group: str, token: str, line: int) -> float:
    if group == "max_readers" or group == "total":
        return float(int(token))
    if token.endswith("%"):
        return float(Decimal(token[:-1]))
    if token.endswith("ms"):
        return float(Decimal(token[:-2]) * 1000)
    if token.endswith("us"):
        return float(Decimal(token[:-2]))
    if group == "persec":
        return float(Decimal(token))
    raise ParseError(f"lockstat value {token!r} has no unit", line)


def _is_header(line: str) -> bool:
    tokens = re.sub(r"[()]", " ", line).split()
    return bool(tokens) and all(t in _HEADER_WORDS for t in tokens)


_ROW_START = re.compile(r"^[\d.]+(?:%|\s)")


class _Reader:
    """One pass over the lines: the header block, section titles, rows (joined if wrapped)."""

    def __init__(self, text: str) -> None:
        self.lines = numbered_lines(text)
        self.rows: list[_Row] = []
        self.metadata: dict[str, str | int | float] = {}
        self.warnings: list[str] = []
        self.context: dict[str, str | int] = {}
        self.section: str | None = None
        self.mode = "util"
        self.group = 0

    def read(self) -> None:
        i = 0
        while i < len(self.lines):
            number, line = self.lines[i]
            i += 1
            stripped = line.strip()
            if not stripped:
                self.group += 1
            elif self._header_block(stripped) or _RULE.match(line):
                continue
            elif (title := next((s for s in SECTIONS if stripped.startswith(s)), None)) is not None:
                self.section, self.group = title, self.group + 1
            elif self.section is None:
                continue
            elif stripped.startswith(("UTIL", "TOT/SEC")):
                self.mode = "persec" if stripped.startswith("TOT/SEC") else "util"
            elif _is_header(line):
                continue
            elif (label := _LABEL.match(line)) is not None:
                self.context["label"] = label.group(1)
                self.group += 1
            elif _ROW_START.match(stripped):  # not "1557496*26.7%*72us makes it ..." prose
                i = self._row(i - 1)
            else:
                self.section = None  # prose after the table ends it

    def _header_block(self, stripped: str) -> bool:
        """The report title lines; they also carry the per-CPU and periodic-sample keys."""
        if stripped.startswith("System:"):
            self.metadata.setdefault("system", stripped.removeprefix("System:").strip())
            self.section = None
            self.context.pop("cpu", None)
            return True
        if match := re.match(r"^All \((\d+)\) CPUs$", stripped):
            self.metadata.setdefault("cpus", int(match.group(1)))
            self.context.pop("cpu", None)
            return True
        if match := re.match(r"^CPU:(\d+)$", stripped):
            self.context["cpu"] = int(match.group(1))
            return True
        if match := re.match(r"^Periodic sample (\d+) of (\d+)\.", stripped):
            self.context["sample"] = int(match.group(1))
            return True
        if match := re.match(r"^(?:Delta Time|Measurements enabled for):\s+([\d.]+) sec", stripped):
            self.metadata.setdefault("delta_time_s", float(Decimal(match.group(1))))
            return True
        for prefix, key in (("Start time:", "start_time"), ("End   time:", "end_time")):
            if stripped.startswith(prefix):
                self.metadata.setdefault(key, stripped.removeprefix(prefix).strip())
                return True
        return stripped.startswith(
            ("Total counts", "Hash table slots", "Global read lock slots", "Selecting locks",
             "requests/sec:", "contention  :", "utilization :", "Ident:", "Number of read locks",
             "First Start time:", "Last Start  time:", "Last End    time:")
        )  # fmt: skip

    def _row(self, start: int) -> int:
        """Read the row starting at index ``start`` (joining wrapped lines); next index."""
        assert self.section is not None
        number, first = self.lines[start]
        if self.section == "SEMAPHORES":
            raise ParseError("lockstat SEMAPHORES rows are not read (no known sample)", number)
        pattern = _ROW[(self.section, self.mode)]
        joined, kind_known, end = first.rstrip(), True, start + 1
        match = pattern.match(joined)
        while match is None and end < len(self.lines) and end - start <= 3:
            following = self.lines[end][1]
            if not following.strip() or pattern.match(following):
                break
            joined = joined.rstrip() + " " + following.rstrip()
            end += 1
            match = pattern.match(joined)
            kind_known = not following.strip().startswith(match.group("name")) if match else True
        if match is None:
            raise ParseError(
                f"lockstat {self.section} row does not fit the layout"
                f"{' with TOT/SEC' if self.mode == 'persec' else ''}, alone or joined with the "
                "next lines (a wrapped row with a piece missing?)",
                number,
            )
        sep = len(match.group("sep"))
        kind = {2: "lock", 4: "caller"}.get(sep, "unknown") if kind_known else "unknown"
        groups = match.groupdict()
        values = {k: v for k, v in groups.items() if v and k in METRICS}
        for zero, group in (("wait_zero", "wait_mean"), ("ww_zero", "ww_mean")):
            if groups.get(zero):  # '0us' alone: no wait, so no MAX or %CPU printed
                values[group] = "0us"
        if groups.get("estimated"):
            self.warnings.append(f"line {number}: hold time marked '??' (estimated by lockstat)")
        if groups.get("sync_error") or groups.get("lookup_error"):
            self.warnings.append(f"line {number}: lockstat printed an error instead of a value")
        self.rows.append(
            _Row(number, self.section, values, match.group("name"), kind, self.group,
                 dict(self.context))
        )  # fmt: skip
        return end


def _resolve(rows: list[_Row], warnings: list[str]) -> None:
    """Decide lock or caller for rows whose spacing was lost, from lockstat's grouping.

    lockstat prints a blank line, then a lock row and that lock's callers, or a run of
    lock-level rows (locks known only by call site); a caller is never followed by a lock row
    without a blank line. So the first row of a group is a lock, a row after a caller is a
    caller, and a row after a lock row is what the row after it is.
    """
    for index, row in enumerate(rows):
        if row.kind != "unknown":
            continue
        before = rows[index - 1] if index else None
        after = rows[index + 1] if index + 1 < len(rows) else None
        if after is not None and after.group != row.group:
            after = None
        if before is None or before.group != row.group:
            row.kind = "lock"
            warnings.append(
                f"line {row.line}: {row.name} read as a lock row (first row of its group; the "
                "spacing before the name was lost to re-wrapping)"
            )
        elif before.kind == "caller":
            row.kind = "caller"
        elif after is not None and after.kind != "unknown":
            row.kind = after.kind
        else:
            raise ParseError(
                f"cannot tell whether {row.name!r} is a lock or a call site: the spacing before "
                "the name was lost to re-wrapping",
                row.line,
            )


def _records(rows: list[_Row], warnings: list[str]) -> list[Record]:
    records = []
    lock: tuple[int, str] | None = None  # (group, name) of the lock the callers belong to
    for row in rows:
        keys: dict[str, str | int] = {**row.context, "section": row.section}
        if row.kind == "lock":
            lock = (row.group, row.name) if row.name != "*TOTAL*" else None
            keys["lock"] = row.name
        else:
            if lock is not None and lock[0] == row.group:
                keys["lock"] = lock[1]
            else:
                warnings.append(f"line {row.line}: call site {row.name} has no lock row above it")
            keys["caller"] = row.name
        measurements = tuple(
            Measurement(METRICS[g][0], _value(g, token, row.line), METRICS[g][1], METRICS[g][2])
            for g, token in row.values.items()
        )
        records.append(Record(keys=keys, line=row.line, measurements=measurements))
    return records


@register("lockmeter", "lockstat")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """A record per lock row, call-site row and ``*TOTAL*`` row of every section."""
    reader = _Reader(text)
    reader.read()
    if not reader.rows:
        raise ParseError("no lockstat rows under a SPINLOCKS/RWLOCK READS/RWLOCK WRITES title")
    warnings = list(reader.warnings)
    _resolve(reader.rows, warnings)
    records = _records(reader.rows, warnings)
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=reader.metadata)
