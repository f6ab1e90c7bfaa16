"""sysbench 1.0.x results: cpu, threads, mutex, memory, fileio (docs/parsers/sysbench.md).

A run starts at the ``sysbench 1.0.20 (...)`` banner; a file may hold several (a script
looping over tests or thread counts), each a record keyed ``threads`` (``Number of threads``)
and ``test`` when the output says which test it is. sysbench 1.0 does not name the test:
cpu, memory and fileio are recognised by their own lines (``Prime numbers limit``, ``Running
memory speed test``, ``File operations:``) or a ``sysbench cpu run`` command line;
threads and mutex print nothing of their own, so their records have no ``test`` key unless
the command line is there or the ``test`` option names it. Latencies are in ms as printed
under ``Latency (ms):``; sysbench 0.4's ``Test execution summary`` layout is refused.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from ingest.parsers.base import Better, Measurement, ParseError, ParseResult, Record, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

TESTS = ("cpu", "threads", "mutex", "memory", "fileio")
_BANNER = re.compile(r"^sysbench (?P<version>\d+\.\d+\S*)")
_COMMAND = re.compile(r"\bsysbench\b.*?(?:--test=|\s)(?P<test>cpu|threads|mutex|memory|fileio)\b")
_MARKERS = (
    ("Prime numbers limit:", "cpu"),
    ("CPU speed:", "cpu"),
    ("Running memory speed test", "memory"),
    ("File operations:", "fileio"),
    ("Extra file open flags", "fileio"),
)
_ROW = re.compile(r"^\s*(?P<label>[A-Za-z0-9][^:]*?):\s+(?P<value>\S.*?)\s*$")
_PERCENTILE = re.compile(r"^(\d+)th percentile$")
# (section, label) -> (metric, unit, better); section None = anywhere
_FIELDS: dict[tuple[str | None, str], tuple[str, str, Better]] = {
    ("CPU speed", "events per second"): ("events_per_s", "events/s", "higher"),
    ("General statistics", "total number of events"): ("events", "count", "none"),
    ("Latency (ms)", "min"): ("latency_min_ms", "ms", "lower"),
    ("Latency (ms)", "avg"): ("latency_avg_ms", "ms", "lower"),
    ("Latency (ms)", "max"): ("latency_max_ms", "ms", "lower"),
    ("Latency (ms)", "sum"): ("latency_sum_ms", "ms", "none"),
    ("File operations", "reads/s"): ("reads_per_s", "ops/s", "higher"),
    ("File operations", "writes/s"): ("writes_per_s", "ops/s", "higher"),
    ("File operations", "fsyncs/s"): ("fsyncs_per_s", "ops/s", "higher"),
    ("Throughput", "read, MiB/s"): ("read_mib_s", "MiB/s", "higher"),
    ("Throughput", "written, MiB/s"): ("written_mib_s", "MiB/s", "higher"),
}
_PAIRS = {
    "events (avg/stddev)": (("fairness_events_avg", "count"), ("fairness_events_stddev", "count")),
    "execution time (avg/stddev)": (("fairness_time_avg_s", "s"), ("fairness_time_stddev_s", "s")),
}
_OPERATIONS = re.compile(r"^\s*Total operations:\s+(\S+)\s+\(\s*(\S+) per second\)")
_TRANSFERRED = re.compile(r"^\s*(\S+) MiB transferred \(\s*(\S+) MiB/sec\)")


@dataclass
class _Run:
    line: int
    version: str
    threads: int | None = None
    test: str | None = None
    values: list[Measurement] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)

    def add(self, metric: str, token: str, unit: str, better: Better, number: int) -> None:
        if metric in self.seen:
            raise ParseError(
                f"second {metric} in one run (first at line {self.seen[metric]})", number
            )
        self.seen[metric] = number
        self.values.append(
            Measurement(metric, parse_number(token, line=number, what=metric), unit, better)
        )


def _row(run: _Run, section: str | None, label: str, value: str, number: int) -> None:
    if label == "Number of threads":
        run.threads = int(parse_number(value, line=number, what="threads"))
    elif label == "total time":
        if not value.endswith("s"):
            raise ParseError(f"total time {value!r} has no 's' unit", number)
        run.add("total_time_s", value[:-1], "s", "none", number)
    elif label in _PAIRS:
        avg, _, stddev = value.partition("/")
        (m1, u1), (m2, u2) = _PAIRS[label]
        run.add(m1, avg, u1, "none", number)
        run.add(m2, stddev, u2, "lower", number)
    elif section == "Latency (ms)" and (m := _PERCENTILE.match(label)):
        run.add(f"latency_p{m[1]}_ms", value, "ms", "lower", number)
    elif (section, label) in _FIELDS:
        metric, unit, better = _FIELDS[(section, label)]
        run.add(metric, value, unit, better, number)


def _line(run: _Run, section: str | None, text: str, number: int) -> str | None:
    """Read one line of a run; return the section it opens or is in."""
    stripped = text.strip()
    for marker, test in _MARKERS:
        if stripped.startswith(marker):
            run.test = run.test or test
    if stripped.startswith("Test execution summary"):
        raise ParseError("sysbench 0.4 'Test execution summary' output is not supported", number)
    if stripped.endswith(":") and not text.startswith((" ", "\t")):
        return stripped[:-1]
    if m := _OPERATIONS.match(text):
        run.add("operations", m[1], "count", "none", number)
        run.add("operations_per_s", m[2], "ops/s", "higher", number)
    elif m := _TRANSFERRED.match(text):
        run.add("transferred_mib", m[1], "MiB", "none", number)
        run.add("transfer_mib_s", m[2], "MiB/s", "higher", number)
    elif m := _ROW.match(text):
        _row(run, section, m["label"].strip(), m["value"], number)
    return section


def _runs(text: str) -> tuple[list[_Run], list[str]]:
    runs: list[_Run] = []
    section: str | None = None
    command: str | None = None
    warnings: list[str] = []
    for number, text_line in numbered_lines(text):
        if m := _BANNER.match(text_line.strip()):
            runs.append(_Run(number, m["version"], test=command))
            section, command = None, None
        elif m := _COMMAND.search(text_line):
            command = m["test"]
            if runs and not runs[-1].values:
                runs[-1].test = command
        elif text_line.lstrip().startswith("[ ") and " thds: " in text_line:
            warnings.append(f"line {number}: interval report not stored")
        elif runs:
            section = _line(runs[-1], section, text_line, number)
    return runs, warnings


@register("sysbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    runs, warnings = _runs(text)
    if not runs:
        if "Test execution summary" in text:
            raise ParseError("sysbench 0.4 'Test execution summary' output is not supported")
        raise ParseError("no 'sysbench 1.0.x' banner: not sysbench output")
    records = []
    for run in runs:
        if not run.values:
            warnings.append(f"line {run.line}: sysbench run without results (prepare/cleanup?)")
            continue
        if run.version.startswith("0."):
            raise ParseError(f"sysbench {run.version} output is not supported (1.0.x is)", run.line)
        keys: dict[str, str | int] = {}
        test = run.test or options.get("test")
        if test is not None:
            if test not in TESTS:
                raise ParseError(f"unknown sysbench test {test!r}; known: {', '.join(TESTS)}")
            keys["test"] = str(test)
        else:
            warnings.append(
                f"line {run.line}: the output does not say which test ran (threads or mutex?); "
                "give options test, or keep one test per file"
            )
        if run.threads is not None:
            keys["threads"] = run.threads
        records.append(Record(keys=keys, line=run.line, measurements=tuple(run.values)))
    if not records:
        raise ParseError("sysbench output has no results (only prepare/cleanup runs)")
    metadata: dict[str, str | int | float] = {"sysbench_version": runs[0].version}
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
