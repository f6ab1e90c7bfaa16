"""The code version that cached page data is keyed by (settings.CACHE_VERSION).

Cached values are shaped by the code that computed them (a dataclass's fields, a figure's
layout) and by the schema it read. Keying every cache entry by a digest of the apps' source
and migrations means a deploy of changed code starts on an empty namespace and never serves
a value of the old shape; an unchanged deploy (a restart, another replica) shares the cache.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

APPS = ("config", "dashboards", "ingest", "perfdb")


def code_version(base: Path, apps: tuple[str, ...] = APPS) -> str:
    """A short digest of every Python file (migrations included) of ``apps`` under ``base``:
    about 300 files read once per process start, a few milliseconds."""
    digest = hashlib.sha256()
    for app in apps:
        for path in sorted((base / app).rglob("*.py")):
            digest.update(str(path.relative_to(base)).encode())
            digest.update(b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
