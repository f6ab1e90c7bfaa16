"""Timings of kernel compiles: GNU time (default and -v), bash/tcsh builtins, kernbench, lkp.

One file holds one timing. Every layout feeds the same fields (elapsed, user, system, ...);
a field seen twice is an error, because two timings in one file cannot be told apart
(kernbench's several load blocks are the exception: pick one with ``options = {jobs = N}``).
See docs/parsers/time.md.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ingest.parsers.base import Measurement, ParseError, ParseResult, register
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

# field -> (metric, unit, better)
METRICS = {
    "elapsed": ("elapsed_s", "s", "lower"),
    "user": ("user_s", "s", "lower"),
    "system": ("system_s", "s", "lower"),
    "cpu": ("cpu_pct", "%", "none"),
    "max_rss": ("max_rss_kb", "KB", "lower"),
    "major_faults": ("major_faults", "count", "none"),
    "minor_faults": ("minor_faults", "count", "none"),
    "context_switches": ("context_switches", "count", "none"),
    "sleeps": ("sleeps", "count", "none"),
}

_GNU_DEFAULT = re.compile(
    r"(?P<user>\S+)user\s+(?P<system>\S+)system\s+(?P<elapsed>\S+)elapsed\s+(?P<cpu>\S+)%CPU"
    r"(?:\s+\(\S+avgtext\+\S+avgdata\s+(?P<max_rss>\S+)maxresident\)k)?"
)
_GNU_FAULTS = re.compile(r"\((?P<major_faults>\S+)major\+(?P<minor_faults>\S+)minor\)pagefaults")
_GNU_VERBOSE = {
    "user time (seconds)": "user",
    "system time (seconds)": "system",
    "percent of cpu this job got": "cpu",
    "elapsed (wall clock) time (h:mm:ss or m:ss)": "elapsed",
    "maximum resident set size (kbytes)": "max_rss",
    "major (requiring i/o) page faults": "major_faults",
    "minor (reclaiming a frame) page faults": "minor_faults",
}
_BASH = re.compile(r"^(?P<field>real|user|sys)\s+(?:(?P<min>\S+)m(?P<sec>\S+)s|(?P<plain>\S+))$")
_LKP = re.compile(r"^(?P<field>real|user|sys):\s+(?P<sec>\S+)s$")
_TCSH = re.compile(
    r"^(?P<user>\S+)u\s+(?P<system>\S+)s\s+(?P<elapsed>[\d:.,]+)\s+(?P<cpu>\S+)%(?:\s|$)"
)
_KERNBENCH_BLOCK = re.compile(r"^Average (?P<load>.+?) load -j (?P<jobs>\d+) Run")
_KERNBENCH = {
    "elapsed time": "elapsed",
    "user time": "user",
    "system time": "system",
    "percent cpu": "cpu",
    "context switches": "context_switches",
    "sleeps": "sleeps",
}
_KERNBENCH_LINE = re.compile(
    r"^(?P<label>Elapsed Time|User Time|System Time|Percent CPU|Context Switches|Sleeps)\s+"
    r"(?P<value>\S+)(?:\s+\((?P<stddev>\S+)\))?$"
)
_EXIT = re.compile(r"^(?:Command exited with non-zero status|\s*Exit status:)\s*(?P<status>\d+)")
_BASH_FIELDS = {"real": "elapsed", "user": "user", "sys": "system"}


@dataclass
class _Timing:
    values: dict[str, tuple[float, int]]
    warnings: list[str]
    metadata: dict[str, str | int | float]

    def set(self, field: str, value: float, line: int) -> None:
        if field in self.values:
            first = self.values[field][1]
            raise ParseError(
                f"second {field} value (first at line {first}): one timing per file", line
            )
        self.values[field] = (value, line)


def clock_seconds(token: str, line: int) -> float:
    """``[h:]mm:ss[.ss]`` or plain seconds, folded base 60 as lkp's time parser does."""
    parts = token.split(":")
    if len(parts) > 3:
        raise ParseError(f"elapsed time {token!r} is not [h:]m:ss", line)
    total = 0.0
    for part in parts:
        total = total * 60 + parse_number(part, line=line, what="elapsed time")
    return total


def _percent(timing: _Timing, token: str, line: int) -> None:
    token = token.rstrip("%")
    if token == "?":
        timing.warnings.append(f"line {line}: CPU percentage is '?' (elapsed 0); cpu_pct omitted")
        return
    timing.set("cpu", parse_number(token, line=line, what="CPU percentage"), line)


def _gnu_default(timing: _Timing, text: str, line: int) -> bool:
    match = _GNU_DEFAULT.search(text)
    if not match:
        faults = _GNU_FAULTS.search(text)
        if faults:
            for field in ("major_faults", "minor_faults"):
                timing.set(field, parse_number(faults[field], line=line, what=field), line)
        return bool(faults)
    for field in ("user", "system"):
        timing.set(field, parse_number(match[field], line=line, what=f"{field} time"), line)
    timing.set("elapsed", clock_seconds(match["elapsed"], line), line)
    _percent(timing, match["cpu"], line)
    if match["max_rss"] is not None:
        timing.set("max_rss", parse_number(match["max_rss"], line=line, what="maxresident"), line)
    return True


