"""Backup and restore: the database and the stored bundles, as one consistent copy.

A backup is a directory:

- ``database.dump``: ``pg_dump --format=custom`` of the whole database;
- ``bundles/<name>``: every upload's stored bundle, read through Django's default storage
  (local ``MEDIA_ROOT`` or the S3 bucket alike), under the name its row stores;
- ``manifest.json``: the size and SHA-256 of every file, the row counts (uploads, runs,
  results, raw files, samples, profile entries) and the applied migrations.

The dump and the list of bundles come from one snapshot: the backup opens a repeatable-read
transaction, exports its snapshot and runs ``pg_dump --snapshot`` on it, so the dump names
exactly the bundles listed while uploads and deletions go on. A bundle deleted from storage
after that (an upload deleted meanwhile) is listed as missing, never silently left out.

``restore`` checks every file against the manifest first, refuses a database that holds any
table (it restores into a fresh one: ``createdb``, then point ``DATABASE_URL`` at it), runs
``pg_restore`` in one transaction (a failure leaves the database empty), writes the bundles
back to the default storage (an existing file must hold the same bytes), checks that the row
counts are the manifest's, moves every cache version (nothing cached before may be served)
and analyses the tables (autovacuum never analyses the partitioned parents: docs/deploy.md).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, BinaryIO

from django.core.files import File
from django.core.files.storage import default_storage
from django.db import connections, transaction
from django.utils import timezone

from perfdb import cache

FORMAT = 1
DUMP = "database.dump"
BUNDLES = "bundles"
MANIFEST = "manifest.json"
CHUNK = 1024 * 1024
DB = "default"  # the primary: a replica's snapshot cannot be exported
# What a restore must find again, counted in the backup's snapshot.
COUNTED = {
    "uploads": "perfdb_upload",
    "runs": "perfdb_run",
    "results": "perfdb_result",
    "raw_files": "perfdb_rawfile",
    "samples": "perfdb_sample",
    "profile_entries": "perfdb_profileentry",
}


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why and what to do."""


@dataclass
class Summary:
    counts: dict[str, int]
    bundles: int
    missing: list[str] = field(default_factory=list)


def _digest(stream: IO[bytes] | File[Any], copy_to: BinaryIO | None = None) -> tuple[str, int]:
    digest, size = hashlib.sha256(), 0
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
        if copy_to is not None:
            copy_to.write(chunk)
    return digest.hexdigest(), size


def _file_digest(path: Path) -> tuple[str, int]:
    with path.open("rb") as stream:
        return _digest(stream)


def _pg_env() -> dict[str, str]:
    """libpq's variables for the pg_* tools, from the connection Django uses (the test
    database's name in the tests); nothing goes on a command line a `ps` would show."""
    cfg = connections[DB].settings_dict
    env = {**os.environ, "PGDATABASE": str(cfg["NAME"])}
    for var, key in (("PGHOST", "HOST"), ("PGPORT", "PORT"), ("PGUSER", "USER")):
        if cfg.get(key):
            env[var] = str(cfg[key])
    if cfg.get("PASSWORD"):
        env["PGPASSWORD"] = str(cfg["PASSWORD"])
    if sslmode := (cfg.get("OPTIONS") or {}).get("sslmode"):
        env["PGSSLMODE"] = str(sslmode)
    return env


