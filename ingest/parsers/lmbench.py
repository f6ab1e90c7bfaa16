"""lmbench 2.x / 3.x: raw per-test lines here, the `make see` summary tables in lmbench_summary.

Both layouts give each quantity the same metric name (docs/parsers/lmbench.md has the full
map), so a 2.4 run read from a summary and a 2.5 run read from a raw result file chart on one
axis. Summary tables are sliced by the dashed-rule column spans because lmbench leaves cells
empty for tests it did not run, and whitespace splitting would shift every later column.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import (
    Curve,
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    register,
)
from ingest.parsers.lmbench_summary import (
    Summary,
    descriptions,
    parse_summary,
    summary_records,
    table_kind,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import key_by_headings
from ingest.parsers.text import numbered_lines

# --- raw per-test lines -------------------------------------------------------------------

_RAW_FIXED = {
    "simple syscall": "lat_syscall_null",
    "simple read": "lat_syscall_read",
    "simple write": "lat_syscall_write",
    "simple stat": "lat_syscall_stat",
    "simple fstat": "lat_syscall_fstat",
    "simple open/close": "lat_syscall_open_close",
    "signal handler installation": "lat_sig_install",
    "signal handler overhead": "lat_sig_handle",
    "protection fault": "lat_prot_fault",
    "pipe latency": "lat_pipe",
    "af_unix sock stream latency": "lat_unix",
    "process fork+exit": "lat_proc_fork",
    "process fork+execve": "lat_proc_exec",
    "process fork+/bin/sh -c": "lat_proc_shell",
    "pipe bandwidth": "bw_pipe",
    "af_unix sock stream bandwidth": "bw_unix",
    "fifo latency": "lat_fifo",
    "fcntl lock latency": "lat_fcntl",
    "semaphore latency": "lat_sem",
    "unix connection cost": "lat_unix_connect",
}
# (pattern, metric template, whether the last group is the server host)
_RAW_PATTERNS = [
    (re.compile(r"^select on (\d+) fd's$"), "lat_select_{0}fd", False),
    (re.compile(r"^select on (\d+) tcp fd's$"), "lat_select_{0}tcp", False),
    (re.compile(r"^(udp|tcp) latency using (\S+)$"), "lat_{0}", True),
    (re.compile(r"^rpc/(udp|tcp) latency using (\S+)$"), "lat_rpc_{0}", True),
    (re.compile(r"^tcp/ip connection cost to (\S+)$"), "lat_tcp_connect", True),
    (re.compile(r"^socket bandwidth using (\S+)$"), "bw_tcp", True),
    (re.compile(r"^pagefaults on .+$"), "lat_pagefault", False),
    (re.compile(r"^file .+ write bandwidth$"), "bw_file_write", False),
]
_LOCAL_HOSTS = {"localhost", "127.0.0.1"}
_RAW_LINE = re.compile(
    r"^(?:Static\s+)?(?P<label>[A-Za-z][^:]*?):\s*(?P<value>\S+)"
    r"(?P<second>\s*/\s*\S+)?\s*(?P<unit>microseconds|usecs|MB/sec|KB/sec)\s*$"
)
_RAW_UNITS = {"microseconds": "us", "usecs": "us", "MB/sec": "MB/s", "KB/sec": "KB/s"}
_CTX_TITLE = re.compile(r'^"size=(\d+)k\b(?:\s+ovr=(\S+))?', re.IGNORECASE)
# lat_fs prints one row per file size: size, files made, creations/s, deletions/s.
_LAT_FS_ROW = re.compile(r"^(\d+)k\s+(\d+)\s+(\d+)\s+(\d+)$")
_BW_MEM_CMD = re.compile(
    r"\bbw_mem(?:\s+-\S+\s+\S+)*\s+\d+[kmKM]?\s+(rd|wr|rdwr|cp|fwr|frd|fcp|bzero|bcopy)\s*$"
)
_PAIR = re.compile(r"^\s*(\S+)\s+(\S+)\s*$")
_RESULTS_HEADER = re.compile(r"^\[lmbench\s*(\d+\.\d+\S*) results for (.*)\]\s*$")


_UNITS = {"bw_file_write": "KB/s"}


def _unit_of(metric: str) -> str:
    if metric in _UNITS:
        return _UNITS[metric]
    if metric.startswith("fs_"):
        return "files/s"
    return "MB/s" if metric.startswith("bw_") else "us"


def _better(metric: str) -> str:
    if "_overhead_" in metric:
        return "none"
    return "higher" if metric.startswith(("bw_", "fs_")) else "lower"


def _slug_metric(label: str, unit: str) -> str:
    """A test this parser has no name for, named from its own label (``Mmap read
    latency`` -> ``lat_mmap_read_latency``): its value is read, not dropped."""
    slug = "_".join(re.sub(r"[^a-z0-9]+", " ", label.lower()).split())
    return f"{'bw' if unit.endswith('/s') else 'lat'}_{slug}"


def _raw_metric(label: str) -> str | None:
    key = " ".join(label.lower().split())
    if key in _RAW_FIXED:
        return _RAW_FIXED[key]
    for pattern, template, has_host in _RAW_PATTERNS:
        match = pattern.match(key)
        if match:
            metric = template.format(*match.groups())
            if has_host and match.groups()[-1] not in _LOCAL_HOSTS:
                metric += "_remote"
            return metric
    return None


@dataclass
class _Raw:
    """One run's raw lines: from a ``[lmbench3.0 results for ...]`` header to the next."""

    values: dict[str, list[float]] = field(default_factory=dict)
    curves: list[Curve] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)
    line: int | None = None
    units: dict[str, str] = field(default_factory=dict)  # of tests named from their label


