"""lmbench 2.x / 3.x `make see` summaries: one record per host/OS row (docs/parsers/lmbench.md).

A summary prints one row per result file in every table, in the same order, so the n-th
``benchtest / Linux 2.5.64`` row of each table is the same run: it becomes the record with keys
``host`` and ``label`` (the OS cell as printed) and ``trial`` n. Trials are numbered here, not
left to the ingest, because the values of one run are gathered from several tables and only the
row order ties them together. Cells are sliced by the dashed-rule column spans because lmbench
leaves cells empty for tests it did not run; mail-wrapped rows are joined back first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.parsers.base import KeyValue, Measurement, ParseError, Record
from ingest.parsers.numbers import parse_optional

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
        (r"^mhz$", "cpu_mhz"),
        (r"^tlb pages$", "tlb_pages"),
        (r"^cache line bytes$", "cache_line_bytes"),
        (r"^mem par$", "mem_par"),
        (r"^scal load$", "scal_load"),
    ],
    "processor": [
        (r"^mhz$", "cpu_mhz"),
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
        (r"^mhz$", "cpu_mhz"),
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


def table_kind(title: str) -> str | None:
    """The kind of an lmbench table title (``Context switching - ...``), or None."""
    return _table_kind(title)


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


def _fit(raw: str | None, expanded: str, spans: list[tuple[int, int]]) -> str:
    """A header line with tabs, spaced the way that fits the rule's columns best.

    Pasted summaries carry tabs typed by hand (``Host                 \tOS  Mhz``) that an
    8-column expansion pushes past the rule's spans; a tab read as one space, or as none,
    often lines the names up again. Ties keep the 8-column expansion.
    """
    if raw is None:
        return expanded

    def misfit(line: str) -> int:
        return sum(
            not any(lo <= start and end <= hi for lo, hi in spans)
            for start, end, _ in _tokens(line)
        )

    candidates = [expanded, raw.replace("\t", " "), raw.replace("\t", "")]
    return min(candidates, key=misfit)


def _cells(line: str, spans: list[tuple[int, int]]) -> list[str]:
    cells: list[list[str]] = [[] for _ in spans]
    for start, end, token in _tokens(line):
        cells[_span_of(start, end, spans)].append(token)
    return [" ".join(cell) for cell in cells]


_PARAM_UNITS = {
    "cpu_mhz": ("MHz", "none"),
    "tlb_pages": ("pages", "none"),
    "cache_line_bytes": ("bytes", "none"),
    "mem_par": ("x", "none"),
    "scal_load": ("jobs", "none"),
}


@dataclass
class _Row:
    host: str
    os: str
    trial: int
    line: int
    values: dict[str, tuple[float, int]] = field(default_factory=dict)  # metric -> (value, line)
    description: str | None = None


@dataclass
class Summary:
    """Every row of every summary in a file, in order of first appearance."""

    version: str | None = None
    rows: dict[tuple[int, str, str, int], _Row] = field(default_factory=dict)
    units: dict[str, tuple[str, str]] = field(default_factory=dict)  # metric -> (unit, better)
    warnings: list[str] = field(default_factory=list)


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


def parse_summary(lines: list[tuple[int, str]]) -> Summary:
    """Read every summary table; a banner or a table kind seen again starts a new summary."""
    summary = Summary()
    texts = [(n, line.expandtabs()) for n, line in lines if not _SKIP.match(line)]
    state = _State()
    state.raw = {n: line for n, line in lines if "\t" in line}
    for position, (_, line) in enumerate(texts):
        banner = _BANNER.search(line)
        if banner:
            summary.version = summary.version or f"{banner.group(1)}.{banner.group(2)}"
            state.next_summary()
        elif _RULE.match(line):
            _read_table(texts, position, summary, state)
    return summary


@dataclass
class _State:
    """Where the reader is: which summary, which tables it had, rows per host/OS so far."""

    index: int = 0
    kinds: set[str] = field(default_factory=set)  # table titles read in this summary
    earlier: dict[tuple[str, str], int] = field(default_factory=dict)  # rows before this summary
    raw: dict[int, str] = field(default_factory=dict)  # lines with tabs, as pasted
    current: dict[tuple[str, str], int] = field(default_factory=dict)  # rows in this summary

    def next_summary(self) -> None:
        if not self.kinds:
            return
        for ident, count in self.current.items():
            self.earlier[ident] = self.earlier.get(ident, 0) + count
        self.index, self.kinds, self.current = self.index + 1, set(), {}


def _header_bounds(texts: list[tuple[int, str]], rule_index: int) -> int | None:
    """First header line above a dashed rule (below the title's single rule), or None."""
    start = rule_index
    while start > 0 and not _SINGLE_RULE.match(texts[start - 1][1]):
        start -= 1
    if start == 0 or start < rule_index - 6:
        return None
    return start


def _unwrap_header(lines: list[str]) -> list[str]:
    """Mail clients wrap the header at ~76 columns: a line starting at column 0 that is not
    the ``Host`` line continues the one before it (``fork exec`` / ``sh``)."""
    out: list[str] = []
    for line in lines:
        if out and line[:1].strip() and not line.startswith("Host"):
            out[-1] = f"{out[-1]} {line}"
        else:
            out.append(line)
    return out


def _read_table(
    texts: list[tuple[int, str]], rule_index: int, summary: Summary, state: _State
) -> None:
    start = _header_bounds(texts, rule_index)
    if start is None:
        return
    title_index = start - 2
    while title_index >= 0 and not texts[title_index][1].strip():
        title_index -= 1
    title = texts[title_index][1].strip() if title_index >= 0 else ""
    kind = _table_kind(title)
    if kind is None:
        summary.warnings.append(f"line {texts[rule_index][0]}: table {title!r} not recognised")
        return
    seen_title = " ".join(title.lower().split())  # "basic integer" and "basic float" differ
    if seen_title in state.kinds:
        state.next_summary()
    state.kinds.add(seen_title)
    rule, body = texts[rule_index][1].rstrip(), rule_index + 1
    if body < len(texts) and re.fullmatch(r"-+", texts[body][1].strip()) and len(rule) >= 70:
        rule, body = rule + texts[body][1].strip(), body + 1  # a rule hard-wrapped mid-dash
        summary.warnings.append(f"line {texts[body - 1][0]}: a mail-wrapped rule was joined")
    spans = [(m.start(), m.end() - 1) for m in re.finditer(r"-+", rule)]
    header_lines = [_fit(state.raw.get(n), t, spans) for n, t in texts[start:rule_index]]
    headers = [_cells(h, spans) for h in _unwrap_header(header_lines)]
    labels = [" ".join(h[i] for h in headers if h[i]) for i in range(len(spans))]
    names = _column_names(kind, labels[2:])
    if "remote" in title.lower():
        names = [f"{n}_remote" if n and n[0] not in "@-" else n for n in names]
    unit, better = _title_unit(title)
    seen: dict[tuple[str, str], int] = {}  # rows per host/OS in this table
    for number, line in _table_rows(texts, body, spans, summary):
        cells = _cells(line, spans)
        ident = (cells[0], cells[1])
        ordinal = seen.get(ident, 0)
        seen[ident] = ordinal + 1
        state.current[ident] = max(state.current.get(ident, 0), ordinal + 1)
        trial = state.earlier.get(ident, 0) + ordinal + 1
        key = (state.index, cells[0], cells[1], ordinal)
        row = summary.rows.setdefault(key, _Row(cells[0], cells[1], trial, number))
        for name, label, cell in zip(names, labels[2:], cells[2:], strict=True):
            _store_cell(row, name, label, cell, number)
            if name and name[0] not in "@-":
                summary.units.setdefault(name, _PARAM_UNITS.get(name, (unit, better)))


def _table_rows(
    texts: list[tuple[int, str]], body: int, spans: list[tuple[int, int]], summary: Summary
) -> list[tuple[int, str]]:
    """The data rows under a rule, mail-wrapped tails (no Host/OS cell) joined back on."""
    rows: list[tuple[int, str]] = []
    for number, line in texts[body:]:
        if not line.strip() or _RULE.match(line) or _SINGLE_RULE.match(line):
            break
        if _cells(line, spans)[1]:
            rows.append((number, line.rstrip()))
            continue
        if not rows or not line[:1].strip():
            raise ParseError(f"lmbench row without a Host/OS cell: {line.strip()!r}", number)
        first, text = rows[-1]
        rows[-1] = (first, f"{text} {line.strip()}")
        summary.warnings.append(
            f"line {number}: a mail-wrapped row tail was joined to line {first}"
        )
    return rows


def _store_cell(row: _Row, name: str | None, label: str, cell: str, number: int) -> None:
    """One cell into its row; a value another table already gave must agree with it."""
    if name is None or name == "-" or not cell:
        return
    if name == "@description":
        row.description = row.description or cell
        return
    value = parse_optional(cell, line=number, what=f"{label!r} cell", suffixes=True)
    if value is None:
        return
    earlier = row.values.get(name)
    if earlier is not None and earlier[0] != value:
        raise ParseError(
            f"{name} of {row.host} / {row.os} run {row.trial} is {cell!r} here but "
            f"{earlier[0]:g} on line {earlier[1]}: the tables' rows do not line up",
            number,
        )
    row.values.setdefault(name, (value, number))


def summary_records(summary: Summary) -> list[Record]:
    """One record per host/OS row per run, its values gathered from every table."""
    records = []
    for row in summary.rows.values():
        keys: dict[str, KeyValue] = {"host": row.host, "label": row.os}
        measurements = tuple(
            Measurement(metric, value, *summary.units[metric])  # type: ignore[arg-type]
            for metric, (value, _) in row.values.items()
        )
        records.append(Record(keys=keys, trial=row.trial, line=row.line, measurements=measurements))
    return records


def descriptions(summary: Summary) -> set[str]:
    return {row.description for row in summary.rows.values() if row.description}
