"""Timings of kernel compiles: GNU time (default and -v), bash/tcsh builtins, kernbench, lkp.

Every timing in the file is a Record (docs/parsers/time.md). A timing is the run of lines
that fill its fields (elapsed, user, system, ...); it ends where a field it already has comes
again, or where a line states the next run's context: a kernel label (run_labels.py), the
timed command (a prompt ``$ time make -j4``, ``Command being timed: "..."``, a ``make`` line),
a kernbench ``Average ... load -j N Run`` block. Keys are that context, as printed
(``label``, ``command``, ``jobs``, ``load``); repeats with equal keys are trials, numbered by
base.group_records, never averaged. Seconds are folded exactly (Decimal), since ``1m13.100s``
must be 73.1 and not 73.10000000000001.
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
    group_records,
    register,
)
from ingest.parsers.gnutime_lines import (
    EXIT,
    KERNBENCH_BLOCK,
    KERNBENCH_NOISE,
    METRICS,
    UNFILLED_WHEN_ZERO,
    command_line,
    names_verbose_field,
    read_values,
    verbose_prefix,
    verbose_text,
)
from ingest.parsers.run_labels import LabelScope, key_by_headings, warn_unlabelled_repeats
from ingest.parsers.text import numbered_lines


@dataclass
class _Timing:
    keys: dict[str, KeyValue]
    values: dict[str, tuple[float, int]] = field(default_factory=dict)
    stddev: dict[str, float] = field(default_factory=dict)


@dataclass
class _State:
    options: Mapping[str, object]
    scope: LabelScope = field(default_factory=LabelScope)
    command: str | None = None
    block: dict[str, KeyValue] = field(default_factory=dict)
    current: _Timing | None = None
    done: list[_Timing] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    metadata: dict[str, str | int | float] = field(default_factory=dict)
    preamble: bool = False  # after kernbench's "Performing 5 runs of"

    def close(self) -> None:
        """The current timing is complete."""
        if self.current is not None and self.current.values:
            self.done.append(self.current)
        self.current = None

    def set(self, name: str, value: float, line: int, stddev: float | None = None) -> None:
        """One field of a timing; a field seen twice starts the next timing."""
        if self.current is not None and name in self.current.values:
            self.close()
        if self.current is None:
            keys: dict[str, KeyValue] = {}
            if self.scope.label is not None:
                keys["label"] = self.scope.label
            if self.command is not None:
                keys["command"] = self.command
            keys.update(self.block)
            self.scope.used = True
            self.current = _Timing(keys)
            self.command = None  # a command is timed once
        self.current.values[name] = (value, line)
        if stddev is not None:
            self.current.stddev[name] = stddev


def _exit_status(state: _State, status: int, line: int) -> None:
    if status == 0:
        return
    message = f"command exited with non-zero status {status}"
    if not state.options.get("allow_failed"):
        raise ParseError(
            f"{message}: the timing is of a failed run "
            "(set options allow_failed = true to keep it)",
            line,
        )
    state.warnings.append(f"line {line}: {message} (kept: allow_failed)")
    state.metadata["exit_status"] = status


def _context(state: _State, raw: str, line: str, number: int) -> bool:
    """Lines that say what the next timing is: labels, commands, kernbench blocks."""
    if state.scope.changed_depth(raw, line):
        state.close()
        state.command, state.block = None, {}
    if state.scope.read(raw, line, number, state.warnings):
        state.close()
        state.command, state.block = None, {}
        return True
    stripped = line.strip()
    if KERNBENCH_NOISE.match(stripped):
        state.preamble = stripped.startswith("Performing")  # "make -j 8" lines follow
        return True
    if state.preamble and re.fullmatch(r"make -j ?\d*", stripped):
        return True  # kernbench lists the -j values it will use: not the timed command
    state.preamble = False
    verbose = verbose_text(stripped)
    if verbose.lower().startswith("command being timed:"):
        state.close()  # GNU time -v names the command above its fields
        state.command = verbose.split(":", 1)[1].strip().strip('"')
        return True
    if len(_SIDE_BY_SIDE.findall(stripped)) > 1:
        raise ParseError(
            "two kernbench reports side by side on one line: side-by-side kernbench columns "
            "are not supported; give one column per file",
            number,
        )
    if block := KERNBENCH_BLOCK.match(stripped):
        state.close()
        state.block = {"load": block["load"] or block["load2"]}
        if jobs := block["jobs"] or block["jobs2"]:
            state.block["jobs"] = int(jobs)
        return True
    found = command_line(stripped)
    if found is not None:
        command, explicit = found
        if explicit or state.command is None:
            state.close()
            state.command = command
        return True
    return False


def _line(state: _State, raw: str, line: str, number: int) -> bool:
    """Read one non-blank line; False when nothing in it was recognised (prose, output)."""
    if exited := EXIT.match(verbose_text(line)):
        if line.lstrip().startswith("Command exited"):
            state.close()  # GNU time prints it before the timing it belongs to
        _exit_status(state, int(exited["status"]), number)
        return True
    if _context(state, raw, line, number):
        return True
    kernbench, found = read_values(line, number, bool(state.block), state.warnings)
    if found and state.block and not kernbench:
        state.close()  # another tool's timing after a kernbench block: not of that block
        state.block = {}
    for name, value, stddev in found:
        if name == "ignored":  # a field the line names but holds no time for (warned)
            continue
        state.set(name, value, number, stddev)
    return bool(found)


def _unwrap(
    lines: list[tuple[int, str]], raw_lines: list[tuple[int, str]]
) -> list[tuple[int, str, str]]:
    """(number, line, raw) with GNU time -v fields a mail client wrapped joined back: a line
    that is only the start of a field's label (``Elapsed (wall clock) time``) takes the next
    line (``(h:mm:ss or m:ss): 0:00.32``) and keeps its own number."""
    out: list[tuple[int, str, str]] = []
    skip = False
    for index, ((number, line), (_, raw)) in enumerate(zip(lines, raw_lines, strict=True)):
        if skip:
            skip = False
            continue
        following = lines[index + 1][1].strip() if index + 1 < len(lines) else ""
        if following and verbose_prefix(line):
            out.append((number, f"{line.rstrip()} {following}", raw))
            skip = True
            continue
        out.append((number, line, raw))
    return out


def _read(text: str, options: Mapping[str, object]) -> _State:
    state = _State(options)
    lines = _unwrap(numbered_lines(text), numbered_lines(text, unquote=False))
    after_blank = False
    for number, line, raw in lines:
        if not line.strip():
            after_blank = True
            continue
        read = _line(state, raw, line, number)
        if not read and names_verbose_field(line):
            raise ParseError(
                f"a GNU time -v field that cannot be read: {line.strip()[:80]!r}; expected "
                "one 'Label: value' field per line (fields reflowed onto one line, or text "
                "after the value?)",
                number,
            )
        if not read and state.scope.prose_break(line, after_blank):
            state.close()
            state.command, state.block = None, {}
        after_blank = False
    state.close()
    return state


def _record(timing: _Timing, warnings: list[str]) -> Record:
    first = min(line for _, line in timing.values.values())
    if "elapsed" not in timing.values:
        raise ParseError("a timing without an elapsed (real/wall clock) time", first)
    measurements = []
    unfilled: list[str] = []
    for name, (metric, unit, better) in METRICS.items():
        if name not in timing.values:
            continue
        value, line = timing.values[name]
        if name in UNFILLED_WHEN_ZERO and value == 0:
            if name == "max_rss":
                warnings.append(
                    f"line {line}: maximum resident set size is 0 (kernels before 2.6.32 do "
                    "not report it); max_rss_kb omitted"
                )
            else:
                unfilled.append(metric)
            continue
        resolution = SECONDS_RESOLUTION if unit == "s" else None
        measurements.append(Measurement(metric, value, unit, better, resolution))  # type: ignore[arg-type]
        if name in timing.stddev:
            stddev = timing.stddev[name]
            measurements.append(Measurement(f"{metric}_stddev", stddev, unit, "none"))
    if unfilled:
        warnings.append(
            f"line {first}: {', '.join(unfilled)} are 0 (Linux never fills the rusage "
            "averages); omitted"
        )
    return Record(keys=timing.keys, line=first, measurements=tuple(measurements))


_SIDE_BY_SIDE = re.compile(r"\bAverage \w+ (?:[Ll]oad )?-j\b")
# time prints seconds to the hundredth (GNU time's 0:12.34, bash's 0m12.340s is the same
# clock tick): the detector never calls a difference within one tick a change.
SECONDS_RESOLUTION = 0.01
# What a timed benchmark printed right above its timing (dbench, tbench): not a heading.
_TIMED_OUTPUT = re.compile(r"^Throughput\s|^\d+ clients started$|^[.+*]{20,}")


def _own_line(line: str) -> bool:
    """The parser's own context lines (kernbench block titles, timed commands)."""
    stripped = line.strip()
    return bool(
        _TIMED_OUTPUT.search(stripped)
        or KERNBENCH_NOISE.match(stripped)
        or KERNBENCH_BLOCK.match(stripped)
        or command_line(stripped) is not None
        or stripped.lower().startswith("command being timed:")
    )


@register("time")
def parse(text: str, options: Mapping[str, object]) -> ParseResult:
    state = _read(text, options)
    if not state.done:
        first = next((n for n, line in numbered_lines(text) if line.strip()), None)
        raise ParseError(
            "no elapsed time found: expected GNU time (default or -v), bash/tcsh time, "
            "kernbench or lkp kbuild output, and no line from this one on is a timing",
            first,
        )
    records = [_record(timing, state.warnings) for timing in state.done]
    if "jobs" in options:
        records = [r for r in records if r.keys.get("jobs") == options["jobs"]]
        if not records:
            raise ParseError(f"no kernbench block with -j {options['jobs']}")
    records = key_by_headings(records, numbered_lines(text), state.warnings, skip=_own_line)
    group_records(records)  # refuses records that cannot be told apart, naming their lines
    warn_unlabelled_repeats(records, state.scope, state.warnings)
    return ParseResult(
        records=tuple(records), warnings=tuple(state.warnings), metadata=state.metadata
    )
