"""dbench and tbench results, 1.x/2.x and 3.x/4.x (docs/parsers/dbench.md).

Every ``Throughput`` line is one run, returned as a Record keyed by what the file states about
it: ``clients`` (from the line, else the ``dbench N`` command or ``N clients started`` before
it) and ``label`` when a kernel label line precedes it (run_labels.py). Repeats with equal
keys are trials (numbered by base.group_records); nothing is averaged. A mailed log of 14
runs over 5 client counts and 2 kernels used to be stored as one mean: that is the bug this
layout fixes.

The Throughput line is searched anywhere in a line, not at its start, because dbench 1.x
glues its progress dots to it and tbench runs can leave terminal garbage in front. The
per-second progress lines of dbench 3/4 become Samples of the record whose Throughput line
follows them.
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
    group_records,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.run_labels import LabelScope, key_by_headings, warn_unlabelled_repeats
from ingest.parsers.text import numbered_lines

_THROUGHPUT = re.compile(
    r"Throughput\s+(?P<mb>\S+)\s+MB/sec"
    r"(?:\s+\(NB=(?P<nb>\S+)\s+MB/sec\s+(?P<mbit>\S+)\s+MBit/sec\))?"
    r"(?:\s+(?P<clients>\d+)\s+clients)?"
    r"(?:\s+(?P<procs>\d+)\s+procs)?"
    r"(?:\s+max_latency=(?P<latency>\S+)\s+ms)?"
)
_PROGRESS = re.compile(
    r"(?:^|[^\d.])\s*(?P<clients>\d+)\s+(?P<ops>\d+)\s+(?P<mb>\S+)\s+MB/sec\s+"
    r"(?P<phase>warmup|execute)\s+(?P<sec>\d+)\s+sec\s+latency\s+(?P<latency>\S+)\s+ms"
)
_COMMAND = re.compile(r"\b[dt]bench\s+(?:-\S+\s+(?:\d+\s+)?)*(?P<clients>\d+)\b")
_STARTED = re.compile(r"^\s*(?P<clients>\d+)\s+clients started")
_VERSION = re.compile(r"dbench version (?P<version>\S+)")
_KILLED = re.compile(r"^(?:Killed|Terminated)\b")


@dataclass
class _State:
    """What the lines read so far say about the next run."""

    scope: LabelScope = field(default_factory=LabelScope)
    clients: int | None = None
    progress: list[tuple[int, re.Match[str]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, str | int | float] = field(default_factory=dict)


def _keys(number: int, match: re.Match[str], state: _State) -> dict[str, KeyValue]:
    """The record's keys: the line's own client count wins over the command before it."""
    keys: dict[str, KeyValue] = {}
    if state.scope.label is not None:
        keys["label"] = state.scope.label
    clients = match["clients"] or match["procs"]
    if clients is not None:
        keys["clients"] = int(clients)
        if match["clients"] and match["procs"] and match["procs"] != match["clients"]:
            keys["procs"] = int(match["procs"])
    elif state.clients is not None:
        keys["clients"] = state.clients
    else:
        state.warnings.append(f"line {number}: client count not stated for this run")
    return keys


def _record(number: int, match: re.Match[str], state: _State) -> Record:
    """One Throughput line with the execute-phase progress lines printed before it."""
    measurements = [
        Measurement(
            "throughput",
            parse_number(match["mb"], line=number, what="throughput"),
            "MB/s",
            "higher",
        ),
    ]
    if match["nb"]:
        nb = parse_number(match["nb"], line=number, what="NB throughput")
        measurements.append(Measurement("nb_throughput", nb, "MB/s", "higher"))
    if match["latency"]:
        latency = parse_number(match["latency"], line=number, what="max_latency")
        measurements.append(Measurement("max_latency_ms", latency, "ms", "lower"))
    samples = []
    execute = [(n, m) for n, m in state.progress if m["phase"] == "execute"]
    for index, (line, progress) in enumerate(execute):
        stamp = f"{progress['sec']} sec"
        mb = parse_number(progress["mb"], line=line, what="MB/sec")
        latency = parse_number(progress["latency"], line=line, what="latency")
        samples.append(Sample("dbench", "mb_per_s", index, mb, timestamp=stamp))
        samples.append(Sample("dbench", "latency_ms", index, latency, timestamp=stamp))
    first = state.progress[0][0] if state.progress else number
    state.progress = []
    return Record(
        keys=_keys(number, match, state),
        line=first,
        measurements=tuple(measurements),
        samples=tuple(samples),
    )


def _context(number: int, line: str, state: _State) -> None:
    """Lines that are not results: progress, version, commands, `Killed`."""
    if _KILLED.match(line.strip()):
        if state.progress:
            state.warnings.append(
                f"line {number}: run killed; its {len(state.progress)} progress lines "
                f"(from line {state.progress[0][0]}) have no Throughput line and are ignored"
            )
        state.progress = []
    elif progress := _PROGRESS.search(line):
        state.progress.append((number, progress))
    elif version := _VERSION.search(line):
        state.metadata["version"] = version["version"]
    elif count := _STARTED.match(line) or _COMMAND.search(line):
        state.clients = int(count["clients"])


def _read(text: str) -> tuple[list[Record], _State]:
    state = _State()
    records: list[Record] = []
    raw_lines = numbered_lines(text, unquote=False)
    for (number, line), (_, raw) in zip(numbered_lines(text), raw_lines, strict=True):
        if state.scope.changed_depth(raw, line):
            state.clients = None  # another author's text: their command is not ours
        if state.scope.read(raw, line, number, state.warnings):
            continue
        if match := _THROUGHPUT.search(line):
            records.append(_record(number, match, state))
        else:
            _context(number, line, state)
    if state.progress:
        state.warnings.append(
            f"{len(state.progress)} progress lines from line {state.progress[0][0]} are not "
            "followed by a Throughput line (run cut short?): ignored"
        )
    return records, state


def _own_line(line: str) -> bool:
    """dbench's own lines (``dbench 16``, ``16 clients started``) are never headings."""
    return bool(_STARTED.match(line) or _COMMAND.search(line) or _THROUGHPUT.search(line))


@register("dbench", "tbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    records, state = _read(text)
    if not records:
        raise ParseError("no 'Throughput N MB/sec' line: not a dbench/tbench result")
    if "clients" in options:
        wanted = options["clients"]
        records = [r for r in records if r.keys.get("clients") == wanted]
        if not records:
            raise ParseError(f"no Throughput line for clients = {wanted}")
    records = key_by_headings(records, numbered_lines(text), state.warnings, skip=_own_line)
    group_records(records)  # refuses records that cannot be told apart, naming their lines
    warn_unlabelled_repeats(records, state.scope, state.warnings)
    counts = {r.keys.get("clients") for r in records}
    if len(counts) == 1 and None not in counts:
        state.metadata["clients"] = counts.pop()  # type: ignore[assignment]
    return ParseResult(
        records=tuple(records), warnings=tuple(state.warnings), metadata=state.metadata
    )
