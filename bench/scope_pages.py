"""The scope charts that draw a scope's setups (scaling, kernel-time, wakeups), computed: warm
(no kept page: ``PAGE_CACHE_STALE_SECONDS=0``) and the first request after runs are added to
the page's own scope (``perfdb.cache.runs_added``, what an upload's commit does: every data
entry of the scope is recomputed by that request), by default and with every setup asked
for ("show all": its first page, dashboards/page_data/scope_draw.py).

Re-run (on a database built with ``python manage.py synth_history --scale N``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb_bench_data python bench/scope_pages.py

Through Django's test client (view, middleware, template; no network). Warm: median and 95th
percentile of ``--repeat`` requests, and the median CPU of this process (the web side;
PostgreSQL's is not counted). After an upload: the fastest of ``--repeat`` tries, wall (CPU).
"""

from __future__ import annotations

import argparse
import os
import re
import time

from _common import django_setup, ms, p50, p95, result_count, table

PAGES = (
    ("scaling", "/scaling/", "setups"),
    ("kernel-time", "/kernel-time/", "setups"),
    ("wakeups", "/wakeups/", "thresholds"),
)


def _scope_of(html: str) -> str:
    """The scope a page shows: the selected option of its scope picker."""
    picker = html[html.index('name="scope"') :]
    found = re.search(r'<option value="([^"]+)" selected>', picker)
    assert found, "no scope selected"
    return found.group(1)


def _timed(client, url: str) -> tuple[float, float, bytes]:
    wall, cpu = time.perf_counter(), time.process_time()
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return time.perf_counter() - wall, time.process_time() - cpu, response.content


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    os.environ["PAGE_CACHE_STALE_SECONDS"] = "0"  # every page computed from the data caches
    os.environ.setdefault("PAGE_CACHE_WARM", "0")  # no worker here
    django_setup()
    from django.test import Client

    from perfdb.cache import runs_added

    client = Client()
    rows = []
    for name, path, subset in PAGES:
        scope = _scope_of(client.get(path).content.decode())
        for drawn, url in (
            ("default", f"{path}?scope={scope}"),
            ("all", f"{path}?scope={scope}&{subset}=all"),
        ):
            client.get(url)
            warm = [_timed(client, url) for _ in range(args.repeat)]
            after = []
            for _ in range(args.repeat):
                runs_added([scope])
                after.append(_timed(client, url))
            first_wall, first_cpu, _ = min(after)
            rows.append(
                (
                    f"{name} ({drawn})",
                    ms(p50([w for w, _, _ in warm])),
                    ms(p95([w for w, _, _ in warm])),
                    ms(p50([c for _, c, _ in warm])),
                    f"{ms(first_wall)} ({ms(first_cpu)})",
                    f"{len(warm[-1][2]):,}",
                )
            )
    print(
        f"results in the table: ~{result_count():,}; {args.repeat} requests per case; "
        f"load average {os.getloadavg()[0]:.1f} at the end\n"
    )
    headers = ["page", "warm p50 ms", "warm p95 ms", "warm CPU ms", "after an upload ms (CPU)"]
    print(table([*headers, "bytes"], rows))


if __name__ == "__main__":
    main()
