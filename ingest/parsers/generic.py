"""The documented generic formats: ``csv`` and ``json`` (docs/parsers/csv.md, json.md).

They exist for results no dedicated parser reads (hand-made tables, in-house tools), so they
are strict: every value is a plain number, every metric says its unit and direction, and a
metric given twice is an error rather than a silent overwrite.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from ingest.parsers.base import (
    Better,
    Measurement,
    ParseError,
    ParseResult,
    ProfileEntry,
    Sample,
    register,
)
from ingest.parsers.numbers import parse_number
from ingest.parsers.text import numbered_lines

MEASUREMENT_HEADER = ("metric", "value", "unit", "better")
SERIES_HEADER = ("series", "column", "index", "value")
BETTER = ("higher", "lower", "none")
_METRIC_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def _wanted_trial(options: Mapping[str, object]) -> int | None:
    trial = options.get("trial")
    if trial is None:
        return None
    if isinstance(trial, bool) or not isinstance(trial, int) or trial < 1:
        raise ParseError(f"option trial must be an integer >= 1, got {trial!r}")
    return trial


def _is_better(text: str) -> TypeGuard[Better]:
    return text in BETTER


def check_metric(name: str, unit: str, better: str, where: str, line: int | None) -> Better:
    """Shared by csv and json: the naming rules of docs/parsers/csv.md; returns ``better``."""
    if not _METRIC_NAME.match(name):
        raise ParseError(f"{where}: metric name {name!r} is not snake_case ([a-z][a-z0-9_]*)", line)
    if not unit:
        raise ParseError(f"{where}: metric {name!r} has no unit", line)
    if not _is_better(better):
        raise ParseError(
            f"{where}: better must be one of higher, lower, none; got {better!r}", line
        )
    return better


def select_trial(
    rows: list[tuple[Measurement, int | None, int | None, str]],
    options: Mapping[str, object],
) -> tuple[Measurement, ...]:
    """Keep one trial's rows; refuse duplicates and ambiguous multi-trial files.

    A Measurement carries no trial number, so a file holding several trials must be listed
    once per trial in the manifest with ``options = {trial = N}``.
    """
    wanted = _wanted_trial(options)
    trials = sorted({trial for _, trial, _, _ in rows if trial is not None})
    if wanted is not None:
        if not trials:
            raise ParseError(f"option trial = {wanted} given but the file has no trial column")
        rows = [row for row in rows if row[1] == wanted]
        if not rows:
            raise ParseError(f"no rows for trial {wanted}; the file has trials {trials}")
    elif len(trials) > 1:
        raise ParseError(
            f"the file holds trials {trials}; list it once per trial with options trial = N"
        )
    seen: dict[str, str] = {}
    for measurement, _, line, where in rows:
        name = measurement.metric
        if name in seen:
            raise ParseError(f"{where}: metric {name!r} given twice (first at {seen[name]})", line)
        seen[name] = where
    return tuple(row[0] for row in rows)


# --- CSV -------------------------------------------------------------------------------


def _csv_rows(text: str) -> list[tuple[int, list[str]]]:
    """Data rows with their line numbers; blank lines and ``#`` comments dropped."""
    rows = []
    for number, line in numbered_lines(text, unquote=False):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = next(csv.reader([line], skipinitialspace=True))
        rows.append((number, [cell.strip() for cell in cells]))
    return rows


def _csv_measurements(
    rows: list[tuple[int, list[str]]], has_trial: bool, options: Mapping[str, object]
) -> ParseResult:
    width = 5 if has_trial else 4
    parsed: list[tuple[Measurement, int | None, int | None, str]] = []
    for number, cells in rows:
        if len(cells) != width:
            raise ParseError(
                f"row has {len(cells)} fields, the header has {width} "
                "(a value with a comma must be a plain number: no thousands separators)",
                number,
            )
        metric, value, unit, better = cells[:4]
        direction = check_metric(metric, unit, better, f"metric {metric!r}", number)
        number_value = parse_number(value, line=number, what=f"value of {metric}")
        trial: int | None = None
        if has_trial:
            trial = int(parse_number(cells[4], line=number, what="trial"))
            if trial < 1 or str(trial) != cells[4]:
                raise ParseError(f"trial must be an integer >= 1, got {cells[4]!r}", number)
        measurement = Measurement(metric, number_value, unit, direction)
        parsed.append((measurement, trial, number, f"line {number}"))
    return ParseResult(measurements=select_trial(parsed, options))


def _csv_series(rows: list[tuple[int, list[str]]]) -> ParseResult:
    samples = []
    seen: dict[tuple[str, str, int], int] = {}
    for number, cells in rows:
        if len(cells) != 4:
            raise ParseError(f"row has {len(cells)} fields, the header has 4", number)
        series, column, index_text, value = cells
        if not series or not column:
            raise ParseError("series and column must not be empty", number)
        if not index_text.isdigit():
            raise ParseError(f"index must be an integer >= 0, got {index_text!r}", number)
        key = (series, column, int(index_text))
        if key in seen:
            raise ParseError(
                f"{series}/{column} index {key[2]} given twice (first at line {seen[key]})",
                number,
            )
        seen[key] = number
        number_value = parse_number(value, line=number, what=f"value of {series}/{column}")
        samples.append(Sample(series, column, key[2], number_value))
    return ParseResult(samples=tuple(samples))


