"""Parse and validate a bundle manifest (docs/bundle-format.md) into frozen dataclasses.

Validation is complete before anything is stored: every problem in the manifest is collected
and reported at once, so an uploader fixes them all in one pass instead of one per upload.
Checks that need the database (does hardware "C" exist? does the server know metric X?) are
left to the caller; this module only records the names.
"""

from __future__ import annotations

import difflib
import json
import math
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ingest.parsers import UnknownParserError, get_parser
from perfdb.kernels import KernelVersionError, parse_kernel

SUPPORTED_FORMATS = (1,)
MAX_RUNS = 10_000

Scalar = str | int | float | bool

_TOP_KEYS = ("format", "hardware", "metric", "run")
_HARDWARE_KEYS = ("cpus", "cpu", "mhz", "l2_kb", "memory_mb", "tiers", "notes")
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
)
_FILE_KEYS = ("path", "parser", "trial", "options")
_BETTER = ("higher", "lower", "none")


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


@dataclass(frozen=True)
class Manifest:
    format: int
    hardware: Mapping[str, HardwareSpec]
    metrics: Mapping[str, MetricSpec]
    runs: tuple[RunSpec, ...]


def parse_manifest(text: str, *, filename: str, available_files: Collection[str]) -> Manifest:
    """Parse manifest ``text`` (TOML or JSON, chosen by ``filename``) and validate it.

    ``available_files`` are the bundle's file paths relative to the manifest's folder.
    Raises ManifestError listing every problem, each prefixed with ``filename``.
    """
    data = _load(text, filename)
    problems: list[str] = []
    manifest = _read_manifest(data, problems, {_normalize_path(p) for p in available_files})
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
        raise ManifestError([f"{filename}: expected a table at the top, got {_show(data)}"])
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


# --- field conversion -------------------------------------------------------------------------


class _Invalid(Exception):
    """A field's value is wrong; the message says what was expected and what was found."""