def _parse_raw(lines: list[tuple[int, str]]) -> list[_Raw]:
    """Raw per-test lines; each results header starts a new run."""
    parts = [_Raw()]
    raw = parts[0]
    ctx_size: str | None = None
    curve: tuple[str, list[tuple[float, float]]] | None = None
    bw_mem_op: str | None = None

    def close_curve() -> None:
        nonlocal curve
        if curve and curve[1]:
            raw.curves.append(Curve(curve[0], "x", "y", tuple(curve[1])))
        curve = None

    for number, line in lines:
        text = line.strip()
        if not text:
            ctx_size = None
            close_curve()
            continue
        header = _RESULTS_HEADER.match(text)
        if header:
            close_curve()
            if raw.values or raw.curves or raw.metadata:
                raw = _Raw()
                parts.append(raw)
            raw.line = number
            raw.metadata["lmbench_version"] = header.group(1)
            raw.metadata["uname"] = header.group(2).strip()
            continue
        if text.startswith('"'):
            close_curve()
            ctx = _CTX_TITLE.match(text)
            ctx_size = ctx.group(1) if ctx else None
            if ctx and ctx.group(2) is not None:
                overhead = parse_number(ctx.group(2), line=number, what="lat_ctx overhead")
                raw.values.setdefault(f"lat_ctx_overhead_{ctx_size}k", []).append(overhead)
                raw.line = raw.line or number
            if not ctx:
                curve = (text[1:].strip(), [])
            continue
        if fs_row := _LAT_FS_ROW.match(text):
            size = fs_row.group(1)
            for metric, token in ((f"fs_create_{size}k", 3), (f"fs_delete_{size}k", 4)):
                value = parse_number(fs_row.group(token), line=number, what=f"lat_fs {metric}")
                raw.values.setdefault(metric, []).append(value)
            raw.line = raw.line or number
            continue
        pair = _PAIR.match(text)
        if pair and (ctx_size is not None or curve is not None or bw_mem_op):
            x = parse_number(pair.group(1), line=number, what="x value")
            y = parse_number(pair.group(2), line=number, what="y value")
            raw.line = raw.line or number
            if ctx_size is not None:
                metric = f"lat_ctx_{int(x)}p_{ctx_size}k"
                raw.values.setdefault(metric, []).append(y)
            elif curve is not None:
                curve[1].append((x, y))
            else:
                raw.values.setdefault(f"bw_mem_{bw_mem_op}", []).append(y)
                bw_mem_op = None
            continue
        command = _BW_MEM_CMD.search(text)
        bw_mem_op = command.group(1) if command else None
        match = _RAW_LINE.match(text)
        if match:
            _raw_value(match, number, raw)
            raw.line = raw.line or number
    close_curve()
    return parts


def _raw_value(match: re.Match[str], number: int, raw: _Raw) -> None:
    unit = _RAW_UNITS[match.group("unit")]
    metric = _raw_metric(match.group("label"))
    if metric is None:
        metric = _slug_metric(match.group("label"), unit)
        raw.units[metric] = unit
    if unit != raw.units.get(metric, _unit_of(metric)):
        raise ParseError(
            f"{match.group('label')!r} is in {match.group('unit')}, expected {_unit_of(metric)}",
            number,
        )
    value = parse_number(match.group("value"), line=number, what=match.group("label"))
    if match.group("second"):
        raw.warnings.append(f"line {number}: two values on one line; kept the first")
    raw.values.setdefault(metric, []).append(value)


