"""The data versions (perfdb/cache/versions.py): a version Redis lost starts again from the
clock, so it never meets a number already used and never revives the entries of old data."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from perfdb import cache as page_cache

pytestmark = pytest.mark.django_db


def test_a_lost_version_never_revives_old_entries():
    """If Redis loses the version key, the new version must not equal one already used."""
    old = page_cache.data_version()
    page_cache.cached("t:value", lambda: "old data")
    cache.delete(page_cache.VERSION_KEY)
    assert page_cache.data_version() != old
    assert page_cache.cached("t:value", lambda: "new data") == "new data"