def _show(value: object) -> str:
    """Render a value the way the manifest author wrote it (JSON-ish: "smp2", true, [1, 2])."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return repr(value)


def _string(value: object) -> str:
    if not isinstance(value, str):
        raise _Invalid(f"expected a string, got {_show(value)}")
    return value


def _stripped(value: object) -> str:
    return _string(value).strip()


def _name(value: object) -> str:
    text = _stripped(value)
    if not text:
        raise _Invalid("must not be empty")
    return text


def _positive_int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _Invalid(f"expected an integer ≥ 1, got {_show(value)}")
    return value


def _boolean(value: object) -> bool:
    if not isinstance(value, bool):
        raise _Invalid(f"expected true or false, got {_show(value)}")
    return value


def _name_list(value: object) -> tuple[str, ...]:
    """A list of non-empty, distinct strings (patches, tiers)."""
    if not isinstance(value, list):
        raise _Invalid(f"expected a list of strings, got {_show(value)}")
    names = []
    for item in value:
        if not isinstance(item, str) or not item.strip():
            raise _Invalid(f"expected non-empty strings, got {_show(item)}")
        if item.strip() in names:
            raise _Invalid(f"{item.strip()!r} is listed twice")
        names.append(item.strip())
    return tuple(names)


def _mode(value: object) -> str:
    if not isinstance(value, str) or value.strip().upper() not in ("UP", "SMP"):
        raise _Invalid(f'expected "UP" or "SMP", got {_show(value)}')
    return value.strip().upper()


def _better(value: object) -> str:
    if value not in _BETTER:
        raise _Invalid(f'expected "higher", "lower" or "none", got {_show(value)}')
    return str(value)


def _kernel(value: object) -> str:
    try:
        return parse_kernel(value).text  # type: ignore[arg-type]  # it checks the type itself
    except KernelVersionError as error:
        raise _Invalid(str(error)) from None


def _table(value: object) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Invalid(f"expected a table, got {_show(value)}")
    return value


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _Invalid(f"expected a number, got {_show(value)}")
    if not math.isfinite(value):
        raise _Invalid(f"expected a finite number, got {_show(value)}")
    return float(value)


def _metric_values(value: object) -> tuple[float, ...]:
    if isinstance(value, list):
        if not value:
            raise _Invalid("expected a number or a non-empty list of numbers, got []")
        return tuple(_number(item) for item in value)
    return (_number(value),)


def _param(value: object) -> Scalar:
    if isinstance(value, float) and not math.isfinite(value):
        raise _Invalid(f"expected a finite number, got {_show(value)}")
    if not isinstance(value, str | int | float):  # bool is an int
        raise _Invalid(f"expected a string, integer, float or boolean, got {_show(value)}")
    return value


def _normalize_path(path: str) -> str:
    return "/".join(part for part in path.split("/") if part not in ("", "."))


def _relative_path(value: object) -> str:
    text = _string(value)
    parts = [part for part in text.split("/") if part not in ("", ".")]
    if text.startswith("/") or "\\" in text or ".." in parts or not parts:
        raise _Invalid(f"expected a relative path inside the bundle, got {_show(value)}")
    return "/".join(parts)


# --- tables -----------------------------------------------------------------------------------


class _Fields:
    """Reads typed fields from one table, recording a problem (prefixed by ``where``) for each
    wrong one and returning None for it, so reading goes on and every problem is found."""

    def __init__(self, data: Mapping[str, Any], where: str, problems: list[str]):
        self.data = data
        self.where = where
        self.problems = problems
        self.count = 0  # problems recorded through this reader

    def problem(self, message: str) -> None:
        self.count += 1
        self.problems.append(f"{self.where}: {message}" if self.where else message)

    def check_keys(self, known: Collection[str], what: str = "field") -> None:
        for key in self.data:
            if key not in known:
                close = difflib.get_close_matches(key, known, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.problem(f"unknown {what} {key!r}{hint}; known: {', '.join(known)}")

    def get(
        self, key: str, convert: Callable[[object], Any], default: Any = None, *, required=False
    ) -> Any:
        if key not in self.data:
            if required:
                self.problem(f"field {key!r} is missing")
            return default
        try:
            return convert(self.data[key])
        except _Invalid as error:
            self.problem(f"field {key!r}: {error}")
            return None

    def sub(self, key: str, where: str) -> _Fields | None:
        """A reader for a nested table; None (problem recorded) when it is not a table."""
        value = self.get(key, _table, {})
        return None if value is None else _Fields(value, where, self.problems)


# --- the manifest -----------------------------------------------------------------------------


def _read_manifest(
    data: Mapping[str, Any], problems: list[str], available: set[str]
) -> Manifest | None:
    top = _Fields(data, "", problems)
    top.check_keys(_TOP_KEYS, "top-level key")
    if "format" not in data:
        top.problem(f"field 'format' is missing; supported: {_supported()}")
        return None
    fmt = data["format"]
    if isinstance(fmt, bool) or not isinstance(fmt, int) or fmt not in SUPPORTED_FORMATS:
        # Another format may give every other field a different meaning: stop here.
        top.problem(f"manifest format {_show(fmt)} is not supported; supported: {_supported()}")
        return None
    hardware = _read_hardware(top, problems)
    metrics = _read_metrics(top, problems)
    runs = _read_runs(data, problems, available, metrics)
    if hardware is None or metrics is None or runs is None:
        return None
    return Manifest(format=fmt, hardware=hardware, metrics=metrics, runs=runs)


def _supported() -> str:
    return ", ".join(str(version) for version in SUPPORTED_FORMATS)


def _read_hardware(top: _Fields, problems: list[str]) -> dict[str, HardwareSpec] | None:
    section = top.get("hardware", _table, {})
    if section is None:
        return None
    result = {}
    for name, raw in section.items():
        where = f"hardware {name!r}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table, got {_show(raw)}")
            continue
        fields = _Fields(raw, where, problems)
        fields.check_keys(_HARDWARE_KEYS)
        if not name.strip():
            fields.problem("the name must not be empty")
        spec = HardwareSpec(
            name=name.strip(),
            cpus=fields.get("cpus", _positive_int),
            cpu=fields.get("cpu", _string, ""),
            mhz=fields.get("mhz", _positive_int),
            l2_kb=fields.get("l2_kb", _positive_int),
            memory_mb=fields.get("memory_mb", _positive_int),
            tiers=fields.get("tiers", _name_list, ()),
            notes=fields.get("notes", _string, ""),
        )
        if not fields.count:
            result[spec.name] = spec
    return result


def _read_metrics(top: _Fields, problems: list[str]) -> dict[str, MetricSpec] | None:
    section = top.get("metric", _table, {})
    if section is None:
        return None
    result = {}
    for name, raw in section.items():
        where = f"metric {name!r}"
        if not isinstance(raw, dict):
            problems.append(f"{where}: expected a table, got {_show(raw)}")
            continue
        fields = _Fields(raw, where, problems)
        fields.check_keys(_METRIC_KEYS)
        if not name.strip():
            fields.problem("the name must not be empty")
        spec = MetricSpec(
            name=name.strip(),
            unit=fields.get("unit", _string, required=True),
            better=fields.get("better", _better, required=True),
            description=fields.get("description", _string, ""),
        )
        if not fields.count:
            result[spec.name] = spec
    return result


def _read_runs(
    data: Mapping[str, Any],
    problems: list[str],
    available: set[str],
    declared: Mapping[str, MetricSpec] | None,
) -> tuple[RunSpec, ...] | None:
    raw_runs = data.get("run")
    if not isinstance(raw_runs, list) or not raw_runs:
        got = "nothing" if raw_runs is None else _show(raw_runs)
        problems.append(f"field 'run': expected at least one [[run]] table, got {got}")
        return None
    if len(raw_runs) > MAX_RUNS:
        problems.append(f"field 'run': {len(raw_runs)} runs; at most {MAX_RUNS} per bundle")
        return None
    runs = []
    labels: dict[str, int] = {}
    for index, raw in enumerate(raw_runs, start=1):
        if not isinstance(raw, dict):
            problems.append(f"run {index}: expected a table, got {_show(raw)}")
            continue
        run = _read_run(index, raw, problems, available, declared or {}, labels)
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
    try:
        known.append(parse_kernel(raw.get("kernel")).text)  # type: ignore[arg-type]
    except KernelVersionError:
        pass
    return f"run {index} ({' '.join(known)})" if known else f"run {index}"


def _read_run(
    index: int,
    raw: Mapping[str, Any],
    problems: list[str],
    available: set[str],
    declared: Mapping[str, MetricSpec],
    labels: dict[str, int],
) -> RunSpec | None:
    fields = _Fields(raw, _run_where(index, raw), problems)
    fields.check_keys(_RUN_KEYS)
    workload = fields.get("workload", _name, required=True)
    workload_version = fields.get("workload_version", _string, "")
    kernel = fields.get("kernel", _kernel, required=True)
    patches = fields.get("patches", _name_list, ())
    hardware = fields.get("hardware", _name, required=True)
    mode = fields.get("mode", _mode, required=True)
    label = fields.get("label", _stripped, "")  # "" is the same as no label
    if label and label in labels:
        fields.problem(f"field 'label': {label!r} is already used by run {labels[label]}")
    elif label:
        labels[label] = index
    baseline = fields.get("baseline", _stripped, "")
    params = _read_params(fields)
    discard_first_trial = fields.get("discard_first_trial", _boolean, False)
    files = _read_files(fields, available)
    metrics = _read_direct_metrics(fields)
    notes = fields.get("notes", _string, "")
    if files == () and metrics == {}:
        fields.problem("a run needs at least one file or one metric")
    if fields.count:
        return None
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
    )


def _read_params(run: _Fields) -> dict[str, Scalar] | None:
    params = run.get("params", _table, {})
    if params is None:
        return None
    result = {}
    for name, value in params.items():
        try:
            result[name] = _param(value)
        except _Invalid as error:
            run.problem(f"field 'params.{name}': {error}")
    return result


def _read_direct_metrics(run: _Fields) -> dict[str, tuple[float, ...]] | None:
    metrics = run.get("metrics", _table, {})
    if metrics is None:
        return None
    result = {}
    for name, value in metrics.items():
        if not name.strip():
            run.problem("field 'metrics': a metric name must not be empty")
            continue
        try:
            result[name.strip()] = _metric_values(value)
        except _Invalid as error:
            run.problem(f"field 'metrics.{name}': {error}")
    return result


def _read_files(run: _Fields, available: set[str]) -> tuple[FileSpec, ...] | None:
    raw_files = run.get("files", _list_of_tables, [])
    if raw_files is None:
        return None
    result = []
    seen_paths: set[str] = set()
    seen_roles: dict[tuple[str, int | None, str], str] = {}
    for position, raw in enumerate(raw_files, start=1):
        spec = _read_file(run, position, raw, available)
        if spec is None:
            continue
        if spec.path in seen_paths:
            run.problem(f"file {spec.path!r} is listed twice")
            continue
        seen_paths.add(spec.path)
        # One parser reading two files for the same trial would give every metric twice.
        # Differing options (e.g. vmstat of the AS tier and of the DB tier) make them distinct.
        role = (spec.parser, spec.trial, _show(dict(sorted(spec.options.items()))))
        if role in seen_roles:
            trial = "no trial" if spec.trial is None else f"trial {spec.trial}"
            run.problem(
                f"file {spec.path!r}: parser {spec.parser!r} already reads {seen_roles[role]!r} "
                f"for {trial} with the same options"
            )
            continue
        seen_roles[role] = spec.path
        result.append(spec)
    return tuple(result)


def _list_of_tables(value: object) -> list[dict[str, Any]]:
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise _Invalid(f"expected a list of tables, got {_show(value)}")
    return value


def _read_file(
    run: _Fields, position: int, raw: Mapping[str, Any], available: set[str]
) -> FileSpec | None:
    shown = raw.get("path") if isinstance(raw.get("path"), str) else f"files[{position}]"
    fields = _Fields(raw, f"{run.where}: file {shown!r}", run.problems)
    fields.check_keys(_FILE_KEYS)
    path = fields.get("path", _relative_path, required=True)
    missing = path is not None and path not in available
    if missing:
        run.problem(f"file {shown!r} is not in the bundle")
    parser = fields.get("parser", _string, required=True)
    if parser is not None:
        try:
            get_parser(parser)
        except UnknownParserError as error:
            fields.problem(f"field 'parser': {error}")
            parser = None
    spec = FileSpec(
        path=path,
        parser=parser,
        trial=fields.get("trial", _positive_int),
        options=fields.get("options", _table, {}),
    )
    run.count += fields.count
    return None if fields.count or missing else spec