@register("csv")
def parse_csv(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read ``metric,value,unit,better[,trial]`` or ``series,column,index,value``."""
    rows = _csv_rows(text)
    if not rows:
        raise ParseError("empty CSV: expected a header metric,value,unit,better[,trial]")
    header_line, header = rows[0]
    header = [cell.lower() for cell in header]
    if tuple(header) == SERIES_HEADER:
        result = _csv_series(rows[1:])
        if not result.samples:
            raise ParseError("no data rows after the header", header_line)
        return result
    if tuple(header[:4]) != MEASUREMENT_HEADER or header[4:] not in ([], ["trial"]):
        raise ParseError(
            "header must be metric,value,unit,better[,trial] or series,column,index,value; "
            f"got {','.join(header)}",
            header_line,
        )
    result = _csv_measurements(rows[1:], len(header) == 5, options)
    if not result.measurements:
        raise ParseError("no data rows after the header", header_line)
    return result


# --- JSON ------------------------------------------------------------------------------


class _NonFinite:
    """Stand-in for NaN/Infinity so the error can name the JSON path."""

    def __init__(self, token: str):
        self.token = token


def _number(value: Any, path: str) -> float:
    if isinstance(value, _NonFinite):
        raise ParseError(f"{path} is {value.token}; values must be finite numbers")
    if isinstance(value, bool):
        raise ParseError(f"{path} is a boolean; expected a number")
    if isinstance(value, str):
        raise ParseError(f"{path} is a string ({value!r}); expected a JSON number")
    if not isinstance(value, int | float):
        raise ParseError(f"{path} must be a number, got {type(value).__name__}")
    if not math.isfinite(value):
        raise ParseError(f"{path} is not a finite number")
    return float(value)


def _text(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise ParseError(f"{path} must be a string")
    return value


def _object(item: Any, path: str, required: set[str], optional: set[str]) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ParseError(f"{path} must be an object")
    missing = sorted(required - item.keys())
    if missing:
        raise ParseError(f"{path} lacks {', '.join(missing)}")
    unknown = sorted(item.keys() - required - optional)
    if unknown:
        raise ParseError(f"{path} has unknown key(s) {', '.join(unknown)}")
    return item


def _list(document: dict[str, Any], key: str) -> list[Any]:
    items = document.get(key, [])
    if not isinstance(items, list):
        raise ParseError(f"{key} must be a list")
    return items


def _json_measurements(items: list[Any], options: Mapping[str, object]) -> tuple[Measurement, ...]:
    parsed: list[tuple[Measurement, int | None, int | None, str]] = []
    for i, raw in enumerate(items):
        path = f"measurements[{i}]"
        item = _object(raw, path, {"metric", "value", "unit", "better"}, {"trial"})
        metric = _text(item["metric"], f"{path}.metric")
        unit = _text(item["unit"], f"{path}.unit")
        better = _text(item["better"], f"{path}.better")
        direction = check_metric(metric, unit, better, path, None)
        value = _number(item["value"], f"{path}.value")
        trial = item.get("trial")
        if trial is not None and (
            isinstance(trial, bool) or not isinstance(trial, int) or trial < 1
        ):
            raise ParseError(f"{path}.trial must be an integer >= 1")
        parsed.append((Measurement(metric, value, unit, direction), trial, None, path))
    return select_trial(parsed, options)


def _json_samples(items: list[Any]) -> tuple[Sample, ...]:
    samples = []
    seen: set[tuple[str, str, int]] = set()
    for i, raw in enumerate(items):
        path = f"samples[{i}]"
        item = _object(
            raw, path, {"series", "column", "index", "value"}, {"since_boot", "timestamp"}
        )
        index = item["index"]
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise ParseError(f"{path}.index must be an integer >= 0")
        series = _text(item["series"], f"{path}.series")
        column = _text(item["column"], f"{path}.column")
        if (series, column, index) in seen:
            raise ParseError(f"{path}: {series}/{column} index {index} given twice")
        seen.add((series, column, index))
        since_boot = item.get("since_boot", False)
        if not isinstance(since_boot, bool):
            raise ParseError(f"{path}.since_boot must be true or false")
        timestamp = item.get("timestamp")
        if timestamp is not None:
            timestamp = _text(timestamp, f"{path}.timestamp")
        value = _number(item["value"], f"{path}.value")
        samples.append(Sample(series, column, index, value, since_boot, timestamp))
    return tuple(samples)


def _json_profile(items: list[Any]) -> tuple[ProfileEntry, ...]:
    entries = []
    for i, raw in enumerate(items):
        path = f"profile[{i}]"
        item = _object(raw, path, {"function", "ticks"}, {"load", "share_pct"})
        optional = {
            key: _number(item[key], f"{path}.{key}") for key in ("load", "share_pct") if key in item
        }
        entries.append(
            ProfileEntry(
                _text(item["function"], f"{path}.function"),
                _number(item["ticks"], f"{path}.ticks"),
                **optional,
            )
        )
    return tuple(entries)


def _json_metadata(raw: Any) -> dict[str, str | int | float]:
    if not isinstance(raw, dict):
        raise ParseError("metadata must be an object")
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ParseError(f"metadata.{key} must be a string or a number")
        if isinstance(value, float):
            _number(value, f"metadata.{key}")
    return dict(raw)


@register("json")
def parse_json(text: str, options: Mapping[str, object]) -> ParseResult:
    """Read the JSON twin of the csv format; reject what Python's json would let through."""
    try:
        document = json.loads(text, parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise ParseError(f"invalid JSON: {exc.msg} (column {exc.colno})", exc.lineno) from None
    if not isinstance(document, dict):
        raise ParseError("the top level must be an object with measurements/samples/profile")
    _object(document, "top level", set(), {"measurements", "samples", "profile", "metadata"})
    result = ParseResult(
        measurements=_json_measurements(_list(document, "measurements"), options),
        samples=_json_samples(_list(document, "samples")),
        profile=_json_profile(_list(document, "profile")),
        metadata=_json_metadata(document.get("metadata", {})),
    )
    if not (result.measurements or result.samples or result.profile):
        raise ParseError("no measurements, samples or profile entries in the file")
    return result
