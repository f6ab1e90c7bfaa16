"""``perf bench`` default output: sched messaging/pipe, mem memcpy/memset (see the doc).

A file may hold several benchmarks (``perf bench sched all``) and, for mem, several copy
functions: each is a record keyed by ``benchmark`` (``sched/messaging``) and, for mem,
``function`` (``default``, ``x86-64-movsb``, ...). The parameters perf prints in its ``#``
lines (groups, processes or threads, loops, size) are record keys. ``--format=simple`` prints
bare numbers with nothing to say what they are, so it is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import KeyValue, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_START = re.compile(r"^# Running '?(?P<name>[\w-]+/[\w-]+)'? benchmark")  # 'all' omits quotes
_FUNCTION = re.compile(r"^# function '(?P<name>[^']+)'")
_GROUPS = re.compile(r"^# (?P<groups>\d+) groups == (?P<tasks>\d+) (?P<kind>processes|threads) run")
_PER_GROUP = re.compile(r"^# (?P<n>\d+) sender and receiver (?P<kind>processes|threads) per group")
_PIPE_LOOPS = re.compile(r"^# Executed (?P<loops>\d+) pipe operations between two (?P<kind>\w+)")
_SIZE = re.compile(r"^# Copying (?P<size>\S+) bytes")
_VALUE = re.compile(
    r"^(?:Total time:\s*(?P<total>\S+)\s*\[sec\]|(?P<value>\S+)\s+(?P<unit>usecs/op|ops/sec|"
    r"GB/sec|MB/sec|KB/sec|B/sec|cycles/Byte|cycles/byte))$"
)
_METRICS = {
    "total": ("total_time_s", "s", "lower"),
    "usecs/op": ("usecs_per_op", "us", "lower"),
    "ops/sec": ("ops_per_sec", "ops/s", "higher"),
    "GB/sec": ("throughput_gb_per_sec", "GB/s", "higher"),
    "MB/sec": ("throughput_mb_per_sec", "MB/s", "higher"),
    "KB/sec": ("throughput_kb_per_sec", "KB/s", "higher"),
    "B/sec": ("throughput_b_per_sec", "B/s", "higher"),
    "cycles/Byte": ("cycles_per_byte", "cycles/byte", "lower"),
    "cycles/byte": ("cycles_per_byte", "cycles/byte", "lower"),
}
_FAILURES = ("Failed to", "perf: ", "Error:", "Invalid")


@dataclass
class _Bench:
    line: int
    keys: dict[str, KeyValue]
    values: dict[str, tuple[Measurement, int]] = field(default_factory=dict)


def _add(bench: _Bench, metric_key: str, token: str, line: int) -> None:
    metric, unit, better = _METRICS[metric_key]
    if metric in bench.values:
        raise ParseError(f"second {metric} (first at line {bench.values[metric][1]})", line)
    value = parse_number(token, line=line, what=metric)
    bench.values[metric] = (Measurement(metric, value, unit, better), line)  # type: ignore[arg-type]


def _header(bench: _Bench, text: str) -> bool:
    for pattern in (_GROUPS, _PER_GROUP, _PIPE_LOOPS, _SIZE):
        match = pattern.match(text)
        if match:
            found = match.groupdict()
            if "groups" in found:
                bench.keys["groups"] = int(found["groups"])
                bench.keys["mode"] = found["kind"]
            elif "loops" in found:
                bench.keys["loops"] = int(found["loops"])
            elif "size" in found:
                bench.keys["size"] = found["size"]
            return True
    return False


def _read(lines: list[tuple[int, str]]) -> list[_Bench]:
    benches: list[_Bench] = []
    current: _Bench | None = None
    name = ""
    for number, line in lines:
        text = line.strip()
        if match := _START.match(text):
            name = match["name"]
            current = _Bench(number, {"benchmark": name})
            benches.append(current)
            continue
        if (match := _FUNCTION.match(text)) and current is not None:
            if current is not None and "function" not in current.keys and not current.values:
                current.keys["function"] = match["name"]
            else:
                current = _Bench(number, {"benchmark": name, "function": match["name"]})
                benches.append(current)
            continue
        if current is None:
            continue
        if text.startswith("#") and _header(current, text):
            continue
        if text.startswith(_FAILURES):
            raise ParseError(f"perf bench failed: {text!r}", number)
        if match := _VALUE.match(text):
            _add(
                current,
                "total" if match["total"] else match["unit"],
                match["total"] or match["value"],
                number,
            )
    return benches


@register("perf-bench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    lines = numbered_lines(text)
    benches = _read(lines)
    if not benches:
        raise ParseError(
            "no '# Running ... benchmark' line (perf bench --format=simple prints bare numbers "
            "that cannot be named; use the default format)"
        )
    records = []
    for bench in benches:
        if not bench.values:
            raise ParseError(f"{bench.keys['benchmark']} benchmark printed no result", bench.line)
        measurements = tuple(m for m, _ in bench.values.values())
        records.append(Record(keys=dict(bench.keys), line=bench.line, measurements=measurements))
    return ParseResult(records=tuple(records))
