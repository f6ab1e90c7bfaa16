"""dbench and tbench results, 1.x/2.x and 3.x/4.x (docs/parsers/dbench.md).

The result is the ``Throughput`` line. It is searched anywhere in a line, not at its start,
because dbench 1.x glues its progress dots to it and tbench runs can leave terminal garbage
in front. Per-second progress lines of dbench 3/4 become Samples.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ingest.parsers.base import Measurement, ParseError, ParseResult, Sample, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

_THROUGHPUT = re.compile(
    r"Throughput\s+(?P<mb>\S+)\s+MB/sec"
    r"(?:\s+\(NB=(?P<nb>\S+)\s+MB/sec\s+(?P<mbit>\S+)\s+MBit/sec\))?"
    r"(?:\s+(?P<clients>\d+)\s+clients)?"
    r"(?:\s+(?P<procs>\d+)\s+procs)?"
    r"(?:\s+max_latency=(?P<latency>\S+)\s+ms)?"
)
_PROGRESS = re.compile(
    r"^\s*(?P<clients>\d+)\s+(?P<ops>\d+)\s+(?P<mb>\S+)\s+MB/sec\s+(?P<phase>warmup|execute)\s+"
    r"(?P<sec>\d+)\s+sec\s+latency\s+(?P<latency>\S+)\s+ms"
)
_COMMAND = re.compile(r"\b[dt]bench\s+(?:-\S+\s+(?:\d+\s+)?)*(?P<clients>\d+)\b")
_STARTED = re.compile(r"^\s*(?P<clients>\d+)\s+clients started")
_VERSION = re.compile(r"dbench version (?P<version>\S+)")


def _result_line(number: int, match: re.Match[str]) -> dict:
    """The numbers of one Throughput line."""
    found = {
        "line": number,
        "throughput": parse_number(match["mb"], line=number, what="throughput"),
    }
    for key in ("clients", "procs"):
        if match[key]:
            found[key] = int(match[key])
    if match["latency"]:
        found["max_latency_ms"] = parse_number(match["latency"], line=number, what="max_latency")
    if match["nb"]:
        found["nb_mb_per_s"] = parse_number(match["nb"], line=number, what="NB throughput")
    return found


def _clients(result: dict) -> int | None:
    return result.get("clients", result.get("procs"))


def _choose(results: list[dict], options: Mapping[str, object]) -> list[dict]:
    """The Throughput lines of one client count: one run, or its repeated iterations."""
    if "clients" in options:
        results = [r for r in results if _clients(r) == options["clients"]]
        if not results:
            raise ParseError(f"no Throughput line for clients = {options['clients']}")
    counts = sorted({_clients(r) or 0 for r in results})
    if len(counts) > 1:
        lines = ", ".join(str(r["line"]) for r in results)
        raise ParseError(
            f"Throughput lines for client counts {counts} (lines {lines}): "
            "choose one with options clients = N"
        )
    return results


def _combine(results: list[dict], warnings: list[str]) -> dict:
    """Iterations of the same run (lkp runs tbench twice): mean throughput, worst latency."""
    if len(results) == 1:
        return results[0]
    lines = ", ".join(str(r["line"]) for r in results)
    warnings.append(f"{len(results)} iterations (lines {lines}): throughput is their mean")
    combined = dict(results[0])
    combined["throughput"] = sum(r["throughput"] for r in results) / len(results)
    latencies = [r["max_latency_ms"] for r in results if "max_latency_ms" in r]
    if latencies:
        combined["max_latency_ms"] = max(latencies)
    combined.pop("nb_mb_per_s", None)
    combined["iterations"] = len(results)
    return combined


def _samples(progress: list[tuple[int, re.Match[str]]]) -> tuple[Sample, ...]:
    samples = []
    execute = [(n, m) for n, m in progress if m["phase"] == "execute"]
    for index, (number, match) in enumerate(execute):
        ts = f"{match['sec']} sec"
        mb = parse_number(match["mb"], line=number, what="MB/sec")
        latency = parse_number(match["latency"], line=number, what="latency")
        samples.append(Sample("dbench", "mb_per_s", index, mb, timestamp=ts))
        samples.append(Sample("dbench", "latency_ms", index, latency, timestamp=ts))
    return tuple(samples)


@register("dbench", "tbench")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    results, progress = [], []
    metadata: dict[str, str | int | float] = {}
    for number, line in numbered_lines(text):
        match = _THROUGHPUT.search(line)
        if match:
            results.append(_result_line(number, match))
            continue
        if progress_match := _PROGRESS.match(line):
            progress.append((number, progress_match))
        elif version := _VERSION.search(line):
            metadata["version"] = version["version"]
        elif (started := _STARTED.match(line)) or (command := _COMMAND.search(line)):
            metadata.setdefault("clients", int((started or command)["clients"]))
    if not results:
        raise ParseError("no 'Throughput N MB/sec' line: not a dbench/tbench result")
    warnings: list[str] = []
    chosen_lines = _choose(results, options)
    chosen = _combine(chosen_lines, warnings)
    if _clients(chosen) is not None:
        metadata["clients"] = _clients(chosen)  # type: ignore[assignment]
    for key in ("procs", "nb_mb_per_s", "iterations"):
        if key in chosen:
            metadata[key] = chosen[key]
    measurements = [Measurement("throughput", chosen["throughput"], "MB/s", "higher")]
    if "max_latency_ms" in chosen:
        measurements.append(Measurement("max_latency_ms", chosen["max_latency_ms"], "ms", "lower"))
    if "clients" not in metadata:
        warnings.append("client count not found in the file")
    return ParseResult(
        measurements=tuple(measurements),
        samples=_samples(progress) if len(results) == 1 else (),
        warnings=tuple(warnings),
        metadata=metadata,
    )
