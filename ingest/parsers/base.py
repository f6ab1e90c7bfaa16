"""What every parser returns, and the errors it raises.

Parsers are pure functions ``parse(text: str, options: Mapping[str, object]) -> ParseResult``:
no Django, no I/O. They are registered by name with :func:`register` and looked up with
:func:`get_parser`.

A file often holds many measured things: a dbench log a run per client count and kernel, an
lmbench summary a row per host and kernel, a mail two readprofile listings. A parser reports
each as a :class:`Record` carrying the keys the file states (``label`` for the kernel or build
as printed, ``host``, ``clients``, ``file_size_kb``, ...) and its own values. It never averages
or sums repeats: records with the same keys are trials of one run, numbered by
:func:`group_records`, the one place that rule lives. The manifest then maps record groups to
runs (ingest/plan.py).
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Better = Literal["higher", "lower", "none"]
KeyValue = str | int | float  # a record key's value, as the file states it


class ParseError(ValueError):
    """The file cannot be read as this format; ``line`` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None):
        self.message = message
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


@dataclass(frozen=True, slots=True)
class Summary:
    """The spread a report states for a value it gives as a mean, when its trials are not in
    the file: the kernel test robot's ``123456 ± 3%`` or an mmtests table's Stddev row.

    Kept as printed, never converted: ``sd`` in the value's unit, ``sd_pct`` as a percent of
    the value; ``runs`` only when the file states how many runs the mean is over. A value
    with a summary is a mean of several runs, not one trial, and is tested as such.
    """

    sd: float | None = None
    sd_pct: float | None = None
    runs: int | None = None

    def __post_init__(self) -> None:
        if self.sd is None and self.sd_pct is None and self.runs is None:
            raise ValueError("a summary states at least a spread or a number of runs")
        for name in ("sd", "sd_pct"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"a summary's {name} is a finite number >= 0, not {value!r}")
        if self.runs is not None and self.runs < 1:
            raise ValueError(f"a summary's runs is at least 1, not {self.runs}")


@dataclass(frozen=True, slots=True)
class Measurement:
    """One scalar result, e.g. throughput = 13183 msg/s (higher is better)."""

    metric: str
    value: float
    unit: str
    better: Better
    # The smallest step the tool can print, in ``unit`` (time's 0.01 s, a profile's 1 tick):
    # no difference within it is a regression. None: unknown (read from the values).
    resolution: float | None = None
    # The mean's spread as a report states it (LKP, mmtests); None: the value is one trial.
    summary: Summary | None = None


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
class Record:
    """One measured thing in a file: the keys that tell it apart, and its values.

    ``keys`` are what the file states (``{"label": "2.5.25-rmap", "clients": 4}``), never a
    guess; a file with one measured thing has one record with no keys. ``trial`` is the
    iteration or run number when the file prints one; otherwise repeats are numbered by order
    of appearance (:func:`group_records`). ``line`` is the record's first line (1-based).
    """

    keys: Mapping[str, KeyValue] = field(default_factory=dict)
    trial: int | None = None
    line: int | None = None
    measurements: tuple[Measurement, ...] = ()
    profile: tuple[ProfileEntry, ...] = ()
    samples: tuple[Sample, ...] = ()
    columns: tuple[SeriesColumn, ...] = ()
    histograms: tuple[Histogram, ...] = ()
    curves: tuple[Curve, ...] = ()

    def is_empty(self) -> bool:
        return not (
            self.measurements
            or self.profile
            or self.samples
            or self.columns
            or self.histograms
            or self.curves
        )

    def values(self) -> list[float]:
        """Every number this record holds: measurements, ticks, samples, bins, points."""
        out = [m.value for m in self.measurements]
        out.extend(p.ticks for p in self.profile)
        out.extend(s.value for s in self.samples)
        for c in self.columns:
            out.extend(c.values)
        for h in self.histograms:
            out.extend(count for _, count in h.bins)
        for curve in self.curves:
            out.extend(y for _, y in curve.points)
        return out

    def describe(self) -> str:
        """The keys as a person reads them: ``label=2.6.0 clients=4``, or ``(no keys)``."""
        shown = " ".join(f"{k}={v}" for k, v in self.keys.items())
        return shown or "(no keys)"


_DATA_FIELDS = ("measurements", "profile", "samples", "columns", "histograms", "curves")


