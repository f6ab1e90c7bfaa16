"""Uploads of VolanoMark builds, ingested and checked in this process: the alerts of a
culprit build for the summary, overview and email tests (a helper, not a test module)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from perfdb.alerting.regressions import regressions_check_upload
from perfdb.models import Run, Upload
from tests.bundles import ingest_bundle, make_bundle, manifest_toml, volano_log, volano_run

# (kernel, patches as TOML, throughputs a trial each, rooms: the set-up's parameter)
Build = tuple[str, str, tuple[int, ...], int]


def upload_builds(tmp_path: Path, name: str, runs: Sequence[Build]) -> Upload:
    """Ingest the runs as one upload, then run its regression check; returns the upload."""
    files: dict[str, str | bytes] = {}
    blocks = []
    for r, (kernel, patches, values, rooms) in enumerate(runs):
        entries = []
        for t, value in enumerate(values, start=1):
            files[f"r{r}/t{t}.log"] = volano_log(value)
            entries.append(f'{{ path = "r{r}/t{t}.log", parser = "volanomark", trial = {t} }}')
        block = volano_run(kernel, patches=patches, files=", ".join(entries))
        blocks.append(block.replace("rooms = 10", f"rooms = {rooms}"))
    files["manifest.toml"] = manifest_toml(*blocks)
    upload = ingest_bundle(make_bundle(tmp_path / name, files))
    assert upload.status == "done", upload.error
    series = {
        (run.setup_id, metric_id)
        for run in Run.objects.filter(upload=upload)
        for metric_id in run.results.values_list("metric_id", flat=True)
    }
    regressions_check_upload(upload_id=upload.pk, series=series)
    return upload


def o1_regression(tmp_path: Path) -> Upload:
    """Stock 2.4.20 in two set-ups (10 and 20 rooms), then 2.4.20+O(1) about 15 % slower in
    both, in one upload: one culprit build, four alerts (throughput and elapsed in each).
    Returns the culprit's upload."""
    stock = [("2.4.20", "[]", (13000, 13100, 12950), 10), ("2.4.20", "[]", (9000, 9050, 8990), 20)]
    upload_builds(tmp_path, "stock.tar.gz", stock)
    o1 = [
        ("2.4.20", '["O(1)"]', (11000, 11100, 11050), 10),
        ("2.4.20", '["O(1)"]', (7600, 7650, 7580), 20),
    ]
    return upload_builds(tmp_path, "o1.tar.gz", o1)
