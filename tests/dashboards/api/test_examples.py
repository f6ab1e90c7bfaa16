"""docs/api.md's examples, run as written (every ``sh`` and ``python`` block, in order)
against a live server with a real Celery worker, as a lab script would run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from perfdb.operations.accounts import token_get
from tests.bundles import volano_bundle
from tests.perfdb.alerting.builds import check, ingest_runs

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

DOC = Path(__file__).resolve().parents[3] / "docs" / "api.md"


def blocks() -> list[tuple[str, str]]:
    return re.findall(r"```(sh|python)\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_docs_have_every_common_job():
    text = DOC.read_text()
    for heading in ("Upload a bundle", "series as CSV", "open regressions", "Triage one"):
        assert heading in text
    assert len(blocks()) >= 8


def test_every_example_runs(live_server, celery_worker, tmp_path, token, staff):
    from ingest import queue

    with pytest.MonkeyPatch.context() as patch:  # ingested here: the worker must not race us
        patch.setattr(queue, "ingest_upload", lambda **kwargs: None)
        check(ingest_runs(tmp_path, "a.tar.gz", [("2.4.20", "[]", (13000, 13100, 12950))]))
        check(ingest_runs(tmp_path, "b.tar.gz", [("2.4.20", '["O(1)"]', (11000, 11100, 11050))]))
    work = tmp_path / "work"
    work.mkdir()
    volano_bundle(work / "run.tar.gz", kernel="2.5.25")
    env = {
        **os.environ,
        "PERFDB": live_server.url,
        "TOKEN": token,
        "STAFF_TOKEN": token_get(user=staff),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    for language, code in blocks():
        command = (
            ["bash", "-euo", "pipefail", "-c", code]
            if language == "sh"
            else [
                sys.executable,
                "-c",
                code,
            ]
        )
        if language == "sh":  # the blocks share variables, as one shell session would
            command = ["bash", "-euo", "pipefail", "-c", f"export PERFDB={live_server.url}\n{code}"]
        result = subprocess.run(
            command, cwd=work, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, (
            f"{code}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
        )
        assert '"param":' not in result.stdout and '"detail":' not in result.stdout, result.stdout
    csv_head = (work / "series.csv").read_text().splitlines()
    assert csv_head[0] == "run,kernel,patches,hardware,mode,x,mean,sd,n" and len(csv_head) >= 3
