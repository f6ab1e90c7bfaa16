"""Play a held-out check on the corpus: every expected value found, every rejection named.

``expected/<file>.toml`` lists, per parser a user would pick for ``files/<file>.txt``, the
values read by hand from the mail: the record keys that identify each (exact match, as the
parser returns them), an optional trial, and the metric (or vmstat column and row, or profile
function) with its number. A value counts as read right only when exactly one record group has
those keys, the trial is unambiguous (a merge of two measured things into trials fails here)
and the number is equal after the documented unit conversion. ``reject_line`` instead expects
a ParseError naming that line.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from ingest.parsers import get_parser
from ingest.parsers.base import (
    ParseError,
    Record,
    group_records,
    normalize_key_value,
    record_samples,
)

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Outcome:
    file: str
    parser: str
    what: str
    ok: bool
    detail: str


def expected_files() -> list[Path]:
    return sorted((HERE / "expected").glob("*.toml"))


def _identity(keys: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((k, normalize_key_value(v)) for k, v in keys.items()))


def _find(records: tuple[Record, ...], want: dict[str, Any]) -> tuple[Record | None, str]:
    """The one record the expected keys and trial name, or why there is none."""
    wanted = _identity(want["keys"])
    groups = [g for g in group_records(records) if _identity(dict(g.keys)) == wanted]
    if len(groups) != 1:
        found = sorted({g.describe() for g in group_records(records)})
        return None, f"{len(groups)} groups with keys {want['keys']}; groups: {found[:8]}"
    trials = dict(groups[0].trials)
    if "trial" in want:
        record = trials.get(int(want["trial"]))
        return record, "" if record else f"no trial {want['trial']} (trials {sorted(trials)})"
    if len(trials) != 1:
        return None, f"{len(trials)} trials under keys {want['keys']}: merged runs?"
    return next(iter(trials.values())), ""


def _value(record: Record, want: dict[str, Any]) -> float | None:
    if "metric" in want:
        found = [m.value for m in record.measurements if m.metric == want["metric"]]
    elif "column" in want:
        found = [
            s.value
            for s in record_samples(record)
            if s.column == want["column"] and s.index == want["index"]
        ]
    else:
        found = [p.ticks for p in record.profile if p.function == want["function"]]
    return found[0] if len(found) == 1 else None


def _check_run(name: str, run: dict[str, Any]) -> list[Outcome]:
    parser = str(run["parser"])
    text = (HERE / "files" / f"{name}.txt").read_text()
    options = dict(run.get("options", {}))
    try:
        result = get_parser(parser)(text, options)
    except ParseError as err:
        if "reject_line" in run:
            ok = err.line == run["reject_line"]
            return [Outcome(name, parser, "rejection", ok, str(err))]
        values = run.get("value", [])
        return [Outcome(name, parser, str(v), False, f"rejected: {err}") for v in values]
    if "reject_line" in run:
        return [Outcome(name, parser, "rejection", False, "read without a ParseError")]
    out = []
    for want in run["value"]:
        record, why = _find(result.records, want)
        got = _value(record, want) if record else None
        ok = got is not None and got == float(want["value"])
        detail = why or f"got {got!r}, expected {want['value']!r}"
        out.append(Outcome(name, parser, str(want), ok, "" if ok else detail))
    return out


@cache
def outcomes() -> tuple[Outcome, ...]:
    found: list[Outcome] = []
    for path in expected_files():
        spec = tomllib.loads(path.read_text())
        for run in spec["run"]:
            found.extend(_check_run(path.stem, run))
    return tuple(found)


def summary() -> str:
    values = [o for o in outcomes() if o.what != "rejection"]
    rejections = [o for o in outcomes() if o.what == "rejection"]
    return (
        f"values read right: {sum(o.ok for o in values)} / {len(values)}; "
        f"rejections with the expected line: {sum(o.ok for o in rejections)} / {len(rejections)}; "
        f"files: {len(expected_files())}"
    )