def _run(args: list[str]) -> None:
    if shutil.which(args[0]) is None:
        raise BackupError(f"{args[0]} is not installed (apt-get install postgresql-client)")
    done = subprocess.run(args, env=_pg_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise BackupError(f"{args[0]} failed: {done.stderr.strip()}")


def _counts() -> dict[str, int]:
    with connections[DB].cursor() as cursor:
        found = {}
        for name, table in COUNTED.items():
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608  # names above
            found[name] = int(cursor.fetchone()[0])
        return found


def _migrations() -> dict[str, str]:
    with connections[DB].cursor() as cursor:
        cursor.execute("SELECT app, max(name) FROM django_migrations GROUP BY app ORDER BY app")
        return {str(app): str(name) for app, name in cursor.fetchall()}


@contextmanager
def _snapshot() -> Iterator[str]:
    """A repeatable-read transaction on the primary, its snapshot exported for pg_dump."""
    with transaction.atomic(using=DB), connections[DB].cursor() as cursor:
        cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        cursor.execute("SELECT pg_export_snapshot()")
        yield str(cursor.fetchone()[0])


def backup(dest: Path, say: Callable[[str], None] = lambda _: None) -> Summary:
    """Write a backup into ``dest`` (new or empty); see the module's docstring."""
    if dest.exists() and any(dest.iterdir()):
        raise BackupError(f"{dest} is not empty: give a new directory for each backup")
    (dest / BUNDLES).mkdir(parents=True, exist_ok=True)
    with _snapshot() as snapshot:
        _run(["pg_dump", "--format=custom", f"--snapshot={snapshot}", "--file", str(dest / DUMP)])
        counts, migrations = _counts(), _migrations()
        with connections[DB].cursor() as cursor:
            cursor.execute("SELECT file, sha256 FROM perfdb_upload WHERE file <> '' ORDER BY id")
            stored = cursor.fetchall()
    say(f"database: {counts['runs']} runs, {counts['results']} results")
    bundles, missing = [], []
    for name, upload_sha in stored:
        target = dest / BUNDLES / name
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with default_storage.open(name, "rb") as source, target.open("wb") as copy:
                sha, size = _digest(source, copy)
        except FileNotFoundError:
            target.unlink(missing_ok=True)
            missing.append(name)
            say(f"missing from storage (deleted since the snapshot?): {name}")
            continue
        if sha != upload_sha:
            say(f"{name}: its bytes are not those uploaded (sha256 {sha}, upload {upload_sha})")
        bundles.append({"name": name, "bytes": size, "sha256": sha})
    dump_sha, dump_size = _file_digest(dest / DUMP)
    manifest = {
        "format": FORMAT,
        "created_at": timezone.now().isoformat(),
        "database": {"file": DUMP, "bytes": dump_size, "sha256": dump_sha},
        "migrations": migrations,
        "counts": counts,
        "bundles": bundles,
        "missing": missing,
    }
    (dest / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")
    say(f"bundles: {len(bundles)} copied, {len(missing)} missing")
    return Summary(counts=counts, bundles=len(bundles), missing=missing)


def read_manifest(src: Path) -> dict[str, Any]:
    """The manifest, after checking every file it names against its size and SHA-256."""
    try:
        manifest: dict[str, Any] = json.loads((src / MANIFEST).read_text())
    except FileNotFoundError as exc:
        raise BackupError(f"{src} holds no {MANIFEST}: not a perfdb backup") from exc
    if manifest.get("format") != FORMAT:
        raise BackupError(f"{src}: backup format {manifest.get('format')!r}, not {FORMAT}")
    entries = [(src / DUMP, manifest["database"])]
    entries += [(src / BUNDLES / b["name"], b) for b in manifest["bundles"]]
    for path, entry in entries:
        if not path.is_file():
            raise BackupError(f"{path} is missing from the backup")
        if _file_digest(path) != (entry["sha256"], entry["bytes"]):
            raise BackupError(f"{path} does not match its checksum in {MANIFEST}: damaged")
    return manifest


def _tables() -> int:
    with connections[DB].cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', "
            "'information_schema') AND n.nspname NOT LIKE 'pg_toast%'"
        )
        return int(cursor.fetchone()[0])


def _put_bundle(src: Path, name: str, sha: str) -> bool:
    """Store one bundle under its own name; False when the same bytes are there already."""
    if default_storage.exists(name):
        with default_storage.open(name, "rb") as existing:
            if _digest(existing)[0] == sha:
                return False
        raise BackupError(f"storage already holds a different {name}: restore into empty storage")
    with (src / BUNDLES / name).open("rb") as stream:
        saved = default_storage.save(name, File(stream, name=name))
    if saved != name:
        raise BackupError(f"storage stored {name} as {saved}")
    return True


def restore(src: Path, say: Callable[[str], None] = lambda _: None) -> Summary:
    """Restore the backup in ``src`` into this (empty) database and the default storage."""
    manifest = read_manifest(src)
    name = connections[DB].settings_dict["NAME"]
    if tables := _tables():
        raise BackupError(
            f"database {name} holds {tables} tables: restore into a new database "
            "(createdb NAME, then DATABASE_URL=.../NAME)"
        )
    connections[DB].close()  # pg_restore's session is the only one while it runs
    _run(
        [
            "pg_restore",
            "--exit-on-error",
            "--single-transaction",  # a failure leaves the database as empty as it was
            "--no-owner",  # the tables belong to whoever restores (DATABASE_URL's user)
            "--dbname",
            str(name),
            str(src / DUMP),
        ]
    )
    say(f"database {name}: restored from {src / DUMP}")
    written = sum(_put_bundle(src, b["name"], b["sha256"]) for b in manifest["bundles"])
    say(f"bundles: {written} written, {len(manifest['bundles']) - written} already there")
    counts = _counts()
    if counts != manifest["counts"]:
        raise BackupError(f"restored counts {counts} are not the backup's {manifest['counts']}")
    with connections[DB].cursor() as cursor:
        cursor.execute("ANALYZE")
    cache.data_changed()  # a cache that outlived the old database must not answer for it
    for missing in manifest["missing"]:
        say(f"not in the backup (missing from storage when it was taken): {missing}")
    return Summary(counts=counts, bundles=len(manifest["bundles"]), missing=manifest["missing"])
