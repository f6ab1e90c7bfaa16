"""Regression-check speed: ``regressions_check_upload`` on an upload of 100 runs.

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data \
        python bench/regression_speed.py

The upload goes through the real pipeline: 100 runs (10 later kernels, 2.6.3 to 2.6.12, on
10 synthetic setups of different workloads), each extending a stored series of 64 runs, with
a 15 % regression from 2.6.8 on half of them. The check the pipeline would queue is then run
in this process and timed: whole upload, per series (series query + detector + alerts), and
a second time (nothing new to record). Runs made here are marked synthetic.
"""

from __future__ import annotations

import io
import tarfile
import tempfile
import uuid
from pathlib import Path
from unittest import mock

from _common import django_setup, ms, p50, p95, table, timed

WORKLOADS = (
    "VolanoMark",
    "SPECjAppServer2002",
    "Trade",
    "SPECweb99",
    "LMBench",
    "tiobench",
    "kernbench",
    "netperf",
    "hackbench",
    "AIM7",
)


def _toml_value(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def manifest(nonce: str) -> str:
    """10 setups x 10 kernels; the generator's own values, so the series continue smoothly."""
    from ingest import synthetic

    specs = [
        synthetic.setup_spec(i)
        for i in range(synthetic.SETUPS_PER_UNIT)
        if synthetic.setup_spec(i).workload.name.removeprefix(synthetic.PREFIX) in WORKLOADS
    ]
    lines = ["format = 1"]
    declared = {}
    for spec in specs:
        for m in spec.workload.metrics:
            declared[m.name] = m
    for m in declared.values():
        lines += [f"[metric.{m.name}]", f'unit = "{m.unit}"', f'better = "{m.better}"']
    for n, spec in enumerate(specs):
        last = list(synthetic.runs_of_setup(spec, seed=1))[-1]  # 2.6.2 stock
        for step, kernel in enumerate(synthetic.BENCH_KERNELS):
            worse = 0.85 if n % 2 == 0 and step >= 5 else 1.0
            metrics = {}
            for m in spec.workload.metrics:
                values = [v for name, _, _, v in last.results if name == m.name]
                factor = worse if m.better == "higher" else 1 / worse if m.better == "lower" else 1
                metrics[m.name] = [round(v * factor * (1 + 0.002 * step), 6) for v in values]
            params = ", ".join(f"{k} = {_toml_value(v)}" for k, v in spec.params)
            values_toml = ", ".join(f"{k} = {v}" for k, v in metrics.items())
            lines += [
                "[[run]]",
                f'workload = "{spec.workload.name}"',
                f'workload_version = "{spec.workload.version}"',
                f'kernel = "{kernel}"',
                f'hardware = "{spec.hardware.name}"',
                f'mode = "{spec.mode}"',
                f'label = "{nonce}-{n}-{step}"',
                f"params = {{ {params} }}",
                f"metrics = {{ {values_toml} }}",
            ]
    return "\n".join(lines) + "\n"


def main() -> None:
    django_setup()
    import hashlib

    from django.core.files import File

    from ingest import services
    from perfdb.alerting import queue as alerting_queue
    from perfdb.alerting import regressions
    from perfdb.models import Alert, Result, Run, Upload

    mock.patch.object(alerting_queue, "regressions_check").start()  # timed here instead
    nonce = uuid.uuid4().hex[:8]
    data = io.BytesIO()
    text = manifest(nonce).encode()
    with tarfile.open(fileobj=data, mode="w:gz") as tar:
        info = tarfile.TarInfo("manifest.toml")
        info.size = len(text)
        tar.addfile(info, io.BytesIO(text))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"regressions-{nonce}.tar.gz"
        path.write_bytes(data.getvalue())
        upload = Upload(
            filename=path.name,
            sha256=hashlib.sha256(data.getvalue()).hexdigest(),
            size=len(data.getvalue()),
        )
        with open(path, "rb") as stream:
            upload.file.save(path.name, File(stream), save=False)
        upload.save()
        ingest_seconds, run_ids = timed(services.upload_ingest, upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == "done", upload.error
    series = sorted(
        set(Result.objects.filter(run_id__in=run_ids).values_list("setup_id", "metric_id"))
    )
    first, created = timed(regressions.regressions_check_upload, upload_id=upload.pk, series=series)
    again, created_again = timed(
        regressions.regressions_check_upload, upload_id=upload.pk, series=series
    )
    per_series = [
        timed(regressions.regressions_check_upload, upload_id=upload.pk, series=[s])[0]
        for s in series
    ]
    queries = [timed(regressions.series_points, setup_id=s, metric_id=m)[0] for s, m in series]
    Run.objects.filter(pk__in=run_ids).update(synthetic=True)
    alerts = Alert.objects.filter(upload=upload).count()
    print(
        f"upload of {len(run_ids)} runs, {len(series)} series; ingest {ingest_seconds:.2f} s; "
        f"{created} alerts created ({alerts} stored), {created_again} on the second check\n"
    )
    rows = [
        ("whole upload, first check (alerts written)", ms(first), "-", "-"),
        ("whole upload, second check (nothing new)", ms(again), "-", "-"),
        ("per series (first check / series)", ms(first / len(series)), "-", "-"),
        ("per series, checked alone", "-", ms(p50(per_series)), ms(p95(per_series))),
        ("series query alone (series_points)", "-", ms(p50(queries)), ms(p95(queries))),
    ]
    print(table(["what", "total ms", "p50 ms", "p95 ms"], rows))


if __name__ == "__main__":
    main()
