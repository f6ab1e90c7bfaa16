"""Every text a bundle stores, checked against its database column before the transaction.

A value longer than its column (a 51-character metric unit) used to reach PostgreSQL as a
DataError the ingest did not expect, leaving the upload ``processing``. Here each manifest
field and each parsed name is measured against the ``max_length`` of the column it goes to
(read from perfdb/models.py, so the two cannot drift apart), and every excess is reported at
once, as a ``ManifestError`` naming the field, where it is, and the limit.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ingest.manifest import Manifest, ManifestError
from ingest.plan import PlannedRun
from perfdb import models

# (model, field) for each kind of text a bundle carries.
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


def max_length(kind: str) -> int:
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


def check_lengths(manifest: Manifest, plan: Iterable[PlannedRun]) -> None:
    """Raise ``ManifestError`` listing every text longer than its column (each once)."""
    problems: list[str] = []
    seen: set[tuple[str, str]] = set()
    for where, kind, value in _texts(manifest, plan):
        limit = max_length(kind)
        if value and len(value) > limit and (kind, value) not in seen:
            seen.add((kind, value))
            problems.append(
                f"{where}: {kind} {value[:60]!r}… is {len(value)} characters; "
                f"at most {limit} are stored"
            )
    if problems:
        raise ManifestError(problems)
