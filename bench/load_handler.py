"""CPU per request through Django's WSGI handler, as gunicorn calls it, with and without the
middleware stack: what every request costs apart from its page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_readpath \\
    REDIS_URL=redis://127.0.0.1:6379/10 python bench/load_handler.py --bare / /alerts/ \\
    "/api/series/?setup=1&metric=1"

Runs as the load bench's server does (DEBUG=0, static files collected into a temporary
STATIC_ROOT, PAGE_CACHE_STALE_SECONDS 30 unless ``--stale`` says otherwise, the API's
throttle rates out of the way), without a network: each URL warm, then ``--repeat``
requests, CPU time of this process per request. ``--bare``: again with ``MIDDLEWARE = []``;
``--each``: again without each middleware in turn.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from _common import ROOT, django_setup


def environ(path: str) -> dict[str, Any]:
    """A WSGI environ of an anonymous GET (JSON asked for under /api/, as clients do)."""
    path_info, _, query = path.partition("?")
    accept = "application/json" if path.startswith("/api/") else "text/html"
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path_info,
        "QUERY_STRING": query,
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "8000",
        "HTTP_HOST": "localhost",
        "HTTP_ACCEPT": accept,
        "REMOTE_ADDR": "127.0.0.1",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.url_scheme": "http",
    }


def caller(handler: Callable[..., Any]) -> Callable[[str], str]:
    def call(path: str) -> str:
        status: list[str] = []
        body = handler(environ(path), lambda s, headers, *a: status.append(s))
        b"".join(body)
        if hasattr(body, "close"):
            body.close()
        return status[0][:3]

    return call


def cpu_ms(call: Callable[[str], str], path: str, repeat: int) -> tuple[str, float]:
    status = call(path)
    call(path)
    start = time.process_time()
    for _ in range(repeat):
        call(path)
    return status, 1000 * (time.process_time() - start) / repeat


def handler_with(middleware: list[str] | None) -> Callable[..., Any]:
    from django.core.handlers.wsgi import WSGIHandler
    from django.test.utils import override_settings

    if middleware is None:
        return WSGIHandler()
    with override_settings(MIDDLEWARE=middleware):
        return WSGIHandler()  # the chain is built here, from the settings of the moment


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("urls", nargs="+")
    parser.add_argument("--repeat", type=int, default=300)
    parser.add_argument("--stale", type=int, default=30)
    parser.add_argument("--bare", action="store_true")
    parser.add_argument("--each", action="store_true")
    args = parser.parse_args()
    static = tempfile.mkdtemp(prefix="perfdb-static-")
    os.environ.update(
        DEBUG="0",
        SECRET_KEY="bench-load-only",
        SECURE_SSL_REDIRECT="0",
        ALLOWED_HOSTS="localhost",
        STATIC_ROOT=static,
        LOG_LEVEL="CRITICAL",
        API_THROTTLE_ANON="1000000/min",
        API_THROTTLE_USER="1000000/min",
        PAGE_CACHE_STALE_SECONDS=str(args.stale),
    )
    manage = [sys.executable, str(ROOT / "manage.py"), "collectstatic", "--noinput", "-v0"]
    subprocess.run(manage, check=True, env=os.environ)
    django_setup()
    from django.conf import settings

    full = list(settings.MIDDLEWARE)
    stacks: list[tuple[str, list[str] | None]] = [("full stack", None)]
    if args.bare:
        stacks.append(("no middleware", []))
    if args.each:
        stacks += [(f"without {m.rsplit('.', 1)[-1]}", [x for x in full if x != m]) for m in full]
    print(f"load average {os.getloadavg()[0]:.1f}; CPU ms per request, {args.repeat} each")
    for name, middleware in stacks:
        call = caller(handler_with(middleware))
        for url in args.urls:
            status, ms = cpu_ms(call, url, args.repeat)
            print(f"{name:32s} {url:45s} {status} {ms:7.2f}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
