"""``perf stat`` output: human, ``-x,`` CSV, ``-j`` JSON, with -r, -a -A and -I (see the doc).

Every count is stored as perf printed it. With ``-r N`` perf itself prints the mean of the
runs and its relative spread; both are tool output, so the mean is stored as the event's value
and the spread as ``<event>_stddev_pct`` (nothing is averaged here). ``<not supported>`` and
``<not counted>`` are "no measurement", with a warning. A percentage in parentheses is the
share of time the event was on the PMU (multiplexing): perf has scaled the count, so the share
is kept as ``<event>_running_pct`` next to it. Per-CPU output (``-A``) gives a record per CPU;
interval output (``-I``) gives a time series per event. The CSV/JSON readers live in
``perf_stat_machine.py``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import (
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    Sample,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

NOT_MEASURED = ("<not supported>", "<not counted>")
SOURCE = "perf-stat"

_HEADER = re.compile(
    r"Performance counter stats for (?:process id |thread id )?'(?P<target>[^']*)'"
    r"(?:\s+\((?P<runs>\d+) runs\))?\s*:"
)
_COUNTER = re.compile(
    r"^\s*(?:(?P<time>\d+\.\d+)\s+)?(?:(?P<cpu>CPU\d+)\s+)?"
    r"(?P<value><not supported>|<not counted>|\d[\d,.]*)"
    r"(?:\s+(?P<unit>msec)\s+|\s{2,})(?P<event>[A-Za-z][\w\-./:=,@]*)(?P<rest>.*)$"
)
_SECONDS = re.compile(
    r"^\s*(?P<value>\d[\d,.]*)(?:\s+\+-\s+(?P<sd>\d[\d.]*))?\s+seconds\s+"
    r"(?P<what>time elapsed|user|sys)\s*(?:\(\s*\+-\s*(?P<pct>[\d.]+)\s*%\s*\))?\s*$"
)
_SPREAD = re.compile(r"\(\s*\+-\s*(?P<pct>[\d.]+)\s*%\s*\)")
_RUNNING = re.compile(r"\(\s*(?P<pct>\d+(?:\.\d+)?)\s*%\s*\)\s*$")
_SECONDS_METRIC = {"time elapsed": "elapsed_s", "user": "user_s", "sys": "sys_s"}


def snake(event: str) -> str:
    """``context-switches`` -> ``context_switches``; ``cpu_core/cycles:u/`` likewise.

    Any run of other characters becomes one underscore.
    """
    return re.sub(r"[^0-9a-z]+", "_", event.lower()).strip("_")


def event_metric(event: str, unit: str) -> tuple[str, str]:
    """Metric name and unit for an event: ``task-clock`` in msec is ``task_clock_msec`` (ms)."""
    if unit == "msec":
        return f"{snake(event)}_msec", "ms"
    if unit:
        return f"{snake(event)}_{snake(unit)}", unit
    return snake(event), "count"


@dataclass
class Block:
    """One ``perf stat`` output: its counters, keyed by CPU when per-CPU."""

    line: int
    keys: dict[str, KeyValue]
    values: dict[tuple[int | None, str], tuple[Measurement, int]] = field(default_factory=dict)
    series: dict[tuple[int | None, str], list[Sample]] = field(default_factory=dict)
    finished: bool = False  # an elapsed line was read: a further counter starts a new output

    def add(self, cpu: int | None, m: Measurement, line: int) -> None:
        key = (cpu, m.metric)
        if key in self.values:
            first = self.values[key][1]
            raise ParseError(
                f"{m.metric} printed twice in one perf stat output (first at line {first}); "
                "the two cannot be told apart",
                line,
            )
        self.values[key] = (m, line)

    def add_sample(self, cpu: int | None, sample: Sample) -> None:
        self.series.setdefault((cpu, sample.column), []).append(sample)


@dataclass
class Reading:
    """Everything read from one file, as blocks; turned into records at the end."""

    blocks: list[Block] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, str | int | float] = field(default_factory=dict)
    intervals: dict[str, int] = field(default_factory=dict)  # time as printed -> row index

    def current(self, line: int) -> Block:
        if not self.blocks or self.blocks[-1].finished:
            self.blocks.append(Block(line, {}))
        return self.blocks[-1]

    def interval_index(self, stamp: str) -> int:
        return self.intervals.setdefault(stamp, len(self.intervals))


def cpu_number(token: str | None, line: int) -> int | None:
    if token is None or token == "":
        return None
    digits = token[3:] if token.upper().startswith("CPU") else token
    if not digits.isdigit():
        raise ParseError(f"CPU {token!r} is not CPU<n>", line)
    return int(digits)


def store_counter(
    reading: Reading,
    block: Block,
    parts: dict[str, str | None],
    line: int,
) -> None:
    """One counter cell (any layout): value, spread, running share; or a warning."""
    event, unit = parts["event"] or "", parts.get("unit") or ""
    cpu = cpu_number(parts.get("cpu"), line)
    metric, metric_unit = event_metric(event, unit)
    value = (parts["value"] or "").strip()
    stamp = parts.get("time")
    index = reading.interval_index(stamp) if stamp else 0  # an interval counts even if empty
    if value in NOT_MEASURED:
        where = f" on CPU{cpu}" if cpu is not None else ""
        when = f" at {parts['time']}s" if parts.get("time") else ""
        reading.warnings.append(f"line {line}: {event}{where}{when} is {value}; no measurement")
        return
    number = parse_number(value, line=line, what=event, thousands=True)
    if stamp:
        block.add_sample(cpu, Sample(SOURCE, metric, index, number, timestamp=stamp))
        return
    block.add(cpu, Measurement(metric, number, metric_unit, "none"), line)
    for suffix, token in (
        ("stddev_pct", parts.get("spread")),
        ("running_pct", parts.get("running")),
    ):
        if token:
            pct = parse_number(token, line=line, what=f"{event} {suffix}")
            block.add(cpu, Measurement(f"{metric}_{suffix}", pct, "%", "none"), line)


def _human_counter(reading: Reading, match: re.Match[str], line: int) -> None:
    rest = match["rest"]
    comment = rest.find("#")
    tail = rest if comment < 0 else rest[comment:]
    spread = _SPREAD.search(tail)
    without_spread = _SPREAD.sub("", tail)
    running = _RUNNING.search(without_spread)
    parts = match.groupdict()
    parts["spread"] = spread["pct"] if spread else None
    parts["running"] = running["pct"] if running else None
    store_counter(reading, reading.current(line), parts, line)


def _seconds(reading: Reading, match: re.Match[str], line: int) -> None:
    metric = _SECONDS_METRIC[match["what"]]
    # user and sys follow the elapsed line that ends an output: they belong to it
    block = (
        reading.blocks[-1] if metric != "elapsed_s" and reading.blocks else reading.current(line)
    )
    value = parse_number(match["value"], line=line, what=f"seconds {match['what']}")
    block.add(
        None, Measurement(metric, value, "s", "lower" if metric == "elapsed_s" else "none"), line
    )
    if match["sd"]:
        sd = parse_number(match["sd"], line=line, what="elapsed spread")
        block.add(None, Measurement(f"{metric}_stddev", sd, "s", "none"), line)
    if match["pct"]:
        pct = parse_number(match["pct"], line=line, what="elapsed spread")
        block.add(None, Measurement(f"{metric}_stddev_pct", pct, "%", "none"), line)
    if metric == "elapsed_s":
        block.finished = True


def read_human(reading: Reading, lines: list[tuple[int, str]]) -> None:
    """The layout perf prints by default, also as pasted into mails (tabs, no header)."""
    for number, line in lines:
        header = _HEADER.search(line)
        if header:
            keys: dict[str, KeyValue] = {"target": header["target"]}
            reading.blocks.append(Block(number, keys))
            if header["runs"]:
                reading.metadata["runs"] = int(header["runs"])
            continue
        seconds = _SECONDS.match(line)
        if seconds:
            _seconds(reading, seconds, number)
            continue
        if line.lstrip().startswith("#"):
            continue
        counter = _COUNTER.match(line)
        if counter and not counter["event"].lower().startswith(("seconds", "sec")):
            _human_counter(reading, counter, number)


def to_records(reading: Reading) -> list[Record]:
    """A record per output (and per CPU); header-less outputs are told apart by ``listing``."""
    records: list[Record] = []
    unnamed = [b for b in reading.blocks if "target" not in b.keys]
    for block in reading.blocks:
        if not block.values and not block.series:
            continue
        keys = dict(block.keys)
        if "target" not in keys and len(unnamed) > 1:
            keys["listing"] = unnamed.index(block) + 1
        cpus = sorted(
            {cpu for cpu, _ in block.values} | {cpu for cpu, _ in block.series},
            key=lambda c: -1 if c is None else c,
        )
        for cpu in cpus:
            record_keys = dict(keys) if cpu is None else {**keys, "cpu": cpu}
            measurements = tuple(m for (c, _), (m, _) in block.values.items() if c == cpu)
            samples = tuple(s for (c, _), ss in block.series.items() if c == cpu for s in ss)
            records.append(
                Record(
                    keys=record_keys, line=block.line, measurements=measurements, samples=samples
                )
            )
    return records


@register("perf-stat")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    from ingest.parsers.perf_stat_machine import read_machine, sniff_machine

    lines = numbered_lines(text)
    reading = Reading()
    kind = sniff_machine(lines)
    if kind:
        reading.metadata["format"] = kind
        read_machine(reading, lines, kind, str(options.get("separator", ",")))
    else:
        reading.metadata["format"] = "human"
        read_human(reading, lines)
    records = to_records(reading)
    if not records:
        found = (
            "no counter was measured (all <not supported>/<not counted>)"
            if reading.warnings
            else ("no perf stat counters ('Performance counter stats for ...', -x CSV or -j JSON)")
        )
        raise ParseError(found)
    return ParseResult(
        records=tuple(records), warnings=tuple(reading.warnings), metadata=reading.metadata
    )
