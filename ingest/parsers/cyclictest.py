"""cyclictest (rt-tests) results: per-thread summary lines and --histogram output.

Summary lines ``T: 0 (14383) P:80 I:1000 C:   1000 Min:  48 Act:  66 Avg:  76 Max: 2732``
give one record per thread (key ``thread``). Without ``-q`` cyclictest reprints them as it
runs (cursor-up escapes between blocks); each reprint holds the running totals so far, so the
last one per thread is the result and the earlier ones are progress, noted in a warning.
``-h N`` output adds a histogram (bucket us, one count column per thread) and the ``# Min/Avg/
Max Latencies`` and ``# Histogram Overflows`` footer lines, one value per thread in thread
order. Latencies are microseconds, cyclictest's default; ``-N`` (nanosecond) output looks
the same and must not be given to this parser.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import (
    Better,
    Histogram,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_SUMMARY = re.compile(
    r"^T:\s*(?P<thread>\d+)\s+\(\s*(?P<tid>\d+)\)\s+P:\s*(?P<prio>\d+)\s+I:\s*(?P<interval>\d+)\s+"
    r"C:\s*(?P<cycles>\d+)\s+Min:\s*(?P<min>\S+)\s+Act:\s*(?P<act>\S+)\s+Avg:\s*(?P<avg>\S+)\s+"
    r"Max:\s*(?P<max>\S+)\s*$"
)
_FOOTER: dict[str, tuple[str, Better]] = {
    "Min Latencies": ("hist_min_latency_us", "lower"),
    "Avg Latencies": ("hist_avg_latency_us", "lower"),
    "Max Latencies": ("hist_max_latency_us", "lower"),
    "Histogram Overflows": ("hist_overflows", "lower"),
    "Total": ("hist_total", "none"),
}
_BUCKET = re.compile(r"^(\d+)((?:\s+\d+)+)\s*$")


def _summaries(
    lines: list[tuple[int, str]], warnings: list[str]
) -> dict[int, tuple[int, re.Match[str]]]:
    latest: dict[int, tuple[int, re.Match[str]]] = {}
    progress = 0
    for number, text in lines:
        if not text.startswith("T:"):
            continue
        m = _SUMMARY.match(text)
        if not m:
            raise ParseError(f"unreadable cyclictest thread line {text[:70]!r}", number)
        thread = int(m["thread"])
        if thread in latest:
            progress += 1
        latest[thread] = (number, m)
    if progress:
        warnings.append(f"{progress} earlier progress lines superseded by each thread's last line")
    return latest


def _summary_record(thread: int, number: int, m: re.Match[str]) -> Record:
    values = [
        Measurement("cycles", parse_number(m["cycles"], line=number, what="C"), "count", "none")
    ]
    latencies: tuple[tuple[str, str, Better], ...] = (
        ("min", "min_latency_us", "lower"),
        ("act", "act_latency_us", "none"),
        ("avg", "avg_latency_us", "lower"),
        ("max", "max_latency_us", "lower"),
    )
    for field, metric, better in latencies:
        values.append(
            Measurement(metric, parse_number(m[field], line=number, what=field), "us", better)
        )
    if values[0].value == 0:
        raise ParseError(f"thread {thread} ran no cycles (C: 0): no result yet", number)
    return Record(keys={"thread": thread}, line=number, measurements=tuple(values))


def _histogram(
    lines: list[tuple[int, str]],
) -> tuple[dict[int, list[tuple[float, float]]], dict[str, tuple[int, list[str]]], int | None]:
    columns: dict[int, list[tuple[float, float]]] = {}
    footer: dict[str, tuple[int, list[str]]] = {}
    start = None
    for number, text in lines:
        if text.startswith("# Histogram") and not text.startswith("# Histogram O"):
            start = number
        elif start is not None and (m := _BUCKET.match(text)):
            counts = m[2].split()
            for thread, count in enumerate(counts):
                columns.setdefault(thread, []).append(
                    (
                        parse_number(m[1], line=number, what="bucket"),
                        parse_number(count, line=number, what="count"),
                    )
                )
        elif start is not None and text.startswith("# "):
            label, sep, rest = text[2:].partition(":")
            if sep and label in _FOOTER:
                footer[label] = (number, rest.split())
    return columns, footer, start


@register("cyclictest")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    lines = [(n, _ESCAPE.sub("", line).strip()) for n, line in numbered_lines(text)]
    warnings: list[str] = []
    summaries = _summaries(lines, warnings)
    columns, footer, start = _histogram(lines)
    threads = sorted(set(summaries) | set(columns))
    if not threads:
        raise ParseError("no cyclictest 'T: N (...)' line and no '# Histogram' block")
    widths = {len(columns[t]) for t in columns}
    if len(widths) > 1:
        raise ParseError("histogram rows have different numbers of thread columns", start)
    records = []
    for thread in threads:
        record = (
            _summary_record(thread, *summaries[thread])
            if thread in summaries
            else Record(keys={"thread": thread}, line=start)
        )
        values = list(record.measurements)
        for label, (number, tokens) in footer.items():
            if len(tokens) < len(columns) or (columns and len(tokens) > len(columns) + 1):
                raise ParseError(
                    f"'# {label}' has {len(tokens)} values for {len(columns)} threads", number
                )
            if thread < len(tokens) and thread in columns:
                metric, better = _FOOTER[label]
                unit = "count" if "Overflow" in label or label == "Total" else "us"
                values.append(
                    Measurement(
                        metric, parse_number(tokens[thread], line=number, what=label), unit, better
                    )
                )
        histograms: tuple[Histogram, ...] = ()
        if thread in columns:
            histograms = (Histogram("latency", "latency (us)", tuple(columns[thread])),)
        records.append(
            Record(
                keys={"thread": thread},
                line=record.line,
                measurements=tuple(values),
                histograms=histograms,
            )
        )
    return ParseResult(records=tuple(records), warnings=tuple(warnings))
