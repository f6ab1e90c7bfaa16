"""The dashboard data with copies of it on other machines, and selector calls each held to
the number of queries it makes (helpers, not tests): a selector's count must not grow with
the runs and setups stored."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from tests.dashboards.data import load
from tests.dashboards.scopes import ingest_on_hardware

Calls = Mapping[str, tuple[Callable[[], object], int]]


def load_with_copies(tmp_path: Path, extra_copies: int) -> None:
    """The dashboard data, and ``extra_copies`` of it on other machines: more setups and runs."""
    load(tmp_path)
    for i in range(extra_copies):
        ingest_on_hardware(tmp_path, f"P{i + 9}")


def assert_query_counts(django_assert_num_queries: Any, calls: Calls) -> None:
    """Each call makes exactly its number of queries and answers something."""
    for name, (call, expected) in calls.items():
        with django_assert_num_queries(expected):
            out = call()
        assert out is not None, name
