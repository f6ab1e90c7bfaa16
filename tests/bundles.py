"""Build result bundles for tests, in tmp_path."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from ingest.services import upload_create, upload_ingest
from perfdb.models import Upload

VOLANO = """VolanoMark version = 2.1.2
Messages sent      = 10000
Messages received  = 190000
Total messages     = 200000
Elapsed time       = {elapsed} seconds
Average throughput = {throughput} messages per second
"""


def volano_log(throughput: int) -> str:
    return VOLANO.format(throughput=throughput, elapsed=round(200000 / throughput, 3))


def manifest_toml(*runs: str, hardware: str = "P8") -> str:
    head = f"""format = 1
[hardware.{hardware}]
cpus = 8
cpu = "Pentium III"
mhz = 700
"""
    return head + "\n".join(runs)


def volano_run(kernel: str, patches: str = "[]", files: str = "", extra: str = "") -> str:
    return f"""
[[run]]
workload = "VolanoMark"
workload_version = "2.1.2"
kernel = "{kernel}"
patches = {patches}
hardware = "P8"
mode = "UP"
params = {{ rooms = 10, messages = 1000 }}
files = [{files}]
{extra}
"""


def make_bundle(path: Path, files: dict[str, str | bytes]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def volano_bundle(path: Path, kernel: str = "2.5.25", throughputs=(13000, 13500, 13200)) -> Path:
    files = ", ".join(
        f'{{ path = "t{i}.log", parser = "volanomark", trial = {i} }}'
        for i in range(1, len(throughputs) + 1)
    )
    contents: dict[str, str | bytes] = {
        "manifest.toml": manifest_toml(volano_run(kernel, files=files))
    }
    for i, value in enumerate(throughputs, start=1):
        contents[f"t{i}.log"] = volano_log(value)
    return make_bundle(path, contents)


def ingest_bundle(path: Path) -> Upload:
    """Upload and ingest a bundle file as the CLI does, in this process; the upload after."""
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    return ingested_here(upload)


def ingested_here(upload: Upload) -> Upload:
    """Ingest ``upload`` in this process; the upload after. In a transactional test the
    upload's commit queued its ingest task, and a worker the session started may claim it
    first (then this process finds it taken): its outcome is the one to read."""
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    if upload.status not in (Upload.Status.DONE, Upload.Status.FAILED):
        from tests.conftest import wait_for_worker_idle

        wait_for_worker_idle()
        upload.refresh_from_db()
    return upload
