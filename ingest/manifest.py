"""Parse and validate a bundle manifest (docs/bundle-format.md) into frozen dataclasses.

Validation is complete before anything is stored: every problem in the manifest is collected
and reported at once, so an uploader fixes them all in one pass instead of one per upload.
Checks that need the database (does hardware "C" exist? does the server know metric X?) are
left to the caller; this module only records the names.
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest import manifest_fields as mf
from ingest.manifest_evidence import BuildSpec, ClaimSpec, read_claims, reference
from ingest.manifest_runs_from import RunsFromSpec, read_runs_from, read_select
from ingest.parsers import UnknownParserError, get_parser
from perfdb.kernels import KernelVersionError, parse_kernel

SUPPORTED_FORMATS = (1, 2)
MAX_RUNS = 10_000

Scalar = mf.Scalar

_TOP_KEYS = ("format", "hardware", "metric", "run", "claim", "runs_from")
_HARDWARE_KEYS = ("cpus", "cpu", "mhz", "l2_kb", "memory_mb", "tiers", "notes", "reference")
_METRIC_KEYS = ("unit", "better", "description")
_RUN_KEYS = (
    "workload",
    "workload_version",
    "kernel",
    "patches",
    "hardware",
    "mode",
    "label",
    "baseline",
    "params",
    "discard_first_trial",
    "files",
    "metrics",
    "notes",
    "reference",
)
_FILE_KEYS = ("path", "parser", "trial", "options", "select")


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
class FileSpec:
    path: str  # normalized: no "./", relative to the manifest's folder
    parser: str
    trial: int | None
    options: Mapping[str, object]
    # Format 2: which of the file's records this run takes, by their keys ({"clients": "4"}).
    select: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RunSpec:
    index: int  # 1-based position in the manifest
    workload: str
    workload_version: str
    kernel: str  # normalized by parse_kernel ("2.4.20-stock" -> "2.4.20")
    patches: tuple[str, ...]
    hardware: str  # a name; whether it exists is checked against the database later
    mode: str  # "UP" | "SMP"
    label: str
    params: Mapping[str, Scalar]
    discard_first_trial: bool
    files: tuple[FileSpec, ...]
    metrics: Mapping[str, tuple[float, ...]]  # one value per trial, trial 1 first
    notes: str
    # Direct metrics not declared under [metric.X]: the database layer must already know them.
    undeclared_metrics: tuple[str, ...] = ()
    # The label of the run this one is measured against ("Base1"), when the source says so.
    baseline: str = ""
    reference: BuildSpec | None = None  # the setup's control build


@dataclass(frozen=True)
class Manifest:
    format: int
    hardware: Mapping[str, HardwareSpec]
    metrics: Mapping[str, MetricSpec]
    runs: tuple[RunSpec, ...]
    runs_from: tuple[RunsFromSpec, ...] = ()
    claims: tuple[ClaimSpec, ...] = ()


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
    runs_from: tuple[RunsFromSpec, ...] | None = ()
    if fmt >= 2:
        runs_from = read_runs_from(data, problems, available)
    runs = _read_runs(data, problems, available, metrics, fmt, bool(runs_from))
    if hardware is None or metrics is None or runs is None or runs_from is None:
        return None
    return Manifest(
        format=fmt,
        hardware=hardware,
        metrics=metrics,
        runs=runs,
        runs_from=runs_from,
        claims=claims,
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


def _read_runs(
    data: Mapping[str, Any],
    problems: list[str],
    available: set[str],
    declared: Mapping[str, MetricSpec] | None,
    fmt: int,
    has_runs_from: bool,
) -> tuple[RunSpec, ...] | None:
    raw_runs = data.get("run")
    if raw_runs is None and has_runs_from:
        return ()
    if not isinstance(raw_runs, list) or not raw_runs:
        got = "nothing" if raw_runs is None else mf.show(raw_runs)
        problems.append(f"field 'run': expected at least one [[run]] table, got {got}")
        return None
    if len(raw_runs) > MAX_RUNS:
        problems.append(f"field 'run': {len(raw_runs)} runs; at most {MAX_RUNS} per bundle")
        return None
    runs = []
    labels: dict[str, int] = {}
    for index, raw in enumerate(raw_runs, start=1):
        if not isinstance(raw, dict):
            problems.append(f"run {index}: expected a table, got {mf.show(raw)}")
            continue
        run = _read_run(index, raw, problems, available, declared or {}, labels, fmt)
        if run is not None:
            runs.append(run)
    for run in runs:
        if run.baseline and run.baseline not in labels:
            problems.append(
                f"run {run.index} ({run.workload} {run.kernel}): field 'baseline': no run in "
                f"this bundle has label {run.baseline!r}"
            )
        elif run.baseline and labels[run.baseline] == run.index:
            problems.append(f"run {run.index}: field 'baseline': a run cannot be its own baseline")
    return tuple(runs)


def _run_where(index: int, raw: Mapping[str, Any]) -> str:
    """'run 2 (VolanoMark 2.5.25)': the position, plus what the author will recognise."""
    known = []
    if isinstance(raw.get("workload"), str) and raw["workload"].strip():
        known.append(raw["workload"].strip())
    with contextlib.suppress(KernelVersionError):
        known.append(parse_kernel(raw.get("kernel")).text)  # type: ignore[arg-type]
    return f"run {index} ({' '.join(known)})" if known else f"run {index}"


def _read_run(
    index: int,
    raw: Mapping[str, Any],
    problems: list[str],
    available: set[str],
    declared: Mapping[str, MetricSpec],
    labels: dict[str, int],
    fmt: int,
) -> RunSpec | None:
    fields = mf.Fields(raw, _run_where(index, raw), problems)
    fields.check_keys(_RUN_KEYS)
    workload = fields.get("workload", mf.name, required=True)
    workload_version = fields.get("workload_version", mf.string, "")
    kernel = fields.get("kernel", mf.kernel, required=True)
    patches = fields.get("patches", mf.name_list, ())
    hardware = fields.get("hardware", mf.name, required=True)
    mode = fields.get("mode", mf.mode, required=True)
    label = fields.get("label", mf.stripped, "")  # "" is the same as no label
    if label and label in labels:
        fields.problem(f"field 'label': {label!r} is already used by run {labels[label]}")
    elif label:
        labels[label] = index
    baseline = fields.get("baseline", mf.stripped, "")
    params = _read_params(fields)
    discard_first_trial = fields.get("discard_first_trial", mf.boolean, False)
    files = _read_files(fields, available, fmt)
    metrics = _read_direct_metrics(fields)
    notes = fields.get("notes", mf.string, "")
    run_reference = fields.get("reference", reference)
    if files == () and metrics == {}:
        fields.problem("a run needs at least one file or one metric")
    if fields.count or params is None or files is None or metrics is None:
        return None  # a reader gives None only with a problem recorded
    return RunSpec(
        index=index,
        workload=workload,
        workload_version=workload_version,
        kernel=kernel,
        patches=patches,
        hardware=hardware,
        mode=mode,
        label=label,
        params=params,
        discard_first_trial=discard_first_trial,
        files=files,
        metrics=metrics,
        notes=notes,
        undeclared_metrics=tuple(name for name in metrics if name not in declared),
        baseline=baseline,
        reference=run_reference,
    )


def _read_params(run: mf.Fields) -> dict[str, Scalar] | None:
    params = run.get("params", mf.table, {})
    if params is None:
        return None
    result = {}
    for name, value in params.items():
        try:
            result[name] = mf.param(value)
        except mf.Invalid as error:
            run.problem(f"field 'params.{name}': {error}")
    return result


def _read_direct_metrics(run: mf.Fields) -> dict[str, tuple[float, ...]] | None:
    metrics = run.get("metrics", mf.table, {})
    if metrics is None:
        return None
    result = {}
    for name, value in metrics.items():
        if not name.strip():
            run.problem("field 'metrics': a metric name must not be empty")
            continue
        try:
            result[name.strip()] = mf.metric_values(value)
        except mf.Invalid as error:
            run.problem(f"field 'metrics.{name}': {error}")
    return result


def _read_files(run: mf.Fields, available: set[str], fmt: int) -> tuple[FileSpec, ...] | None:
    raw_files = run.get("files", mf.list_of_tables, [])
    if raw_files is None:
        return None
    result = []
    seen_paths: set[str] = set()
    for position, raw in enumerate(raw_files, start=1):
        spec = _read_file(run, position, raw, available, fmt)
        if spec is None:
            continue
        if spec.path in seen_paths:
            run.problem(f"file {spec.path!r} is listed twice")
            continue
        seen_paths.add(spec.path)
        # Two files of one parser for the same trial are fine when they give different
        # things (a measurement CSV beside a time-series CSV); a true duplicate, or two files
        # giving the same series, is refused once they are parsed (ingest/plan.py).
        result.append(spec)
    return tuple(result)


def _read_file(
    run: mf.Fields, position: int, raw: Mapping[str, Any], available: set[str], fmt: int
) -> FileSpec | None:
    shown = raw.get("path") if isinstance(raw.get("path"), str) else f"files[{position}]"
    fields = mf.Fields(raw, f"{run.where}: file {shown!r}", run.problems)
    fields.check_keys(_FILE_KEYS if fmt >= 2 else _FILE_KEYS[:-1])
    path = fields.get("path", mf.relative_path, required=True)
    missing = path is not None and path not in available
    if missing:
        run.problem(f"file {shown!r} is not in the bundle")
    parser = fields.get("parser", mf.string, required=True)
    if parser is not None:
        try:
            get_parser(parser)
        except UnknownParserError as error:
            fields.problem(f"field 'parser': {error}")
            parser = None
    spec = FileSpec(
        path=path,
        parser=parser,
        trial=fields.get("trial", mf.positive_int),
        options=fields.get("options", mf.table, {}),
        select=fields.get("select", read_select, {}),
    )
    run.count += fields.count
    return None if fields.count or missing else spec
