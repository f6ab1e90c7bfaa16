"""VolanoMark client summaries (Mark.java printResults), raw or grep'd by a harness.

A file may hold several runs: client outputs pasted one after another, a harness's
``grep throughput test*.log`` (``test-1.log:Average throughput = ...``), or startup.sh blocks
framed by ``[date] Test started.``. Each run is a record; the ``test-N.log`` prefix gives its
trial number. Published Volano Report tables are summaries of runs, not client output: they
are refused here and read by the ``table`` parser.
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
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_KEYS = {
    "volanomark version": "version",
    "messages sent": "messages_sent",
    "messages received": "messages_received",
    "total messages": "messages_total",
    "elapsed time": "elapsed",
    "average throughput": "throughput",
}
_LINE = re.compile(
    r"^\s*(?:(?P<prefix>[^\s:=]+):\s*)?(?P<key>" + "|".join(_KEYS) + r")\s*(?P<op>[=<])\s*"
    r"(?P<rest>.*?)\s*$",
    re.IGNORECASE,
)
_BANNER = re.compile(r"Chat Server Benchmark Version (\S+)")
_STARTED = re.compile(r"^\s*\[[^\]]*\]\s*Test started")
_TRIAL = re.compile(r"(\d+)\D*$")  # test-3.log -> 3
_REPORT_TABLE = re.compile(
    r"^\s*Java Platform\s+Results\s+Score\b|^\s*Table \d+\.\s+VolanoMark", re.IGNORECASE
)
_ROOM = re.compile(r"Creating room number (\d+)")
_FAILED = re.compile(r"\bTest failed\b")
_UNITS = {
    "elapsed": re.compile(r"^(\S+)\s+seconds?$"),
    "throughput": re.compile(r"^(\S+)\s+messages per second$"),
}
_METRICS = {
    "throughput": ("msg/s", "higher"),
    "elapsed": ("s", "lower"),
    "messages_sent": ("messages", "none"),
    "messages_received": ("messages", "none"),
    "messages_total": ("messages", "none"),
}


@dataclass(frozen=True)
class _Found:
    name: str
    prefix: str
    op: str
    rest: str
    line: int


@dataclass
class _Run:
    """One client run's summary lines, with what the file printed about it."""

    found: list[_Found] = field(default_factory=list)
    rooms: int | None = None
    version: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def names(self) -> set[str]:
        return {f.name for f in self.found}


def _value(found: _Found) -> float:
    pattern = _UNITS.get(found.name)
    token = found.rest
    if pattern:
        match = pattern.match(found.rest)
        if not match:
            raise ParseError(f"cannot read {found.name} from {found.rest!r}", found.line)
        token = match.group(1)
    return parse_number(token, line=found.line, what=found.name)


def _collect(text: str) -> list[_Run]:
    """Split the file into runs: by grep prefix, else where a banner, a `Test started` line
    or a repeated summary key begins the next run's output."""
    runs: dict[object, _Run] = {}
    block = 0  # unprefixed runs, numbered in order

    def unprefixed() -> _Run:
        return runs.setdefault(("", block), _Run())

    for number, line in numbered_lines(text):
        if _FAILED.search(line):
            raise ParseError("the run failed ('Test failed.'): no result to record", number)
        match = _LINE.match(line)
        if match:
            name = _KEYS[" ".join(match.group("key").lower().split())]
            prefix = match.group("prefix") or ""
            if not prefix and name in unprefixed().names:
                block += 1
            run = runs.setdefault(prefix, _Run()) if prefix else unprefixed()
            run.found.append(_Found(name, prefix, match.group("op"), match.group("rest"), number))
            continue
        if (_BANNER.search(line) or _STARTED.match(line)) and unprefixed().found:
            block += 1
        if banner := _BANNER.search(line):
            unprefixed().version = banner.group(1)
        if room := _ROOM.search(line):
            run = unprefixed()
            run.rooms = max(int(room.group(1)), run.rooms or 0)
        if line.lstrip().startswith("Error "):
            unprefixed().warnings.append(f"line {number}: {line.strip()}")
    return [run for run in runs.values() if run.found]


def _one_run(run: _Run) -> dict[str, _Found]:
    by_name: dict[str, _Found] = {}
    for item in run.found:
        earlier = by_name.get(item.name)
        if earlier and (earlier.rest, earlier.op) != (item.rest, item.op):
            raise ParseError(
                f"{item.name} appears twice with different values for one run (line "
                f"{earlier.line}); give each run its own `test-N.log:` prefix or output block",
                item.line,
            )
        by_name.setdefault(item.name, item)
    return by_name


def _checks(values: dict[str, float]) -> list[str]:
    warnings = []
    parts = ("messages_sent", "messages_received", "messages_total")
    if all(p in values for p in parts):
        sent, received, total = (values[p] for p in parts)
        if sent + received != total:
            warnings.append(
                f"total messages {total:g} is not sent + received ({sent:g} + {received:g})"
            )
    if all(k in values for k in ("messages_total", "elapsed", "throughput")) and values["elapsed"]:
        expected = values["messages_total"] / values["elapsed"]
        if abs(values["throughput"] - expected) > max(1.0, 0.01 * expected):
            warnings.append(
                f"throughput {values['throughput']:g} differs from total / elapsed "
                f"({expected:.0f}) by more than 1%"
            )
    return warnings


def _record(run: _Run, metadata: dict[str, str | int | float]) -> tuple[Record, list[str]]:
    warnings = list(run.warnings)
    values: dict[str, float] = {}
    for name, item in _one_run(run).items():
        if name == "version":
            metadata.setdefault("volanomark_version", item.rest)
        elif name == "elapsed" and item.op == "<":
            warnings.append(
                f"line {item.line}: elapsed time under 1 second; VolanoMark prints no throughput"
            )
        else:
            values[name] = _value(item)
    first = run.found[0]
    if "throughput" not in values and "elapsed" in values:
        warnings.append(f"line {first.line}: no 'Average throughput' line")
    warnings.extend(f"line {first.line}: {w}" for w in _checks(values))
    if run.version:
        metadata.setdefault("volanomark_version", run.version)
    trial = _TRIAL.search(first.prefix) if first.prefix else None
    measurements = tuple(
        Measurement(name, values[name], *_METRICS[name])  # type: ignore[arg-type]
        for name in _METRICS
        if name in values
    )
    keys: dict[str, KeyValue] = {} if run.rooms is None else {"rooms": run.rooms}
    record = Record(
        keys=keys,
        trial=int(trial.group(1)) if trial else None,
        line=first.line,
        measurements=measurements,
    )
    return record, warnings


def _refuse_report_table(text: str) -> None:
    for number, line in numbered_lines(text):
        if _REPORT_TABLE.match(line):
            raise ParseError(
                "this is a published Volano Report table (scores per JVM), not VolanoMark "
                "client output: read it with the `table` parser",
                number,
            )


@register("volanomark")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read every run's summary lines; warn on what is missing or inconsistent."""
    runs = _collect(text)
    if not runs or all(f.name == "version" for run in runs for f in run.found):
        _refuse_report_table(text)
        raise ParseError("no VolanoMark summary found (no 'Average throughput =' line)")
    metadata: dict[str, str | int | float] = {}
    warnings: list[str] = []
    records = []
    for run in runs:
        record, found = _record(run, metadata)
        records.append(record)
        warnings.extend(found)
    if len(runs) == 1 and runs[0].found[0].prefix:
        metadata["trial_file"] = runs[0].found[0].prefix
    return ParseResult(records=tuple(records), warnings=tuple(warnings), metadata=metadata)
