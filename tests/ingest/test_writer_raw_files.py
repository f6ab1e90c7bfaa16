"""The raw files a run was read from are stored byte for byte (ingest.writer sends them with
COPY's binary format, ingest.copy_rows.copy_rows_binary), with their digest, parser, trial
and the warnings their parse gave."""

from __future__ import annotations

import hashlib

import pytest

from ingest.services import upload_create, upload_ingest
from perfdb.models import RawFile, Upload
from tests.bundles import make_bundle, manifest_toml

pytestmark = pytest.mark.django_db

VMSTAT = (
    b"procs -----------memory---------- ---swap-- -----io---- --system-- ----cpu----\n"
    b" r  b   swpd   free   buff  cache   si   so    bi    bo   in    cs us sy id wa\n"
    + b" 1  0      0 503112  41208 312452    0    0    18    11 1021   130  2  1 96  1\n" * 6
    + b"noise \\ ' \" \x00 \xff\xfe \\x00 {} \r\n"  # Latin-1, a NUL, escapes COPY text would need
    + b" 4  0      0 502984  41208 312452    0    0     0     0 1012  5122 60 12 28  0\n"
)
RUN = """
[[run]]
workload = "vmstat-raw"
kernel = "2.6.0"
hardware = "P8"
mode = "SMP"
files = [{ path = "logs/one.txt", parser = "vmstat", trial = 1 },
         { path = "two.txt", parser = "vmstat", trial = 2 }]
"""


@pytest.fixture
def queued(monkeypatch):
    from ingest import queue

    monkeypatch.setattr(queue, "ingest_upload", lambda *, upload_id: None)


def test_raw_files_are_stored_byte_for_byte(tmp_path, queued):
    second = VMSTAT.replace(b"503112", b"503113") + bytes(range(256))
    path = make_bundle(
        tmp_path / "raw.tar.gz",
        {"manifest.toml": manifest_toml(RUN), "logs/one.txt": VMSTAT, "two.txt": second},
    )
    with open(path, "rb") as stream:
        upload, _ = upload_create(stream=stream, filename=path.name, source="cli")
    upload_ingest(upload_id=upload.pk)
    upload.refresh_from_db()
    assert upload.status == Upload.Status.DONE, upload.error
    stored = {f.path: f for f in RawFile.objects.filter(run_id__in=upload.run_ids)}
    assert set(stored) == {"logs/one.txt", "two.txt"}
    for name, data, trial in (("logs/one.txt", VMSTAT, 1), ("two.txt", second, 2)):
        raw = stored[name]
        assert bytes(raw.content) == data
        assert raw.sha256 == hashlib.sha256(data).hexdigest()
        assert (raw.parser, raw.trial) == ("vmstat", trial)
        assert any("not vmstat output, skipped" in w for w in raw.warnings), raw.warnings
        assert all(isinstance(w, str) for w in raw.warnings)
