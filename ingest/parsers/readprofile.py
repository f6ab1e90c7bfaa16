"""Kernel profiles: readprofile (plain, -v, sorted), OSDL kerneltop, and oprofile listings.

Raw ticks depend on HZ and run length, so every entry also gets its share of the profile's
total, and the run gets two ratios that can be compared across kernels: how busy the kernel
was (non-idle share) and how much of that busy time went to the scheduler (seed 000 measured
exactly this for VolanoMark).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ingest.parsers.base import Measurement, ParseError, ParseResult, ProfileEntry, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

DEFAULT_SCHEDULER_FUNCTIONS = (
    "schedule",
    "goodness",
    "reschedule_idle",
    "__wake_up",
    "__wake_up_sync",
    "try_to_wake_up",
    "wake_up_process",
    "schedule_timeout",
    "schedule_tail",
    "scheduler_tick",
    "load_balance",
    "find_busiest_queue",
    "sys_sched_yield",
)
DEFAULT_IDLE_FUNCTIONS = ("default_idle", "cpu_idle", "poll_idle")

_NUMERIC = re.compile(r"^[+-]?[\d.,]+%?$|^[+-]?(?:nan|inf)$", re.IGNORECASE)
_ADDRESS = re.compile(r"^(?:0x)?(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{16})$")
_OP_TIME = re.compile(r"^\s*vma\s+samples\s+%\s+symbol", re.IGNORECASE)
_OPREPORT = re.compile(r"^\s*samples\s+%\s+(?P<app>(?:app|image) name\s+)?symbol name", re.I)


@dataclass(frozen=True)
class _Row:
    function: str
    ticks: float
    load: float | None
    pct: float | None  # oprofile prints the share itself
    line: int
    app: str | None = None


def _looks_numeric(token: str) -> bool:
    return bool(_NUMERIC.match(token))


def _detect(lines: list[tuple[int, str]]) -> str:
    for _, line in lines:
        if _OP_TIME.match(line) or _OPREPORT.match(line) or line.startswith("Counted "):
            return "oprofile"
    for _, line in lines:
        tokens = line.split()
        if len(tokens) == 3 and tokens[1] == "total" and set(tokens[0]) == {"0"}:
            return "kerneltop"
    return "readprofile"


def _has_address_column(lines: list[tuple[int, str]]) -> bool:
    """readprofile -v / kerneltop rows start with a kernel address such as c0105000."""
    for _, line in lines:
        tokens = line.split()
        if len(tokens) >= 3 and _ADDRESS.match(tokens[0]) and re.search("[a-fA-F]", tokens[0]):
            return True
    return False


def _readprofile_row(number: int, tokens: list[str], address: bool) -> _Row | None:
    if address and len(tokens) >= 3 and _ADDRESS.match(tokens[0]):
        tokens = tokens[1:]
    names = [t for t in tokens if not _looks_numeric(t)]
    numbers = [t for t in tokens if _looks_numeric(t)]
    if len(names) != 1 or not 1 <= len(numbers) <= 2:
        return None
    ticks = parse_number(numbers[0], line=number, what="ticks")
    load = parse_number(numbers[1], line=number, what="load") if len(numbers) == 2 else None
    return _Row(names[0], ticks, load, None, number)


def _oprofile_row(number: int, tokens: list[str], has_app: bool) -> _Row | None:
    if tokens and _ADDRESS.match(tokens[0]) and len(tokens) >= 4:
        tokens = tokens[1:]  # op_time -l: vma samples % symbol
    if len(tokens) < 3 or not (_looks_numeric(tokens[0]) and _looks_numeric(tokens[1])):
        return None
    samples = parse_number(tokens[0], line=number, what="samples")
    pct = parse_number(tokens[1], line=number, what="%", percent=True)
    app = tokens[2] if has_app and len(tokens) >= 4 else None
    symbol = " ".join(tokens[3:] if app else tokens[2:])
    return _Row(symbol, samples, None, pct, number, app)


def _rows(lines: list[tuple[int, str]], kind: str) -> tuple[list[_Row], list[str]]:
    address = _has_address_column(lines)
    has_app = any((m := _OPREPORT.match(line)) and m.group("app") for _, line in lines)
    rows: list[_Row] = []
    warnings: list[str] = []
    for number, line in lines:
        tokens = line.split()
        if not tokens or not any(_looks_numeric(t) for t in tokens):
            continue
        if kind == "oprofile":
            row = _oprofile_row(number, tokens, has_app)
        else:
            row = _readprofile_row(number, tokens, address)
        if row is not None:
            rows.append(row)
        elif _looks_numeric(tokens[0]) or _ADDRESS.match(tokens[0]):
            warnings.append(f"line {number}: not a profile row, skipped: {line.strip()!r}")
    return rows, warnings


def _dedupe(rows: list[_Row]) -> tuple[list[_Row], list[str]]:
    """A mail often shows the list twice (as printed, then re-sorted): keep one copy."""
    seen: dict[tuple[str | None, str], _Row] = {}
    warnings: list[str] = []
    for row in rows:
        key = (row.app, row.function)
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = row
        elif earlier.ticks != row.ticks:
            raise ParseError(
                f"{row.function} is listed twice with different ticks "
                f"({earlier.ticks:g} on line {earlier.line}); one profile per file",
                row.line,
            )
        elif not warnings:
            warnings.append(f"line {row.line}: the listing repeats; repeated rows ignored")
    return list(seen.values()), warnings


def _name_set(options: Mapping[str, object], key: str, default: Iterable[str]) -> frozenset[str]:
    value = options.get(key, default)
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",")]
    if not isinstance(value, Iterable):
        raise ParseError(f"option {key} must be a list of function names")
    return frozenset(str(name) for name in value if str(name))


def _base_name(function: str) -> str:
    return function.split("+", 1)[0]  # schedule_timeout+9d is a call site in schedule_timeout


def _ratios(entries: list[_Row], total: float, options: Mapping[str, object]) -> list[Measurement]:
    idle_names = _name_set(options, "idle_functions", DEFAULT_IDLE_FUNCTIONS)
    sched_names = _name_set(options, "scheduler_functions", DEFAULT_SCHEDULER_FUNCTIONS)
    idle = sum(r.ticks for r in entries if _base_name(r.function) in idle_names)
    sched = sum(r.ticks for r in entries if _base_name(r.function) in sched_names)
    busy = total - idle
    found = [Measurement("kernel_ticks", total, "ticks", "none")]
    if total > 0:
        found.append(Measurement("kernel_busy_pct", busy / total * 100, "%", "none"))
    if busy > 0:
        found.append(Measurement("scheduler_pct", sched / busy * 100, "%", "lower"))
    return found


@register("readprofile", "kerneltop", "oprofile")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read the listing whatever its column order or sort, and find `total` wherever it is."""
    lines = numbered_lines(text)
    kind = _detect(lines)
    rows, warnings = _rows(lines, kind)
    totals = [r for r in rows if r.function.lower() == "total"]
    rows, repeat_warnings = _dedupe([r for r in rows if r.function.lower() != "total"])
    warnings += repeat_warnings
    if not rows:
        raise ParseError(f"no {kind} profile rows found (expected 'ticks function load' lines)")
    if len({t.ticks for t in totals}) > 1:
        raise ParseError("several different 'total' rows; one profile per file", totals[1].line)
    listed = sum(r.ticks for r in rows)
    if totals:
        total = totals[0].ticks
        if listed > total:
            warnings.append(f"the rows sum to {listed:g} ticks, more than the total {total:g}")
    else:
        total = listed
    # A listing cut to its top lines (a paper's table, `| head`) has no total row: shares,
    # kernel time and scheduler time would be figures the source never gave, so none is made.
    partial = not totals and kind != "oprofile"
    if partial:
        warnings.append(
            "no 'total' row (a partial listing): per-function ticks kept; shares, kernel and "
            "scheduler time are not computed"
        )
    kernel_rows = [r for r in rows if r.app is None or "vmlinux" in r.app]
    kernel_total = total if kind != "oprofile" else sum(r.ticks for r in kernel_rows)
    profile = tuple(
        ProfileEntry(
            function=r.function if r.app is None else f"{r.app}:{r.function}",
            ticks=r.ticks,
            load=r.load,
            share_pct=r.pct
            if r.pct is not None
            else (r.ticks / total * 100 if total and not partial else None),
        )
        for r in rows
    )
    metadata: dict[str, str | int | float] = {"profiler": kind}
    if totals and totals[0].load is not None:
        metadata["total_load"] = totals[0].load
    return ParseResult(
        measurements=() if partial else tuple(_ratios(kernel_rows, kernel_total, options)),
        profile=profile,
        warnings=tuple(warnings),
        metadata=metadata,
    )