# --- building the result -----------------------------------------------------------------


def _select_records(records: list[Record], options: Mapping[str, object]) -> list[Record]:
    """``row`` (1-based, in order of first appearance) and ``os`` filter the summary's rows."""
    if "row" in options:
        index = options["row"]
        if not isinstance(index, int) or not 1 <= index <= len(records):
            raise ParseError(
                f"option row={index!r} is out of range: the summary has {len(records)} rows"
            )
        records = [records[index - 1]]
    if "os" in options:
        wanted = str(options["os"]).strip()
        chosen = [r for r in records if r.keys.get("label") == wanted]
        if not chosen:
            known = ", ".join(sorted({str(r.keys.get("label")) for r in records}))
            raise ParseError(f"option os={wanted!r} matches no row; the OS cells are: {known}")
        records = chosen
    return records


def _from_summary(
    summary: Summary, options: Mapping[str, object], lines: list[tuple[int, str]]
) -> ParseResult:
    records = _select_records(summary_records(summary), options)
    # Two summaries of one host and OS ("Linux 2.6.22-" is cut short) under other headings
    # ("vanilla:", "patched:") are other runs, not trials 6 to 10 of the first.
    records = key_by_headings(records, lines, summary.warnings, skip=_summary_line)
    metadata: dict[str, str | int | float] = {}
    if summary.version:
        metadata["lmbench_version"] = summary.version
    found = descriptions(summary)
    if len(found) == 1:
        metadata["description"] = found.pop()
    return ParseResult(records=tuple(records), warnings=tuple(summary.warnings), metadata=metadata)


def _raw_records(part: _Raw) -> list[Record]:
    """One record per run; a metric printed n times (runs pasted together) goes to run n."""
    keys: dict[str, KeyValue] = {}
    uname = part.metadata.get("uname", "").split()
    if len(uname) >= 3:
        keys = {"host": uname[1], "label": f"{uname[0]} {uname[2]}"}
    runs = max((len(found) for found in part.values.values()), default=1)
    records = []
    for run in range(runs):
        measurements = tuple(
            Measurement(
                metric,
                found[run],
                part.units.get(metric, _unit_of(metric)),
                _better(metric),  # type: ignore[arg-type]
            )
            for metric, found in part.values.items()
            if run < len(found)
        )
        records.append(
            Record(
                keys=keys,
                trial=run + 1 if runs > 1 else None,
                line=part.line,
                measurements=measurements,
                curves=tuple(part.curves) if run == 0 else (),
            )
        )
    return records


def _from_raw(parts: list[_Raw]) -> ParseResult:
    warnings: list[str] = []
    records: list[Record] = []
    for part in parts:
        warnings.extend(part.warnings)
        repeated = sorted(m for m, found in part.values.items() if len(found) > 1)
        if repeated:
            warnings.append(
                f"line {part.line}: {', '.join(repeated)} printed more than once; the n-th "
                "value of each is read as run n (never averaged)"
            )
        records.extend(_raw_records(part))
    metadata: dict[str, str | int | float] = {}
    for key in ("lmbench_version", "uname"):
        found = {part.metadata[key] for part in parts if key in part.metadata}
        if len(found) == 1:
            metadata[key] = found.pop()
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)


def _summary_line(line: str) -> bool:
    """lmbench's own banner, titles and notes are never headings."""
    stripped = line.strip()
    return bool(
        "L M B E N C H" in stripped
        or table_kind(stripped) is not None
        or stripped.startswith(("(Alpha software", "(WARNING"))
    )


@register("lmbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read the summary reports if the file has any, else the raw per-test lines."""
    lines = numbered_lines(text)
    summary = parse_summary(lines)
    if summary.rows:
        result = _from_summary(summary, options, lines)
        if any(part.values for part in _parse_raw(lines)):
            result = ParseResult(
                records=result.records,
                warnings=(*result.warnings, "raw per-test lines ignored: the summary is used"),
                metadata=result.metadata,
            )
        return result
    parts = [part for part in _parse_raw(lines) if part.values or part.curves]
    if not parts:
        first = next((n for n, line in lines if line.strip()), None)
        raise ParseError(
            "no lmbench result found: expected a summary table ('L M B E N C H' and dashed "
            "rules) or raw per-test lines ('Simple syscall: 0.23 microseconds'), and no line "
            "from this one on is either",
            first,
        )
    return _from_raw(parts)
