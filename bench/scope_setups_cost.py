"""What still grows with a scope's setups on every request of the wakeups and kernel-time
pages, now that they draw a bounded number: reading the scope's setups from the cache
(unpickling them), grouping them by threshold or finding the varying parameters, and the
setup picker's options. Pure Python on made-up setups shaped like ``synth_history``'s (a
scope gains one setup per 8 scale units: ~100 at 10M results, ~1,000 at 100M), so the 100M
figure needs no 100M database.

Re-run (any database will do: nothing is read from it):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/perfdb python bench/scope_setups_cost.py
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from typing import Any

from _common import django_setup, table


def _setups(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": 100_000 + i,
            "workload_id": 1,
            "workload": "synthetic-VolanoMark 2.1.2",
            "hardware_id": 2,
            "hardware": "synthetic-P8",
            "mode": "SMP",
            "run_count": 64,
            "params": {
                "server_nice": 0,
                "client_nice": -19,
                "rooms": 10,
                "preempt_threshold": 10 * (i + 1),
            },
        }
        for i in range(n)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    django_setup()
    from dashboards.kernel_time_page import KERNEL_TIME_MAX_SETUPS, _setup_options
    from dashboards.scope_draw import options_html
    from dashboards.selection import Scope
    from dashboards.wakeups_page import thresholds_of

    rows = []
    for n in (100, 1000, 10_000):
        blob = pickle.dumps(_setups(n))
        cpu = time.process_time()
        for _ in range(args.repeat):
            by = thresholds_of(pickle.loads(blob))
            options_html([(t, t) for t in by], list(by)[:12])
        wakeups = (time.process_time() - cpu) / args.repeat
        cpu = time.process_time()
        for _ in range(args.repeat):
            scope = Scope("1-2-SMP", "", tuple(pickle.loads(blob)))
            scope.varying_params()
            _setup_options(scope, [str(i) for i in scope.setup_ids[:KERNEL_TIME_MAX_SETUPS]])
        kernel_time = (time.process_time() - cpu) / args.repeat
        rows.append((n, f"{len(blob):,}", f"{wakeups * 1000:.2f}", f"{kernel_time * 1000:.2f}"))
    print(f"CPU ms per request, mean of {args.repeat}; load average {os.getloadavg()[0]:.1f}\n")
    print(table(["setups in the scope", "cached bytes", "wakeups", "kernel-time"], rows))


if __name__ == "__main__":
    main()
