"""What every parser returns, and the errors it raises.

Parsers are pure functions ``parse(text: str, options: Mapping[str, object]) -> ParseResult``:
no Django, no I/O. They are registered by name with :func:`register` and looked up with
:func:`get_parser`. The ingest pipeline attaches trial numbers and run keys; a parser only
reports what the file says.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Better = Literal["higher", "lower", "none"]


class ParseError(ValueError):
    """The file cannot be read as this format; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None):
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One scalar result, e.g. throughput = 13183 msg/s (higher is better)."""

    metric: str
    value: float
    unit: str
    better: Better


@dataclass(frozen=True, slots=True)
class ProfileEntry:
    """One kernel function in a profile (readprofile, kerneltop, oprofile)."""

    function: str
    ticks: float
    load: float | None = None  # readprofile's normalized load; None when the tool has none
    share_pct: float | None = None  # % of the profile's total ticks


@dataclass(frozen=True, slots=True)
class Sample:
    """One value of a time series, e.g. vmstat column ``cs`` at row ``index``."""

    source: str  # "vmstat", "schedstat", ...
    column: str
    index: int  # 0-based row number in the file's data rows
    value: float
    since_boot: bool = False  # vmstat's first row is an average since boot
    timestamp: str | None = None  # as printed (vmstat -t), when present


@dataclass(frozen=True, slots=True)
class SeriesColumn:
    """A whole column of a time series at once (vmstat's ``cs`` over the run).

    The fast path for long logs: a million-cell vmstat file is a few dozen of these instead of
    a million Samples. Row i of the file is ``values[i]``.
    """

    source: str
    column: str
    values: tuple[float, ...]
    first_is_since_boot: bool = False
    timestamps: tuple[str, ...] = ()  # one per row when the tool printed them


@dataclass(frozen=True, slots=True)
class Histogram:
    """A distribution, e.g. run-queue length: (bin value, count) pairs."""

    name: str
    x_label: str
    bins: tuple[tuple[float, float], ...]


@dataclass(frozen=True, slots=True)
class Curve:
    """An x/y relation, e.g. goodness cycles against run-queue length."""

    name: str
    x_label: str
    y_label: str
    points: tuple[tuple[float, float], ...]


@dataclass(frozen=True, slots=True)
class ParseResult:
    measurements: tuple[Measurement, ...] = ()
    profile: tuple[ProfileEntry, ...] = ()
    samples: tuple[Sample, ...] = ()
    columns: tuple[SeriesColumn, ...] = ()
    histograms: tuple[Histogram, ...] = ()
    curves: tuple[Curve, ...] = ()
    warnings: tuple[str, ...] = ()
    # Facts the file states about the run (tool version, kernel from a header, clients, ...).
    metadata: Mapping[str, str | int | float] = field(default_factory=dict)

    def all_samples(self) -> list[Sample]:
        """Every time-series value as a Sample, whether the parser gave samples or columns."""
        out = list(self.samples)
        for c in self.columns:
            stamps = c.timestamps or (None,) * len(c.values)
            out.extend(
                Sample(c.source, c.column, i, v, c.first_is_since_boot and i == 0, stamp)
                for i, (v, stamp) in enumerate(zip(c.values, stamps, strict=True))
            )
        return out


Parser = Callable[[str, Mapping[str, object]], ParseResult]

_REGISTRY: dict[str, Parser] = {}


class UnknownParserError(KeyError):
    def __init__(self, name: str):
        self.name = name
        super().__init__(name)

    def __str__(self) -> str:
        known = ", ".join(sorted(_REGISTRY))
        return f"unknown parser {self.name!r}; known parsers: {known}"


def register(*names: str) -> Callable[[Parser], Parser]:
    """Register a parse function under one or more names."""

    def decorate(func: Parser) -> Parser:
        for name in names:
            if name in _REGISTRY and _REGISTRY[name] is not func:
                raise RuntimeError(f"parser name {name!r} registered twice")
            _REGISTRY[name] = func
        return func

    return decorate


def get_parser(name: str) -> Parser:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownParserError(name) from None


def parser_names() -> list[str]:
    return sorted(_REGISTRY)
