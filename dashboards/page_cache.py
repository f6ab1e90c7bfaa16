"""Whole pages kept a few seconds for anonymous readers: compare, run detail, the alerts,
the overview and the scope charts.

These pages read more than the data versions of perfdb/cache.py follow (alerts and their
triage, thresholds, a series' noise and baseline as runs arrive), so they cannot be keyed
by a version that says when they change. Under gunicorn (``PAGE_CACHE_STALE_SECONDS`` > 0,
config/gunicorn.conf.py) an anonymous GET is answered from a copy at most that many seconds
old (recomputed after the response once two thirds of its age: ``_kept``), keyed by the URL
and the structure version: runs removed or edited, or vocabulary
edited, are never served from an older copy. Elsewhere (0: tests, workers) every request
computes, as before.

Only what is the same for every anonymous reader is kept: a request carrying a session or
messages cookie computes its own page (staff see their triage at once), and a response that
sets a cookie (a CSRF token in a form) or used the CSP nonce is never stored. The middleware
still runs on every request, the kept ones included: the CSP header, the body-size check,
CSRF on every unsafe method (only GET and HEAD are kept).

*Kept answers* (``kept_while_current``, ``KeptAnswerMiddleware``): a view whose every read is
a versioned cache read (the series page, its figure, ``/api/series/``) has its whole final
response (body and every header the middleware added) kept under the versions those reads
found (perfdb/cache_reads.py), and the middleware, first in the stack, answers the next
anonymous GET of the same URL from it while those versions are unchanged, before URL
resolution, sessions, authentication, DRF and its throttle: never stale, one cache round
trip. Only for GETs without a body, a session or messages cookie or an ``Authorization``
header, keyed by scheme, host, path, query and ``Accept``. Such a hit is not counted by the
API's throttle (it computes nothing, like a static file; a miss is counted as before).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_vary_headers

from perfdb import cache_reads
from perfdb.cache import STRUCTURE_KEY, TIMEOUT_SECONDS, Compute, cached_entries, stale_seconds

# Headers a kept page is sent with again (the middleware adds the rest on every request).
KEPT_HEADERS = ("Content-Type", "Content-Disposition", "Content-Language")
MESSAGES_COOKIE = "messages"
T = TypeVar("T")
# A kept answer as stored: (its versions as (key, value) pairs, body, every header).
Answer = tuple[tuple[tuple[str, int], ...], bytes, list[tuple[str, str]]]


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
    return _kept({entry: (STRUCTURE_KEY,)}, lambda _: {entry: fn()}, seconds)[entry]


def _kept(wanted: dict[str, tuple[str]], compute: Compute[T], seconds: int) -> dict[str, T]:
    """Current for two thirds of ``seconds``; then served while a thread recomputes it
    after the response, as long as it is younger than ``seconds`` or
    ``PAGE_CACHE_STALE_SECONDS`` (perfdb/cache.py ``max_age``, ``stale``): a page read
    steadily is never computed by a request. Stored ten times that long: a page read again
    after a pause still has its copy, for its age to be judged."""
    return cached_entries(wanted, compute, timeout=seconds * 10, stale=True, max_age=seconds)


def kept_for_anonymous(
    name: str, part: int = 1
) -> Callable[[Callable[..., HttpResponse]], Callable[..., Any]]:
    """Serve the view's page from a copy kept ``PAGE_CACHE_STALE_SECONDS / part`` (``_kept``)
    to anonymous GETs (the module's docstring says what is never kept). ``part`` > 1 for a page
    built from entries that may themselves be served that stale (the overview)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            seconds = int(stale_seconds() / part)
            if seconds <= 0 or not shared_request(request):
                return view(request, *args, **kwargs)
            entry = _entry(name, request.get_full_path())
            made: list[HttpResponse] = []
            caller = threading.get_ident()

            def compute(_: list[str]) -> dict[str, tuple[bytes, dict[str, str]]]:
                with cache_reads.bounded_by_age():
                    response = view(request, *args, **kwargs)
                if threading.get_ident() == caller:  # not the refresh after the response
                    made.append(response)
                if not _keepable(request, response):
                    return {}
                headers = {h: response[h] for h in KEPT_HEADERS if response.has_header(h)}
                return {entry: (response.content, headers)}

            got = _kept({entry: (STRUCTURE_KEY,)}, compute, seconds)
            if made:  # computed by this request: its own response, cookies and all
                return made[0]
            return _rebuilt(got[entry])

        return wrapped

    return decorate


def kept_while_current(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Mark an anonymous GET's answer as keepable whole by ``KeptAnswerMiddleware`` under
    the versions the view's cached reads found, if every read was current and the view
    queried nothing outside a cached computation (perfdb/cache_reads.py)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method != "GET" or stale_seconds() <= 0 or not shared_request(request):
            return view(request, *args, **kwargs)
        with cache_reads.recorded() as reads:
            response = view(request, *args, **kwargs)
        if reads.current and reads.versions:
            request._kept_versions = reads.versions  # type: ignore[attr-defined]
        return response

    return wrapped


def _answer_request(request: HttpRequest) -> bool:
    """A GET that may be answered from a kept answer before any other middleware: no body,
    nothing that identifies a reader (session, messages, Authorization)."""
    meta = request.META
    return (
        request.method == "GET"
        and meta.get("CONTENT_LENGTH") in (None, "", "0")
        and "HTTP_AUTHORIZATION" not in meta
        and request.path in _kept_paths
        and shared_request(request)
    )


def _answer_key(request: HttpRequest) -> str:
    """Everything the answer depends on besides the data: scheme, host, path, query and the
    ``Accept`` header (the API's format)."""
    meta = request.META
    what = "|".join(
        (
            request.scheme or "",
            meta.get("HTTP_HOST", ""),
            request.get_full_path(),
            meta.get("HTTP_ACCEPT", ""),
        )
    )
    return "answer-" + hashlib.sha256(what.encode()).hexdigest()[:40]


# The paths with a kept answer in this process (other paths never read the cache here) and
# each kept answer's version keys (read with it: one round trip); both bounded.
_kept_paths: set[str] = set()
_version_keys: dict[str, tuple[str, ...]] = {}
LIMIT = 10_000


def _kept_answer(key: str) -> HttpResponse | None:
    """The kept answer of ``key`` if its versions are all still current."""
    found = cache.get_many([key, *_version_keys.get(key, ())])
    kept: Answer | None = found.get(key)
    if kept is None:
        return None
    versions, body, headers = kept
    keys = tuple(k for k, _ in versions)
    if any(k not in found for k in keys):  # not read with it: a second round trip
        found.update(cache.get_many([k for k in keys if k not in found]))
    if len(_version_keys) >= LIMIT:
        _version_keys.clear()
    _version_keys[key] = keys
    if any(found.get(k) != v for k, v in versions):
        return None
    response = HttpResponse(body)
    for name, value in headers:
        response[name] = value
    return response


def _keep_answer(request: HttpRequest, key: str, response: HttpResponse) -> None:
    versions = getattr(request, "_kept_versions", None)
    if versions is None or not _keepable(request, response):
        return
    headers = list(response.items())
    cache.set(key, (tuple(versions.items()), response.content, headers), TIMEOUT_SECONDS)
    if len(_kept_paths) >= LIMIT:
        _kept_paths.clear()
    _kept_paths.add(request.path)


class KeptAnswerMiddleware:
    """First in MIDDLEWARE: an anonymous GET with a kept, current answer is answered here
    (the module's docstring); the others go through the stack, and an answer a view marked
    (``kept_while_current``) is kept on its way out, with every header the stack added."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if stale_seconds() <= 0:
            return self.get_response(request)
        answerable = _answer_request(request)
        key = _answer_key(request) if answerable else ""
        if answerable and (kept := _kept_answer(key)) is not None:
            return kept
        response = self.get_response(request)
        if getattr(request, "_kept_versions", None) is not None:
            _keep_answer(request, key or _answer_key(request), response)
        return response
