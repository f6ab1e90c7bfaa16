"""Parse and validate a bundle manifest (docs/bundle-format.md) into frozen dataclasses.

Validation is complete before anything is stored: every problem in the manifest is collected
and reported at once, so an uploader fixes them all in one pass instead of one per upload.
Checks that need the database (does hardware "C" exist? does the server know metric X?) are
left to the caller; this module only records the names.

Here: the manifest as a whole (its loading and top-level keys) and its named tables,
``[hardware.X]``, ``[metric.X]`` and ``[kernel."…"]``; the runs, ``[[runs_from]]`` blocks
and claims are read by their own modules of this package.

A ``[kernel."…"]`` table states what the bundle knows about a kernel named by git, which
orders it (docs/kernels.md), once per bundle whichever runs use it (a base commit may have
no run of the bundle); the writer stores it through perfdb/kernels/commits.py:

```toml
[kernel."6e553c6bcb"]
tree = "linux-next/master"
base = "ec81deb6b7"
subject = "fork: use __mt_dup() to duplicate maple tree in dup_mmap()"
```
"""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest.manifest import fields as mf
from ingest.manifest.evidence import BuildSpec, ClaimSpec, read_claims, reference
from ingest.manifest.runs import RunSpec, read_runs
from ingest.manifest.runs_from import RunsFromSpec, read_runs_from
from perfdb.kernels import KernelFacts, KernelVersionError, parse_kernel

SUPPORTED_FORMATS = (1, 2)

_TOP_KEYS = ("format", "hardware", "metric", "kernel", "run", "claim", "runs_from")
_HARDWARE_KEYS = ("cpus", "cpu", "mhz", "l2_kb", "memory_mb", "tiers", "notes", "reference")
_METRIC_KEYS = ("unit", "better", "description")
_KERNEL_KEYS = ("tree", "describe", "base", "committed_at", "subject")


class ManifestError(ValueError):
    """All problems found in a manifest; ``str()`` gives one per line."""

    def __init__(self, problems: list[str]):
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class HardwareSpec:
    name: str
    cpus: int | None
    cpu: str
    mhz: int | None
    l2_kb: int | None
    memory_mb: int | None
    tiers: tuple[str, ...]
    notes: str
    reference: BuildSpec | None = None  # the build re-run on it as a control


@dataclass(frozen=True)
class MetricSpec:
    name: str
    unit: str
    better: str  # "higher" | "lower" | "none"
    description: str


@dataclass(frozen=True)
class Manifest:
    format: int
    hardware: Mapping[str, HardwareSpec]
    metrics: Mapping[str, MetricSpec]
    runs: tuple[RunSpec, ...]
    runs_from: tuple[RunsFromSpec, ...] = ()
    claims: tuple[ClaimSpec, ...] = ()
    # What the bundle states about kernels named by git, by kernel ([kernel."…"] tables).
    kernels: Mapping[str, KernelFacts] = field(default_factory=dict)


def parse_manifest(text: str, *, filename: str, available_files: Collection[str]) -> Manifest:
    """Parse manifest ``text`` (TOML or JSON, chosen by ``filename``) and validate it.

    ``available_files`` are the bundle's file paths relative to the manifest's folder.
    Raises ManifestError listing every problem, each prefixed with ``filename``.
    """
    data = _load(text, filename)
    problems: list[str] = []
    manifest = _read_manifest(data, problems, {mf.normalize_path(p) for p in available_files})
    if problems or manifest is None:
        raise ManifestError([f"{filename}: {problem}" for problem in problems])
    return manifest


# --- loading ----------------------------------------------------------------------------------


