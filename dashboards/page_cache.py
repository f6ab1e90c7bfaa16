"""Whole pages kept a few seconds for anonymous readers: compare, run detail, the alerts,
the overview and the scope charts.

These pages read more than the data versions of perfdb/cache.py follow (alerts and their
triage, thresholds, a series' noise and baseline as runs arrive), so they cannot be keyed
by a version that says when they change. Under gunicorn (``PAGE_CACHE_STALE_SECONDS`` > 0,
config/gunicorn.conf.py) an anonymous GET is answered from a copy at most that many seconds
old, keyed by the URL and the structure version: runs removed or edited, or vocabulary
edited, are never served from an older copy. Elsewhere (0: tests, workers) every request
computes, as before.

Only what is the same for every anonymous reader is kept: a request carrying a session or
messages cookie computes its own page (staff see their triage at once), and a response that
sets a cookie (a CSRF token in a form) or used the CSP nonce is never stored. The middleware
still runs on every request, the kept ones included: the CSP header, the body-size check,
CSRF on every unsafe method (only GET and HEAD are kept).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

from perfdb.cache import STRUCTURE_KEY, cached_entries, stale_seconds

# Headers a kept page is sent with again (the middleware adds the rest on every request).
KEPT_HEADERS = ("Content-Type", "Content-Disposition", "Content-Language")
MESSAGES_COOKIE = "messages"
T = TypeVar("T")


def shared_request(request: HttpRequest) -> bool:
    """A GET/HEAD whose page is the same for every anonymous reader: no session, no
    pending messages; not a download (``format=``: downloads are never stale)."""
    return (
        request.method in ("GET", "HEAD")
        and "format" not in request.GET
        and not request.COOKIES.get(settings.SESSION_COOKIE_NAME)
        and MESSAGES_COOKIE not in request.COOKIES
    )


def _keepable(request: HttpRequest, response: HttpResponse) -> bool:
    """A 200 that sets no cookie, is not streamed and used no CSP nonce."""
    return (
        response.status_code == 200
        and not response.cookies
        and not response.streaming
        and getattr(request, "_csp_nonce", None) is None
        and not request.META.get("CSRF_COOKIE_NEEDS_UPDATE")
    )


def _rebuilt(kept: tuple[bytes, dict[str, str]]) -> HttpResponse:
    content, headers = kept
    response = HttpResponse(content)
    for name, value in headers.items():
        response[name] = value
    patch_vary_headers(response, ("Cookie",))  # as the computed page says: another for a session
    return response


def _entry(name: str, url: str) -> str:
    return "page-" + hashlib.sha256(f"page:{name}|{url}".encode()).hexdigest()[:40]


def kept_data(request: HttpRequest, name: str, fn: Callable[[], T]) -> T:
    """``fn()`` (plain data: an API answer) kept like a page, per absolute URL (its links
    name the host); the API's throttle and authentication have run before."""
    seconds = int(stale_seconds())
    if seconds <= 0 or not shared_request(request):
        return fn()
    entry = _entry(name, request.build_absolute_uri())
    return cached_entries({entry: (STRUCTURE_KEY,)}, lambda _: {entry: fn()}, timeout=seconds)[
        entry
    ]


def kept_for_anonymous(
    name: str, part: int = 1
) -> Callable[[Callable[..., HttpResponse]], Callable[..., Any]]:
    """Serve the view's page from a copy at most ``PAGE_CACHE_STALE_SECONDS / part`` old to
    anonymous GETs (the module's docstring says what is never kept). ``part`` > 1 for a page
    built from entries that may themselves be served that stale (the overview)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            seconds = int(stale_seconds() / part)
            if seconds <= 0 or not shared_request(request):
                return view(request, *args, **kwargs)
            entry = _entry(name, request.get_full_path())
            made: list[HttpResponse] = []

            def compute(_: list[str]) -> dict[str, tuple[bytes, dict[str, str]]]:
                response = view(request, *args, **kwargs)
                made.append(response)
                if not _keepable(request, response):
                    return {}
                headers = {h: response[h] for h in KEPT_HEADERS if response.has_header(h)}
                return {entry: (response.content, headers)}

            got = cached_entries({entry: (STRUCTURE_KEY,)}, compute, timeout=seconds)
            if made:  # computed by this request: its own response, cookies and all
                return made[0]
            return _rebuilt(got[entry])

        return wrapped

    return decorate
