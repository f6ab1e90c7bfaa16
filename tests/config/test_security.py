"""The site's hardening, tried the way an attacker would.

Reflected markup in 400s, odd digits and NUL bytes in parameters, CR/LF in names that
become headers, guessing passwords and tokens, huge bodies, cache flooding, subscribing
someone else's address, over-long manifest fields. The browser half (CSP in a real Chromium)
is tests/config/test_csp_browser.py.
"""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile

from perfdb.models import Run, Subscription, Upload
from tests.dashboards.scaling_builds import volano_upload
from tests.factories import (
    AlertFactory,
    OutboxMessageFactory,
    RawFileFactory,
    ResultFactory,
    RunFactory,
)

pytestmark = pytest.mark.django_db

XSS = '<img src=x onerror="fetch(`/account/`)">'
PAGES = ["/", "/kernels/", "/scaling/", "/kernel-time/", "/wakeups/", "/alerts/", "/login/"]


@pytest.fixture
def alert(db):
    """Stock 2.4.20 and 2.4.20+O(1) with three trials each, and the O(1) build's regression:
    enough stored data for every page to reach its parameter checks (no detection needed)."""
    stock = RunFactory(kernel__version="2.4.20")
    o1 = RunFactory(kernel__version="2.4.20", patch_set__name="O(1)")
    for run, values in ((stock, (13000, 13100, 12950)), (o1, (11000, 11100, 11050))):
        for trial, value in enumerate(values, start=1):
            ResultFactory(run=run, trial=trial, value=value)
    alert = AlertFactory(candidate_run=o1, change_pct=-15.2, method="welch")
    alert.baseline_runs.set([stock])
    return alert


# --- reflected markup -----------------------------------------------------------------------

BAD_PAGE_PARAMS = [
    ("/alerts/", "status"),
    ("/alerts/", "direction"),
    ("/kernels/", "setup"),
    ("/kernels/", "format"),
    ("/scaling/", "scope"),
    ("/kernel-time/", "top"),
    ("/activity/", "runs"),
    ("/compare/", "base"),
]


@pytest.mark.parametrize("path,param", BAD_PAGE_PARAMS)
def test_markup_in_a_bad_parameter_comes_back_escaped(client, path, param):
    response = client.get(path, {param: XSS, "new": "1"})
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
    body = response.content.decode()
    assert "<img" not in body and "&lt;img src=x" in body
    assert f"<code>{param}</code>" in body