def _load(text: str, filename: str) -> Mapping[str, Any]:
    if filename.endswith(".json"):
        try:
            data = json.loads(
                text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates
            )
        except ValueError as error:
            raise ManifestError([f"{filename}: not valid JSON: {error}"]) from error
    elif filename.endswith(".toml"):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ManifestError([f"{filename}: not valid TOML: {error}"]) from error
    else:
        raise ManifestError([f"{filename}: a manifest must be manifest.toml or manifest.json"])
    if not isinstance(data, dict):
        raise ManifestError([f"{filename}: expected a table at the top, got {mf.show(data)}"])
    return data


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number; give a finite value")


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """JSON silently keeps the last of two equal keys; TOML refuses them, and so do we."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"key {key!r} appears twice in one object")
        result[key] = value
    return result


# --- the manifest -----------------------------------------------------------------------------


def _read_manifest(
    data: Mapping[str, Any], problems: list[str], available: set[str]
) -> Manifest | None:
    top = mf.Fields(data, "", problems)
    fmt = data.get("format")
    top.check_keys(_TOP_KEYS if fmt == 2 else _TOP_KEYS[:-1], "top-level key")
    claims = read_claims(data, problems)
    if "format" not in data:
        top.problem(f"field 'format' is missing; supported: {_supported()}")
        return None
    fmt = data["format"]
    if isinstance(fmt, bool) or not isinstance(fmt, int) or fmt not in SUPPORTED_FORMATS:
        # Another format may give every other field a different meaning: stop here.
        top.problem(f"manifest format {mf.show(fmt)} is not supported; supported: {_supported()}")
        return None
    hardware = _read_hardware(top, problems)
    metrics = _read_metrics(top, problems)
    kernels = read_kernels(data, problems)
    runs_from: tuple[RunsFromSpec, ...] | None = ()
    if fmt >= 2:
        runs_from = read_runs_from(data, problems, available)
    runs = read_runs(data, problems, available, set(metrics or {}), fmt, bool(runs_from))
    if hardware is None or metrics is None or kernels is None:
        return None
    if runs is None or runs_from is None:
        return None
    return Manifest(
        format=fmt,
        hardware=hardware,
        metrics=metrics,
        runs=runs,
        runs_from=runs_from,
        claims=claims,
        kernels=kernels,
    )


def _supported() -> str:
    return ", ".join(str(version) for version in SUPPORTED_FORMATS)


def _read_hardware(top: mf.Fields, problems: list[str]) -> dict[str, HardwareSpec] | None:
    section = top.get("hardware", mf.table, {})
    if section is None:
        return None
    result = {}
    for name, raw in section.items():
        where = f"hardware {name!r}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table, got {mf.show(raw)}")
            continue
        fields = mf.Fields(raw, where, problems)
        fields.check_keys(_HARDWARE_KEYS)
        if not name.strip():
            fields.problem("the name must not be empty")
        spec = HardwareSpec(
            name=name.strip(),
            cpus=fields.get("cpus", mf.positive_int),
            cpu=fields.get("cpu", mf.string, ""),
            mhz=fields.get("mhz", mf.positive_int),
            l2_kb=fields.get("l2_kb", mf.positive_int),
            memory_mb=fields.get("memory_mb", mf.positive_int),
            tiers=fields.get("tiers", mf.name_list, ()),
            notes=fields.get("notes", mf.string, ""),
            reference=fields.get("reference", reference),
        )
        if not fields.count:
            result[spec.name] = spec
    return result


def _read_metrics(top: mf.Fields, problems: list[str]) -> dict[str, MetricSpec] | None:
    section = top.get("metric", mf.table, {})
    if section is None:
        return None
    result = {}
    for name, raw in section.items():
        where = f"metric {name!r}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table, got {mf.show(raw)}")
            continue
        fields = mf.Fields(raw, where, problems)
        fields.check_keys(_METRIC_KEYS)
        if not name.strip():
            fields.problem("the name must not be empty")
        spec = MetricSpec(
            name=name.strip(),
            unit=fields.get("unit", mf.string, required=True),
            better=fields.get("better", mf.better, required=True),
            description=fields.get("description", mf.string, ""),
        )
        if not fields.count:
            result[spec.name] = spec
    return result


# --- kernels ----------------------------------------------------------------------------------


def commit_time(value: object) -> dt.datetime:
    """A commit time with its UTC offset: a TOML offset date-time, or ISO 8601 text as
    ``git log --format=%cI`` prints it (``2023-11-28T21:55:00+08:00``)."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value.strip())
        except ValueError:
            raise mf.Invalid(
                f"expected a date and time with its UTC offset, e.g. "
                f'"2023-11-28T21:55:00+08:00", got {mf.show(value)}'
            ) from None
    if not isinstance(value, dt.datetime):
        raise mf.Invalid(f"expected a date and time with its UTC offset, got {mf.show(value)}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise mf.Invalid(
            f"{value.isoformat()} has no UTC offset; give it as git log --format=%cI prints it"
        )
    return value


def read_kernels(data: Mapping[str, Any], problems: list[str]) -> dict[str, KernelFacts] | None:
    """Each ``[kernel."…"]`` table's facts, by the kernel's text (``linux-next/master@…``
    gives its tree); None when ``kernel`` is not a table of tables."""
    section = data.get("kernel", {})
    if not isinstance(section, dict):
        problems.append(
            f"field 'kernel': expected [kernel.\"NAME\"] tables, got {mf.show(section)}"
        )
        return None
    result: dict[str, KernelFacts] = {}
    for written, raw in section.items():
        where = f"kernel {written!r}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table, got {mf.show(raw)}")
            continue
        fields = mf.Fields(raw, where, problems)
        fields.check_keys(_KERNEL_KEYS)
        facts = KernelFacts(
            tree=fields.get("tree", mf.stripped, ""),
            describe=fields.get("describe", mf.stripped, ""),
            base=fields.get("base", mf.kernel, ""),
            committed_at=fields.get("committed_at", commit_time),
            subject=fields.get("subject", mf.stripped, ""),
        )
        if fields.count:
            continue
        try:
            name = facts.check(written)
        except KernelVersionError as error:
            fields.problem(str(error))
            continue
        if name.text in result:
            fields.problem(f"{name.text} has another table already")
            continue
        result[name.text] = KernelFacts(
            tree=facts.tree or name.tree,
            describe=facts.describe,
            base=parse_kernel(facts.base).text if facts.base else "",
            committed_at=facts.committed_at,
            subject=facts.subject,
        )
    return result
