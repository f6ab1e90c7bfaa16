"""Uploads of VolanoMark builds, ingested and checked in this process: the alerts of a
culprit build for the summary, overview and email tests (a helper, not a test module)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ingest.services import upload_create
from perfdb.alerting.check_data import detector_settings
from perfdb.alerting.regressions import detection_run
from perfdb.detector import detection, policy
from perfdb.models import Alert, Metric, Result, Run, Threshold, Upload
from tests.bundles import (
    ingest_bundle,
    ingested_here,
    make_bundle,
    manifest_toml,
    volano_log,
    volano_run,
)
from tests.perfdb.alerting.step_series import TRIALS

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
    detection_run(upload_id=upload.pk, series=sorted(series))
    upload.refresh_from_db()
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


def series_points(*, setup_id: int, metric_id: int) -> list[detection.Point]:
    """One series as detector points, read the plain way (one row per trial, grouped here):
    the reference the check's batched loader (check_data.py) is held against."""
    rows = (
        Result.objects.filter(setup_id=setup_id, metric_id=metric_id, discarded=False)
        .order_by("run_id", "trial")
        .values_list("run_id", "run__kernel__version", "run__patch_set__name", "value")
    )
    runs: dict[int, tuple[str, str, list[float]]] = {}
    for run_id, kernel, patches, value in rows:
        runs.setdefault(run_id, (kernel, patches, []))[2].append(value)
    return [
        detection.Point(
            run_id=run_id,
            kernel=kernel,
            patches=tuple(p for p in patches.split("+") if p),
            values=tuple(values),
        )
        for run_id, (kernel, patches, values) in runs.items()
    ]


def settings_for(setup_id: int, metric: Metric) -> policy.Settings:
    """One series' detector settings from its workload's threshold row, read alone (the
    check reads every series' at once through check_data.py)."""
    row = (
        Threshold.objects.filter(workload__setup__id=setup_id, metric=metric)
        .values_list("threshold_pct", "typical_noise_pct")
        .first()
    )
    return detector_settings(metric, *(row if row is not None else (None, None)))


def ingest_runs(tmp_path, name: str, runs: list[tuple[str, str, tuple[int, ...]]]):
    """Ingest VolanoMark runs [(kernel, patches_toml, throughputs)]; returns the upload."""
    files: dict[str, str | bytes] = {}
    blocks = []
    for r, (kernel, patches, values) in enumerate(runs):
        entries = []
        for t, value in enumerate(values, start=1):
            path = f"r{r}/t{t}.log"
            files[path] = volano_log(value)
            entries.append(f'{{ path = "{path}", parser = "volanomark", trial = {t} }}')
        blocks.append(volano_run(kernel, patches=patches, files=", ".join(entries)))
    files["manifest.toml"] = manifest_toml(*blocks)
    path = make_bundle(tmp_path / name, files)
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=name)
    upload = ingested_here(upload)
    assert upload.status == "done", upload.error
    return upload


def check(upload) -> int:
    """The upload's regression check as its task runs it: its series, then its mark
    cleared (its page then shows what the check found)."""
    runs = Run.objects.filter(upload=upload)
    series = {
        (run.setup_id, metric_id)
        for run in runs
        for metric_id in run.results.values_list("metric_id", flat=True)
    }
    return detection_run(upload_id=upload.pk, series=sorted(series))


def upload(tmp_path, name: str, kernel: str, values: tuple[int, ...]):
    done = ingest_runs(tmp_path, f"{name}.tar.gz", [(kernel, "[]", values)])
    check(done)
    return done


def throughput_regression() -> Alert:
    return Alert.objects.get(metric__name="throughput", direction="regression")


def upload_all(tmp_path, count: int, trials=TRIALS) -> list:
    return [
        upload(tmp_path, f"u{i}", f"2.5.{i + 1}", values) for i, values in enumerate(trials[:count])
    ]
