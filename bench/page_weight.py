"""What a first visit to each chart page downloads, compressed: the page, its stylesheets and
scripts, and the figure and alert marks its charts fetch. The goal: at most
700 kB for a chart page.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/page_weight.py
    ... python bench/page_weight.py /kernels/ "/kernels/?setup=12&metric=3"   # other pages

Pages are requested through Django's test Client, then every ``<link rel=stylesheet>``,
``<script src>``, ``data-src`` and ``data-overlay`` URL in the page. A static file is counted
as WhiteNoise serves it in production: the gzip (level 9) copy CompressedManifestStaticFilesStorage
stores beside it, sent to any browser that accepts gzip, under a hashed name cached for a
year (a second visit downloads none of it). The app does not compress its own HTML and JSON
(no GZipMiddleware: BREACH, and the proxy may): they are shown as sent and gzipped, and the
total counts them gzipped (what a proxy compressing text sends) and as sent.
"""

from __future__ import annotations

import argparse
import gzip
import re
from pathlib import Path

from _common import django_setup, table

PAGES = ("/kernels/", "/scaling/", "/kernel-time/", "/wakeups/", "/activity/")
GOAL = 700_000
ASSET = re.compile(r'<(?:script[^>]*\ssrc|link[^>]*\shref)="(/static/[^"]+)"')
FETCHED = re.compile(r'\sdata-(?:src|overlay)="([^"]+)"')


def gzipped(data: bytes) -> int:
    """The size WhiteNoise's compressed copy has (whitenoise.compress: level 9, mtime 0)."""
    return len(gzip.compress(data, compresslevel=9, mtime=0))


def static_bytes(url: str) -> bytes:
    from django.conf import settings
    from django.contrib.staticfiles import finders

    found = finders.find(url.removeprefix("/" + settings.STATIC_URL.lstrip("/")))
    if not found:
        raise SystemExit(f"{url}: no such static file")
    return Path(found).read_bytes()


def visit(client, url: str) -> list[tuple[str, int, int]]:
    """(url, bytes as sent uncompressed, gzipped) for the page and all it loads."""
    from html import unescape

    response = client.get(url)
    if response.status_code != 200:
        raise SystemExit(f"{url}: HTTP {response.status_code}")
    html = response.content
    rows = [(url, len(html), gzipped(html))]
    text = html.decode()
    for asset in dict.fromkeys(ASSET.findall(text)):
        data = static_bytes(unescape(asset))
        rows.append((asset, len(data), gzipped(data)))
    for fetched in dict.fromkeys(FETCHED.findall(text)):
        body = client.get(unescape(fetched)).content
        rows.append((unescape(fetched), len(body), gzipped(body)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pages", nargs="*", default=PAGES)
    args = parser.parse_args()
    django_setup()
    from django.test import Client

    client = Client()
    worst = 0
    for page in args.pages:
        rows = visit(client, page)
        total = sum(z for _, _, z in rows)
        static = sum(z for u, _, z in rows if u.startswith("/static/"))
        unzipped_text = sum(n for u, n, _ in rows if not u.startswith("/static/"))
        worst = max(worst, total)
        print(f"\n{page}: first visit {total:,} bytes compressed", end="")
        print(f" ({static:,} of them static, cached after), {static + unzipped_text:,} if the")
        print("HTML and JSON are sent uncompressed")
        print(
            table(["url", "bytes", "gzipped"], [(u[:70], f"{n:,}", f"{z:,}") for u, n, z in rows])
        )
    verdict = "within" if worst <= GOAL else "OVER"
    print(f"\nheaviest first visit: {worst:,} bytes compressed, {verdict} the {GOAL:,} goal")


if __name__ == "__main__":
    main()
