"""What bench/load.py's uploaders send: a synthetic machine's nightly bundle."""

from __future__ import annotations

import io
import random
import tarfile
import uuid
from collections import defaultdict


def _toml(value: object) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


def nightly_bundle(unit: int, kernel: str, nonce: str, rng: random.Random) -> tuple[bytes, list]:
    """One machine's night: a run per workload of synthetic unit ``unit`` on ``kernel``,
    values continuing each stored series (its last run, 2 % noise). Returns the bundle and
    the setups' (workload, hardware, mode, params) keys."""
    from ingest import synthetic

    lines = ["format = 1"]
    declared = {m.name: m for m in synthetic.metric_defs()}
    keys = []
    body = []
    used: set[str] = set()
    for spec in synthetic.setups_of_unit(unit):
        last = list(synthetic.runs_of_setup(spec, seed=1))[-1]
        metrics: dict[str, list[float]] = defaultdict(list)
        for name, _, _trial, value in last.results:
            metrics[name].append(round(value * (1 + rng.gauss(0, 0.02)), 6))
        used.update(metrics)
        params = ", ".join(f"{k} = {_toml(v)}" for k, v in spec.params)
        values = ", ".join(f"{k} = {v}" for k, v in metrics.items())
        body += [
            "[[run]]",
            f'workload = "{spec.workload.name}"',
            f'workload_version = "{spec.workload.version}"',
            f'kernel = "{kernel}"',
            f'hardware = "{spec.hardware.name}"',
            f'mode = "{spec.mode}"',
            f'label = "night-{nonce}-{spec.index}"',
            f"params = {{ {params} }}",
            f"metrics = {{ {values} }}",
        ]
        if spec.workload.discard_first_trial:
            body.append("discard_first_trial = true")
        keys.append(spec)
    for name in sorted(used):
        m = declared[name]
        lines += [f"[metric.{m.name}]", f'unit = "{m.unit}"', f'better = "{m.better}"']
    text = "\n".join(lines + body) + "\n"
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        data = text.encode()
        info = tarfile.TarInfo("manifest.toml")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return out.getvalue(), keys


def multipart(field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"; '
        f'filename="{filename}"\r\nContent-Type: application/gzip\r\n\r\n'
    ).encode()
    return head + data + f"\r\n--{boundary}--\r\n".encode(), boundary


# --- the clients ---------------------------------------------------------------------------
