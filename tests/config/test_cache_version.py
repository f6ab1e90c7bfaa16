"""The code version cached page data is keyed by (config/cache_version.py): every cache key
carries it, and it follows the source and the migrations, so a deploy of changed code starts
on an empty namespace."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache

from config.cache_version import code_version


def test_every_key_carries_the_code_version():
    assert settings.CACHE_VERSION in cache.make_key("anything")


def test_the_code_version_follows_the_source(tmp_path):
    (tmp_path / "perfdb" / "migrations").mkdir(parents=True)
    (tmp_path / "perfdb" / "views.py").write_text("x = 1\n")
    first = code_version(tmp_path)
    assert code_version(tmp_path) == first
    (tmp_path / "perfdb" / "migrations" / "0002_more.py").write_text("ops = []\n")
    second = code_version(tmp_path)
    (tmp_path / "perfdb" / "views.py").write_text("x = 2\n")
    assert len({first, second, code_version(tmp_path)}) == 3
