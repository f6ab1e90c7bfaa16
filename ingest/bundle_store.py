"""Where a stored bundle is read from: the file itself on local disk, a temporary copy when
the bundles live in shared storage without local paths (S3 through django-storages: a worker
on another host reads what the web server stored; docs/deploy.md)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.db.models.fields.files import FieldFile

CHUNK = 1 << 20


@contextmanager
def bundle_path(stored: FieldFile) -> Iterator[Path]:
    """A local path to the stored bundle for as long as the block runs."""
    try:
        local = stored.path
    except NotImplementedError:  # remote storage: no path on this host
        local = None
    if local is not None:
        yield Path(local)
        return
    suffix = "".join(Path(stored.name or "bundle").suffixes)[-16:]
    with tempfile.NamedTemporaryFile(prefix="perfdb-bundle-", suffix=suffix) as copy:
        with stored.open("rb") as source:
            shutil.copyfileobj(source, copy, CHUNK)
        copy.flush()
        yield Path(copy.name)
