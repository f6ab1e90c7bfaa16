"""The ``[[run]]`` tables of a manifest and the files they list (docs/bundle-format.md).

Read by ingest/manifest/document.py, which owns the manifest as a whole; every problem is recorded
and reading goes on, so an uploader sees them all at once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from ingest.manifest import fields as mf
from ingest.manifest.evidence import BuildSpec, reference
from ingest.manifest.runs_from import read_select
from ingest.parsers import UnknownParserError, get_parser
from perfdb.kernels import KernelVersionError, parse_kernel

MAX_RUNS = 10_000
Scalar = mf.Scalar

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


def read_runs(
    data: Mapping[str, Any],
    problems: list[str],
    available: set[str],
    declared: Collection[str],
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
        run = _read_run(index, raw, problems, available, declared, labels, fmt)
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
    declared: Collection[str],
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