@dataclass(frozen=True, slots=True)
class ParseResult:
    """What a parser read from one file.

    ``records`` is the whole truth. A parser that finds one measured thing may pass its values
    as the top-level fields instead (``ParseResult(measurements=...)``); they then become the
    one record. With exactly one record the top-level fields mirror it, so simple callers can
    read ``result.measurements``; with several they are empty and callers read ``records``.
    """

    measurements: tuple[Measurement, ...] = ()
    profile: tuple[ProfileEntry, ...] = ()
    samples: tuple[Sample, ...] = ()
    columns: tuple[SeriesColumn, ...] = ()
    histograms: tuple[Histogram, ...] = ()
    curves: tuple[Curve, ...] = ()
    warnings: tuple[str, ...] = ()
    # Facts the file states about itself as a whole (tool version, command line, ...).
    metadata: Mapping[str, str | int | float] = field(default_factory=dict)
    records: tuple[Record, ...] = ()

    def __post_init__(self) -> None:
        top = {name: getattr(self, name) for name in _DATA_FIELDS}
        if self.records:
            if any(top.values()):
                raise ValueError("give a parse result's values as records or at the top, not both")
            if len(self.records) == 1:
                for name in _DATA_FIELDS:
                    object.__setattr__(self, name, tuple(getattr(self.records[0], name)))
        elif any(top.values()):
            fields: dict[str, Any] = {k: tuple(v) for k, v in top.items()}
            object.__setattr__(self, "records", (Record(**fields),))

    def values(self) -> list[float]:
        """Every number the file held, over all records."""
        return [value for record in self.records for value in record.values()]

    def all_samples(self) -> list[Sample]:
        """Every time-series value as a Sample, whether the parser gave samples or columns."""
        if len(self.records) > 1:
            # Samples of several records cannot be told apart here: read each record's.
            raise ValueError(f"{len(self.records)} records: use record_samples(record)")
        return record_samples(self.records[0]) if self.records else []


def record_samples(record: Record) -> list[Sample]:
    """Every time-series value of one record as a Sample (columns unrolled)."""
    out = list(record.samples)
    for c in record.columns:
        stamps = c.timestamps or (None,) * len(c.values)
        out.extend(
            Sample(c.source, c.column, i, v, c.first_is_since_boot and i == 0, stamp)
            for i, (v, stamp) in enumerate(zip(c.values, stamps, strict=True))
        )
    return out


@dataclass(frozen=True, slots=True)
class RecordGroup:
    """The records of one measured configuration: equal keys, one record per trial."""

    keys: Mapping[str, KeyValue]
    trials: tuple[tuple[int, Record], ...]  # (trial number, record), in trial order
    # The keys as they are compared (normalize_key_value), in the keys' order: what a
    # manifest's selector and labels are matched against.
    texts: Mapping[str, str]

    @property
    def line(self) -> int | None:
        return self.trials[0][1].line

    def describe(self) -> str:
        return self.trials[0][1].describe()


def _key_identity(keys: Mapping[str, KeyValue]) -> tuple[tuple[str, str], ...]:
    """Keys compared as a person reads them: 4 and 4.0 are the same client count."""
    return tuple(sorted((k, normalize_key_value(v)) for k, v in keys.items()))


