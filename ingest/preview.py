"""What a bundle will create, shown before it is stored.

A manifest that maps a file's records to runs ([[runs_from]], ``select``) is easy to get
subtly wrong: a label mapped to the wrong kernel, a client count read as a separate run. The
preview runs the same pure steps as ingest (unpack, manifest check, parsers, plan) on the
uploaded file and lists the runs, so the uploader sees them before anything is written.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ingest.bundle import bundle_parse, read_bundle
from ingest.keys import MetricCache
from ingest.plan import PlannedRun
from ingest.services import DATA_ERRORS


@dataclass(frozen=True)
class RunPreview:
    index: int
    workload: str
    workload_version: str
    kernel: str
    patches: list[str]
    hardware: str
    mode: str
    params: dict[str, str | int | float | bool]
    trials: list[int]
    metrics: list[str]
    files: list[str]


@dataclass(frozen=True)
class Preview:
    runs: list[RunPreview]
    warnings: list[str]
    problems: list[str]  # empty when the bundle would ingest


def _run_preview(planned: PlannedRun) -> RunPreview:
    spec = planned.spec
    trials = sorted({t for part in planned.parts for t, _ in part.trials if t})
    direct = max((len(values) for values in spec.metrics.values()), default=0)
    metrics = set(spec.metrics)
    for part in planned.parts:
        for _, record in part.trials:
            metrics.update(m.metric for m in record.measurements)
    return RunPreview(
        index=spec.index,
        workload=spec.workload,
        workload_version=spec.workload_version,
        kernel=spec.kernel,
        patches=list(spec.patches),
        hardware=spec.hardware,
        mode=spec.mode,
        params=dict(spec.params),
        trials=trials or (list(range(1, 1 + direct)) if direct > 1 else []),
        metrics=sorted(metrics),
        files=[f"{part.file.path} ({part.file.parser})" for part in planned.parts],
    )


def bundle_preview(*, stream: BinaryIO) -> Preview:
    """Plan the runs of the bundle in ``stream`` without storing anything."""
    with tempfile.NamedTemporaryFile(prefix="perfdb-preview-") as copy:
        stream.seek(0)
        for chunk in iter(lambda: stream.read(1024 * 1024), b""):
            copy.write(chunk)
        copy.flush()
        try:
            manifest, plan, warnings = bundle_parse(read_bundle(Path(copy.name)))
        except DATA_ERRORS as error:
            return Preview(runs=[], warnings=[], problems=str(error).splitlines())
    # The stored metrics' directions, which only the writer read before: the one check of
    # ingest that needs the database and can refuse a bundle whose files all parse.
    metrics = MetricCache(manifest)
    problems = metrics.directions_check(
        (m.metric, m.unit, m.better, f"file {part.file.path!r}")
        for planned in plan
        for part in planned.parts
        for _, record in part.trials
        for m in record.measurements
    )
    return Preview(
        runs=[_run_preview(p) for p in plan],
        warnings=[*warnings, *dict.fromkeys(metrics.warnings)],
        problems=list(dict.fromkeys(problems)),
    )
