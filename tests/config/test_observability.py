"""The observability settings (config/observability.py): the JSON log line, and Sentry,
started only with SENTRY_DSN and then sending a real envelope (to a tiny HTTP server here)
whose event id the failed upload names."""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import brotli
import pytest
import sentry_sdk
from django.conf import settings
from django.utils.module_loading import import_string

from perfdb.models import Upload
from perfdb.operations import log_context
from tests.conftest import ROOT
from tests.factories import UploadFactory


def test_a_json_line_carries_the_request_and_upload_ids():
    """The formatter and filter exactly as LOGGING names them, on a handler of this test."""
    spec = dict(settings.LOGGING["formatters"]["json"])
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(import_string(spec.pop("()"))(**spec))
    handler.addFilter(import_string(settings.LOGGING["filters"]["context"]["()"])())
    logger = logging.getLogger("perfdb.observability-test")
    logger.addHandler(handler)
    try:
        with log_context.bound(request_id="req-1", upload_id=42, task="ingest.tasks.x"):
            logger.warning("upload %s failed", 42)
        logger.warning("outside")
    finally:
        logger.removeHandler(handler)
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["message"] == "upload 42 failed"
    assert (first["level"], first["logger"]) == ("WARNING", "perfdb.observability-test")
    assert (first["request_id"], first["upload_id"], first["task"]) == (
        "req-1",
        42,
        "ingest.tasks.x",
    )
    assert first["time"].endswith("+00:00")
    assert second["request_id"] is None and second["upload_id"] is None


def test_a_bad_log_format_is_refused(monkeypatch):
    monkeypatch.setenv("LOG_FORMAT", "xml")
    result = subprocess.run(
        [sys.executable, "-c", "import config.observability"],
        cwd=ROOT, env={**os.environ, "LOG_FORMAT": "xml"}, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode != 0 and "LOG_FORMAT must be json or plain" in result.stderr


def test_sentry_is_off_without_a_dsn():
    assert not settings.SENTRY_DSN
    assert not sentry_sdk.is_initialized()


class _Envelopes(BaseHTTPRequestHandler):
    received: list[bytes] = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        body = self.rfile.read(int(self.headers["Content-Length"]))
        encoding = self.headers.get("Content-Encoding")
        if encoding == "gzip":
            body = gzip.decompress(body)
        elif encoding == "br":  # sentry-sdk sends brotli when the brotli package is present
            body = brotli.decompress(body)
        self.received.append(body)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


@pytest.fixture
def sentry_server():
    _Envelopes.received = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Envelopes)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], _Envelopes.received
    server.shutdown()


FAIL_ONE = """
import sys, django
django.setup()
import sentry_sdk
from ingest.services import upload_fail_internal
from perfdb.operations import log_context
try:
    {}["parser state"]
except KeyError as exc:
    with log_context.bound(request_id="req-sentry-1"):
        upload_fail_internal(upload_id=int(sys.argv[1]), exc=exc, where="reading file 'a.log'")
print("initialized", sentry_sdk.is_initialized())
sentry_sdk.flush(timeout=10)
"""


def _fail_in_a_process(upload_id: int, dsn: str | None) -> str:
    db = settings.DATABASES["default"]
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
    }
    env.pop("SENTRY_DSN", None)
    if dsn:
        env["SENTRY_DSN"] = dsn
    result = subprocess.run(
        [sys.executable, "-c", FAIL_ONE, str(upload_id)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout


def _upload() -> Upload:
    return UploadFactory(filename="a.tgz")


@pytest.mark.django_db(transaction=True)
def test_with_a_dsn_the_failed_upload_names_the_sentry_event_it_sent(sentry_server):
    port, received = sentry_server
    upload = _upload()
    out = _fail_in_a_process(upload.pk, f"http://publickey@127.0.0.1:{port}/7")
    assert "initialized True" in out
    upload.refresh_from_db()
    assert upload.status == "failed"
    assert "bug on the server, not in your bundle" in upload.error
    assert upload.error.endswith("in the log as reference req-sentry-1")
    event_id = upload.error.split("in Sentry as event ", 1)[1].split()[0]
    events = []
    for envelope in received:
        header, *rest = envelope.split(b"\n")
        for i in range(0, len(rest) - 1, 2):
            if json.loads(rest[i]).get("type") == "event":
                events.append((json.loads(header), json.loads(rest[i + 1])))
    assert [h["event_id"] for h, _ in events] == [event_id]  # one event, not one per path
    event = events[0][1]
    assert event["tags"]["request_id"] == "req-sentry-1"
    assert event["tags"]["upload_id"] == str(upload.pk)
    assert event["exception"]["values"][-1]["type"] == "KeyError"
    assert "user" not in event  # no personal data


@pytest.mark.django_db(transaction=True)
def test_without_a_dsn_nothing_is_sent_and_the_reference_is_the_request_id(sentry_server):
    _, received = sentry_server
    upload = _upload()
    out = _fail_in_a_process(upload.pk, None)
    assert "initialized False" in out
    upload.refresh_from_db()
    assert "Sentry" not in upload.error
    assert upload.error.endswith("staff can find it in the log as reference req-sentry-1")
    assert received == []
