"""config/network.py's TRUSTED_PROXIES behind a real reverse proxy: nginx (Debian's) in front
of the live server, forwarding with ``X-Forwarded-For $proxy_add_x_forwarded_for`` as
docs/proxy-and-faults.md prescribes. Two clients connect to nginx from two loopback
addresses (127.0.0.2 and 127.0.0.3) and the first forges X-Forwarded-For on every request:
its bad tokens, wrong passwords and request rate lock out no one but itself, and its forged
header does not let it escape."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import time

import pytest

from tests.conftest import free_port

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not shutil.which("nginx"), reason="needs nginx (apt-get install nginx-light)"
    ),
]

ATTACKER, BYSTANDER = "127.0.0.2", "127.0.0.3"

NGINX_CONF = """
{user}
daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://127.0.0.1:{upstream};
            proxy_bind 127.0.0.1;
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
        }}
    }}
}}
"""


@pytest.fixture
def proxy(live_server, tmp_path, settings):
    """nginx on a free port in front of the live server; the app trusts it (127.0.0.1)."""
    settings.TRUSTED_PROXIES = ["127.0.0.1/32"]
    port = free_port()
    upstream = int(live_server.url.rsplit(":", 1)[1])
    user = "user root;" if os.geteuid() == 0 else ""  # its temp folders are root's
    conf = tmp_path / "nginx.conf"
    conf.write_text(NGINX_CONF.format(user=user, dir=tmp_path, port=port, upstream=upstream))
    proc = subprocess.Popen(
        ["nginx", "-c", str(conf), "-p", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            Client(port, BYSTANDER).get("/healthz")
            break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        raise AssertionError(f"nginx did not start: {(tmp_path / 'error.log').read_text()}")
    yield port
    proc.terminate()
    proc.wait(timeout=10)


class Client:
    """HTTP through the proxy from one loopback address, keeping cookies."""

    def __init__(self, port: int, source: str):
        self.port, self.source = port, source
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, headers: dict[str, str] | None = None, body: str = ""
    ) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, source_address=(self.source, 0))
        sent = dict(headers or {})
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        conn.request(method, path, body=body or None, headers=sent)
        response = conn.getresponse()
        for name, value in response.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
        text = response.read().decode(errors="replace")
        conn.close()
        return response.status, text

    def get(self, path: str, **headers: str) -> int:
        return self.request("GET", path, headers)[0]

    def login(self, username: str, password: str, forged: str = "") -> int:
        from urllib.parse import urlencode

        headers = {"X-Forwarded-For": forged} if forged else {}
        _, page = self.request("GET", "/login/", headers)
        form_token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert form_token, page[:500]
        body = urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": form_token[1]}
        )
        headers["Referer"] = f"http://127.0.0.1:{self.port}/login/"
        return self.request("POST", "/login/", headers, body)[0]


def test_one_clients_bad_tokens_429_only_itself_whatever_it_forges(proxy, token, settings):
    settings.API_BAD_TOKEN_LIMIT = 5
    attacker, bystander = Client(proxy, ATTACKER), Client(proxy, BYSTANDER)
    codes = [
        attacker.get(
            "/api/runs/",
            Authorization=f"Token guess{i:036d}",
            **{"X-Forwarded-For": f"198.51.100.{i}"},  # a new address each time: not believed
        )
        for i in range(8)
    ]
    assert codes == [401] * 5 + [429] * 3
    assert attacker.get("/api/runs/", Authorization=f"Token {token}") == 429
    # Behind the proxy the bystander was the proxy's address too: now it is itself.
    assert bystander.get("/api/runs/", Authorization=f"Token {token}") == 200


def test_one_clients_wrong_passwords_lock_the_account_for_it_alone(proxy, user, settings):
    settings.AXES_ENABLED = True
    settings.AXES_FAILURE_LIMIT = 4
    attacker, bystander = Client(proxy, ATTACKER), Client(proxy, BYSTANDER)
    codes = [attacker.login("lab", f"wrong{i}", forged=f"198.51.100.{i}") for i in range(4)]
    assert codes == [200] * 3 + [429]
    assert attacker.login("lab", "lab-password-1") == 429  # locked: for this client
    assert bystander.login("lab", "lab-password-1") == 302  # the owner logs in


def test_the_anonymous_rate_counts_the_client_not_its_forged_header(proxy, monkeypatch):
    from rest_framework.throttling import AnonRateThrottle

    monkeypatch.setattr(AnonRateThrottle, "rate", "5/min", raising=False)
    attacker, bystander = Client(proxy, ATTACKER), Client(proxy, BYSTANDER)
    codes = [attacker.get("/api/runs/", **{"X-Forwarded-For": f"198.51.100.{i}"}) for i in range(7)]
    assert codes == [200] * 5 + [429] * 2
    assert bystander.get("/api/runs/") == 200
