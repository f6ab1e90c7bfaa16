"""The command-line ways in: manage.py upload_bundle and the stdlib uploader script."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from perfdb.models import Run
from tests.bundles import make_bundle, volano_bundle
from tests.conftest import ROOT


@pytest.mark.django_db
def test_upload_bundle_ingests_here_and_prints_the_runs(tmp_path, capsys):
    call_command("upload_bundle", str(volano_bundle(tmp_path / "b.tar.gz")))
    out = capsys.readouterr().out
    run = Run.objects.get()
    assert "done" in out and f"/runs/{run.pk}/" in out


@pytest.mark.django_db
def test_upload_bundle_fails_loudly(tmp_path):
    bad = make_bundle(tmp_path / "bad.tar.gz", {"manifest.toml": "format = 9\n"})
    with pytest.raises(CommandError, match="1 bundle"):
        call_command("upload_bundle", str(bad))
    assert not Run.objects.exists()
    with pytest.raises(CommandError, match="no such file"):
        call_command("upload_bundle", str(tmp_path / "missing.tar.gz"))


def uploader(server: str, token: str, *paths) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "perfdb-upload"),
            "--server",
            server,
            "--token",
            token,
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_lab_uploader_waits_and_prints_run_urls(tmp_path, live_server, celery_worker, token):
    good = volano_bundle(tmp_path / "good.tar.gz")
    result = uploader(live_server.url, token, good)
    assert result.returncode == 0, result.stdout + result.stderr
    run = Run.objects.get()
    assert f"/api/runs/{run.pk}/" in result.stdout
    bad = make_bundle(tmp_path / "bad.tar.gz", {"manifest.toml": "format = 9\n"})
    result = uploader(live_server.url, token, bad)
    assert result.returncode == 1 and "FAILED" in result.stdout and "supported" in result.stdout
    assert uploader(live_server.url, "wrong-token", good).returncode == 1
