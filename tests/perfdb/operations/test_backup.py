"""perfdb/operations/backup.py with the real pg_dump and pg_restore: a backup of ingested uploads is
restored, by ``manage.py restore`` in another process, into a database created for the test
and an empty media folder, and every run, result, raw file and bundle is found there."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import psycopg
import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from perfdb.models import RawFile, Result, Run, SetupSummary, Upload
from perfdb.operations.backup import BUNDLES, MANIFEST
from tests.bundles import ingest_bundle, volano_bundle
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db(transaction=True)  # pg_dump sees committed rows only


def _admin(cfg: dict) -> psycopg.Connection:
    return psycopg.connect(
        host=cfg["HOST"] or "127.0.0.1",
        port=cfg["PORT"] or 5432,
        user=cfg["USER"],
        password=cfg["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )


@pytest.fixture
def fresh_database():
    """A new, empty database beside the test database; dropped after."""
    cfg = connection.settings_dict
    name = f"{cfg['NAME']}_restore_{uuid.uuid4().hex[:8]}"
    with _admin(cfg) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    user = cfg["USER"] + (f":{cfg['PASSWORD']}" if cfg["PASSWORD"] else "")
    url = f"postgres://{user}@{cfg['HOST'] or '127.0.0.1'}:{cfg['PORT'] or 5432}/{name}"
    yield url
    with _admin(cfg) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _uploads(tmp_path: Path) -> list[Upload]:
    return [
        ingest_bundle(volano_bundle(tmp_path / "a.tar.gz", kernel="2.5.25")),
        ingest_bundle(volano_bundle(tmp_path / "b.tar.gz", kernel="2.5.59", throughputs=(9, 8))),
    ]


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_backup_restores_into_a_fresh_database_with_every_run(tmp_path, fresh_database):
    uploads = _uploads(tmp_path)
    assert all(u.status == Upload.Status.DONE for u in uploads)
    call_command("backup", str(tmp_path / "backup"))
    media = tmp_path / "restored-media"
    env = {
        **os.environ,
        "DATABASE_URL": fresh_database,
        "MEDIA_ROOT": str(media),
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "restore", str(tmp_path / "backup")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    counts = f"2 uploads, 2 runs, {Result.objects.count()} results, 5 raw files"
    assert f"restored: {counts}" in done.stdout

    with psycopg.connect(fresh_database.replace("postgres://", "postgresql://")) as db:
        runs = db.execute("SELECT id, fingerprint FROM perfdb_run ORDER BY id").fetchall()
        results = db.execute(
            "SELECT run_id, count(*), sum(value) FROM perfdb_result GROUP BY run_id ORDER BY 1"
        ).fetchall()
        raw = db.execute(
            "SELECT run_id, path, sha256, content FROM perfdb_rawfile ORDER BY run_id, path"
        ).fetchall()
        stored = db.execute("SELECT file, sha256 FROM perfdb_upload ORDER BY id").fetchall()
        summaries = db.execute("SELECT setup_id, run_count FROM perfdb_setupsummary").fetchall()
    assert runs == list(Run.objects.order_by("id").values_list("id", "fingerprint"))
    by_run: dict[int, list[float]] = {}
    for run_id, value in Result.objects.values_list("run_id", "value"):
        by_run.setdefault(run_id, []).append(value)
    assert results == [(r, len(v), pytest.approx(sum(v))) for r, v in sorted(by_run.items())]
    assert [(r, p, s, bytes(c)) for r, p, s, c in raw] == [
        (f.run_id, f.path, f.sha256, bytes(f.content))
        for f in RawFile.objects.order_by("run_id", "path")
    ]
    assert all(_sha(bytes(content)) == sha for _, _, sha, content in raw)
    assert sorted(summaries) == sorted(SetupSummary.objects.values_list("setup_id", "run_count"))
    for name, sha in stored:  # every bundle, under its own name, with the uploaded bytes
        assert _sha((media / name).read_bytes()) == sha
        with default_storage.open(name, "rb") as original:
            assert original.read() == (media / name).read_bytes()


def test_a_database_that_holds_tables_is_never_restored_into(tmp_path):
    _uploads(tmp_path)
    call_command("backup", str(tmp_path / "backup"))
    with pytest.raises(CommandError, match="restore into a new database"):
        call_command("restore", str(tmp_path / "backup"))
    assert Run.objects.count() == 2


def test_a_damaged_backup_is_refused_before_anything_is_restored(tmp_path):
    uploads = _uploads(tmp_path)
    call_command("backup", str(tmp_path / "backup"))
    manifest = json.loads((tmp_path / "backup" / MANIFEST).read_text())
    assert [b["name"] for b in manifest["bundles"]] == [u.file.name for u in uploads]
    copy = tmp_path / "backup" / BUNDLES / uploads[0].file.name
    data = copy.read_bytes()
    copy.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    with pytest.raises(CommandError, match="does not match its checksum"):
        call_command("restore", str(tmp_path / "backup"))


def test_a_backup_goes_to_a_new_directory(tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("")
    with pytest.raises(CommandError, match="not empty"):
        call_command("backup", str(tmp_path / "used"))


def test_a_bundle_gone_from_storage_is_listed_as_missing(tmp_path):
    uploads = _uploads(tmp_path)
    default_storage.delete(uploads[1].file.name)
    call_command("backup", str(tmp_path / "backup"))
    manifest = json.loads((tmp_path / "backup" / MANIFEST).read_text())
    assert manifest["missing"] == [uploads[1].file.name]
    assert [b["name"] for b in manifest["bundles"]] == [uploads[0].file.name]
    assert manifest["counts"]["uploads"] == 2
