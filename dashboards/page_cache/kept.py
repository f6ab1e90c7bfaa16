"""Whole pages kept a few seconds for anonymous readers: compare, run detail, the alerts,
the overview and the scope charts.

These pages read more than the data versions of perfdb/cache/ follow (alerts and their
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
found (perfdb/cache/reads.py), and the middleware, first in the stack, answers the next
anonymous GET of the same URL from it while those versions are unchanged, before URL
resolution, sessions, authentication, DRF and its throttle: never stale, one cache round
trip. Only for GETs without a body, a session or messages cookie or an ``Authorization``
header, keyed by scheme, host, path, query and ``Accept``. Such a hit is not counted by the
API's throttle (it computes nothing, like a static file; a miss is counted as before).

*Keys from known parameters* (``KNOWN_PARAMS``): a URL's query enters a key with the
parameters no kept view reads left out and the rest ordered by name, so ``?setup=3&utm=x``,
``?utm=y&setup=3`` and ``?setup=3`` are one entry, not one per junk value (a client adding
cache busters would fill Redis). What makes that safe is checked, not assumed: the request's
query notes every name a view reads (``_NamesRead``), and an answer whose view read a name
outside the list is never kept.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Callable, Iterator
from functools import partial, wraps
from typing import Any, TypeVar
from urllib.parse import urlencode

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse, QueryDict
from django.utils.cache import patch_vary_headers

from perfdb.cache import (
    STRUCTURE_KEY,
    TIMEOUT_SECONDS,
    Compute,
    bounded_by_age,
    cache_key,
    cached_entries,
    recorded,
    stale_seconds,
)

# Headers a kept page is sent with again (the middleware adds the rest on every request).
KEPT_HEADERS = ("Content-Type", "Content-Disposition", "Content-Language")
MESSAGES_COOKIE = "messages"
T = TypeVar("T")
log = logging.getLogger(__name__)
# A kept answer as stored: (its versions as (key, value) pairs, body, every header).
Answer = tuple[tuple[tuple[str, int], ...], bytes, list[tuple[str, str]]]


# Every query parameter a kept page or answer reads (dashboards/pure/selection.py's helpers, the
# API's filters and pagination, DRF's ``format``). A name missing here is safe, only costly:
# the answers of a view that reads it are not kept (``_read_known_only``).
KNOWN_PARAMS = frozenset(
    {
        "base", "base_build", "baseline", "better", "build", "builds", "chart", "direction",
        "format", "groups", "hardware", "kernel", "kind", "metric", "mode", "name", "new",
        "new_build", "page", "param", "patch", "patches", "rest", "runs", "scope", "setup",
        "setups", "source", "status", "top", "value", "verdict", "version", "workload",
    }
)  # fmt: skip


class _NamesRead(QueryDict):
    """The request's query, noting every parameter name read; whatever lists the names
    (iteration, ``items``, ``copy``, ``urlencode``) counts as reading them all."""

    names_read: set[str]

    @classmethod
    def of(cls, query: QueryDict) -> _NamesRead:
        noted = cls(mutable=True, encoding=query.encoding)
        noted.names_read = set()
        for key, values in query.lists():
            noted.setlist(key, values)
        noted._mutable = False
        return noted

    def _all(self) -> None:
        self.names_read.update(dict.keys(self))

    def __getitem__(self, key: str) -> Any:
        self.names_read.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.names_read.add(str(key))
        return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.names_read.add(key)
        return super().get(key, default)

    def getlist(self, key: str, default: Any = None) -> Any:
        self.names_read.add(key)
        return super().getlist(key, default)

    def __iter__(self) -> Iterator[str]:
        self._all()
        return super().__iter__()

    def keys(self) -> Any:
        self._all()
        return super().keys()

    def items(self) -> Any:
        self._all()
        return super().items()

    def lists(self) -> Any:
        self._all()
        return super().lists()

    def values(self) -> Any:
        self._all()
        return super().values()

    def dict(self) -> dict[str, Any]:
        self._all()
        return super().dict()

    def urlencode(self, safe: str | None = None) -> str:
        self._all()
        return super().urlencode(safe)

    def copy(self) -> QueryDict:  # type: ignore[override]  # a plain copy, noting nothing
        self._all()
        plain = QueryDict(mutable=True, encoding=self.encoding)
        for key, values in super().lists():
            plain.setlist(key, values)
        return plain

    __copy__ = copy  # type: ignore[assignment]

    def __deepcopy__(self, memo: Any) -> Any:
        return self.copy()


def _known_query(query: QueryDict) -> str:
    """The known parameters of ``query``, ordered by name (a name's values in their order)."""
    names = sorted(name for name in query if name in KNOWN_PARAMS)
    return urlencode([(name, value) for name in names for value in query.getlist(name)])


def note_reads(request: HttpRequest) -> None:
    """Key this request by its known parameters and note the names its view reads."""
    request._known_query = _known_query(request.GET)  # type: ignore[attr-defined]
    request.GET = _NamesRead.of(request.GET)  # type: ignore[assignment]  # a QueryDict still


def _keyed_path(request: HttpRequest) -> str:
    """The path and the query as keys see it (the full query when reads are not noted)."""
    known = getattr(request, "_known_query", None)
    if known is None:
        return request.get_full_path()
    return f"{request.path}?{known}" if known else request.path


def _read_known_only(request: HttpRequest) -> bool:
    """The view read no parameter outside ``KNOWN_PARAMS`` (or reads were not noted, and
    the key is the full query)."""
    names = getattr(request.GET, "names_read", None)
    return names is None or names <= KNOWN_PARAMS


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
    """A kept page's entry name: its key hashed (a URL may be long), ``page-`` first (a
    kept page's entry is told from the values' entries by it)."""
    key = cache_key("page", name=name, url=url)
    return "page-" + hashlib.sha256(key.encode()).hexdigest()[:40]


def kept_data(request: HttpRequest, name: str, fn: Callable[[], T]) -> T:
    """``fn()`` (plain data: an API answer) kept like a page, per absolute URL (its links
    name the host); the API's throttle and authentication have run before."""
    seconds = int(stale_seconds())
    if seconds <= 0 or not shared_request(request):
        return fn()
    entry = _entry(name, request.build_absolute_uri(_keyed_path(request)))
    made: list[T] = []
    caller = threading.get_ident()

    def compute(_: list[str]) -> dict[str, T]:
        value = fn()
        if threading.get_ident() == caller:  # not the refresh after the response
            made.append(value)
        return {entry: value} if _read_known_only(request) else {}

    got = _kept({entry: (STRUCTURE_KEY,)}, compute, seconds)
    return made[0] if made else got[entry]


def _kept(wanted: dict[str, tuple[str]], compute: Compute[T], seconds: int) -> dict[str, T]:
    """Current for two thirds of ``seconds``; then served while a thread recomputes it
    after the response, as long as it is younger than ``seconds`` or
    ``PAGE_CACHE_STALE_SECONDS`` (perfdb/cache/ ``max_age``, ``stale``): a page read
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
            entry = _entry(name, _keyed_path(request))
            made: list[HttpResponse] = []
            caller = threading.get_ident()

            def compute(_: list[str]) -> dict[str, tuple[bytes, dict[str, str]]]:
                with bounded_by_age():
                    response = view(request, *args, **kwargs)
                if threading.get_ident() == caller:  # not the refresh after the response
                    made.append(response)
                if not _keepable(request, response) or not _read_known_only(request):
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
    queried nothing outside a cached computation (perfdb/cache/reads.py)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.method != "GET" or stale_seconds() <= 0 or not shared_request(request):
            return view(request, *args, **kwargs)
        with recorded() as reads:
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
    key = cache_key(
        "answer",
        scheme=request.scheme,
        host=meta.get("HTTP_HOST"),
        path=_keyed_path(request),
        accept=meta.get("HTTP_ACCEPT"),
    )
    return "answer-" + hashlib.sha256(key.encode()).hexdigest()[:40]


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


def _answer_kept(request: HttpRequest, response: HttpResponse) -> Answer | None:
    """What is kept of the response as this middleware returns it (the middleware outside
    it adds a request id and compresses the body later), or None if it may not be kept."""
    versions = getattr(request, "_kept_versions", None)
    if versions is None or not _keepable(request, response) or not _read_known_only(request):
        return None
    return tuple(versions.items()), response.content, list(response.items())


def _keep_answer(path: str, key: str, answer: Answer) -> None:
    """Store ``answer``; an error is logged, never raised: it runs as the response closes,
    once sent, and the next request computes it again."""
    try:
        cache.set(key, answer, TIMEOUT_SECONDS)
    except Exception:
        log.exception("could not keep the answer of %s", path)
        return
    if len(_kept_paths) >= LIMIT:
        _kept_paths.clear()
    _kept_paths.add(path)


class KeptAnswerMiddleware:
    """First in MIDDLEWARE: an anonymous GET with a kept, current answer is answered here
    (the module's docstring); the others go through the stack, and an answer a view marked
    (``kept_while_current``) is kept on its way out, with every header the stack added."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if stale_seconds() <= 0:
            return self.get_response(request)
        if request.method in ("GET", "HEAD"):
            note_reads(request)
        answerable = _answer_request(request)
        key = _answer_key(request) if answerable else ""
        if answerable and (kept := _kept_answer(key)) is not None:
            return kept
        response = self.get_response(request)
        answer = _answer_kept(request, response)
        if answer is not None:
            # Stored when the server closes the response, once its body is sent: the reader
            # does not wait for the store (a series' figure is ~200 kB to Redis). Django's
            # HttpResponse.close(), which every WSGI server calls, runs these closers.
            store = partial(_keep_answer, request.path, key or _answer_key(request), answer)
            response._resource_closers.append(store)  # type: ignore[attr-defined]
        return response
