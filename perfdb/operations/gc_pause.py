"""Python's cycle collector paused around work that keeps many small objects alive at once.

A big parse (a million-sample vmstat log) or a regression check over long series (a Point per
run of 60 series of 1,000 kernels) makes hundreds of thousands of tuples and lists, none in a
cycle, all alive until the work ends; every collection they trigger walks them all again (a
quarter to a third of that work's CPU). Reference counting still frees what the work drops;
the collector resumes afterwards, or stays off if it already was. Used by the ingest's
parsers (ingest/services.py), the regression check (perfdb/alerting/regressions.py) and
every cached page computation (perfdb/cache/: a scope chart's ~100 pieces unpickled and
drawn make ~100,000 tuples; collections were half of its warm's CPU, bench/upload_miss.py).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