def _gnu_verbose(timing: _Timing, text: str, line: int) -> bool:
    label, sep, value = text.strip().rpartition(": ")
    field = _GNU_VERBOSE.get(label.lower()) if sep else None
    if field is None:
        if label.lower() == "command being timed":
            timing.metadata["command"] = value.strip().strip('"')
            return True
        return False
    if field == "elapsed":
        timing.set(field, clock_seconds(value.strip(), line), line)
    elif field == "cpu":
        _percent(timing, value.strip(), line)
    else:
        timing.set(field, parse_number(value, line=line, what=label), line)
    return True


def _shell(timing: _Timing, text: str, line: int) -> bool:
    stripped = text.strip()
    match = _BASH.match(stripped) or _LKP.match(stripped)
    if match:
        groups = match.groupdict()
        seconds = parse_number(groups.get("sec") or groups["plain"] or "", line=line, what="time")
        if groups.get("min"):
            seconds += 60 * parse_number(groups["min"], line=line, what="minutes")
        timing.set(_BASH_FIELDS[match["field"]], seconds, line)
        return True
    match = _TCSH.match(stripped)
    if match:
        for field in ("user", "system"):
            timing.set(field, parse_number(match[field], line=line, what=f"{field} time"), line)
        timing.set("elapsed", clock_seconds(match["elapsed"], line), line)
        _percent(timing, match["cpu"], line)
        return True
    return False


def _kernbench(timing: _Timing, text: str, line: int, in_block: bool) -> bool:
    match = _KERNBENCH_LINE.match(text.strip())
    if not match or not in_block:
        return False
    field = _KERNBENCH[match["label"].lower()]
    timing.set(field, parse_number(match["value"], line=line, what=match["label"]), line)
    if match["stddev"] is not None:
        metric = METRICS[field][0]
        stddev = parse_number(match["stddev"], line=line, what=f"{match['label']} std deviation")
        timing.metadata[f"{metric}_stddev"] = stddev
    return True


def _kernbench_blocks(lines: list[tuple[int, str]]) -> list[tuple[int, int, str]]:
    return [
        (number, int(m["jobs"]), m["load"])
        for number, line in lines
        if (m := _KERNBENCH_BLOCK.match(line.strip()))
    ]


def _block_filter(lines: list[tuple[int, str]], options: Mapping[str, object]) -> set[int]:
    """Line numbers that belong to the chosen kernbench block (all lines when there is none)."""
    blocks = _kernbench_blocks(lines)
    if not blocks:
        return {number for number, _ in lines}
    jobs = options.get("jobs")
    if jobs is None:
        if len(blocks) > 1:
            found = ", ".join(f"-j {j} ({load})" for _, j, load in blocks)
            raise ParseError(f"kernbench blocks {found}: choose one with options jobs = N")
        jobs = blocks[0][1]
    starts = [number for number, j, _ in blocks if j == jobs]
    if not starts:
        raise ParseError(f"no kernbench block with -j {jobs}")
    ends = [number for number, _, _ in blocks if number > starts[0]]
    end = ends[0] if ends else lines[-1][0] + 1
    return {number for number, _ in lines if starts[0] <= number < end}


def _exit_status(timing: _Timing, status: int, line: int, options: Mapping[str, object]) -> None:
    if status == 0:
        return
    message = f"command exited with non-zero status {status}"
    if not options.get("allow_failed"):
        raise ParseError(
            f"{message}: the timing is of a failed run "
            "(set options allow_failed = true to keep it)",
            line,
        )
    timing.warnings.append(f"line {line}: {message} (kept: allow_failed)")
    timing.metadata["exit_status"] = status


@register("time")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    lines = numbered_lines(text)
    chosen = _block_filter(lines, options)
    timing = _Timing({}, [], {})
    for number, line in lines:
        if not line.strip():
            continue
        exited = _EXIT.match(line)
        if exited:
            _exit_status(timing, int(exited["status"]), number, options)
            continue
        block = _KERNBENCH_BLOCK.match(line.strip())
        if block and number in chosen:
            timing.metadata["jobs"] = int(block["jobs"])
            timing.metadata["load"] = block["load"]
            continue
        (
            _gnu_default(timing, line, number)
            or _gnu_verbose(timing, line, number)
            or _kernbench(timing, line, number, number in chosen)
            or _shell(timing, line, number)
        )
    if "elapsed" not in timing.values:
        raise ParseError(
            "no elapsed time found (GNU time, bash/tcsh time, kernbench or lkp kbuild output)"
        )
    return _result(timing)


def _result(timing: _Timing) -> ParseResult:
    measurements = []
    for field, (metric, unit, better) in METRICS.items():
        if field not in timing.values:
            continue
        value, line = timing.values[field]
        if field == "max_rss" and value == 0:
            timing.warnings.append(
                f"line {line}: maximum resident set size is 0 (kernels before 2.6.32 do not "
                "report it); max_rss_kb omitted"
            )
            continue
        measurements.append(Measurement(metric, value, unit, better))  # type: ignore[arg-type]
    return ParseResult(
        measurements=tuple(measurements),
        warnings=tuple(timing.warnings),
        metadata=timing.metadata,
    )
