"""Read replicas against a real streaming replica.

A primary cluster (initdb) and a replica of it (pg_basebackup -R, streaming) are started on
free ports in a temporary directory; a child process runs Django with DATABASE_URL on the
primary and DATABASE_REPLICA_URL on the replica. It checks where reads go, then pauses the
replica's replay (replica lag, made certain) and shows that the upload status does not say
"done" while a run page on the replica would not find the runs, and says it once the replica
has caught up. Skipped, with the reason, when PostgreSQL's server binaries are not installed
(Debian's postgresql package has them under /usr/lib/postgresql/*/bin; scripts/test.sh puts
them on PATH).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ("initdb", "pg_ctl", "pg_basebackup")


def pg_bin() -> Path | None:
    for directory in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if all(Path(directory, t).exists() for t in TOOLS):
            return Path(directory)
    found = [shutil.which(t) for t in TOOLS]
    return Path(found[0]).parent if all(found) else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def clusters():
    bindir = pg_bin()
    if bindir is None:
        pytest.skip(
            "initdb, pg_ctl and pg_basebackup are not installed (apt-get install postgresql)"
        )
    # Not under pytest's 0700 directories: the servers run as postgres when this runs as root.
    base = Path(tempfile.mkdtemp(prefix="perfdb-replica-"))
    as_postgres: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        if shutil.which("runuser") is None:
            pytest.skip("running as root without runuser: cannot start PostgreSQL as postgres")
        as_postgres = ["runuser", "-u", "postgres", "--"]
        shutil.chown(base, "postgres")

    def run(*command: str, check: bool = True) -> None:
        subprocess.run(as_postgres + list(command), check=check, capture_output=True, timeout=120)

    primary, replica = base / "primary", base / "replica"
    p_port, r_port = free_port(), free_port()
    run(str(bindir / "initdb"), "-D", str(primary), "-U", "postgres", "--auth=trust")
    conf = (
        f"\nport = {p_port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{base}'\n"
        "wal_level = replica\nmax_wal_senders = 4\nhot_standby = on\nfsync = off\n"
    )
    run("sh", "-c", f"printf '%s' \"{conf}\" >> {primary}/postgresql.conf")
    run(str(bindir / "pg_ctl"), "-D", str(primary), "-l", str(base / "primary.log"), "-w", "start")
    try:
        run(str(bindir / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(p_port), "-U",
            "postgres", "-D", str(replica), "-R", "-X", "stream")  # fmt: skip
        run("sh", "-c", f"printf '\\nport = {r_port}\\n' >> {replica}/postgresql.conf")
        run(str(bindir / "pg_ctl"), "-D", str(replica), "-l", str(base / "replica.log"), "-w",
            "start")  # fmt: skip
        try:
            yield p_port, r_port
        finally:
            run(str(bindir / "pg_ctl"), "-D", str(replica), "-m", "immediate", "stop", check=False)
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(primary), "-m", "immediate", "stop", check=False)
        shutil.rmtree(base, ignore_errors=True)


CHILD = textwrap.dedent(
    """
    import os, sys, tempfile
    from pathlib import Path
    import django
    django.setup()
    from django.core.management import call_command
    from django.db import connections, router, transaction
    from django.test import Client
    from perfdb.operations.db_router import replica_caught_up
    from perfdb.models import Run, Upload
    from tests.dashboards.data import dashboard_bundle, ingest

    call_command("migrate", verbosity=0)
    assert replica_caught_up(timeout=30), "the replica never caught up with the migration"

    # Where reads go.
    assert router.db_for_read(Run) == "replica"
    assert router.db_for_read(Upload) == "default", "upload status: read after write"
    with transaction.atomic():
        assert router.db_for_read(Run) == "default", "reads inside a write: the primary"
    assert router.db_for_write(Run) == "default"
    with connections["replica"].cursor() as cursor:
        cursor.execute("SELECT pg_is_in_recovery()")
        assert cursor.fetchone()[0], "replica is not a standby"

    # Replica lag, made certain: replay paused while an upload is written on the primary.
    with connections["replica"].cursor() as cursor:
        cursor.execute("SELECT pg_wal_replay_pause()")
    upload = ingest(dashboard_bundle(Path(tempfile.mkdtemp()) / "dash.tar.gz"))
    assert Upload.objects.get(pk=upload.pk).status == "done"  # on the primary
    run_id = upload.run_ids[0]
    client = Client()
    assert client.get(f"/runs/{run_id}/").status_code == 404, "the page reads the replica"
    status = client.get(f"/api/uploads/{upload.pk}/").json()["status"]
    assert status != "done", "said done while a page could not show the run"
    with connections["replica"].cursor() as cursor:
        cursor.execute("SELECT pg_wal_replay_resume()")
    status = client.get(f"/api/uploads/{upload.pk}/").json()["status"]
    assert status == "done", status
    assert client.get(f"/runs/{run_id}/").status_code == 200, "done, so the page shows it"
    print("replica ok")
    """
)


def test_reads_go_to_the_replica_and_done_means_visible_there(clusters):
    p_port, r_port = clusters
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{p_port}/postgres",
        "DATABASE_REPLICA_URL": f"postgres://postgres@127.0.0.1:{r_port}/postgres",
        "DATABASE_REPLICA_WAIT": "1",
        "REDIS_URL": settings.REDIS_URL,
        "MEDIA_ROOT": str(Path(settings.MEDIA_ROOT) / "replica-test"),
        "AXES_ENABLED": "0",
    }
    out = subprocess.run(
        [sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-5000:]
    assert "replica ok" in out.stdout