def normalize_key_value(value: object) -> str:
    """One spelling per key value, for comparing and for manifest selectors."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def group_records(records: tuple[Record, ...] | list[Record]) -> list[RecordGroup]:
    """Group records with equal keys; repeats are trials, never averaged.

    Trials keep the number the file printed (``iteration 2``); records with no number are
    numbered 1, 2, ... in the order they appear. Two records of one group with the same printed
    number, or a group mixing printed and unprinted numbers, cannot be told apart and are an
    error naming their lines.
    """
    order: list[tuple[tuple[str, str], ...]] = []
    members: dict[tuple[tuple[str, str], ...], list[Record]] = {}
    for record in records:
        identity = _key_identity(record.keys)
        if identity not in members:
            order.append(identity)
            members[identity] = []
        members[identity].append(record)
    groups = []
    for identity in order:
        group = members[identity]
        numbered = [r for r in group if r.trial is not None]
        if numbered and len(numbered) != len(group):
            lines = ", ".join(str(r.line) for r in group)
            raise ParseError(
                f"records {group[0].describe()} (lines {lines}) mix numbered and unnumbered "
                "trials; they cannot be told apart",
                group[0].line,
            )
        if numbered:
            trials = sorted(((r.trial or 0, r) for r in group), key=lambda pair: pair[0])
            seen: dict[int, Record] = {}
            for number, record in trials:
                if number in seen:
                    raise ParseError(
                        f"two records {record.describe()} for trial {number} "
                        f"(lines {seen[number].line} and {record.line})",
                        record.line,
                    )
                seen[number] = record
            pairs = tuple(trials)
        else:
            pairs = tuple(enumerate(group, start=1))
        keys = dict(group[0].keys)
        texts = {k: normalize_key_value(v) for k, v in keys.items()}
        groups.append(RecordGroup(keys=keys, trials=pairs, texts=texts))
    return groups


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
    """Register a parse function under one or more names. What is registered (and returned)
    is the function behind :func:`finite_only`, so no parser can hand on a number that is
    not finite, however it is called."""

    def decorate(func: Parser) -> Parser:
        checked = finite_only(func)
        for name in names:
            if name in _REGISTRY and _REGISTRY[name] is not checked:
                raise RuntimeError(f"parser name {name!r} registered twice")
            _REGISTRY[name] = checked
        return checked

    return decorate


def finite_only(parse: Parser) -> Parser:
    """``parse``, refusing the file when it read a number that is not finite.

    A token too long for a double (``1e999``, a 400-digit count) reads as infinity, and some
    number grammars take ``nan`` or ``inf``: stored, such a value would be wrong (no tool
    measured infinity), break every mean and chart of its series, and cannot be written as
    JSON. Most parsers check each number where they read it, naming its line; this is the
    one rule behind all of them, so a parser that forgets cannot store one.
    """
    if getattr(parse, "finite_only", False):
        return parse

    @functools.wraps(parse)
    def checked(text: str, options: Mapping[str, object]) -> ParseResult:
        try:
            result = parse(text, options)
        except (OverflowError, decimal.Overflow) as error:  # int(inf), float(10**400)
            raise ParseError(f"a number is too large to store as a double ({error})") from None
        require_finite(result)
        return result

    checked.finite_only = True  # type: ignore[attr-defined]
    return checked


def require_finite(result: ParseResult) -> None:
    """Raise ParseError naming the first value of ``result`` that is not a finite number."""
    for record in result.records:
        for values, name in _numbers(record):
            if math.isfinite(sum(values)):  # fast: a NaN or an infinity makes the sum one
                continue
            at = next((i for i, v in enumerate(values) if not math.isfinite(v)), None)
            if at is None:
                continue  # every value is finite; only their sum overflowed
            shown = f" ({record.describe()})" if record.keys else ""
            raise ParseError(
                f"{name(at)} reads as {values[at]!r}{shown}: not a finite number "
                "(too large for a double, or not a number); nothing was stored",
                record.line,
            )


Namer = Callable[[int], str]  # the name of a group's value at this position, for the error


def _numbers(record: Record) -> Iterator[tuple[Sequence[float], Namer]]:
    """Every number a record would store, in groups, each with how to name one of its values
    (called only for the error: no string per value on the way). What the file printed comes
    first, then the measurements (a mean of a column is not what to name when a row is wrong).
    """
    kept = [(p, v) for p in record.profile for v in (p.ticks, p.load, p.share_pct) if v is not None]
    yield [v for _, v in kept], lambda at: f"profile entry {kept[at][0].function!r}"
    samples = record.samples
    yield [s.value for s in samples], lambda at: _sample_name(samples[at])
    for column in record.columns:
        yield column.values, functools.partial(_column_value_name, column)
    for h in record.histograms:
        yield (
            [v for pair in h.bins for v in pair],
            functools.partial(_named, f"histogram {h.name!r}"),
        )
    for c in record.curves:
        yield [v for pair in c.points for v in pair], functools.partial(_named, f"curve {c.name!r}")
    measurements = record.measurements
    yield [m.value for m in measurements], lambda at: f"metric {measurements[at].metric!r}"
    with_quantum = [(m.metric, m.resolution) for m in measurements if m.resolution is not None]
    yield [r for _, r in with_quantum], lambda at: f"metric {with_quantum[at][0]!r}'s resolution"


def _sample_name(sample: Sample) -> str:
    return f"{sample.source} column {sample.column!r}, row {sample.index + 1}"


def _column_value_name(column: SeriesColumn, at: int) -> str:
    return f"{column.source} column {column.column!r}, value {at + 1} of {len(column.values)}"


def _named(name: str, at: int) -> str:
    return name


Recogniser = Callable[[str], bool]

_RECOGNISERS: dict[str, Recogniser] = {}


def recognises(name: str) -> Callable[[Recogniser], Recogniser]:
    """Register how to tell a file of parser ``name`` from its text alone, for the upload of
    one file without a manifest (a robot's report mail, an mmtests table). Only formats whose
    text says what it is register one: a bare column of numbers is no format's."""

    def decorate(func: Recogniser) -> Recogniser:
        if name in _RECOGNISERS:
            raise RuntimeError(f"recogniser for {name!r} registered twice")
        _RECOGNISERS[name] = func
        return func

    return decorate


def recognisers() -> dict[str, Recogniser]:
    """Each self-describing format's recogniser, by parser name."""
    return dict(_RECOGNISERS)


def get_parser(name: str) -> Parser:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownParserError(name) from None


def parser_names() -> list[str]:
    return sorted(_REGISTRY)
