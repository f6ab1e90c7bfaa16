"""Format 2's ``[[runs_from]]`` blocks: one run per record group of a file.

A dbench log with a run per client count and kernel, or an lmbench summary with a row per
kernel, would need one hand-written ``[[run]]`` per record. A ``[[runs_from]]`` block names the
file once, the keys shared by every run (workload, hardware, mode, params), and how the
file's build labels map to kernels and patch sets; ingest/plan.py expands it after parsing,
when the records are known.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ingest.manifest import fields as mf
from ingest.manifest.evidence import BuildSpec
from ingest.parsers import UnknownParserError, get_parser
from ingest.parsers.base import normalize_key_value

_BLOCK_KEYS = (
    "path",
    "paths",
    "parser",
    "options",
    "select",
    "workload",
    "workload_version",
    "hardware",
    "mode",
    "kernel",
    "patches",
    "label_key",
    "labels",
    "params",
    "discard_first_trial",
    "notes",
)
_LABEL_KEYS = ("kernel", "patches")


@dataclass(frozen=True)
class RunsFromSpec:
    index: int  # 1-based position among the [[runs_from]] blocks
    paths: tuple[str, ...]  # one file, or one file per trial (trial 1 first)
    parser: str
    options: Mapping[str, object]
    select: Mapping[str, str]
    workload: str
    workload_version: str
    hardware: str
    mode: str
    kernel: str  # for records that carry no label; "" when not given
    patches: tuple[str, ...]
    label_key: str
    labels: Mapping[str, BuildSpec]  # what each label printed in the file stands for
    params: Mapping[str, mf.Scalar]
    discard_first_trial: bool
    notes: str

    @property
    def path(self) -> str:
        return self.paths[0]

    @property
    def where(self) -> str:
        more = f" and {len(self.paths) - 1} more" if len(self.paths) > 1 else ""
        return f"runs_from {self.index} ({self.path}{more})"


def read_select(value: object) -> dict[str, str]:
    """A record selector: key = value pairs, compared as the file printed them."""
    table = mf.table(value)
    result = {}
    for key, item in table.items():
        if not isinstance(item, str | int | float) or isinstance(item, bool):
            raise mf.Invalid(f"select.{key}: expected a string or a number, got {mf.show(item)}")
        result[key.strip()] = normalize_key_value(item)
    return result


def _build(value: object) -> BuildSpec:
    table = mf.table(value)
    unknown = [key for key in table if key not in _LABEL_KEYS]
    if unknown:
        raise mf.Invalid(f"unknown key {unknown[0]!r}; known: kernel, patches")
    if "kernel" not in table:
        raise mf.Invalid("'kernel' is missing")
    return BuildSpec(mf.kernel(table["kernel"]), mf.name_list(table.get("patches", [])))


def _labels(value: object) -> dict[str, BuildSpec]:
    table = mf.table(value)
    result = {}
    for label, build in table.items():
        try:
            result[label.strip()] = _build(build)
        except mf.Invalid as error:
            raise mf.Invalid(f"label {label!r}: {error}") from None
    return result


def _params(fields: mf.Fields) -> dict[str, mf.Scalar]:
    params = fields.get("params", mf.table, {}) or {}
    result = {}
    for name, value in params.items():
        try:
            result[name] = mf.param(value)
        except mf.Invalid as error:
            fields.problem(f"field 'params.{name}': {error}")
    return result


def _parser(fields: mf.Fields) -> str | None:
    parser = fields.get("parser", mf.string, required=True)
    if parser is None:
        return None
    try:
        get_parser(parser)
    except UnknownParserError as error:
        fields.problem(f"field 'parser': {error}")
        return None
    return parser


def _path_list(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise mf.Invalid(f"expected a non-empty list of paths, got {mf.show(value)}")
    paths = tuple(mf.relative_path(item) for item in value)
    if len(set(paths)) != len(paths):
        raise mf.Invalid("a path is listed twice")
    return paths


def _paths(fields: mf.Fields) -> tuple[str, ...]:
    """``path = "x"`` (one file) or ``paths = ["t1", "t2"]`` (one file per trial)."""
    if ("path" in fields.data) == ("paths" in fields.data):
        fields.problem("give 'path' (one file) or 'paths' (one file per trial), not both")
        return ()
    if "path" in fields.data:
        path = fields.get("path", mf.relative_path)
        return () if path is None else (path,)
    return fields.get("paths", _path_list) or ()


def _read_block(
    index: int, raw: Mapping[str, Any], problems: list[str], available: set[str]
) -> RunsFromSpec | None:
    shown = raw.get("path") if isinstance(raw.get("path"), str) else "?"
    fields = mf.Fields(raw, f"runs_from {index} ({shown})", problems)
    fields.check_keys(_BLOCK_KEYS)
    paths = _paths(fields)
    for path in paths:
        if path not in available:
            fields.problem(f"file {path!r} is not in the bundle")
    kernel = fields.get("kernel", mf.kernel, "")
    labels = fields.get("labels", _labels, {})
    spec = RunsFromSpec(
        index=index,
        paths=paths,
        parser=_parser(fields),  # type: ignore[arg-type]  # None only when a problem is recorded
        options=fields.get("options", mf.table, {}),
        select=fields.get("select", read_select, {}),
        workload=fields.get("workload", mf.name, required=True),
        workload_version=fields.get("workload_version", mf.string, ""),
        hardware=fields.get("hardware", mf.name, required=True),
        mode=fields.get("mode", mf.mode, required=True),
        kernel=kernel or "",
        patches=fields.get("patches", mf.name_list, ()),
        label_key=fields.get("label_key", mf.name, "label"),
        labels=labels or {},
        params=_params(fields),
        discard_first_trial=fields.get("discard_first_trial", mf.boolean, False),
        notes=fields.get("notes", mf.string, ""),
    )
    return None if fields.count else spec


def read_runs_from(
    data: Mapping[str, Any], problems: list[str], available: set[str]
) -> tuple[RunsFromSpec, ...] | None:
    """Every ``[[runs_from]]`` block, or None when the field is not a list of tables."""
    raw_blocks = data.get("runs_from", [])
    if not isinstance(raw_blocks, list) or not all(isinstance(b, dict) for b in raw_blocks):
        problems.append(
            f"field 'runs_from': expected [[runs_from]] tables, got {mf.show(raw_blocks)}"
        )
        return None
    blocks = []
    for index, raw in enumerate(raw_blocks, start=1):
        block = _read_block(index, raw, problems, {mf.normalize_path(p) for p in available})
        if block is not None:
            blocks.append(block)
    return tuple(blocks)
