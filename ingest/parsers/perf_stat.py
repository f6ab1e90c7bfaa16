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

from ingest.parsers.base import (
    KeyValue,
    Measurement,
    ParseError,
    ParseResult,
    Record,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.perf_stat_common import (
    Block,
    Reading,
    store_counter,
)
from ingest.parsers.text import numbered_lines

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
