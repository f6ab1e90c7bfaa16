"""The bundle manifest (docs/bundle-format.md), read whole by one call, ``parse_manifest``,
into frozen specs; every problem is reported at once.

``document`` reads the manifest as a whole and its named tables (hardware, metric, kernel),
``runs`` its ``[[run]]`` tables, ``runs_from`` its ``[[runs_from]]`` blocks, ``evidence``
its reference builds and claims; ``fields`` holds the typed readers they share.
"""

from ingest.manifest.document import (
    HardwareSpec,
    Manifest,
    ManifestError,
    MetricSpec,
    parse_manifest,
)
from ingest.manifest.evidence import BuildSpec, ClaimSpec
from ingest.manifest.runs import MAX_RUNS, FileSpec, RunSpec
from ingest.manifest.runs_from import RunsFromSpec

__all__ = [
    "MAX_RUNS",
    "BuildSpec",
    "ClaimSpec",
    "FileSpec",
    "HardwareSpec",
    "Manifest",
    "ManifestError",
    "MetricSpec",
    "RunSpec",
    "RunsFromSpec",
    "parse_manifest",
]
