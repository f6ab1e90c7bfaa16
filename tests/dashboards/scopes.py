"""The dashboard bundle ingested again on other hardware (a new scope), and a set-up's
scope key as the page cache names it (helpers, not tests)."""

from __future__ import annotations

import tarfile

from perfdb.models import Setup
from tests.bundles import make_bundle
from tests.dashboards.data import dashboard_bundle, ingest


def ingest_on_hardware(tmp_path, hardware: str):
    """The dashboard bundle again on another machine: new setups, a new scope."""
    with tarfile.open(dashboard_bundle(tmp_path / f"src-{hardware}.tar.gz")) as src:
        files = {m.name: src.extractfile(m).read() for m in src.getmembers()}
    files["manifest.toml"] = files["manifest.toml"].decode().replace("P8", hardware)
    return ingest(make_bundle(tmp_path / f"{hardware}.tar.gz", files))


def scope_key(setup: Setup) -> str:
    return f"{setup.workload_id}-{setup.hardware_id}-{setup.mode}"
