"""Kernel profiles: readprofile (plain, -v, sorted), OSDL kerneltop, and oprofile listings.

Raw ticks depend on HZ and run length, so every entry also gets its share of the profile's
total, and the run gets two ratios that can be compared across kernels: how busy the kernel
was (non-idle share) and how much of that busy time went to the scheduler (seed 000 measured
exactly this for VolanoMark).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from ingest.parsers.base import (
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    ProfileEntry,
    Record,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import block_headings, is_kernel
from ingest.parsers.text import numbered_lines
from perfdb.kernels.functions import IDLE_FUNCTIONS_2X as DEFAULT_IDLE_FUNCTIONS
from perfdb.kernels.functions import SCHEDULER_FUNCTIONS_2X as DEFAULT_SCHEDULER_FUNCTIONS

_NUMERIC = re.compile(r"^[+-]?[\d.,]+%?$|^[+-]?(?:nan|inf)$", re.IGNORECASE)
_ADDRESS = re.compile(r"^(?:0x)?(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{16})$")
_OP_TIME = re.compile(r"^\s*vma\s+samples\s+%\s+symbol", re.IGNORECASE)
_OPREPORT = re.compile(
    r"^\s*samples\s+%\s+(?P<app>(?:(?:app|image) name\s+)*)symbol name", re.IGNORECASE
)


@dataclass(frozen=True)
class _Row:
    function: str
    ticks: float
    load: float | None
    pct: float | None  # oprofile prints the share itself
    line: int
    app: str | None = None
    block: int = 0  # which listing of the file (0-based)


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
    if len(names) != 1 or not 1 <= len(numbers) <= 2 or not numbers[0].isdigit():
        return None  # ticks are counts (%6d): "MIME-Version: 1.0" is not a row
    ticks = parse_number(numbers[0], line=number, what="ticks")
    load = parse_number(numbers[1], line=number, what="load") if len(numbers) == 2 else None
    return _Row(names[0], ticks, load, None, number)


def _oprofile_row(number: int, tokens: list[str], names: int, vma: bool) -> _Row | None:
    """``samples % [image name] [app name] symbol``; op_time -l puts a vma first. An
    8-digit sample count is no address unless the header says vma (17071831 samples)."""
    if (
        tokens
        and _ADDRESS.match(tokens[0])
        and len(tokens) >= 4
        and (vma or not tokens[0].isdigit())
    ):
        tokens = tokens[1:]
    if len(tokens) < 3 or not (_looks_numeric(tokens[0]) and _looks_numeric(tokens[1])):
        return None
    samples = parse_number(tokens[0], line=number, what="samples")
    pct = parse_number(tokens[1], line=number, what="%", percent=True)
    apps = tokens[2 : 2 + names] if len(tokens) >= 3 + names else []
    app = (apps[0] if len(set(apps)) == 1 else " ".join(apps)) if apps else None
    symbol = " ".join(tokens[2 + len(apps) :])
    return _Row(symbol, samples, None, pct, number, app)


_COMPLETE_PCT = 99.0  # opreport shares are rounded to 4 decimals; a cut listing is far below
_KERNEL = re.compile(r"(?<![\w.])(\d\.\d+\.\d+(?:-[\w.+-]*\w)?|2\.[0-6])(?![\w.]*\d)")


@dataclass
class _Listing:
    """Consecutive profile rows; prose, a prompt or a header after rows ends a listing."""

    rows: list[_Row]
    label: str | None  # the kernel named on the last text line before the rows, if any
    line: int


def _kernel_named(text: str) -> str | None:
    found = set(_KERNEL.findall(text))
    return found.pop() if len(found) == 1 else None


def _listings(lines: list[tuple[int, str]], kind: str) -> tuple[list[_Listing], list[str]]:
    address = _has_address_column(lines)
    names = max(
        ((m["app"] or "").count("name") for _, x in lines if (m := _OPREPORT.match(x))), default=0
    )
    vma = any(_OP_TIME.match(line) for _, line in lines)
    # opreport --callgraph: a symbol's line, then indented caller/[self] lines, between rules.
    callgraph = any(line.rstrip().endswith("[self]") for _, line in lines)
    listings: list[_Listing] = []
    current: list[_Row] = []
    warnings: list[str] = []
    last_text = ""

    def close() -> None:
        if current:
            listings.append(_Listing(list(current), _kernel_named(last_text), current[0].line))
            current.clear()

    for number, line in lines:
        tokens = line.split()
        if not tokens or callgraph and (line[:1].isspace() or set(line.strip()) == {"-"}):
            continue
        row = None
        if any(_looks_numeric(t) for t in tokens):
            row = (
                _oprofile_row(number, tokens, names, vma)
                if kind == "oprofile"
                else _readprofile_row(number, tokens, address)
            )
            if row is None and (_looks_numeric(tokens[0]) or _ADDRESS.match(tokens[0])):
                warnings.append(f"line {number}: not a profile row, skipped: {line.strip()!r}")
        if row is not None:
            current.append(row)
            continue
        close()
        last_text = line
    close()
    return listings, warnings


def _check_listing(rows: list[_Row]) -> None:
    """One listing names each function once: the same name with other ticks is an error."""
    seen: dict[tuple[str | None, str], _Row] = {}
    for row in rows:
        if row.function.lower() == "total":
            continue  # several totals are checked with the shares
        key = (row.app, row.function)
        earlier = seen.setdefault(key, row)
        if earlier is not row and earlier.ticks != row.ticks:
            raise ParseError(
                f"{row.function} is listed twice in one listing with different ticks "
                f"({earlier.ticks:g} on line {earlier.line}); two listings with only blank "
                "lines between them? A line naming each one's kernel tells them apart",
                row.line,
            )


def _signature(rows: list[_Row]) -> frozenset[tuple[str | None, str, float]]:
    return frozenset((r.app, r.function, r.ticks) for r in rows)


def _distinct(listings: list[_Listing]) -> tuple[list[_Listing], list[str]]:
    """A mail often shows one list twice (as printed, then re-sorted): keep the first copy."""
    kept: list[_Listing] = []
    warnings: list[str] = []
    for listing in listings:
        _check_listing(listing.rows)
        if any(_signature(k.rows) == _signature(listing.rows) for k in kept):
            warnings.append(f"line {listing.line}: the listing repeats an earlier one; ignored")
            continue
        kept.append(listing)
    return kept, warnings


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
    found = [Measurement("kernel_ticks", total, "ticks", "none", resolution=1.0)]
    if total > 0:
        found.append(Measurement("kernel_busy_pct", busy / total * 100, "%", "none"))
    if busy > 0:
        found.append(Measurement("scheduler_pct", sched / busy * 100, "%", "lower"))
    return found


def _record(
    listing: _Listing, kind: str, options: Mapping[str, object], warnings: list[str]
) -> tuple[Record, dict[str, str | int | float]]:
    """One listing's profile and ratios; shares only when the listing has its total row."""
    totals = [r for r in listing.rows if r.function.lower() == "total"]
    rows = [r for r in listing.rows if r.function.lower() != "total"]
    if not rows:
        raise ParseError("a listing with a 'total' row but no function rows", listing.line)
    if len({t.ticks for t in totals}) > 1:
        raise ParseError(
            "several different 'total' rows in one listing (two listings with only blank "
            "lines between them?)",
            totals[1].line,
        )
    listed = sum(r.ticks for r in rows)
    total = totals[0].ticks if totals else listed
    if totals and listed > total:
        warnings.append(
            f"line {listing.line}: the rows sum to {listed:g} ticks, more than the total {total:g}"
        )
    # A listing cut to its top lines (a paper's table, `| head`) has no total row: shares,
    # kernel time and scheduler time would be figures the source never gave, so none is made.
    # opreport prints no total: its rows are all of it only when their shares add up to 100%
    # (an `opreport | head -50` listing is partial; summing it would understate the total).
    printed = sum(r.pct or 0.0 for r in rows)
    partial = not totals and (kind != "oprofile" or printed < _COMPLETE_PCT)
    if partial:
        warnings.append(
            f"line {listing.line}: no 'total' row (a partial listing): per-function ticks kept; "
            "shares, kernel and scheduler time are not computed"
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
    measurements = () if partial else tuple(_ratios(kernel_rows, kernel_total, options))
    extra: dict[str, str | int | float] = {}
    if totals and totals[0].load is not None:
        extra["total_load"] = totals[0].load
    return Record(line=listing.line, profile=profile, measurements=measurements), extra


def _labelled(lines: list[tuple[int, str]], listings: list[_Listing]) -> list[_Listing]:
    """A kernel label line heading a listing's paragraph (``2.4.24`` above a `time` line and
    the listing) labels it, as the line right above it does (run_labels.block_headings)."""
    heads = block_headings(lines, [listing.line for listing in listings], skip=_is_row_text)
    out = []
    for listing in listings:
        head = heads.get(listing.line)
        kernel = head and (head.kernel or (head.text if is_kernel(head.text) else None))
        if listing.label is None and kernel:
            listing = replace(listing, label=kernel)
        out.append(listing)
    return out


def _is_row_text(line: str) -> bool:
    """Profile rows are never headings (a function may be named like a kernel)."""
    return bool(re.match(r"^\s*(?:[0-9a-f]{8,16}\s+)?\d+\s+\S", line))


def _keys(listings: list[_Listing]) -> list[dict[str, KeyValue]]:
    """``label`` when every listing has its own stated kernel, else ``listing`` = 1, 2, ..."""
    labels = [listing.label for listing in listings]
    if len(listings) == 1:
        return [{"label": labels[0]} if labels[0] else {}]
    if None not in labels and len(set(labels)) == len(labels):
        return [{"label": label} for label in labels if label]
    return [
        {"listing": n, **({"label": label} if label else {})}
        for n, label in enumerate(labels, start=1)
    ]


@register("readprofile", "kerneltop", "oprofile")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read every listing whatever its column order or sort; find `total` wherever it is."""
    lines = numbered_lines(text)
    kind = _detect(lines)
    listings, warnings = _listings(lines, kind)
    listings, repeat_warnings = _distinct(listings)
    warnings += repeat_warnings
    listings = _labelled(lines, listings)
    if not any(r.function.lower() != "total" for listing in listings for r in listing.rows):
        raise ParseError(f"no {kind} profile rows found (expected 'ticks function load' lines)")
    metadata: dict[str, str | int | float] = {"profiler": kind}
    records = []
    for listing, keys in zip(listings, _keys(listings), strict=True):
        record, extra = _record(listing, kind, options, warnings)
        records.append(replace(record, keys=keys))
        if len(listings) == 1:
            metadata.update(extra)
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
