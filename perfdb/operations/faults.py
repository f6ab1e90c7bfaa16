"""Named pause points for the fault tests: a worker told to stop at a point waits there, so a
test can kill it (or cut its database connection) at exactly that moment.

Off unless the environment says so: ``PERFDB_PAUSE_AT=<point>`` and ``PERFDB_PAUSE_DIR=<dir>``.
On reaching the point the process writes ``<dir>/<point>.reached`` (its pid) and waits until
``<dir>/<point>.release`` exists (at most ``PERFDB_PAUSE_SECONDS``, default 30). Only the first
arrival pauses, so a redelivered task runs through. In production nothing is set and a pause
point is one environment lookup.

Points: ``ingest-committed`` (the upload's runs and its detection mark committed, nothing
queued yet), ``ingest-writing`` (inside the ingest transaction, before the rows are written),
``detection-series`` (between two committed series of a regression check),
``detection-loaded`` (inside a check's transaction, its series locked and read, nothing
written), ``smtp-data`` (used by the tests' SMTP server, not here).
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def pause_point(name: str) -> None:
    if os.environ.get("PERFDB_PAUSE_AT") != name:
        return
    folder = Path(os.environ.get("PERFDB_PAUSE_DIR", "/tmp"))
    reached = folder / f"{name}.reached"
    try:
        with open(reached, "x") as marker:  # only the first arrival pauses
            marker.write(str(os.getpid()))
    except FileExistsError:
        return
    release = folder / f"{name}.release"
    deadline = time.monotonic() + float(os.environ.get("PERFDB_PAUSE_SECONDS", "30"))
    while time.monotonic() < deadline and not release.exists():
        time.sleep(0.02)