def test_every_bad_request_in_the_code_renders_through_a_template():
    """No view builds an HTML answer from an f-string or HttpResponseBadRequest(text)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for folder in ("dashboards", "ingest", "perfdb", "config"):
        for source in (root / folder).rglob("*.py"):
            text = source.read_text()
            assert "HttpResponseBadRequest(" not in text, source
            assert not re.search(r"HttpResponse\(\s*f[\"']", text), source


@pytest.mark.parametrize(
    "path", ["/api/alerts/?status=", "/api/runs/?mode=", "/api/compare/?new=1&base="]
)
def test_the_api_answers_bad_parameters_in_json(client, path):
    response = client.get(path + "%3Cscript%3E")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert set(response.json()) >= {"error", "param"}


# --- odd input is a 400 naming the parameter, never a 500 ------------------------------------

ODD_DIGITS = ["²", "٣", "1²", "１２"]  # superscript, Arabic-Indic, fullwidth


@pytest.mark.parametrize("digits", ODD_DIGITS)
@pytest.mark.parametrize(
    "path,param",
    [
        ("/kernels/", "setup"),
        ("/kernels/", "metric"),
        ("/kernels/", "baseline"),
        ("/kernel-time/", "top"),
        ("/activity/", "runs"),
        ("/compare/", "base"),
        ("/api/compare/", "base"),
    ],
)
def test_unicode_digits_are_a_400_naming_the_parameter(client, alert, path, param, digits):
    response = client.get(path, {param: digits, "new": "1", "base": "2"} | {param: digits})
    assert response.status_code == 400, response.content[:300]
    assert param in response.content.decode()


@pytest.mark.parametrize(
    "path,param",
    [
        ("/alerts/", "workload"),
        ("/alerts/", "kernel"),
        ("/api/alerts/", "hardware"),
        ("/api/runs/", "workload"),
        ("/api/runs/", "patches"),
    ],
)
def test_a_nul_byte_never_reaches_postgresql(client, path, param):
    response = client.get(f"{path}?{param}=a%00b")
    assert response.status_code == 400
    assert param in response.content.decode()


def test_bad_ids_in_posts_are_a_400_or_404(client, staff, alert):
    client.force_login(staff)
    response = client.post("/alerts/", {"alert": ["²"], "status": "fixed"})
    assert response.status_code == 400 and b"alert" in response.content
    assert client.post("/subscriptions/", {"delete": "abc"}).status_code == 400
    assert client.post("/subscriptions/", {"delete": "999999"}).status_code == 404


def test_a_raw_file_named_with_cr_lf_downloads_with_one_clean_header(client, alert):
    run = Run.objects.first()
    name = 'logs/evil"\r\nSet-Cookie: sessionid=x;\r\n.log'
    raw = RawFileFactory(run=run, path=name)
    response = client.get(f"/runs/{run.pk}/files/{raw.pk}/")
    assert response.status_code == 200
    header = response["Content-Disposition"]
    assert "\r" not in header and "\n" not in header and header.startswith("attachment;")
    assert "Set-Cookie" not in response.cookies and "evil" in header


def test_an_email_subject_with_cr_lf_is_sent(alert, settings):
    from django.core import mail

    from perfdb.alerting.notify import outbox_send

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    message = OutboxMessageFactory(
        to="a@example.org", subject="[perfdb] Volano\r\nBcc: x@evil.org", text="t"
    )
    assert outbox_send(message_id=message.pk) == "sent"
    assert mail.outbox[0].subject == "[perfdb] Volano Bcc: x@evil.org"


def test_a_new_alert_email_has_a_one_line_subject(alert):
    from perfdb.alerting.email_render import render

    alert.setup.workload.name = "Volano\r\nBcc: x@evil.org"
    subject, _, _ = render([alert], heading="h")
    assert "\n" not in subject and "\r" not in subject


# --- CSP header -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [*PAGES, "/api/docs/", "/uploads/new/", "/account/"])
def test_every_page_has_a_strict_csp(client, user, path):
    client.force_login(user)
    response = client.get(path, follow=True)
    policy = response.headers["Content-Security-Policy"]
    script_src = re.search(r"script-src ([^;]*)", policy).group(1)
    assert "'self'" in script_src and "'unsafe-inline'" not in script_src
    assert "'unsafe-eval'" not in script_src and "*" not in script_src
    assert "object-src 'none'" in policy and "frame-ancestors 'none'" in policy


def test_inline_scripts_carry_the_request_nonce(client, user):
    client.force_login(user)
    response = client.get("/uploads/new/")
    nonce = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"]).group(1)
    scripts = re.findall(r"<script([^>]*)>", response.content.decode())
    assert scripts and all(f'nonce="{nonce}"' in s or "src=" in s for s in scripts)
    other = client.get("/uploads/new/")["Content-Security-Policy"]
    assert nonce not in other  # a fresh nonce per response


# --- throttles and lockout ----------------------------------------------------------------------


def test_anonymous_api_reads_are_throttled(client, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "rate", "5/min", raising=False)
    codes = [client.get("/api/runs/").status_code for _ in range(7)]
    assert codes[:5] == [200] * 5 and codes[5:] == [429, 429]


def test_guessing_tokens_is_throttled(client, token, settings):
    settings.API_BAD_TOKEN_LIMIT = 10
    codes = [
        client.get("/api/runs/", HTTP_AUTHORIZATION=f"Token guess{i:036d}").status_code
        for i in range(30)
    ]
    assert codes[:10] == [401] * 10 and set(codes[10:]) == {429}
    # Even the right token is refused from that address until the window passes.
    assert client.get("/api/runs/", HTTP_AUTHORIZATION=f"Token {token}").status_code == 429
    other = client.get("/api/runs/", HTTP_AUTHORIZATION=f"Token {token}", REMOTE_ADDR="10.0.0.9")
    assert other.status_code == 200


def test_guessing_passwords_locks_the_login(client, user, settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 5
    codes = [
        client.post("/login/", {"username": "lab", "password": f"wrong{i}"}).status_code
        for i in range(5)
    ]
    assert codes == [200] * 4 + [429]  # the form again with its error, then locked
    locked = client.post("/login/", {"username": "lab", "password": "lab-password-1"})
    assert locked.status_code == 429
    assert "_auth_user_id" not in client.session
    assert "locked" in locked.content.decode()


def test_the_right_password_logs_in_below_the_limit(client, user, settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 5
    for i in range(3):
        client.post("/login/", {"username": "lab", "password": f"wrong{i}"})
    response = client.post("/login/", {"username": "lab", "password": "lab-password-1"})
    assert response.status_code == 302 and "_auth_user_id" in client.session


# --- big bodies -------------------------------------------------------------------------------


def test_a_250_mib_body_is_refused_before_it_is_read(client, token):
    response = client.post(
        "/api/uploads/",
        {"bundle": SimpleUploadedFile("b.tar.gz", b"x" * 100)},
        HTTP_AUTHORIZATION=f"Token {token}",
        CONTENT_LENGTH=str(250 * 1024 * 1024),  # declared; the 100 bytes are never read
    )
    assert response.status_code == 413 and response["Connection"] == "close"
    assert "bytes" in response.json()["detail"]
    assert not Upload.objects.exists()


@pytest.mark.parametrize("path", ["/api/uploads/", "/uploads/new/"])
def test_a_file_past_the_limit_is_cut_off_while_it_streams(client, user, token, settings, path):
    settings.BUNDLE_MAX_BYTES = 64 * 1024
    client.force_login(user)
    response = client.post(
        path,
        {"bundle": SimpleUploadedFile("b.tar.gz", b"x" * (2 * 1024 * 1024))},
        HTTP_AUTHORIZATION=f"Token {token}",
    )
    assert response.status_code == 413
    assert not Upload.objects.exists()


def test_a_form_body_over_the_memory_limit_is_refused(client, user):
    client.force_login(user)
    response = client.post("/subscriptions/", {"email": "x" * (6 * 1024 * 1024)})
    assert response.status_code == 400


# --- cache keys -------------------------------------------------------------------------------


def test_repeated_builds_make_no_new_cache_entries(client, tmp_path):
    volano_upload(tmp_path, ["2.4.17", "2.4.20", "2.5.59", "2.5.66"])  # the scaling page's data
    first = client.get("/scaling/")
    assert first.status_code == 200
    builds = first.context["shown_builds"]

    def entries() -> int:  # each entry's pointer to its last value (perfdb:latest:) aside
        return sum(":perfdb:latest:" not in key for key in cache._cache)

    before = entries()
    client.get("/scaling/", [("builds", builds[0])])
    one = entries()
    client.get("/scaling/", [("builds", builds[0])] * 200)
    client.get("/scaling/", [("builds", b) for b in reversed(builds[:2])] * 50)
    client.get("/scaling/", [("builds", b) for b in builds[:2]])
    assert entries() - one <= 1 and one - before <= 1


# --- subscriptions ----------------------------------------------------------------------------


SUB = {
    "workload_pattern": "*",
    "hardware_pattern": "*",
    "metric_pattern": "*",
    "min_change_pct": "0",
    "delivery": "immediate",
    "active": "on",
}


def test_nobody_can_subscribe_someone_elses_address(client, user, staff):
    user.email = "lab@example.org"
    user.save()
    client.force_login(user)
    response = client.post("/subscriptions/", {**SUB, "email": "victim@example.org"})
    assert response.status_code == 200 and "your own address" in response.content.decode()
    assert not Subscription.objects.exists()
    client.post("/subscriptions/", {**SUB, "email": "LAB@example.org"})
    assert Subscription.objects.get().email == "lab@example.org"


def test_an_account_without_an_address_cannot_subscribe(client, user):
    client.force_login(user)
    response = client.post("/subscriptions/", {**SUB, "email": "any@example.org"})
    assert "no email address" in response.content.decode()
    assert not Subscription.objects.exists()


# --- manifest fields against their columns ----------------------------------------------------


def test_an_over_long_unit_fails_the_upload_with_the_field_and_limit(tmp_path):
    from ingest.services import upload_create, upload_ingest
    from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

    run = volano_run(
        "2.5.25",
        files='{ path = "t1.log", parser = "volanomark" }',
        extra="metrics = { latency = 3.5 }",
    )
    metric = f'\n[metric.latency]\nunit = "{"u" * 51}"\nbetter = "lower"\n'
    text = manifest_toml(run).replace("\n[[run]]", metric + "\n[[run]]", 1)
    path = make_bundle(tmp_path / "long.tar.gz", {"manifest.toml": text, "t1.log": volano_log(1)})
    with open(path, "rb") as f:
        upload, _ = upload_create(stream=f, filename="long.tar.gz")
    assert upload_ingest(upload_id=upload.pk) == []
    upload.refresh_from_db()
    assert upload.status == "failed"
    assert "unit" in upload.error and "at most 50" in upload.error
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "field,value,limit",
    [("patch", "P" * 101, 100), ("workload", "W" * 101, 100), ("label", "L" * 101, 100)],
)
def test_every_run_field_is_measured(tmp_path, field, value, limit):
    from ingest.bundle import bundle_parse, read_bundle
    from ingest.manifest import ManifestError
    from tests.bundles import make_bundle, manifest_toml, volano_log, volano_run

    run = volano_run("2.5.25", files='{ path = "t1.log", parser = "volanomark" }')
    if field == "patch":
        run = run.replace("patches = []", f'patches = ["{value}"]')
    elif field == "workload":
        run = run.replace('workload = "VolanoMark"', f'workload = "{value}"')
    else:
        run += f'label = "{value}"\n'
    path = make_bundle(
        tmp_path / "b.tar.gz", {"manifest.toml": manifest_toml(run), "t1.log": volano_log(1)}
    )
    try:
        bundle_parse(read_bundle(path))
    except ManifestError as exc:
        assert field in str(exc) and f"at most {limit}" in str(exc)
    except Exception as exc:  # the manifest reader refused it first, clearly
        assert "DataError" not in type(exc).__name__, exc
    else:
        pytest.fail("an over-long field was accepted")


def test_headers_helpers():
    from perfdb.operations.headers import attachment_header, header_text

    assert header_text("a\r\nb\x00c\u2028d") == "a b c d"
    assert attachment_header('x/"a\r\nb".log') == 'attachment; filename="a b.log"'
    assert "filename*=utf-8''" in attachment_header("d/ünï.log")


# --- deployment defaults ----------------------------------------------------------------------


def test_compose_is_safe_by_default():
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[2]
    compose = yaml.safe_load((root / "docker-compose.yml").read_text())
    env = compose["x-app"]["environment"]
    assert env["DEBUG"] == "${DEBUG:-0}"
    assert env["SECRET_KEY"].startswith("${SECRET_KEY:?")  # no default: compose refuses
    assert env["TRUST_X_FORWARDED_PROTO"] == "${TRUST_X_FORWARDED_PROTO:-0}"
    web = compose["services"]["web"]
    assert web["ports"] == ["${WEB_BIND:-127.0.0.1}:8000:8000"]
    config = (root / "config" / "gunicorn.conf.py").read_text()
    for flag in ("limit-request-line", "limit-request-fields", "limit-request-field_size"):
        in_command = f"--{flag}" in web["command"]
        in_config = "gunicorn.conf.py" in web["command"] and flag.replace("-", "_") in config
        assert in_command or in_config, flag


def _settings_in_subprocess(env: dict[str, str], code: str):
    import os
    import subprocess
    import sys

    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")}
    return subprocess.run(
        [sys.executable, "-c", f"import config.settings as s; {code}"],
        env={**clean, **env},
        capture_output=True,
        text=True,
        cwd=str(__import__("pathlib").Path(__file__).resolve().parents[2]),
    )


def test_no_secret_key_outside_debug():
    result = _settings_in_subprocess({"DEBUG": "0"}, "pass")
    assert result.returncode != 0 and "SECRET_KEY must be set" in result.stderr


def test_the_proxy_header_is_trusted_only_when_configured():
    probe = "print(getattr(s, 'SECURE_PROXY_SSL_HEADER', None))"
    assert _settings_in_subprocess({"DEBUG": "0", "SECRET_KEY": "k" * 50}, probe).stdout == (
        "None\n"
    )
    trusted = _settings_in_subprocess(
        {"DEBUG": "0", "SECRET_KEY": "k" * 50, "TRUST_X_FORWARDED_PROTO": "1"}, probe
    )
    assert "HTTP_X_FORWARDED_PROTO" in trusted.stdout
