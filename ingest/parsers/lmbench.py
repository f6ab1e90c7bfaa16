"""lmbench 2.x / 3.x: raw per-test lines and the `make see` summary tables.

Both layouts give each quantity the same metric name (docs/parsers/lmbench.md has the full
map), so a 2.4 run read from a summary and a 2.5 run read from a raw result file chart on one
axis. Summary tables are sliced by the dashed-rule column spans because lmbench leaves cells
empty for tests it did not run, and whitespace splitting would shift every later column.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from ingest.parsers.base import Curve, Measurement, ParseError, ParseResult, register
from ingest.parsers.numbers import parse_number, parse_optional
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
]
_LOCAL_HOSTS = {"localhost", "127.0.0.1"}
_RAW_LINE = re.compile(
    r"^(?:Static\s+)?(?P<label>[A-Za-z][^:]*?):\s*(?P<value>\S+)"
    r"(?P<second>\s*/\s*\S+)?\s+(?P<unit>microseconds|usecs|MB/sec)\s*$"
)
_RAW_UNITS = {"microseconds": "us", "usecs": "us", "MB/sec": "MB/s"}
_CTX_TITLE = re.compile(r'^"size=(\d+)k\b', re.IGNORECASE)
_BW_MEM_CMD = re.compile(
    r"\bbw_mem(?:\s+-\S+\s+\S+)*\s+\d+[kmKM]?\s+(rd|wr|rdwr|cp|fwr|frd|fcp|bzero|bcopy)\s*$"
)
_PAIR = re.compile(r"^\s*(\S+)\s+(\S+)\s*$")
_RESULTS_HEADER = re.compile(r"^\[lmbench\s*(\d+\.\d+\S*) results for (.*)\]\s*$")


def _unit_of(metric: str) -> str:
    return "MB/s" if metric.startswith("bw_") else "us"


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
    values: dict[str, list[float]]
    curves: list[Curve]
    warnings: list[str]
    metadata: dict[str, str]


def _parse_raw(lines: list[tuple[int, str]]) -> _Raw:
    raw = _Raw({}, [], [], {})
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
            raw.metadata["lmbench_version"] = header.group(1)
            raw.metadata["uname"] = header.group(2).strip()
            continue
        if text.startswith('"'):
            close_curve()
            ctx = _CTX_TITLE.match(text)
            ctx_size = ctx.group(1) if ctx else None
            if not ctx:
                curve = (text[1:].strip(), [])
            continue
        pair = _PAIR.match(text)
        if pair and (ctx_size is not None or curve is not None or bw_mem_op):
            x = parse_number(pair.group(1), line=number, what="x value")
            y = parse_number(pair.group(2), line=number, what="y value")
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
    close_curve()
    return raw


def _raw_value(match: re.Match[str], number: int, raw: _Raw) -> None:
    metric = _raw_metric(match.group("label"))
    if metric is None:
        return
    unit = _RAW_UNITS[match.group("unit")]
    if unit != _unit_of(metric):
        raise ParseError(
            f"{match.group('label')!r} is in {match.group('unit')}, expected {_unit_of(metric)}",
            number,
        )
    value = parse_number(match.group("value"), line=number, what=match.group("label"))
    if match.group("second"):
        raw.warnings.append(f"line {number}: two values on one line; kept the first")
    raw.values.setdefault(metric, []).append(value)


# --- summary tables -----------------------------------------------------------------------

_RULE = re.compile(r"^-+(?: +-+)+\s*$")
_SINGLE_RULE = re.compile(r"^\s*-+\s*$")
_BANNER = re.compile(r"L M B E N C H\s+(\d) \. (\d)")
_SKIP = re.compile(r"^\s*(?:g?make\[\d+\]:|\(WARNING)")

_LAT_COMM = [
    (r"^(\d+)p/(\d+)k ctxsw$", "lat_ctx_{0}p_{1}k"),
    (r"^pipe$", "lat_pipe"),
    (r"^af unix$", "lat_unix"),
    (r"^udp$", "lat_udp"),
    (r"^rpc/udp$", "lat_rpc_udp"),
    (r"^tcp$", "lat_tcp"),
    (r"^rpc/tcp$", "lat_rpc_tcp"),
    (r"^tcp conn$", "lat_tcp_connect"),
]
_COLUMNS: dict[str, list[tuple[str, str]]] = {
    "params": [
        (r"^description$", "@description"),
        (r"^mhz$", "@mhz"),
        (r"^tlb pages$", "@tlb_pages"),
        (r"^cache line bytes$", "@cache_line_bytes"),
        (r"^mem par$", "@mem_par"),
        (r"^scal load$", "@scal_load"),
    ],
    "processor": [
        (r"^mhz$", "@mhz"),
        (r"^null call$", "lat_syscall_null"),
        (r"^null i/o$", "lat_syscall_null_io"),
        (r"^stat$", "lat_syscall_stat"),
        (r"^open clos$", "lat_syscall_open_close"),
        (r"^se?lct tcp$", "lat_select_100tcp"),
        (r"^sig inst$", "lat_sig_install"),
        (r"^sig hndl$", "lat_sig_handle"),
        (r"^fork proc$", "lat_proc_fork"),
        (r"^exec proc$", "lat_proc_exec"),
        (r"^sh proc$", "lat_proc_shell"),
    ],
    "ctx": [(r"^(\d+)p/(\d+)k ctxsw$", "lat_ctx_{0}p_{1}k")],
    "latency": _LAT_COMM,
    "filevm": [
        (r"create$", "lat_fs_create_0k"),
        (r"delete$", "lat_fs_delete_0k"),
        (r"create$", "lat_fs_create_10k"),
        (r"delete$", "lat_fs_delete_10k"),
        (r"^mmap latency$", "lat_mmap"),
        (r"^prot fault$", "lat_prot_fault"),
        (r"^page fault$", "lat_pagefault"),
        (r"^100fd selct$", "lat_select_100fd"),
    ],
    "bandwidth": [
        (r"^pipe$", "bw_pipe"),
        (r"^af unix$", "bw_unix"),
        (r"^tcp$", "bw_tcp"),
        (r"^file reread$", "bw_file_reread"),
        (r"^mmap reread$", "bw_mmap_reread"),
        (r"^bcopy \(libc\)$", "bw_bcopy_libc"),
        (r"^bcopy \(hand\)$", "bw_bcopy_hand"),
        (r"^mem read$", "bw_mem_rd"),
        (r"^mem write$", "bw_mem_wr"),
    ],
    "memory": [
        (r"^mhz$", "@mhz"),
        (r"^l1 \$$", "lat_mem_l1"),
        (r"^l2 \$$", "lat_mem_l2"),
        (r"^main mem$", "lat_mem_main"),
        (r"^rand mem$", "lat_mem_rand"),
        (r"^guesses$", "-"),
    ],
    "ops": [(r"^(intgr|int64|float|double) (\w+)$", "op_{0}_{1}")],
}


def _table_kind(title: str) -> str | None:
    lowered = title.lower()
    kinds = [
        ("basic system parameters", "params"),
        ("processor, processes", "processor"),
        ("context switching", "ctx"),
        ("communication latencies", "latency"),
        ("file & vm", "filevm"),
        ("communication bandwidths", "bandwidth"),
        ("memory latencies", "memory"),
        ("operations", "ops"),
    ]
    for needle, kind in kinds:
        if needle in lowered:
            return kind
    return None


def _tokens(line: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end() - 1, m.group()) for m in re.finditer(r"\S+", line)]


def _span_of(start: int, end: int, spans: list[tuple[int, int]]) -> int:
    """The span a token overlaps most; the nearest one when it overlaps none."""

    def score(index: int) -> tuple[int, int]:
        lo, hi = spans[index]
        overlap = min(end, hi) - max(start, lo) + 1
        distance = max(lo - end, start - hi, 0)
        return (max(overlap, 0), -distance)

    return max(range(len(spans)), key=score)


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    cells: list[list[str]] = [[] for _ in spans]
    for start, end, token in _tokens(line):
        cells[_span_of(start, end, spans)].append(token)
    return [" ".join(cell) for cell in cells]


@dataclass
class _Row:
    host: str
    os: str
    values: dict[str, float]
    metadata: dict[str, str | float]


@dataclass
class _Summary:
    version: str | None
    rows: dict[tuple[str, str, int], _Row]
    units: dict[str, tuple[str, str]]  # metric -> (unit, better)
    warnings: list[str]


def _title_unit(title: str) -> tuple[str, str]:
    lowered = title.lower()
    unit = "ns" if "nanosecond" in lowered else "MB/s" if "mb/s" in lowered else "us"
    if "smaller is better" in lowered:
        return unit, "lower"
    if "bigger is better" in lowered:
        return unit, "higher"
    return unit, "none"


def _column_names(kind: str, labels: list[str]) -> list[str | None]:
    """Match header labels to metric names in order; each spec entry is used once."""
    used: set[str] = set()
    names: list[str | None] = []
    for label in labels:
        label = re.sub(r"/\s+", "/", label.lower())
        name = None
        for pattern, template in _COLUMNS[kind]:
            match = re.search(pattern, label)
            if not match:
                continue
            groups = [g.replace("intgr", "int") for g in match.groups()]
            candidate = template.format(*groups)
            if candidate not in used:
                name = candidate
                used.add(candidate)
                break
        names.append(name)
    return names


def _parse_summary(lines: list[tuple[int, str]]) -> _Summary:
    summary = _Summary(None, {}, {}, [])
    texts = [(n, line.expandtabs()) for n, line in lines if not _SKIP.match(line)]
    for _, line in texts:
        banner = _BANNER.search(line)
        if banner:
            summary.version = f"{banner.group(1)}.{banner.group(2)}"
    for index, (_, line) in enumerate(texts):
        if _RULE.match(line):
            _read_table(texts, index, summary)
    return summary


def _read_table(texts: list[tuple[int, str]], rule_index: int, summary: _Summary) -> None:
    header_start = rule_index
    while header_start > 0 and not _SINGLE_RULE.match(texts[header_start - 1][1]):
        header_start -= 1
    if header_start == 0 or header_start < rule_index - 4:
        return
    title_index = header_start - 2
    while title_index >= 0 and not texts[title_index][1].strip():
        title_index -= 1
    title = texts[title_index][1].strip() if title_index >= 0 else ""
    kind = _table_kind(title)
    if kind is None:
        summary.warnings.append(f"line {texts[rule_index][0]}: table {title!r} not recognised")
        return
    rule = texts[rule_index][1]
    spans = [(m.start(), m.end() - 1) for m in re.finditer(r"-+", rule)]
    headers = [_cells(line, spans) for _, line in texts[header_start:rule_index]]
    labels = [" ".join(h[i] for h in headers if h[i]) for i in range(len(spans))]
    names = _column_names(kind, labels[2:])
    if "remote" in title.lower():
        names = [f"{n}_remote" if n and n[0] not in "@-" else n for n in names]
    unit, better = _title_unit(title)
    seen: dict[tuple[str, str], int] = {}
    for number, line in texts[rule_index + 1 :]:
        if not line.strip() or _RULE.match(line) or _SINGLE_RULE.match(line):
            break
        cells = _cells(line, spans)
        ident = (cells[0], cells[1])
        ordinal = seen.get(ident, 0)
        seen[ident] = ordinal + 1
        row = summary.rows.setdefault((*ident, ordinal), _Row(cells[0], cells[1], {}, {}))
        for name, label, cell in zip(names, labels[2:], cells[2:], strict=True):
            _store_cell(row, name, label, cell, number, kind)
            if name and not name.startswith(("@", "-")):
                summary.units.setdefault(name, (unit, better))


def _store_cell(row: _Row, name: str | None, label: str, cell: str, number: int, kind: str) -> None:
    if name is None or name == "-" or not cell:
        return
    if name.startswith("@"):
        key = name[1:]
        row.metadata.setdefault(key, cell if key == "description" else _number(cell, number, label))
        return
    value = parse_optional(cell, line=number, what=f"{label!r} cell", suffixes=True)
    if value is not None:
        row.values.setdefault(name, value)


def _number(cell: str, number: int, label: str) -> float:
    return parse_number(cell, line=number, what=f"{label!r} cell", suffixes=True)


# --- choosing rows and building the result ------------------------------------------------


def _select_rows(summary: _Summary, options: Mapping[str, object]) -> tuple[list[_Row], list[str]]:
    rows = list(summary.rows.values())
    warnings: list[str] = []
    if "row" in options:
        index = options["row"]
        if not isinstance(index, int) or not 1 <= index <= len(rows):
            raise ParseError(
                f"option row={index!r} is out of range: the summary has {len(rows)} rows"
            )
        return [rows[index - 1]], warnings
    if "os" in options:
        wanted = str(options["os"]).strip()
        chosen = [row for row in rows if row.os == wanted]
        if not chosen:
            known = ", ".join(sorted({row.os for row in rows}))
            raise ParseError(f"option os={wanted!r} matches no row; the OS cells are: {known}")
    else:
        chosen = rows
        distinct = sorted({(row.host, row.os) for row in rows})
        if len(distinct) > 1:
            listed = "; ".join(f"{host} / {os}" for host, os in distinct)
            raise ParseError(
                f"the summary holds {len(distinct)} different host/OS rows ({listed}); "
                'choose one with the option {"row": N} (1-based) or {"os": "..."}'
            )
    if len(chosen) > 1:
        warnings.append(f"averaged {len(chosen)} rows of {chosen[0].host} / {chosen[0].os}")
    return chosen, warnings


def _means(values: Mapping[str, list[float]]) -> dict[str, float]:
    return {metric: statistics.fmean(found) for metric, found in values.items()}


def _from_summary(summary: _Summary, options: Mapping[str, object]) -> ParseResult:
    rows, warnings = _select_rows(summary, options)
    collected: dict[str, list[float]] = {}
    for row in rows:
        for metric, value in row.values.items():
            collected.setdefault(metric, []).append(value)
    measurements = tuple(
        Measurement(metric, value, *summary.units[metric])  # type: ignore[arg-type]
        for metric, value in _means(collected).items()
    )
    metadata: dict[str, str | int | float] = {"host": rows[0].host, "os": rows[0].os}
    if summary.version:
        metadata["lmbench_version"] = summary.version
    for row in rows:
        for key, value in row.metadata.items():
            metadata.setdefault(key, value)
    return ParseResult(
        measurements=measurements,
        warnings=tuple(summary.warnings + warnings),
        metadata=metadata,
    )


def _from_raw(raw: _Raw) -> ParseResult:
    warnings = list(raw.warnings)
    for metric, found in raw.values.items():
        if len(found) > 1:
            warnings.append(f"{metric} appears {len(found)} times; the mean is used")
    measurements = tuple(
        Measurement(
            metric, value, _unit_of(metric), "higher" if metric.startswith("bw_") else "lower"
        )
        for metric, value in _means(raw.values).items()
    )
    return ParseResult(
        measurements=measurements,
        curves=tuple(raw.curves),
        warnings=tuple(warnings),
        metadata=dict(raw.metadata),
    )


@register("lmbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read a summary report if the file has one, else the raw per-test lines."""
    lines = numbered_lines(text)
    summary = _parse_summary(lines)
    if summary.rows:
        result = _from_summary(summary, options)
        if _parse_raw(lines).values:
            result = ParseResult(
                measurements=result.measurements,
                warnings=(*result.warnings, "raw per-test lines ignored: the summary is used"),
                metadata=result.metadata,
            )
        return result
    raw = _parse_raw(lines)
    if not raw.values and not raw.curves:
        raise ParseError("no lmbench result found (no summary table, no raw per-test line)")
    return _from_raw(raw)
