"""From a manifest and its parsed files to the runs a bundle will create. Pure: no database.

A parsed file holds records (ingest/parsers/base.py); this module decides which records feed
which run and trial, and refuses every ambiguity instead of guessing: a file entry that
matches several record groups, records no run takes, a label the manifest does not map.
Then every text the runs would store is measured against its column. The same plan is what
the upload preview shows and what the writer stores.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ingest.manifest import FileSpec, Manifest, ManifestError, RunsFromSpec, RunSpec
from ingest.parsers.base import (
    ParseError,
    ParseResult,
    Record,
    RecordGroup,
    group_records,
    normalize_key_value,
)
from perfdb import models
from perfdb.kernels import KernelVersionError, patch_tree_split

# A label that is itself a plain kernel version ("2.6.0", "2.5.59-rc3") needs no mapping.
_PLAIN_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+){0,2}(?:-(?:pre|rc|test)\d+)?$")
_UNAME = re.compile(r"^Linux\s+(\d+\.\d+\S*)$")  # `uname -sr`, as sysstat and lmbench print it

# Each parsed file's record groups by its key in ``parsed``, or the error grouping met.
Grouped = Mapping[str, list[RecordGroup] | ParseError]


class PlanError(ValueError):
    """Records and runs do not fit together; ``str()`` gives one problem per line."""

    def __init__(self, problems: list[str]):
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True)
class FilePart:
    """What one file gives one run: its records, one per trial (0 = the run's only value)."""

    file: FileSpec
    trials: tuple[tuple[int, Record], ...]
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class PlannedRun:
    spec: RunSpec
    parts: tuple[FilePart, ...]


def file_key(path: str, parser: str, options: Mapping[str, object]) -> str:
    """One parse per distinct (file, parser, options): the key of ``parsed``."""
    return json.dumps([path, parser, dict(sorted(options.items()))], sort_keys=True, default=str)


def _matches(group: RecordGroup, select: Mapping[str, str]) -> bool:
    return all(group.texts.get(key) == wanted for key, wanted in select.items())


def _grouped(parsed: Mapping[str, ParseResult]) -> dict[str, list[RecordGroup] | ParseError]:
    """Each parsed file's records grouped once, however many runs read the file; a file whose
    records cannot be grouped keeps its error, raised for each run that reads it."""
    grouped: dict[str, list[RecordGroup] | ParseError] = {}
    for key, result in parsed.items():
        try:
            grouped[key] = group_records(result.records)
        except ParseError as error:
            grouped[key] = error
    return grouped


def _groups(grouped: Grouped, key: str) -> list[RecordGroup]:
    groups = grouped[key]
    if isinstance(groups, ParseError):
        raise groups
    return groups


def _groups_shown(groups: list[RecordGroup]) -> str:
    shown = [f"line {g.line}: {g.describe()}" for g in groups[:8]]
    more = f"; and {len(groups) - 8} more" if len(groups) > 8 else ""
    return "; ".join(shown) + more


def _select_hint(group: RecordGroup) -> str:
    pairs = ", ".join(f"{k} = {json.dumps(v)}" for k, v in group.keys.items())
    return "select = { " + pairs + " }"


def _trials(file: FileSpec, group: RecordGroup, where: str) -> tuple[tuple[int, Record], ...]:
    if len(group.trials) == 1:
        number, record = group.trials[0]
        explicit = record.trial is not None
        return ((file.trial or (number if explicit else 0), record),)
    if file.trial is not None:
        raise ParseError(
            f"{where}: file {file.path!r} holds {len(group.trials)} trials of "
            f"{group.describe()} (from line {group.line}); remove 'trial = {file.trial}'"
        )
    return group.trials


def _file_part(spec: RunSpec, file: FileSpec, result: ParseResult, grouped: Grouped) -> FilePart:
    where = f"run {spec.index} ({spec.workload} {spec.kernel})"
    every = _groups(grouped, file_key(file.path, file.parser, file.options))
    groups = [g for g in every if _matches(g, file.select)]
    if not groups:
        found = _groups_shown(every) or "no records"
        raise ParseError(
            f"{where}: file {file.path!r}: no record matches select {dict(file.select)}; "
            f"the file holds {found}"
        )
    if len(groups) > 1:
        raise ParseError(
            f"{where}: file {file.path!r} holds {len(groups)} records ({_groups_shown(groups)}): "
            f"pick one with {_select_hint(groups[0])} in the file entry, or map them all with "
            "a [[runs_from]] block (format = 2)"
        )
    return FilePart(file, _trials(file, groups[0], where), tuple(result.warnings))


@dataclass(frozen=True)
class _Unmapped:
    """A label no rule maps to a kernel: its line and the ``labels`` entry to add."""

    text: str
    line: int | None
    entry: str


def _build_of(block: RunsFromSpec, group: RecordGroup) -> tuple[str, tuple[str, ...]] | _Unmapped:
    """The kernel and patches the record's build label names, or what is missing to map it
    (every unmapped label of a block is reported at once)."""
    label = group.keys.get(block.label_key)
    if label is None:
        if not block.kernel:
            raise ParseError(
                f"{block.where}: the record at line {group.line} ({group.describe()}) has no "
                f"{block.label_key!r}; give the block a 'kernel'"
            )
        return block.kernel, block.patches
    text = group.texts[block.label_key]
    if text in block.labels:
        build = block.labels[text]
        return build.kernel, build.patches
    if _PLAIN_VERSION.match(text) and not block.labels:
        return text, block.patches
    uname = _UNAME.match(text)
    if uname and not block.labels and not block.patches:
        # sysstat's banner and lmbench's OS column print `uname -sr`: the release is the
        # kernel as the machine ran it, split the way perfdb-upload run splits it.
        release = uname.group(1)
        try:
            split = patch_tree_split(release)
        except KernelVersionError:
            split = None
        else:
            return split if split is not None else (release, ())
    wanted = '{ kernel = "...", patches = [...] }'
    try:
        split = patch_tree_split(text)
    except KernelVersionError:
        split = None
    if split is not None:  # 2.6.0-test9-mm2: the mm2 tree on 2.6.0-test9 (docs/kernels.md)
        listed = ", ".join(json.dumps(p) for p in split[1])
        wanted = f"{{ kernel = {json.dumps(split[0])}, patches = [{listed}] }}"
    return _Unmapped(text, group.line, f"{json.dumps(text)} = {wanted}")


def _unmapped_error(block: RunsFromSpec, unmapped: list[_Unmapped]) -> ParseError:
    """Every label of the block that is not mapped, at once, with the one line to add."""
    shown = ", ".join(f"{u.text!r} (line {u.line})" for u in unmapped)
    kind = "label" if len(unmapped) == 1 else f"{len(unmapped)} labels"
    verb = "is" if len(unmapped) == 1 else "are"
    entries = ", ".join(u.entry for u in unmapped)
    return ParseError(
        f"{block.where}: {kind} {shown} {verb} not mapped to a kernel; add "
        f"labels = {{ {entries} }}",
        unmapped[0].line,
    )


def _params(block: RunsFromSpec, group: RecordGroup) -> dict[str, str | int | float | bool]:
    """The block's params plus the record's keys other than its build label."""
    params: dict[str, str | int | float | bool] = dict(block.params)
    for key, value in group.keys.items():
        if key == block.label_key:
            continue
        if key in params and normalize_key_value(params[key]) != group.texts[key]:
            raise ParseError(
                f"{block.where}: record at line {group.line} has {key} = {value} but the "
                f"block's params say {key} = {params[key]}"
            )
        params[key] = value
    return params


def _block_parts(
    block: RunsFromSpec, results: list[ParseResult], grouped: Grouped
) -> list[tuple[RecordGroup, list[FilePart]]]:
    """Record groups of the block's file(s) by keys, each with the parts that feed its run.

    With one file, a group's repeats are its trials. With ``paths``, file i is trial i: the
    same keys across files are one run, and a file may hold only one record per group.
    """
    found: dict[str, tuple[RecordGroup, list[FilePart]]] = {}
    many = len(block.paths) > 1
    for number, (path, result) in enumerate(zip(block.paths, results, strict=True), start=1):
        for group in _groups(grouped, file_key(path, block.parser, block.options)):
            if not _matches(group, block.select):
                continue
            select = dict(group.texts)
            file = FileSpec(path, block.parser, number if many else None, block.options, select)
            if many and len(group.trials) > 1:
                raise ParseError(
                    f"{block.where}: file {path!r} holds {len(group.trials)} trials of "
                    f"{group.describe()} (line {group.line}); with 'paths' each file is one trial"
                )
            trials = ((number, group.trials[0][1]),) if many else _trials(file, group, block.where)
            identity = json.dumps(sorted(select.items()))
            found.setdefault(identity, (group, []))[1].append(
                FilePart(file, trials, tuple(result.warnings))
            )
    return list(found.values())


def _expand(
    block: RunsFromSpec, results: list[ParseResult], grouped: Grouped, first_index: int
) -> list[PlannedRun]:
    groups = _block_parts(block, results, grouped)
    if not groups:
        raise ParseError(f"{block.where}: no record matches select {dict(block.select)}")
    per_symbol = next((g for g, _ in groups if "symbol" in g.keys), None)
    if per_symbol is not None and len(groups) > 1:
        # perf report's rows mode gives a record per symbol: as runs they would be one run
        # per kernel function, a series per symbol that no chart or alert reads.
        raise ParseError(
            f"{block.where}: the records are one per symbol (line {per_symbol.line}: "
            f"{per_symbol.describe()}); runs_from would store one run per symbol. Re-run "
            "perf report with -n so its samples are read as one profile per run, or pick one "
            "row with select in a [[run]] file entry"
        )
    builds: list[tuple[str, tuple[str, ...]]] = []
    unmapped: dict[str, _Unmapped] = {}
    for group, _ in groups:
        build = _build_of(block, group)
        if isinstance(build, _Unmapped):
            unmapped.setdefault(build.text, build)
            build = ("", ())
        builds.append(build)
    if unmapped:
        raise _unmapped_error(block, list(unmapped.values()))
    runs = []
    seen: dict[str, int] = {}
    for offset, ((group, parts), (kernel, patches)) in enumerate(zip(groups, builds, strict=True)):
        params = _params(block, group)
        spec = RunSpec(
            index=first_index + offset,
            workload=block.workload,
            workload_version=block.workload_version,
            kernel=kernel,
            patches=patches,
            hardware=block.hardware,
            mode=block.mode,
            label="",
            params=params,
            discard_first_trial=block.discard_first_trial,
            files=tuple(part.file for part in parts),
            metrics={},
            notes=block.notes,
        )
        identity = json.dumps([kernel, patches, sorted(params.items())], default=str)
        if identity in seen:
            raise ParseError(
                f"{block.where}: the records at lines {seen[identity]} and {group.line} give "
                f"two runs of kernel {kernel} {'+'.join(patches) or 'stock'} with the same "
                "params; map their labels apart or tell them apart with params"
            )
        seen[identity] = group.line or 0
        runs.append(PlannedRun(spec, tuple(parts)))
    return runs


def _gives(parser: str, record: Record) -> set[tuple[str, ...]]:
    """What a record stores under names that must be unique within a run's trial: a series
    column, a profile function (of its parser), a histogram, a curve."""
    items: set[tuple[str, ...]] = {("series", c.source, c.column) for c in record.columns}
    items.update(("series", s.source, s.column) for s in record.samples)
    items.update(("profile function", parser, p.function) for p in record.profile)
    items.update(("histogram", h.name) for h in record.histograms)
    items.update(("curve", c.name) for c in record.curves)
    return items


def _shown(item: tuple[str, ...]) -> str:
    kind, *names = item
    return f"{kind} {'.'.join(names)!r}"


def _file_clashes(spec: RunSpec, parts: list[FilePart]) -> list[str]:
    """Two files of one run and trial may share a parser (a measurement CSV beside a
    time-series CSV) but not be the same data twice, nor give the same series, profile
    function, histogram or curve. (Two values of one metric are checked when stored.)"""
    where = f"run {spec.index} ({spec.workload} {spec.kernel})"
    problems: list[str] = []
    roles: dict[str, FilePart] = {}
    owners: dict[tuple[int, tuple[str, ...]], str] = {}
    for part in parts:
        file = part.file
        role = json.dumps(
            [file.parser, file.trial, dict(file.options), dict(file.select)],
            sort_keys=True,
            default=str,
        )
        twin = roles.get(role)
        if twin is not None and [r for _, r in twin.trials] == [r for _, r in part.trials]:
            trial = "the run" if file.trial is None else f"trial {file.trial}"
            problems.append(
                f"{where}: file {file.path!r} holds the same data as {twin.file.path!r} "
                f"(parser {file.parser!r}, {trial}): the same output listed twice; remove one"
            )
            continue
        roles.setdefault(role, part)
        clashes: dict[str, tuple[int, tuple[str, ...]]] = {}
        for trial_no, record in part.trials:
            for item in _gives(file.parser, record):
                owner = owners.setdefault((trial_no, item), file.path)
                if owner != file.path:
                    clashes.setdefault(owner, (trial_no, item))
        for owner, (trial_no, item) in clashes.items():
            trial = "the run" if trial_no == 0 else f"trial {trial_no}"
            problems.append(
                f"{where}: files {owner!r} and {file.path!r} both give {_shown(item)} for "
                f"{trial}; give each file its own trial, or tell them apart with options"
            )
    return problems


def plan_runs(manifest: Manifest, parsed: Mapping[str, ParseResult]) -> list[PlannedRun]:
    """Every run the bundle creates with the records of each trial. PlanError lists the
    problems of fitting records to runs; then ManifestError lists every text longer than
    the column it is stored in."""
    grouped = _grouped(parsed)
    problems: list[str] = []
    planned: list[PlannedRun] = []
    for spec in manifest.runs:
        parts = []
        for file in spec.files:
            try:
                result = parsed[file_key(file.path, file.parser, file.options)]
                parts.append(_file_part(spec, file, result, grouped))
            except ParseError as error:
                problems.append(error.message)
        problems.extend(_file_clashes(spec, parts))
        planned.append(PlannedRun(spec, tuple(parts)))
    next_index = len(manifest.runs) + 1
    for block in manifest.runs_from:
        try:
            runs = _expand(
                block,
                [parsed[file_key(path, block.parser, block.options)] for path in block.paths],
                grouped,
                next_index,
            )
        except ParseError as error:
            problems.append(error.message)
            continue
        planned.extend(runs)
        next_index += len(runs)
    if problems:
        raise PlanError(problems)
    _lengths_check(manifest, planned)
    return planned


# --- every text against its column ------------------------------------------------------

# The column (model, field) each kind of text a bundle carries is stored in.
COLUMNS = {
    "workload": (models.Workload, "name"),
    "workload_version": (models.Workload, "version"),
    "kernel": (models.Kernel, "version"),
    "patch": (models.Patch, "name"),
    "patches": (models.PatchSet, "name"),
    "hardware": (models.Hardware, "name"),
    "cpu": (models.Hardware, "cpu_model"),
    "tier": (models.Hardware, "tiers"),
    "label": (models.Run, "label"),
    "metric": (models.Metric, "name"),
    "unit": (models.Metric, "unit"),
    "file path": (models.RawFile, "path"),
    "parser": (models.RawFile, "parser"),
    "profile function": (models.ProfileEntry, "function"),
    "series source": (models.Sample, "source"),
    "series column": (models.Sample, "column"),
    "series timestamp": (models.Sample, "timestamps"),
    "histogram name": (models.Histogram, "name"),
    "histogram x_label": (models.Histogram, "x_label"),
    "curve name": (models.Curve, "name"),
    "curve x_label": (models.Curve, "x_label"),
    "curve y_label": (models.Curve, "y_label"),
}


def _max_length(kind: str) -> int:
    model, name = COLUMNS[kind]
    field = model._meta.get_field(name)
    base = getattr(field, "base_field", None)  # ArrayField: the length of one element
    length = getattr(base or field, "max_length", None)
    if not isinstance(length, int):
        raise TypeError(f"{kind}: {model.__name__}.{name} has no max_length")
    return length


def _texts(manifest: Manifest, plan: Iterable[PlannedRun]) -> Iterator[tuple[str, str, str]]:
    """(where, kind, value) for every text the bundle would store."""
    for hw in manifest.hardware.values():
        where = f"hardware {hw.name[:40]!r}"
        yield where, "hardware", hw.name
        yield where, "cpu", hw.cpu
        for tier in hw.tiers:
            yield where, "tier", tier
    for metric in manifest.metrics.values():
        yield f"metric {metric.name[:40]!r}", "metric", metric.name
        yield f"metric {metric.name[:40]!r}", "unit", metric.unit
    for planned in plan:
        spec = planned.spec
        where = f"run {spec.index}"
        yield where, "workload", spec.workload
        yield where, "workload_version", spec.workload_version
        yield where, "kernel", spec.kernel
        yield where, "hardware", spec.hardware
        yield where, "label", spec.label
        yield where, "patches", "+".join(spec.patches)
        for patch in spec.patches:
            yield where, "patch", patch
        for name in spec.metrics:
            yield where, "metric", name
        for part in planned.parts:
            at = f"{where}, file {part.file.path[:80]!r}"
            yield at, "file path", part.file.path
            yield at, "parser", part.file.parser
            for _, record in part.trials:
                for m in record.measurements:
                    yield at, "metric", m.metric
                    yield at, "unit", m.unit
                for p in record.profile:
                    yield at, "profile function", p.function
                for c in record.columns:
                    yield at, "series source", c.source
                    yield at, "series column", c.column
                    if c.timestamps:
                        yield at, "series timestamp", max(c.timestamps, key=len)
                for s in record.samples:
                    yield at, "series source", s.source
                    yield at, "series column", s.column
                    if s.timestamp:
                        yield at, "series timestamp", s.timestamp
                for h in record.histograms:
                    yield at, "histogram name", h.name
                    yield at, "histogram x_label", h.x_label
                for cv in record.curves:
                    yield at, "curve name", cv.name
                    yield at, "curve x_label", cv.x_label
                    yield at, "curve y_label", cv.y_label


def _lengths_check(manifest: Manifest, plan: Iterable[PlannedRun]) -> None:
    """Raise ``ManifestError`` listing every text longer than its column (each once): a
    51-character metric unit is refused here, before any transaction, not met by the
    database as a DataError. The limits are read from perfdb/models.py, so the two cannot
    drift apart."""
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for where, kind, value in _texts(manifest, plan):
        limit = _max_length(kind)
        if value and len(value) > limit and (kind, value) not in seen:
            seen.add((kind, value))
            problems.append(
                f"{where}: {kind} {value[:60]!r}… is {len(value)} characters; "
                f"at most {limit} are stored"
            )
    if problems:
        raise ManifestError(problems)
