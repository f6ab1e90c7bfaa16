"""Repeat the fault scenarios of tests/ingest/test_faults.py and print how long each took
(worker start, the kill or outage, recovery by the sweeps, the email delivered once).

    python bench/faults.py [--repeat 20] [--only killed_right_after]

Each repetition is one pytest run of one scenario against its own test database
(DATABASE_URL, default perfdb_faults_bench; never the perfdb database) and Redis DB 9.
A failure is printed with the scenario; the table gives min / median / max seconds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = [
    "test_worker_killed_right_after_the_ingest_commit",
    "test_worker_killed_mid_ingest_is_requeued_at_once",
    "test_worker_killed_during_the_smtp_exchange",
    "test_smtp_server_stopped_then_restarted",
    "test_database_connection_terminated_mid_ingest",
]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    env = {
        **os.environ,
        "DATABASE_URL": os.environ.get(
            "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/perfdb_faults_bench"
        ),
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
    }
    failures = 0
    print(f"{'scenario':52} {'runs':>4} {'fail':>4} {'min s':>7} {'median s':>9} {'max s':>7}")
    for name in SCENARIOS:
        if args.only and args.only not in name:
            continue
        times, failed = [], 0
        for _ in range(args.repeat):
            start = time.monotonic()
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--reuse-db",
                 f"tests/ingest/test_faults.py::{name}"],
                cwd=ROOT, env=env, capture_output=True, text=True,
            )  # fmt: skip
            times.append(time.monotonic() - start)
            if result.returncode:
                failed += 1
                print(result.stdout[-2000:], file=sys.stderr)
        failures += failed
        print(
            f"{name[5:]:52} {len(times):4} {failed:4} {min(times):7.1f} "
            f"{statistics.median(times):9.1f} {max(times):7.1f}"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
