"""What perf stat's layouts share: counters, blocks and readings (docs/parsers/perf-stat.md).

The human layout (perf_stat.py) and the machine layouts, ``-x`` CSV and ``-j`` JSON
(perf_stat_machine.py), store counters the same way, through ``store_counter``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ingest.parsers.base import KeyValue, Measurement, ParseError, Sample
from ingest.parsers.numbers import parse_number

NOT_MEASURED = ("<not supported>", "<not counted>")
SOURCE = "perf-stat"


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
